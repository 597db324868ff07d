// Input creation for op cases and the shared table helpers.
#include "op_case.h"

#include "lmtest_quant.h"

#include <cstdio>
#include <stdexcept>

namespace opstest {

lm_ggml_tensor * Builder::add_leaf(lm_ggml_type type, Shape ne, HTensor host, std::vector<uint8_t> bytes) {
    lm_ggml_tensor * t = lm_ggml_new_tensor_4d(ctx, type, ne[0], ne[1], ne[2], ne[3]);
    if (t == nullptr) {
        throw std::runtime_error("lm_ggml_new_tensor_4d returned NULL");
    }
    lm_ggml_format_name(t, "in%zu", leaves_.size());
    leaves_.push_back({t, std::move(host), std::move(bytes)});
    return t;
}

lm_ggml_tensor * Builder::uniform(lm_ggml_type type, Shape ne, double lo, double hi) {
    HTensor h(ne);
    for (double & x : h.v) {
        x = lmtest::round_to_type(type, rng_.uniform(lo, hi));
    }
    std::vector<uint8_t> bytes = lmtest::encode_plain(type, h);
    return add_leaf(type, ne, std::move(h), std::move(bytes));
}

lm_ggml_tensor * Builder::values(lm_ggml_type type, Shape ne, const std::vector<double> & v) {
    HTensor h(ne);
    if (static_cast<int64_t>(v.size()) != h.n()) {
        throw std::logic_error("Builder::values: wrong number of values");
    }
    for (size_t i = 0; i < v.size(); ++i) {
        h.v[i] = lmtest::round_to_type(type, v[i]);
    }
    std::vector<uint8_t> bytes = lmtest::encode_plain(type, h);
    return add_leaf(type, ne, std::move(h), std::move(bytes));
}

lm_ggml_tensor * Builder::quantized(lm_ggml_type type, Shape ne) {
    lmtest::BlockLayout L{};
    if (!lmtest::quant_layout(type, &L) || ne[0] % L.block_elems != 0) {
        throw std::logic_error("Builder::quantized: unknown type or partial block");
    }
    const int64_t n_blocks = ne[0] / L.block_elems * ne[1] * ne[2] * ne[3];
    std::vector<uint8_t> bytes(static_cast<size_t>(n_blocks) * L.block_bytes);
    lmtest::quant_random_blocks(type, n_blocks, rng_, bytes.data());
    HTensor h(ne);
    lmtest::quant_dequantize(type, bytes.data(), h.n(), h.v.data());
    return add_leaf(type, ne, std::move(h), std::move(bytes));
}

std::string shape_str(Shape ne) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%lldx%lldx%lldx%lld", (long long) ne[0], (long long) ne[1], (long long) ne[2],
                  (long long) ne[3]);
    return buf;
}

const char * type_str(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_F32: return "f32";
        case LM_GGML_TYPE_F16: return "f16";
        case LM_GGML_TYPE_BF16: return "bf16";
        case LM_GGML_TYPE_I8: return "i8";
        case LM_GGML_TYPE_I16: return "i16";
        case LM_GGML_TYPE_I32: return "i32";
        case LM_GGML_TYPE_Q4_0: return "q4_0";
        case LM_GGML_TYPE_Q4_1: return "q4_1";
        case LM_GGML_TYPE_Q5_0: return "q5_0";
        case LM_GGML_TYPE_Q5_1: return "q5_1";
        case LM_GGML_TYPE_Q8_0: return "q8_0";
        case LM_GGML_TYPE_Q4_K: return "q4_k";
        case LM_GGML_TYPE_Q6_K: return "q6_k";
        default: return "type";
    }
}

HTensor generate(Shape ne, const std::function<double(int64_t, int64_t, int64_t, int64_t)> & f) {
    HTensor r(ne);
    for (int64_t i3 = 0; i3 < ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < ne[1]; ++i1)
                for (int64_t i0 = 0; i0 < ne[0]; ++i0) {
                    r.at(i0, i1, i2, i3) = f(i0, i1, i2, i3);
                }
    return r;
}

HTensor map1(const HTensor & a, const std::function<double(double)> & f) {
    HTensor r = a;
    for (double & x : r.v) {
        x = f(x);
    }
    return r;
}

} // namespace opstest

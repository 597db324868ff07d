// The type -> row dot lookup: the float types here, the block types in
// q_dot.cpp, both from the CPU's kernel set (src/cpu/arch/kernels.h).
#include "la_vec_dot.h"
#include "q_dot.h" // quantized weight types (src/cpu/kernels/q_dot*.cpp)
#include "../arch/kernels.h"

namespace {

// The float types' entries, from the CPU's kernel set (src/cpu/arch), built once.
struct FloatTraits {
    lm_cpu_vec_dot_traits f32, f16, bf16;
    FloatTraits() {
        const lmggml::cpu::arch::KernelSet & k = lmggml::cpu::arch::kernels();
        f32 = {k.vec_dot[LM_GGML_TYPE_F32], LM_GGML_TYPE_F32, nullptr};
        f16 = {k.vec_dot[LM_GGML_TYPE_F16], LM_GGML_TYPE_F16, k.from_float[LM_GGML_TYPE_F16]};
        bf16 = {k.vec_dot[LM_GGML_TYPE_BF16], LM_GGML_TYPE_BF16, k.from_float[LM_GGML_TYPE_BF16]};
    }
};

const FloatTraits & float_traits() {
    static const FloatTraits t; // thread-safe, once
    return t;
}

} // namespace

const lm_cpu_vec_dot_traits * lm_cpu_get_vec_dot_traits(lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_F32: return &float_traits().f32;
        case LM_GGML_TYPE_F16: return &float_traits().f16;
        case LM_GGML_TYPE_BF16: return &float_traits().bf16;
        // quantized fast paths (see la_vec_dot.h); NULL for types without one
        default: return lm_cpu_get_quant_vec_dot_traits(type);
    }
}

namespace lmggml::cpu::la {

lm_ggml_to_float_t decoder_of(lm_ggml_type type) {
    if (type < 0 || type >= LM_GGML_TYPE_COUNT || lm_ggml_blck_size(type) <= 0) {
        return nullptr; // removed type numbers have no traits
    }
    const lm_ggml_type_traits * tr = lm_ggml_get_type_traits(type);
    return tr != nullptr ? tr->to_float : nullptr;
}

Plan plan_for(lm_ggml_type weight_type) {
    Plan p{};
    if (weight_type < 0 || weight_type >= LM_GGML_TYPE_COUNT || lm_ggml_blck_size(weight_type) <= 0) {
        return p;
    }
    if (const lm_cpu_vec_dot_traits * t = lm_cpu_get_vec_dot_traits(weight_type)) {
        p.vec_dot = t->vec_dot;
        p.vec_dot_type = t->vec_dot_type;
        p.from_float = t->from_float;
        p.ok = true;
        return p;
    }
    // dequantize path: needs a row decoder; activations stay F32
    if (lm_ggml_to_float_t to_float = decoder_of(weight_type)) {
        p.to_float = to_float;
        p.vec_dot_type = LM_GGML_TYPE_F32;
        p.ok = true;
    }
    return p;
}

size_t converted_size(const Plan & p, const lm_ggml_tensor * b) {
    if (b->type == p.vec_dot_type) {
        return 0;
    }
    return lm_ggml_row_size(p.vec_dot_type, b->ne[0]) * (size_t) (b->ne[1] * b->ne[2] * b->ne[3]);
}

void convert_rows(const lm_cpu_params * params, const Plan & p, const lm_ggml_tensor * b, void * out) {
    if (b->type == p.vec_dot_type) {
        return;
    }
    // only F32 activations are converted (supports() guarantees it)
    const size_t row = lm_ggml_row_size(p.vec_dot_type, b->ne[0]);
    const int64_t nrows = b->ne[1] * b->ne[2] * b->ne[3];
    const Range r = split(nrows, params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t i3 = ir / (b->ne[1] * b->ne[2]);
        const int64_t i2 = (ir / b->ne[1]) % b->ne[2];
        const int64_t i1 = ir % b->ne[1];
        p.from_float((const float *) row_of(b, i1, i2, i3), (char *) out + ir * row, b->ne[0]);
    }
}

Rows activation_rows(const Plan & p, const lm_ggml_tensor * b, const void * converted) {
    if (b->type == p.vec_dot_type) {
        return {(const char *) b->data, b->nb[1], b->nb[2], b->nb[3]};
    }
    const size_t row = lm_ggml_row_size(p.vec_dot_type, b->ne[0]);
    return {(const char *) converted, row, row * (size_t) b->ne[1], row * (size_t) (b->ne[1] * b->ne[2])};
}

} // namespace lmggml::cpu::la

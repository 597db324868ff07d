#include "lmtest_tensor.h"

#include "lmtest_fp.h"
#include "lmtest_quant.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace lmtest {

HTensor::HTensor(Shape shape, double fill) : ne(shape), v(static_cast<size_t>(n()), fill) {}

HTensor permute(const HTensor & a, int ax0, int ax1, int ax2, int ax3) {
    const int ax[4] = {ax0, ax1, ax2, ax3};
    Shape ne{};
    for (int k = 0; k < 4; ++k) {
        ne[ax[k]] = a.ne[k];
    }
    HTensor r(ne);
    for (int64_t i3 = 0; i3 < a.ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < a.ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < a.ne[1]; ++i1)
                for (int64_t i0 = 0; i0 < a.ne[0]; ++i0) {
                    int64_t j[4];
                    j[ax[0]] = i0;
                    j[ax[1]] = i1;
                    j[ax[2]] = i2;
                    j[ax[3]] = i3;
                    r.at(j[0], j[1], j[2], j[3]) = a.at(i0, i1, i2, i3);
                }
    return r;
}

HTensor transpose(const HTensor & a) { return permute(a, 1, 0, 2, 3); }

HTensor reshape(const HTensor & a, Shape ne) {
    HTensor r = a;
    r.ne = ne;
    if (r.n() != a.n()) {
        throw std::logic_error("reshape: element count differs");
    }
    return r;
}

HTensor strided_view(const HTensor & base, Shape ne, Shape stride, int64_t offset) {
    HTensor r(ne);
    for (int64_t i3 = 0; i3 < ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < ne[1]; ++i1)
                for (int64_t i0 = 0; i0 < ne[0]; ++i0) {
                    const int64_t k = offset + i0 * stride[0] + i1 * stride[1] + i2 * stride[2] + i3 * stride[3];
                    if (k < 0 || k >= base.n()) {
                        throw std::logic_error("strided_view: element outside the base");
                    }
                    r.at(i0, i1, i2, i3) = base.v[static_cast<size_t>(k)];
                }
    return r;
}

bool is_plain_type(lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_F32:
        case LM_GGML_TYPE_F16:
        case LM_GGML_TYPE_BF16:
        case LM_GGML_TYPE_I8:
        case LM_GGML_TYPE_I16:
        case LM_GGML_TYPE_I32:
        case LM_GGML_TYPE_I64: return true;
        default: return false;
    }
}

bool type_layout(lm_ggml_type type, TypeLayout * out) {
    switch (type) {
        case LM_GGML_TYPE_F32: *out = {1, 4}; return true;
        case LM_GGML_TYPE_F16: *out = {1, 2}; return true;
        case LM_GGML_TYPE_BF16: *out = {1, 2}; return true;
        case LM_GGML_TYPE_I8: *out = {1, 1}; return true;
        case LM_GGML_TYPE_I16: *out = {1, 2}; return true;
        case LM_GGML_TYPE_I32: *out = {1, 4}; return true;
        case LM_GGML_TYPE_I64: *out = {1, 8}; return true;
        default: {
            BlockLayout b{};
            if (quant_layout(type, &b)) {
                *out = {b.block_elems, b.block_bytes};
                return true;
            }
            return false;
        }
    }
}

size_t contiguous_bytes(lm_ggml_type type, Shape ne) {
    TypeLayout L{};
    if (!type_layout(type, &L)) {
        throw std::logic_error("contiguous_bytes: unknown type");
    }
    return static_cast<size_t>(ne[0] / L.block_elems) * L.block_bytes * static_cast<size_t>(ne[1] * ne[2] * ne[3]);
}

double round_to_type(lm_ggml_type type, double v) {
    switch (type) {
        case LM_GGML_TYPE_F32: return round_f32(v);
        case LM_GGML_TYPE_F16: return round_f16(v);
        case LM_GGML_TYPE_BF16: return round_bf16(v);
        case LM_GGML_TYPE_I8: return static_cast<double>(static_cast<int8_t>(v));
        case LM_GGML_TYPE_I16: return static_cast<double>(static_cast<int16_t>(v));
        case LM_GGML_TYPE_I32: return static_cast<double>(static_cast<int32_t>(v));
        case LM_GGML_TYPE_I64: return static_cast<double>(static_cast<int64_t>(v));
        default: return v;
    }
}

void round_all(HTensor & t, lm_ggml_type type) {
    for (double & x : t.v) {
        x = round_to_type(type, x);
    }
}

namespace {

void store_plain(lm_ggml_type type, double v, uint8_t * p) {
    switch (type) {
        case LM_GGML_TYPE_F32: {
            const float f = static_cast<float>(v);
            std::memcpy(p, &f, 4);
            break;
        }
        case LM_GGML_TYPE_F16: {
            const uint16_t b = f16_bits(v);
            std::memcpy(p, &b, 2);
            break;
        }
        case LM_GGML_TYPE_BF16: {
            const uint16_t b = bf16_bits(v);
            std::memcpy(p, &b, 2);
            break;
        }
        case LM_GGML_TYPE_I8: {
            const int8_t i = static_cast<int8_t>(v);
            std::memcpy(p, &i, 1);
            break;
        }
        case LM_GGML_TYPE_I16: {
            const int16_t i = static_cast<int16_t>(v);
            std::memcpy(p, &i, 2);
            break;
        }
        case LM_GGML_TYPE_I32: {
            const int32_t i = static_cast<int32_t>(v);
            std::memcpy(p, &i, 4);
            break;
        }
        case LM_GGML_TYPE_I64: {
            const int64_t i = static_cast<int64_t>(v);
            std::memcpy(p, &i, 8);
            break;
        }
        default: throw std::logic_error("store_plain: not a plain type");
    }
}

double load_plain(lm_ggml_type type, const uint8_t * p) {
    switch (type) {
        case LM_GGML_TYPE_F32: {
            float f;
            std::memcpy(&f, p, 4);
            return f;
        }
        case LM_GGML_TYPE_F16: {
            uint16_t b;
            std::memcpy(&b, p, 2);
            return f16_value(b);
        }
        case LM_GGML_TYPE_BF16: {
            uint16_t b;
            std::memcpy(&b, p, 2);
            return bf16_value(b);
        }
        case LM_GGML_TYPE_I8: {
            int8_t i;
            std::memcpy(&i, p, 1);
            return i;
        }
        case LM_GGML_TYPE_I16: {
            int16_t i;
            std::memcpy(&i, p, 2);
            return i;
        }
        case LM_GGML_TYPE_I32: {
            int32_t i;
            std::memcpy(&i, p, 4);
            return i;
        }
        case LM_GGML_TYPE_I64: {
            int64_t i;
            std::memcpy(&i, p, 8);
            return static_cast<double>(i);
        }
        default: throw std::logic_error("load_plain: not a plain type");
    }
}

} // namespace

std::vector<uint8_t> encode_plain(lm_ggml_type type, const HTensor & t) {
    TypeLayout L{};
    if (!is_plain_type(type) || !type_layout(type, &L)) {
        throw std::logic_error("encode_plain: not a plain type");
    }
    std::vector<uint8_t> bytes(static_cast<size_t>(t.n()) * L.block_bytes);
    for (int64_t i = 0; i < t.n(); ++i) {
        store_plain(type, t.v[static_cast<size_t>(i)], bytes.data() + static_cast<size_t>(i) * L.block_bytes);
    }
    return bytes;
}

size_t span_bytes(lm_ggml_type type, Shape ne, Strides nb) {
    TypeLayout L{};
    if (!type_layout(type, &L)) {
        throw std::logic_error("span_bytes: unknown type");
    }
    for (int k = 0; k < 4; ++k) {
        if (ne[k] == 0) {
            return 0;
        }
    }
    size_t bytes = L.block_bytes;
    bytes += static_cast<size_t>(ne[0] / L.block_elems - 1) * nb[0];
    for (int k = 1; k < 4; ++k) {
        bytes += static_cast<size_t>(ne[k] - 1) * nb[k];
    }
    return bytes;
}

HTensor decode(lm_ggml_type type, Shape ne, Strides nb, const uint8_t * bytes) {
    TypeLayout L{};
    if (!type_layout(type, &L)) {
        throw std::logic_error("decode: unknown type");
    }
    HTensor r(ne);
    if (is_plain_type(type)) {
        for (int64_t i3 = 0; i3 < ne[3]; ++i3)
            for (int64_t i2 = 0; i2 < ne[2]; ++i2)
                for (int64_t i1 = 0; i1 < ne[1]; ++i1)
                    for (int64_t i0 = 0; i0 < ne[0]; ++i0) {
                        const size_t off = i0 * nb[0] + i1 * nb[1] + i2 * nb[2] + i3 * nb[3];
                        r.at(i0, i1, i2, i3) = load_plain(type, bytes + off);
                    }
        return r;
    }
    if (nb[0] != L.block_bytes || ne[0] % L.block_elems != 0) {
        throw std::logic_error("decode: quantized rows must be whole, contiguous blocks");
    }
    for (int64_t i3 = 0; i3 < ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < ne[1]; ++i1) {
                const size_t off = i1 * nb[1] + i2 * nb[2] + i3 * nb[3];
                quant_dequantize(type, bytes + off, ne[0], &r.at(0, i1, i2, i3));
            }
    return r;
}

} // namespace lmtest

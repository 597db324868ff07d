// Row dot products of the float weight types, and the type -> dot lookup.
#include "la_vec_dot.h"
#include "q_dot.h" // quantized weight types (src/cpu/kernels/q_dot*.cpp)

namespace {

using namespace lmggml::cpu::la;

// nrc > 1 (several rows per call, as ggml's mmla kernels do) is never asked
// for by the la_ kernels, so these compute a single dot.
void vec_dot_f32(int n, float * s, size_t, const void * x, size_t, const void * y, size_t, int) {
    *s = dot_f32(n, (const float *) x, (const float *) y);
}

void vec_dot_f16(int n, float * s, size_t, const void * x, size_t, const void * y, size_t, int) {
    *s = dot_f16(n, (const lm_ggml_fp16_t *) x, (const lm_ggml_fp16_t *) y);
}

void vec_dot_bf16(int n, float * s, size_t, const void * x, size_t, const void * y, size_t, int) {
    *s = dot_bf16(n, (const uint16_t *) x, (const uint16_t *) y);
}

// Activation conversions: round to nearest even, as ggml's from_float does.
void f32_to_f16_row(const float * x, void * y, int64_t k) {
    auto * out = (lm_ggml_fp16_t *) y;
    for (int64_t i = 0; i < k; ++i) {
        out[i] = lm_ggml_compute_fp32_to_fp16(x[i]);
    }
}

void f32_to_bf16_row(const float * x, void * y, int64_t k) {
    auto * out = (lm_ggml_bf16_t *) y;
    for (int64_t i = 0; i < k; ++i) {
        out[i] = lm_ggml_compute_fp32_to_bf16(x[i]);
    }
}

constexpr lm_cpu_vec_dot_traits kF32  = {vec_dot_f32, LM_GGML_TYPE_F32, nullptr};
constexpr lm_cpu_vec_dot_traits kF16  = {vec_dot_f16, LM_GGML_TYPE_F16, f32_to_f16_row};
constexpr lm_cpu_vec_dot_traits kBF16 = {vec_dot_bf16, LM_GGML_TYPE_BF16, f32_to_bf16_row};

} // namespace

const lm_cpu_vec_dot_traits * lm_cpu_get_vec_dot_traits(lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_F32:  return &kF32;
        case LM_GGML_TYPE_F16:  return &kF16;
        case LM_GGML_TYPE_BF16: return &kBF16;
        // quantized fast paths (see la_vec_dot.h); NULL for types without one
        default:                return lm_cpu_get_quant_vec_dot_traits(type);
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
        p.vec_dot      = t->vec_dot;
        p.vec_dot_type = t->vec_dot_type;
        p.from_float   = t->from_float;
        p.ok           = true;
        return p;
    }
    // dequantize path: needs a row decoder; activations stay F32
    if (lm_ggml_to_float_t to_float = decoder_of(weight_type)) {
        p.to_float     = to_float;
        p.vec_dot_type = LM_GGML_TYPE_F32;
        p.ok           = true;
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
    const size_t  row   = lm_ggml_row_size(p.vec_dot_type, b->ne[0]);
    const int64_t nrows = b->ne[1] * b->ne[2] * b->ne[3];
    const Range   r     = split(nrows, params->ith, params->nth);
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

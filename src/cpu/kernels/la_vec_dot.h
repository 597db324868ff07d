#pragma once
// Row dot products by weight type, used by MUL_MAT, MUL_MAT_ID and
// FLASH_ATTN_EXT (K rows). As in ggml, the activation row is first converted
// to the weight type's vec_dot_type (F16 for F16 weights, Q8_0 for Q4_0, ...)
// and vec_dot then takes one row of each.
//
// A type without an entry but with type traits to_float (quantized types
// before their fast dot lands) still works: the kernels dequantize weight rows
// to F32 in scratch and use dot_f32 (see Plan below).
//
// Adding a fast path for a type (e.g. the quant kernels): write
//   void vec_dot_q4_0_q8_0(int n, float * s, size_t bs, const void * x, size_t bx,
//                          const void * y, size_t by, int nrc);   // nrc == 1
// in its own file and add one `case` to lm_cpu_get_vec_dot_traits in
// la_vec_dot.cpp returning {vec_dot_q4_0_q8_0, LM_GGML_TYPE_Q8_0, quantize_row_q8_0}.

#include "ggml-cpu.h" // lm_ggml_vec_dot_t
#include "la_common.h"

struct lm_cpu_vec_dot_traits {
    lm_ggml_vec_dot_t vec_dot;       // dot(n, &s, 0, weight row, 0, converted row, 0, 1)
    enum lm_ggml_type vec_dot_type;  // activations are converted to this type first
    lm_ggml_from_float_t from_float; // F32 row -> vec_dot_type row (NULL when vec_dot_type is F32)
};

// Entry for a weight type, or NULL when there is no direct dot for it.
const struct lm_cpu_vec_dot_traits * lm_cpu_get_vec_dot_traits(enum lm_ggml_type type);

namespace lmggml::cpu::la {

// How a kernel multiplies rows of one weight type with F32 activations.
struct Plan {
    lm_ggml_vec_dot_t vec_dot;       // direct dot, or NULL for the dequantize path
    lm_ggml_to_float_t to_float;     // dequantize path: weight row -> F32 scratch
    lm_ggml_type vec_dot_type;       // type activation rows must have (F32 on the dequantize path)
    lm_ggml_from_float_t from_float; // F32 -> vec_dot_type, NULL when none is needed
    bool ok;                         // false: this weight type cannot be multiplied
};

Plan plan_for(lm_ggml_type weight_type);

// The type's row decoder (type traits to_float), or NULL when it has none or
// the value is not a type at all (checked quietly: kernels do not log).
lm_ggml_to_float_t decoder_of(lm_ggml_type type);

// One weight row (already addressed) times one activation row of vec_dot_type.
// `scratch` holds n floats and is only used on the dequantize path.
inline float plan_dot(const Plan & p, int64_t n, const void * w, const void * a, float * scratch) {
    if (p.vec_dot != nullptr) {
        float s;
        p.vec_dot((int) n, &s, 0, w, 0, a, 0, 1);
        return s;
    }
    p.to_float(w, scratch, n);
    return dot_f32(n, scratch, (const float *) a);
}

// Activation rows of b converted to the plan's vec_dot_type, packed
// (row (i1, i2, i3) at ((i3*ne2 + i2)*ne1 + i1) * row bytes). Zero when b
// already has that type and is used in place.
size_t converted_size(const Plan & p, const lm_ggml_tensor * b);

// Each thread converts its share of b's rows into out; the caller syncs after.
void convert_rows(const lm_cpu_params * params, const Plan & p, const lm_ggml_tensor * b, void * out);

// Where activation row (i1, i2, i3) lives: in b itself or in the packed copy.
struct Rows {
    const char * base;
    size_t nb1, nb2, nb3;

    const char * at(int64_t i1, int64_t i2, int64_t i3) const { return base + i1 * nb1 + i2 * nb2 + i3 * nb3; }
};
Rows activation_rows(const Plan & p, const lm_ggml_tensor * b, const void * converted);

} // namespace lmggml::cpu::la

#pragma once
// Quantized weights on the CPU: per weight type, the row dot product against
// activations converted to its vec_dot_type (as in ggml: q4_0, q5_0, q8_0 ->
// q8_0; q4_1, q5_1 -> q8_1; K-quants -> q8_K), the activation quantizer and
// the row dequantizer. The table's dots are the CPU's best kernels
// (src/cpu/arch/kernels.h); the lm_cpu_q functions below are their scalar
// integer twins. Pure functions.

#include "ggml.h"

struct lm_cpu_qtype_ops {
    // *s = dot(x, y) over n values: x one row of this type, y one row of
    // vec_dot_type; n is a multiple of both block sizes. NULL for types that
    // only serve as activations (q8_1, q8_K).
    void (*vec_dot)(int n, float * s, const void * x, const void * y);
    enum lm_ggml_type vec_dot_type;
    lm_ggml_from_float_t from_float; // F32 row -> row of this type: src/quant's reference quantizer
    lm_ggml_to_float_t to_float;     // row of this type -> F32
};

// Entry for a quantized type (q4_0 .. q8_K), NULL for any other type.
const struct lm_cpu_qtype_ops * lm_cpu_get_qtype_ops(enum lm_ggml_type type);

// The same dots in the shape of la_vec_dot.h's lm_cpu_vec_dot_traits (ggml's
// vec_dot signature, nrc == 1), for lm_cpu_get_vec_dot_traits. NULL for types
// without a dot.
struct lm_cpu_vec_dot_traits;
const struct lm_cpu_vec_dot_traits * lm_cpu_get_quant_vec_dot_traits(enum lm_ggml_type type);

namespace lm_cpu_q {

// weight-type x activation-type dots, scalar twins (q_dot_legacy.cpp, q_dot_k.cpp)
void vec_dot_q4_0_q8_0(int n, float * s, const void * x, const void * y);
void vec_dot_q4_1_q8_1(int n, float * s, const void * x, const void * y);
void vec_dot_q5_0_q8_0(int n, float * s, const void * x, const void * y);
void vec_dot_q5_1_q8_1(int n, float * s, const void * x, const void * y);
void vec_dot_q8_0_q8_0(int n, float * s, const void * x, const void * y);
void vec_dot_q2_K_q8_K(int n, float * s, const void * x, const void * y);
void vec_dot_q3_K_q8_K(int n, float * s, const void * x, const void * y);
void vec_dot_q4_K_q8_K(int n, float * s, const void * x, const void * y);
void vec_dot_q5_K_q8_K(int n, float * s, const void * x, const void * y);
void vec_dot_q6_K_q8_K(int n, float * s, const void * x, const void * y);

} // namespace lm_cpu_q

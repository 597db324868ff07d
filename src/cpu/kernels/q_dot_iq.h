#pragma once
// Scalar integer dots of the grid I-quants (IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) with q8_K activations, ggml's pairing. They
// are the scalar level's kernels and the twins of the vector ones
// (src/cpu/arch/x86/qdot_iq_avx2.cpp).

namespace lm_cpu_q {

void vec_dot_iq2_xxs_q8_K(int n, float * s, const void * x, const void * y);
void vec_dot_iq2_xs_q8_K(int n, float * s, const void * x, const void * y);
void vec_dot_iq2_s_q8_K(int n, float * s, const void * x, const void * y);
void vec_dot_iq3_xxs_q8_K(int n, float * s, const void * x, const void * y);
void vec_dot_iq3_s_q8_K(int n, float * s, const void * x, const void * y);
void vec_dot_iq1_s_q8_K(int n, float * s, const void * x, const void * y);
void vec_dot_iq1_m_q8_K(int n, float * s, const void * x, const void * y);

} // namespace lm_cpu_q

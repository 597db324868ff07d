#pragma once
// Scalar integer dots of IQ4_NL (with q8_0 activations), IQ4_XS, TQ1_0 and
// TQ2_0 (with q8_K activations), ggml's pairings. They are the scalar
// level's kernels and the twins of the vector ones (src/cpu/arch/x86/qdot_iq4_*.cpp).

namespace lm_cpu_q {

void vec_dot_iq4_nl_q8_0(int n, float * s, const void * x, const void * y);
void vec_dot_iq4_xs_q8_K(int n, float * s, const void * x, const void * y);
void vec_dot_tq1_0_q8_K(int n, float * s, const void * x, const void * y);
void vec_dot_tq2_0_q8_K(int n, float * s, const void * x, const void * y);

} // namespace lm_cpu_q

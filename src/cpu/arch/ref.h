#pragma once
// Scalar twins of the optimized kernels (layouts in layouts.h). Plain C++
// compiled for baseline x86-64 (or any CPU); the scalar KernelSet uses the
// row conversions, the tests compare every vector kernel with its twin.

#include "kernels.h"

namespace lmggml::cpu::arch::ref {

// ---------------------------------------------------------------- activation rows
// F32 -> Q8_0 / Q8_1 rounded as ggml's x86 SIMD path (layouts.h), k % 32 == 0.
void quantize_row_q8_0(const float * x, void * y, int64_t k);
void quantize_row_q8_1(const float * x, void * y, int64_t k);
// F32 -> F16 / BF16, round to nearest even.
void convert_row_f16(const float * x, void * y, int64_t k);
void convert_row_bf16(const float * x, void * y, int64_t k);

// ---------------------------------------------------------------- vector math (VecMath)
float exp_sum(int64_t n, const float * x, float shift, float * y);
void silu(int64_t n, const float * x, float * y);
void gelu(int64_t n, const float * x, float * y);
float scale_mask_max(int64_t n, const float * x, float scale, const float * m32, const uint16_t * m16, float slope,
                     float * y);
void scale(int64_t n, float * y, float s);
void widen_f16(int64_t n, const uint16_t * x, float * y);

// ---------------------------------------------------------------- attention (AttnF16)
void attn_f16_scores(int64_t d, int64_t n, const void * k, size_t ldk, const float * q, int64_t g, float * s);
void attn_f16_accumulate(int64_t d, int64_t n, const void * v, size_t ldv, const float * p, int64_t g, float * acc);

// ---------------------------------------------------------------- float dots (ggml signature, nrc == 1)
void vec_dot_f32(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc);
void vec_dot_f16(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc);
void vec_dot_bf16(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc);

// ---------------------------------------------------------------- RowDot
void rowdot_pack_q4_0(const float * x, void * act, int64_t k);
void rowdot_pack_q4_1(const float * x, void * act, int64_t k);
void rowdot_pack_q8_0(const float * x, void * act, int64_t k);
void rowdot_q4_0(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst);
void rowdot_q4_1(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst);
void rowdot_q8_0(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst);
void rowdot_q5_0(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst);
void rowdot_q5_1(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst);
void rowdot_iq4_nl(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst);
extern const RowDot kRowDotQ4_0, kRowDotQ4_1, kRowDotQ8_0;
// Q5_0 and IQ4_NL on Q4_0's activation rows, Q5_1 on Q4_1's
extern const RowDot kRowDotQ5_0, kRowDotQ5_1, kRowDotIQ4_NL;
// Q4_K, Q5_K, Q6_K: activation rows of every level from rowdot_pack_q4_K
// (Q5_K too) / _q6_K (layouts.h)
void rowdot_pack_q4_K(const float * x, void * act, int64_t k);
void rowdot_q4_K(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst);
void rowdot_q5_K(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst);
void rowdot_pack_q6_K(const float * x, void * act, int64_t k);
void rowdot_q6_K(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst);
void rowdot_q2_K(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst); // Q6_K's rows
void rowdot_q3_K(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst); // Q6_K's rows
extern const RowDot kRowDotQ2_K, kRowDotQ3_K, kRowDotQ4_K, kRowDotQ5_K, kRowDotQ6_K;
// IQ4_XS: activation rows of every level from rowdot_pack_iq4_xs (layouts.h)
void rowdot_pack_iq4_xs(const float * x, void * act, int64_t k);
void rowdot_iq4_xs(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst);
extern const RowDot kRowDotIQ4_XS;
// F32 / F16: the Gemm's activation rows (gemm_pack_act_f*), one float sum per row
extern const RowDot kRowDotF32, kRowDotF16;

// ---------------------------------------------------------------- RowDotX8 (repacked weights)
// Activation rows from x8::pack_act_* (x8.h), shared by every level.
extern const RowDotX8 kRowDotX8Q4_0, kRowDotX8Q4_1, kRowDotX8Q5_0, kRowDotX8Q5_1, kRowDotX8Q8_0, kRowDotX8IQ4_NL;

// ---------------------------------------------------------------- Gemm
// Block types: activation rows per weight type, panels per weight type, one compute.
void gemm_pack_act_q4_0(const float * x, void * act, int64_t k);
void gemm_pack_act_q4_1(const float * x, void * act, int64_t k);
void gemm_pack_act_q5_0(const float * x, void * act, int64_t k);
void gemm_pack_act_q5_1(const float * x, void * act, int64_t k);
void gemm_pack_act_q8_0(const float * x, void * act, int64_t k);
void gemm_pack_panel_q4_0(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
void gemm_pack_panel_q4_1(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
void gemm_pack_panel_q5_0(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
void gemm_pack_panel_q5_1(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
void gemm_pack_panel_q8_0(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
void gemm_pack_panel_iq4_nl(const void * w, size_t ldw, int64_t m, int64_t k, void * panel); // Q8_0's activation rows
void gemm_compute_q(const void * panel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst,
                    size_t ldd);
// K-quants (layouts.h): Q4_K / Q5_K on 32-value blocks, Q6_K on 16-value blocks
void gemm_pack_act_q4_K(const float * x, void * act, int64_t k); // also Q5_K's
void gemm_pack_act_q6_K(const float * x, void * act, int64_t k); // also Q3_K's
void gemm_pack_act_q2_K(const float * x, void * act, int64_t k); // Q6_K's with s = d * sum
void gemm_pack_panel_q2_K(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
void gemm_pack_panel_q3_K(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
void gemm_pack_panel_q4_K(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
void gemm_pack_panel_q5_K(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
void gemm_pack_panel_q6_K(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
// IQ4_XS: Q4_K's sub-blocks with levels + 128 (activation c = 128 * sum, s = 0)
void gemm_pack_act_iq4_xs(const float * x, void * act, int64_t k);
void gemm_pack_panel_iq4_xs(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
void gemm_compute_q16(const void * panel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst,
                      size_t ldd);
// F32 and F16 weights
void gemm_pack_act_f32(const float * x, void * act, int64_t k);
void gemm_pack_act_f16(const float * x, void * act, int64_t k);
void gemm_pack_panel_f32(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
void gemm_pack_panel_f16(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
void gemm_compute_f(const void * panel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst,
                    size_t ldd);
extern const Gemm kGemmQ4_0, kGemmQ4_1, kGemmQ5_0, kGemmQ5_1, kGemmQ8_0, kGemmIQ4_NL, kGemmF32, kGemmF16;
extern const Gemm kGemmQ2_K, kGemmQ3_K, kGemmQ4_K, kGemmQ5_K, kGemmQ6_K, kGemmIQ4_XS;

} // namespace lmggml::cpu::arch::ref

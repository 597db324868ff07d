// Plain ARMv8 NEON (every AArch64 CPU): ggml-format row dots for F32, F16,
// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K and the RowDot kernels of Q4_0, Q4_1, Q8_0
// (qdot_impl.h with widening multiplies: smull / smlal2 into int16, then
// sadalp into int32; a pair of products is at most 2 * 128 * 127, within
// int16). The RowDot activation rows come from the scalar packers (ref.h),
// so every level reads the same bytes. Twins: see qdot_impl.h.
#if defined(__aarch64__)

#include "arm.h"
#include "qdot_impl.h"

#include "../ref.h"

namespace lmggml::cpu::arch::arm {
namespace {

struct Widening {
    static int32x4_t dot(int32x4_t acc, int8x16_t a, int8x16_t b) {
        int16x8_t p = vmull_s8(vget_low_s8(a), vget_low_s8(b));
        p = vmlal_high_s8(p, a, b);
        return vpadalq_s16(acc, p);
    }
};

using D = Dots<Widening>;

// ---------------------------------------------------------------- floats
void vec_dot_f32(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    const auto * x = static_cast<const float *>(vx);
    const auto * y = static_cast<const float *>(vy);
    float32x4_t acc[4] = {vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0)};
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        for (int u = 0; u < 4; ++u) acc[u] = vfmaq_f32(acc[u], vld1q_f32(x + i + 4 * u), vld1q_f32(y + i + 4 * u));
    }
    for (; i + 4 <= n; i += 4) acc[0] = vfmaq_f32(acc[0], vld1q_f32(x + i), vld1q_f32(y + i));
    float tail = 0.0f;
    for (; i < n; ++i) tail += x[i] * y[i];
    *s = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3]))) + tail;
}

// F16 rows widened to float (fcvtl, plain ARMv8): the products and sums in
// float, as the scalar twin
void vec_dot_f16(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    const auto * x = static_cast<const uint16_t *>(vx);
    const auto * y = static_cast<const uint16_t *>(vy);
    float32x4_t acc[4] = {vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0)};
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        for (int u = 0; u < 4; ++u) acc[u] = vfmaq_f32(acc[u], load_f16x4(x + i + 4 * u), load_f16x4(y + i + 4 * u));
    }
    for (; i + 4 <= n; i += 4) acc[0] = vfmaq_f32(acc[0], load_f16x4(x + i), load_f16x4(y + i));
    float tail = 0.0f;
    for (; i < n; ++i) tail += from_f16(x[i]) * from_f16(y[i]);
    *s = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3]))) + tail;
}

const RowDot kQ4_0 = {layout::rowdot_q4_size, ref::rowdot_pack_q4_0, D::rows<D::row_q4<false>>};
const RowDot kQ4_1 = {layout::rowdot_q4_size, ref::rowdot_pack_q4_1, D::rows<D::row_q4<true>>};
const RowDot kQ8_0 = {layout::rowdot_q8_size, ref::rowdot_pack_q8_0, D::rows<D::row_q8>};

} // namespace

void fill_neon_qdot(KernelSet & k) {
    k.vec_dot[LM_GGML_TYPE_F32] = vec_dot_f32;
    k.vec_dot[LM_GGML_TYPE_F16] = vec_dot_f16;
    k.vec_dot[LM_GGML_TYPE_Q4_0] = D::q4_0;
    k.vec_dot[LM_GGML_TYPE_Q4_1] = D::q4_1;
    k.vec_dot[LM_GGML_TYPE_Q5_0] = D::q5_0;
    k.vec_dot[LM_GGML_TYPE_Q5_1] = D::q5_1;
    k.vec_dot[LM_GGML_TYPE_Q8_0] = D::q8_0;
    k.vec_dot[LM_GGML_TYPE_Q4_K] = D::q45_K<false, lm_block_q4_K>;
    k.vec_dot[LM_GGML_TYPE_Q5_K] = D::q45_K<true, lm_block_q5_K>;
    k.vec_dot[LM_GGML_TYPE_Q6_K] = D::q6_K;
    k.vec_dot[LM_GGML_TYPE_Q2_K] = D::q23_K<false, lm_block_q2_K>;
    k.vec_dot[LM_GGML_TYPE_Q3_K] = D::q23_K<true, lm_block_q3_K>;
    k.rowdot[LM_GGML_TYPE_Q4_0] = &kQ4_0;
    k.rowdot[LM_GGML_TYPE_Q4_1] = &kQ4_1;
    k.rowdot[LM_GGML_TYPE_Q8_0] = &kQ8_0;
}

} // namespace lmggml::cpu::arch::arm

#endif

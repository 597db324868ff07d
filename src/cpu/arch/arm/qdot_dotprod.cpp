// ARMv8.2 dot product (sdot; HWCAP_ASIMDDP): the integer row dots and RowDot
// kernels of qdot_neon.cpp with one sdot per 16 byte pairs instead of the
// widening multiply chain. The float dots stay those of the neon level.
// Twins: see qdot_impl.h.
#if defined(__aarch64__)

#include "arm.h"
#include "qdot_impl.h"

#include "../ref.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "qdot_dotprod.cpp needs -march=armv8.2-a+dotprod (src/cpu/arch/flags.cmake)"
#endif

namespace lmggml::cpu::arch::arm {
namespace {

struct Sdot {
    static int32x4_t dot(int32x4_t acc, int8x16_t a, int8x16_t b) { return vdotq_s32(acc, a, b); }
};

using D = Dots<Sdot>;

const RowDot kQ4_0 = {layout::rowdot_q4_size, ref::rowdot_pack_q4_0, D::rows<D::row_q4<false>>};
const RowDot kQ4_1 = {layout::rowdot_q4_size, ref::rowdot_pack_q4_1, D::rows<D::row_q4<true>>};
const RowDot kQ8_0 = {layout::rowdot_q8_size, ref::rowdot_pack_q8_0, D::rows<D::row_q8>};

} // namespace

void fill_dotprod_qdot(KernelSet & k) {
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

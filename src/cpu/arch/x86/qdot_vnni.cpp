// AVX-512 VNNI (256-bit vpdpbusd) row dots in ggml's formats for the
// 32-value block types: qdot_impl.h with one vpdpbusd per 32 bytes instead
// of maddubs + madd. Twins: lm_cpu_q::vec_dot_*.
#if defined(__x86_64__) || defined(__i386__)

#include "qdot_impl.h"
#include "x86.h"

namespace lmggml::cpu::arch::x86 {
namespace {

struct Vnni {
    static __m256i dot(__m256i u, __m256i s) { return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s); }
    static __m256i dot_offset(__m256i u, __m256i s, __m256i o) { return _mm256_sub_epi32(dot(u, s), dot(o, s)); }
};

using L = Legacy<Vnni>;

} // namespace

void fill_vnni_qdot(KernelSet & k) {
    k.vec_dot[LM_GGML_TYPE_Q4_0] = L::q4_0;
    k.vec_dot[LM_GGML_TYPE_Q4_1] = L::q4_1;
    k.vec_dot[LM_GGML_TYPE_Q5_0] = L::q5_0;
    k.vec_dot[LM_GGML_TYPE_Q5_1] = L::q5_1;
    k.vec_dot[LM_GGML_TYPE_Q8_0] = L::q8_0;
}

} // namespace lmggml::cpu::arch::x86

#endif

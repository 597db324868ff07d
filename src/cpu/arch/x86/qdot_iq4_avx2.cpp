// AVX2 row dots of IQ4_NL, IQ4_XS, TQ1_0, TQ2_0 (qdot_iq4_impl.h with
// maddubs + madd). Twins: lm_cpu_q::vec_dot_iq4_nl_q8_0 etc.
#if defined(__x86_64__) || defined(__i386__)

#include "qdot_iq4_impl.h"
#include "x86.h"

namespace lmggml::cpu::arch::x86 {
namespace {

struct Maddubs {
    static __m256i dot(__m256i u, __m256i s) {
        return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
    }
};

using K = IqTq<Maddubs>;

} // namespace

void fill_avx2_qdot_iq4(KernelSet & k) {
    k.vec_dot[LM_GGML_TYPE_IQ4_NL] = K::iq4_nl;
    k.vec_dot[LM_GGML_TYPE_IQ4_XS] = K::iq4_xs;
    k.vec_dot[LM_GGML_TYPE_TQ1_0] = K::tq1_0;
    k.vec_dot[LM_GGML_TYPE_TQ2_0] = K::tq2_0;
}

} // namespace lmggml::cpu::arch::x86

#endif

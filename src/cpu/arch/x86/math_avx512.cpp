// AVX-512 vector math: math_impl.h on 16-float vectors (2^n by vscalefps,
// masked tails).
#if defined(__x86_64__) || defined(__i386__)

#include "math_impl.h"
#include "x86.h"

namespace lmggml::cpu::arch::x86 {

void fill_avx512_math(KernelSet & k) { fill_math<F32x16>(k); }

} // namespace lmggml::cpu::arch::x86

#endif

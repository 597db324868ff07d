// AVX2 vector math: math_impl.h on 8-float vectors (2^n from exponent bits).
#if defined(__x86_64__) || defined(__i386__)

#include "math_impl.h"
#include "x86.h"

namespace lmggml::cpu::arch::x86 {

void fill_avx2_math(KernelSet & k) { fill_math<F32x8>(k); }

} // namespace lmggml::cpu::arch::x86

#endif

// AVX-512 Gemm for F32 and F16 weights: gemm_f_impl.h on 16-float vectors.
// 32 zmm registers: 16 accumulators (32 rows x 8 columns, or 16 x 16). The
// panel is walked in chunks of 192 steps of k (24 KiB) that stay in L1.
#if defined(__x86_64__) || defined(__i386__)

#include "gemm_f_impl.h"
#include "x86.h"

namespace lmggml::cpu::arch::x86 {
namespace {

constexpr Gemm kF32 = gemm_f32<F32x16, 192, 16>();
constexpr Gemm kF16 = gemm_f16<F32x16, 192, 16>();

} // namespace

void fill_avx512_gemm_f(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_F32] = &kF32;
    k.gemm[LM_GGML_TYPE_F16] = &kF16;
}

} // namespace lmggml::cpu::arch::x86

#endif

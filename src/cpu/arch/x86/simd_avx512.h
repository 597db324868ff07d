#pragma once
// Small AVX-512 helpers for the x86 kernel files built with the avx512 (or
// higher) flags. Everything is static: no copy compiled with vector flags may
// be shared with baseline code through the linker.

#include "simd_avx2.h"

#include <immintrin.h>

namespace lmggml::cpu::arch::x86 {

#if defined(__AVX512F__)
// [sum of a's lanes, b's, c's, d's]: 128-bit blocks folded pairwise, then
// the 4 lanes of each block. Each sum only ever meets its own operand's
// lanes, in the same order, so a sum reduced beside zeros has the bits it
// has in a batch of 4.
static inline __m128 hsum16x4(__m512 a, __m512 b, __m512 c, __m512 d) {
    const __m512 ab = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
    const __m512 cd = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, 0x44), _mm512_shuffle_f32x4(c, d, 0xEE));
    const __m512 x = _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, 0x88), _mm512_shuffle_f32x4(ab, cd, 0xDD));
    // block i holds 4 partial sums of operand i: lane j of every block to block j
    const __m512 t = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), x);
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(t), _mm512_extractf32x8_ps(t, 1));
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}
#endif

} // namespace lmggml::cpu::arch::x86

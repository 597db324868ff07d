#pragma once
// F32 vectors as a policy, for the kernels written once for both x86 widths
// (math_impl.h, gemm_f_impl.h): F32x8 is a ymm (avx2 files), F32x16 a zmm
// (avx512 files; defined only where the avx512 flags are on). Each names
// the few operations the kernels need; the kernels are templates over it.
// Everything has internal linkage (see simd_avx2.h): no instantiation
// compiled with one level's flags can be picked by the linker for another.

#include "simd_avx2.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

struct F32x8 {
    using V = __m256;
    using Mask = __m256i;
    static constexpr int kLanes = 8;

    static V zero() { return _mm256_setzero_ps(); }
    static V set1(float f) { return _mm256_set1_ps(f); }
    static V broadcast(const float * p) { return _mm256_broadcast_ss(p); }
    static V load(const float * p) { return _mm256_loadu_ps(p); }
    static void store(float * p, V v) { _mm256_storeu_ps(p, v); }
    static V load_f16(const uint16_t * p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) p)); }

    static V add(V a, V b) { return _mm256_add_ps(a, b); }
    static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
    static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
    static V div(V a, V b) { return _mm256_div_ps(a, b); }
    static V min(V a, V b) { return _mm256_min_ps(a, b); }
    static V max(V a, V b) { return _mm256_max_ps(a, b); }
    static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }   // a b + c
    static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); } // c - a b
    static V round(V v) { return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static V round_f16(V v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)); }
    static float hsum(V v) { return hsum8(v); }
    static float hmax(V v) { return hmax8(v); }

    // p 2^n for integral n in [-150, 128]: no vscalefps, so 2^n comes from
    // exponent bits as two normal factors 2^(n/2), 2^(n - n/2); the first
    // product is exact, the second rounds once, to 0 / a subnormal / inf as
    // vscalefps would.
    static V scale2(V p, V n) {
        const __m256i ni = _mm256_cvttps_epi32(n); // n is integral: truncation is exact
        const __m256i n1 = _mm256_srai_epi32(ni, 1);
        const __m256i n2 = _mm256_sub_epi32(ni, n1);
        const __m256i bias = _mm256_set1_epi32(127);
        const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
        const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
        return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
    }

    // lanes [0, n) on (n clamped to [0, 8]); masked moves are slow on AMD:
    // the kernels use them only for a partial group of Gemm rows
    static Mask mask(int64_t n) {
        const int c = n < 0 ? 0 : n > 8 ? 8 : (int) n;
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(c), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    static V load(const float * p, Mask m) { return _mm256_maskload_ps(p, m); }
    static void store(float * p, Mask m, V v) { _mm256_maskstore_ps(p, m, v); }

    // Tails of n < 8 elements go through a stack buffer, so no load or store
    // touches memory past n (zeros in the lanes past it).
    static V load_n(const float * p, int64_t n) {
        alignas(32) float buf[8] = {};
        std::memcpy(buf, p, (size_t) n * sizeof(float));
        return _mm256_load_ps(buf);
    }
    static V load_f16_n(const uint16_t * p, int64_t n) {
        alignas(16) uint16_t buf[8] = {};
        std::memcpy(buf, p, (size_t) n * sizeof(uint16_t));
        return load_f16(buf);
    }
    static void store_n(float * p, int64_t n, V v) {
        alignas(32) float buf[8];
        _mm256_store_ps(buf, v);
        std::memcpy(p, buf, (size_t) n * sizeof(float));
    }
    // lanes [0, n) of v, `fill` in the others
    static V keep_n(V v, int64_t n, V fill) { return _mm256_blendv_ps(fill, v, _mm256_castsi256_ps(mask(n))); }
};

#if defined(__AVX512F__)
struct F32x16 {
    using V = __m512;
    using Mask = __mmask16;
    static constexpr int kLanes = 16;

    static V zero() { return _mm512_setzero_ps(); }
    static V set1(float f) { return _mm512_set1_ps(f); }
    static V broadcast(const float * p) { return _mm512_set1_ps(*p); }
    static V load(const float * p) { return _mm512_loadu_ps(p); }
    static void store(float * p, V v) { _mm512_storeu_ps(p, v); }
    static V load_f16(const uint16_t * p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) p)); }

    static V add(V a, V b) { return _mm512_add_ps(a, b); }
    static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
    static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
    static V div(V a, V b) { return _mm512_div_ps(a, b); }
    static V min(V a, V b) { return _mm512_min_ps(a, b); }
    static V max(V a, V b) { return _mm512_max_ps(a, b); }
    static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
    static V round(V v) { return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static V round_f16(V v) { return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)); }
    static float hsum(V v) { return _mm512_reduce_add_ps(v); }
    static float hmax(V v) { return _mm512_reduce_max_ps(v); }

    // p 2^n: vscalefps underflows to 0 and overflows to inf by itself
    static V scale2(V p, V n) { return _mm512_scalef_ps(p, n); }

    static Mask mask(int64_t n) { return n >= 16 ? (Mask) 0xFFFF : n <= 0 ? (Mask) 0 : (Mask) ((1u << n) - 1u); }
    static V load(const float * p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
    static void store(float * p, Mask m, V v) { _mm512_mask_storeu_ps(p, m, v); }

    // masked moves never touch memory in the lanes they leave out
    static V load_n(const float * p, int64_t n) { return load(p, mask(n)); }
    static V load_f16_n(const uint16_t * p, int64_t n) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask(n), p)); }
    static void store_n(float * p, int64_t n, V v) { store(p, mask(n), v); }
    static V keep_n(V v, int64_t n, V fill) { return _mm512_mask_mov_ps(fill, mask(n), v); }
};
#endif

} // namespace
} // namespace lmggml::cpu::arch::x86

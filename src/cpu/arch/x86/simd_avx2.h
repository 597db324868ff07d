#pragma once
// Small AVX2 helpers for the x86 kernel files (included only by files built
// with at least the avx2 flags). Everything is static: no copy compiled with
// vector flags may be shared with baseline code through the linker.

#include <immintrin.h>

#include <cstdint>
#include <limits>

namespace lmggml::cpu::arch::x86 {

// The software prefetch of the kernels that stream weights (or KV rows)
// from memory: into L2 (T1). Into L1 (T0) read slower on the Intel AMX host
// (docs/PERF.md, session 24): an 80 MB Q8_0 matrix at 1 thread 16-19 GB/s
// against 24-26, generation 1-8 % slower; NTA was 2x slower.
static inline void prefetch_stream(const void * p) { _mm_prefetch((const char *) p, _MM_HINT_T1); }

static inline float hmax8(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

static inline float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// Lane i: the sum of v[i]'s lanes. Sums that go through it alone (v[1..3]
// zero) have the same bits as in a batch of 4, so batching rows does not
// make a row's result depend on where a thread's share starts.
// The by-value form keeps named accumulators in registers.
static inline __m128 hsum4(__m256 a, __m256 b, __m256 c, __m256 d) {
    const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

static inline __m128 hsum8x4(const __m256 * v) { return hsum4(v[0], v[1], v[2], v[3]); }

static inline int hsum8_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

// Lanes holding |x| bit patterns (sign cleared): their integer max is the
// float max |x|, and a NaN when any lane holds one (NaN sorts above Inf),
// where a maxps chain would drop a NaN met in its first operand.
static inline float hmax8_abs_bits(__m256i m) {
    __m128i h = _mm_max_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    return _mm_cvtss_f32(_mm_castsi128_ps(h));
}

// r[i] = row i of an 8x8 block of 32-bit values in, column i out (the
// Gemm panel packers: floats, or 4 int8 levels per lane through a cast).
static inline void transpose8(__m256 r[8]) {
    __m256 t[8], s[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; i += 4) {
        s[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        s[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        s[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        s[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 4; ++i) {
        r[i] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x20);
        r[i + 4] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x31);
    }
}

// int32 lane i = sum of the 4 products w[4i + j] * y[4i + j] of signed bytes,
// y != -128: |w| (unsigned, so -128 gives 128) times y with w's sign; pair
// sums of at most 2 * 128 * 127 fit vpmaddubsw's int16, then vpmaddwd widens
static inline __m256i dot4_i8(__m256i w, __m256i y) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(y, w)), _mm256_set1_epi16(1));
}

static inline uint16_t to_f16(float f) { return (uint16_t) _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
static inline float from_f16(uint16_t h) { return _cvtsh_ss(h); }

// 32 int32 levels (4 vectors of 8, in value order) -> 32 int8 in value order.
static inline void store_levels32(const __m256i * q, int8_t * out) {
    const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    // the packs work per 128-bit lane: dwords come out as 0 2 4 6 1 3 5 7
    _mm256_storeu_si256((__m256i *) out, _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

// One block of 32 activations as ggml's x86 code quantizes it, except that a
// NaN reaches d (layouts.h): levels into q, returns d = amax / 127
// (unrounded), *sum = sum of levels.
static inline float quantize_block_avx2(const float * x, int8_t * q, int * sum) {
    // a NaN in the block gives amax = d = NaN: it reaches the product
    const __m256i abs = _mm256_set1_epi32(0x7fffffff);
    __m256 v[4];
    __m256i m = _mm256_setzero_si256();
    for (int u = 0; u < 4; ++u) {
        v[u] = _mm256_loadu_ps(x + 8 * u);
        m = _mm256_max_epi32(m, _mm256_and_si256(_mm256_castps_si256(v[u]), abs));
    }
    const float amax = hmax8_abs_bits(m);
    const __m256 mul = _mm256_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
    __m256i iq[4];
    for (int u = 0; u < 4; ++u) {
        // conversion rounds half to even (MXCSR default)
        iq[u] = _mm256_cvtps_epi32(_mm256_mul_ps(v[u], mul));
    }
    *sum = hsum8_i32(_mm256_add_epi32(_mm256_add_epi32(iq[0], iq[1]), _mm256_add_epi32(iq[2], iq[3])));
    store_levels32(iq, q);
    return amax / 127.0f;
}

// One Q8_K super-block (256 values) exactly as src/quant's reference: the
// value of largest magnitude (the first one on ties) sets iscale = -127 / max;
// levels min(127, round-half-even(iscale x)); bsums per 16; d = 1 / iscale.
// An all-zero block gives zeros everywhere, one holding a NaN zeros and d = NaN.
static inline void quantize_q8K_block_avx2(const float * x, int8_t * qs, int16_t * bsums, float * d) {
    const __m256i absi = _mm256_set1_epi32(0x7fffffff);
    __m256i vmax = _mm256_setzero_si256();
    for (int j = 0; j < 256; j += 8) {
        vmax = _mm256_max_epi32(vmax, _mm256_and_si256(_mm256_loadu_si256((const __m256i *) (x + j)), absi));
    }
    const float amax = hmax8_abs_bits(vmax);
    if (amax == 0.0f || amax != amax) {
        for (int j = 0; j < 256; ++j) qs[j] = 0;
        for (int j = 0; j < 16; ++j) bsums[j] = 0;
        *d = amax == 0.0f ? 0.0f : std::numeric_limits<float>::quiet_NaN();
        return;
    }
    const __m256 abs = _mm256_castsi256_ps(absi);
    const __m256 target = _mm256_set1_ps(amax);
    float max = 0.0f;
    for (int j = 0; j < 256; j += 8) {
        const int hit =
            _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + j), abs), target, _CMP_EQ_OQ));
        if (hit != 0) {
            max = x[j + __builtin_ctz((unsigned) hit)];
            break;
        }
    }
    const float iscale = -127.0f / max;
    const __m256 mul = _mm256_set1_ps(iscale);
    const __m256i top = _mm256_set1_epi32(127);
    for (int j = 0; j < 256; j += 32) {
        __m256i q[4];
        for (int u = 0; u < 4; ++u) {
            q[u] = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + j + 8 * u), mul)), top);
        }
        bsums[j / 16] = (int16_t) hsum8_i32(_mm256_add_epi32(q[0], q[1]));
        bsums[j / 16 + 1] = (int16_t) hsum8_i32(_mm256_add_epi32(q[2], q[3]));
        store_levels32(q, qs + j);
    }
    *d = 1.0f / iscale;
}

} // namespace lmggml::cpu::arch::x86

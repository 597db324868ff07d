// AVX2 vector math (kernels.h VecMath; twins in ref_math.cpp), the same
// method as math_avx512.cpp: x = n ln2 + r with n = round(x / ln2), ln2 split
// in two parts so r is exact, exp(r) by Cephes' degree-7 polynomial on
// |r| <= ln2/2 (about 1 ulp). AVX2 has no vscalefps, so 2^n is built from
// exponent bits; n spans [-150, 128] after the clamp, wider than one normal
// float's exponent, so it is applied as two factors 2^(n/2) and 2^(n - n/2):
// both are normal, the first product is exact and the second rounds once,
// underflowing to 0 (or a subnormal) and overflowing to inf like vscalefps.
// Tails (n % 8) go through an 8-float stack buffer so no load or store
// touches memory past n and every element sees the same polynomial.
#if defined(__x86_64__) || defined(__i386__)

#include "simd_avx2.h"
#include "x86.h"

#include <cmath>
#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

inline __m256 exp256(__m256 x) {
    // below -104 the result is 0 in float; clamping also turns -inf (and NaN) into a finite input
    x = _mm256_max_ps(x, _mm256_set1_ps(-104.0f));
    x = _mm256_min_ps(x, _mm256_set1_ps(89.0f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    // 2^n as two normal factors (see the top); n is already integral, so truncation is exact
    const __m256i ni   = _mm256_cvttps_epi32(n);
    const __m256i n1   = _mm256_srai_epi32(ni, 1);
    const __m256i n2   = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256  s1   = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const __m256  s2   = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

// lanes [0, rem) all ones, the rest zero (0 <= rem <= 8)
inline __m256 lane_mask(int64_t rem) {
    return _mm256_castsi256_ps(
        _mm256_cmpgt_epi32(_mm256_set1_epi32((int) rem), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
}

float exp_sum(int64_t n, const float * x, float shift, float * y) {
    const __m256 s = _mm256_set1_ps(shift);
    // two accumulators: the adds of consecutive vectors do not wait on each other
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 e0 = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
        const __m256 e1 = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), s));
        _mm256_storeu_ps(y + i, e0);
        _mm256_storeu_ps(y + i + 8, e1);
        acc0 = _mm256_add_ps(acc0, e0);
        acc1 = _mm256_add_ps(acc1, e1);
    }
    if (i + 8 <= n) {
        const __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
        _mm256_storeu_ps(y + i, e);
        acc0 = _mm256_add_ps(acc0, e);
        i += 8;
    }
    if (i < n) {
        const int64_t rem = n - i;
        float buf[8] = {};
        std::memcpy(buf, x + i, (size_t) rem * sizeof(float));
        const __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(buf), s));
        _mm256_storeu_ps(buf, e);
        std::memcpy(y + i, buf, (size_t) rem * sizeof(float));
        // the padding lanes hold exp(-shift), not 0: keep them out of the sum
        acc1 = _mm256_add_ps(acc1, _mm256_and_ps(e, lane_mask(rem)));
    }
    return hsum8(_mm256_add_ps(acc0, acc1));
}

inline __m256 silu8(__m256 v) {
    const __m256 e = exp256(_mm256_sub_ps(_mm256_setzero_ps(), v));
    return _mm256_div_ps(v, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

void silu(int64_t n, const float * x, float * y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, silu8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        const int64_t rem = n - i;
        float buf[8] = {};
        std::memcpy(buf, x + i, (size_t) rem * sizeof(float));
        _mm256_storeu_ps(buf, silu8(_mm256_loadu_ps(buf)));
        std::memcpy(y + i, buf, (size_t) rem * sizeof(float));
    }
}

float scale_mask_max(int64_t n, const float * x, float scale, const float * m32, const uint16_t * m16, float slope,
                     float * y) {
    const __m256 sc = _mm256_set1_ps(scale), sl = _mm256_set1_ps(slope);
    __m256 mx = _mm256_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), sc);
        if (m32) v = _mm256_fmadd_ps(sl, _mm256_loadu_ps(m32 + i), v);
        if (m16) v = _mm256_fmadd_ps(sl, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (m16 + i))), v);
        _mm256_storeu_ps(y + i, v);
        mx = _mm256_max_ps(mx, v);
    }
    // the tail element by element, with the same operations as a vector lane
    // (one rounding per multiply and fused add), so every y[i] is the same
    float mt = -INFINITY;
    for (; i < n; ++i) {
        float v = x[i] * scale;
        if (m32) v = std::fma(slope, m32[i], v);
        if (m16) v = std::fma(slope, from_f16(m16[i]), v);
        y[i] = v;
        mt = v > mt ? v : mt;
    }
    const float mv = hmax8(mx);
    return mt > mv ? mt : mv;
}

void scale(int64_t n, float * y, float s) {
    const __m256 sv = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), sv));
    for (; i < n; ++i) y[i] *= s;
}

} // namespace

void fill_avx2_math(KernelSet & k) {
    k.math.exp_sum = exp_sum;
    k.math.silu    = silu;
    k.math.scale_mask_max = scale_mask_max;
    k.math.scale   = scale;
}

} // namespace lmggml::cpu::arch::x86

#endif

// AVX-512 vector math (kernels.h VecMath; twins in ref_math.cpp).
// exp: x = n ln2 + r with n = round(x / ln2), ln2 split in two parts so r is
// exact, exp(r) by Cephes' degree-7 polynomial on |r| <= ln2/2 (about 1 ulp),
// 2^n applied by vscalefps, which also underflows to 0 and overflows to inf.
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#include <cmath>

#include "x86.h"

namespace lmggml::cpu::arch::x86 {
namespace {

inline __m512 exp512(__m512 x) {
    // below -104 the result is 0 in float; clamping also turns -inf into a finite input
    x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));
    x = _mm512_min_ps(x, _mm512_set1_ps(89.0f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(p, n);
}

float exp_sum(int64_t n, const float * x, float shift, float * y) {
    const __m512 s = _mm512_set1_ps(shift);
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 e = exp512(_mm512_sub_ps(_mm512_loadu_ps(x + i), s));
        _mm512_storeu_ps(y + i, e);
        acc = _mm512_add_ps(acc, e);
    }
    if (i < n) {
        const __mmask16 m = (__mmask16) ((1u << (n - i)) - 1);
        const __m512 e = exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), s));
        _mm512_mask_storeu_ps(y + i, m, e);
        acc = _mm512_mask_add_ps(acc, m, acc, e);
    }
    return _mm512_reduce_add_ps(acc);
}

void silu(int64_t n, const float * x, float * y) {
    const __m512 one = _mm512_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        const __m512 e = exp512(_mm512_sub_ps(_mm512_setzero_ps(), v));
        _mm512_storeu_ps(y + i, _mm512_div_ps(v, _mm512_add_ps(one, e)));
    }
    if (i < n) {
        const __mmask16 m = (__mmask16) ((1u << (n - i)) - 1);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        const __m512 e = exp512(_mm512_sub_ps(_mm512_setzero_ps(), v));
        _mm512_mask_storeu_ps(y + i, m, _mm512_div_ps(v, _mm512_add_ps(one, e)));
    }
}

float scale_mask_max(int64_t n, const float * x, float scale, const float * m32, const uint16_t * m16, float slope,
                     float * y) {
    const __m512 sc = _mm512_set1_ps(scale), sl = _mm512_set1_ps(slope);
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = n - i >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (n - i)) - 1);
        __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), sc);
        if (m32) v = _mm512_fmadd_ps(sl, _mm512_maskz_loadu_ps(k, m32 + i), v);
        if (m16) v = _mm512_fmadd_ps(sl, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, m16 + i)), v);
        _mm512_mask_storeu_ps(y + i, k, v);
        mx = _mm512_mask_max_ps(mx, k, mx, v);
    }
    return _mm512_reduce_max_ps(mx);
}

void scale(int64_t n, float * y, float s) {
    const __m512 sv = _mm512_set1_ps(s);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = n - i >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, y + i), sv));
    }
}

} // namespace

void fill_avx512_math(KernelSet & k) {
    k.math.exp_sum = exp_sum;
    k.math.silu    = silu;
    k.math.scale_mask_max = scale_mask_max;
    k.math.scale   = scale;
}

} // namespace lmggml::cpu::arch::x86

#endif

#pragma once
// Vector math (kernels.h VecMath; twins in ref_math.cpp) written once over
// an F32 vector policy (simd_f32.h): math_avx2.cpp instantiates it with
// F32x8, math_avx512.cpp with F32x16. Everything has internal linkage.
//
// exp: x = n ln2 + r with n = round(x / ln2), ln2 split in two parts so r is
// exact, exp(r) by Cephes' degree-7 polynomial on |r| <= ln2/2 (about 1 ulp),
// then r scaled by 2^n (P::scale2), which underflows to 0 and overflows to inf.
// Tails (n % lanes) go through P::load_n / store_n, so every element sees
// the same operations and nothing past n is touched.

#include "simd_f32.h"

#include "../kernels.h"

#include <cmath>

namespace lmggml::cpu::arch::x86 {
namespace {

template <class P> inline typename P::V exp_v(typename P::V x) {
    // below -104 the result is 0 in float; clamping also turns -inf (and NaN) into a finite input
    x = P::max(x, P::set1(-104.0f));
    x = P::min(x, P::set1(89.0f));
    const auto n = P::round(P::mul(x, P::set1(1.44269504088896341f)));
    auto r = P::fnmadd(n, P::set1(0.693359375f), x);
    r = P::fnmadd(n, P::set1(-2.12194440e-4f), r);
    auto p = P::set1(1.9875691500e-4f);
    p = P::fmadd(p, r, P::set1(1.3981999507e-3f));
    p = P::fmadd(p, r, P::set1(8.3334519073e-3f));
    p = P::fmadd(p, r, P::set1(4.1665795894e-2f));
    p = P::fmadd(p, r, P::set1(1.6666665459e-1f));
    p = P::fmadd(p, r, P::set1(5.0000001201e-1f));
    p = P::fmadd(p, P::mul(r, r), P::add(r, P::set1(1.0f)));
    return P::scale2(p, n);
}

template <class P> float exp_sum(int64_t n, const float * x, float shift, float * y) {
    constexpr int L = P::kLanes;
    const auto s = P::set1(shift);
    // two accumulators: the adds of consecutive vectors do not wait on each other
    auto acc0 = P::zero(), acc1 = P::zero();
    int64_t i = 0;
    for (; i + 2 * L <= n; i += 2 * L) {
        const auto e0 = exp_v<P>(P::sub(P::load(x + i), s));
        const auto e1 = exp_v<P>(P::sub(P::load(x + i + L), s));
        P::store(y + i, e0);
        P::store(y + i + L, e1);
        acc0 = P::add(acc0, e0);
        acc1 = P::add(acc1, e1);
    }
    if (i + L <= n) {
        const auto e = exp_v<P>(P::sub(P::load(x + i), s));
        P::store(y + i, e);
        acc0 = P::add(acc0, e);
        i += L;
    }
    if (i < n) {
        const auto e = exp_v<P>(P::sub(P::load_n(x + i, n - i), s));
        P::store_n(y + i, n - i, e);
        // the lanes past n hold exp(-shift), not 0: keep them out of the sum
        acc1 = P::add(acc1, P::keep_n(e, n - i, P::zero()));
    }
    return P::hsum(P::add(acc0, acc1));
}

template <class P> inline typename P::V silu_v(typename P::V v) {
    return P::div(v, P::add(P::set1(1.0f), exp_v<P>(P::sub(P::zero(), v))));
}

template <class P> void silu(int64_t n, const float * x, float * y) {
    int64_t i = 0;
    for (; i + P::kLanes <= n; i += P::kLanes) P::store(y + i, silu_v<P>(P::load(x + i)));
    if (i < n) P::store_n(y + i, n - i, silu_v<P>(P::load_n(x + i, n - i)));
}

// GELU(x) = x (1 + tanh(u)) / 2 = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3):
// the sigmoid form has no cancellation for negative x, where 1 + tanh(u) -> 0.
template <class P> inline typename P::V gelu_v(typename P::V v) {
    const auto v2 = P::mul(v, v);
    const auto inner = P::fmadd(P::set1(0.044715f), v2, P::set1(1.0f));
    const auto m2u = P::mul(P::mul(v, P::set1(-2.0f * 0.79788456080286535587989211986876f)), inner); // -2u
    // exp_v saturates at exp(89): a numerator held to -1e4 then still gives ~0 for
    // every x below (maxps returns its second operand for a NaN, so NaN stays NaN)
    return P::div(P::max(P::set1(-1e4f), v), P::add(P::set1(1.0f), exp_v<P>(m2u)));
}

template <class P> void gelu(int64_t n, const float * x, float * y) {
    int64_t i = 0;
    for (; i + P::kLanes <= n; i += P::kLanes) P::store(y + i, gelu_v<P>(P::load(x + i)));
    if (i < n) P::store_n(y + i, n - i, gelu_v<P>(P::load_n(x + i, n - i)));
}

// y = x scale + slope mask (F32 or F16 mask, either may be NULL); returns max y
template <class P>
float scale_mask_max(int64_t n, const float * x, float scale, const float * m32, const uint16_t * m16, float slope,
                     float * y) {
    const auto sc = P::set1(scale), sl = P::set1(slope), ninf = P::set1(-INFINITY);
    auto mx = ninf;
    int64_t i = 0;
    for (; i + P::kLanes <= n; i += P::kLanes) {
        auto v = P::mul(P::load(x + i), sc);
        if (m32) v = P::fmadd(sl, P::load(m32 + i), v);
        if (m16) v = P::fmadd(sl, P::load_f16(m16 + i), v);
        P::store(y + i, v);
        mx = P::max(mx, v);
    }
    if (i < n) {
        const int64_t r = n - i;
        auto v = P::mul(P::load_n(x + i, r), sc);
        if (m32) v = P::fmadd(sl, P::load_n(m32 + i, r), v);
        if (m16) v = P::fmadd(sl, P::load_f16_n(m16 + i, r), v);
        P::store_n(y + i, r, v);
        mx = P::max(mx, P::keep_n(v, r, ninf));
    }
    return P::hmax(mx);
}

template <class P> void scale(int64_t n, float * y, float s) {
    const auto sv = P::set1(s);
    int64_t i = 0;
    for (; i + P::kLanes <= n; i += P::kLanes) P::store(y + i, P::mul(P::load(y + i), sv));
    if (i < n) P::store_n(y + i, n - i, P::mul(P::load_n(y + i, n - i), sv));
}

template <class P> void widen_f16(int64_t n, const uint16_t * x, float * y) {
    int64_t i = 0;
    for (; i + P::kLanes <= n; i += P::kLanes) P::store(y + i, P::load_f16(x + i));
    if (i < n) P::store_n(y + i, n - i, P::load_f16_n(x + i, n - i));
}

template <class P> void fill_math(KernelSet & k) {
    k.math.exp_sum = exp_sum<P>;
    k.math.silu = silu<P>;
    k.math.gelu = gelu<P>;
    k.math.scale_mask_max = scale_mask_max<P>;
    k.math.scale = scale<P>;
    k.math.widen_f16 = widen_f16<P>;
}

} // namespace
} // namespace lmggml::cpu::arch::x86

// Plain ARMv8 NEON vector math (kernels.h VecMath; twins in ref_math.cpp),
// the method of the x86 files: x = n ln2 + r with n = round(x / ln2), ln2
// split in two parts so r is exact, exp(r) by Cephes' degree-7 polynomial on
// |r| <= ln2/2 (about 1 ulp), 2^n applied as two normal factors 2^(n/2) and
// 2^(n - n/2) (n spans [-150, 128] after the clamp): the first product is
// exact, the second rounds once, underflowing to 0 or a subnormal. Tails
// (n % 4) go through a 4-float stack buffer so nothing past n is touched.
#if defined(__aarch64__)

#include "arm.h"
#include "simd_neon.h"

#include <cmath>

namespace lmggml::cpu::arch::arm {
namespace {

static inline float32x4_t exp4(float32x4_t x) {
    // below -104 the result is 0 in float; the clamp also makes -inf finite
    x = vmaxq_f32(x, vdupq_n_f32(-104.0f));
    x = vminq_f32(x, vdupq_n_f32(89.0f));
    const float32x4_t n = vrndnq_f32(vmulq_n_f32(x, 1.44269504088896341f));
    float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
    r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
    float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
    p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
    p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
    p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
    const int32x4_t ni = vcvtq_s32_f32(n); // integral already: truncation is exact
    const int32x4_t n1 = vshrq_n_s32(ni, 1);
    const int32x4_t n2 = vsubq_s32(ni, n1);
    const int32x4_t bias = vdupq_n_s32(127);
    const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23));
    const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23));
    return vmulq_f32(vmulq_f32(p, s1), s2);
}

float exp_sum(int64_t n, const float * x, float shift, float * y) {
    const float32x4_t s = vdupq_n_f32(shift);
    // two accumulators: consecutive adds do not wait on each other
    float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float32x4_t e0 = exp4(vsubq_f32(vld1q_f32(x + i), s));
        const float32x4_t e1 = exp4(vsubq_f32(vld1q_f32(x + i + 4), s));
        vst1q_f32(y + i, e0);
        vst1q_f32(y + i + 4, e1);
        acc0 = vaddq_f32(acc0, e0);
        acc1 = vaddq_f32(acc1, e1);
    }
    if (i + 4 <= n) {
        const float32x4_t e = exp4(vsubq_f32(vld1q_f32(x + i), s));
        vst1q_f32(y + i, e);
        acc0 = vaddq_f32(acc0, e);
        i += 4;
    }
    float tail = 0.0f;
    if (i < n) {
        const int64_t rem = n - i;
        float buf[4] = {};
        std::memcpy(buf, x + i, (size_t) rem * sizeof(float));
        vst1q_f32(buf, exp4(vsubq_f32(vld1q_f32(buf), s)));
        std::memcpy(y + i, buf, (size_t) rem * sizeof(float));
        for (int64_t j = 0; j < rem; ++j) tail += buf[j]; // the padding lanes hold exp(-shift)
    }
    return vaddvq_f32(vaddq_f32(acc0, acc1)) + tail;
}

static inline float32x4_t silu4(float32x4_t v) {
    return vdivq_f32(v, vaddq_f32(vdupq_n_f32(1.0f), exp4(vnegq_f32(v))));
}

void silu(int64_t n, const float * x, float * y) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, silu4(vld1q_f32(x + i)));
    if (i < n) {
        const int64_t rem = n - i;
        float buf[4] = {};
        std::memcpy(buf, x + i, (size_t) rem * sizeof(float));
        vst1q_f32(buf, silu4(vld1q_f32(buf)));
        std::memcpy(y + i, buf, (size_t) rem * sizeof(float));
    }
}

float scale_mask_max(int64_t n, const float * x, float scale, const float * m32, const uint16_t * m16, float slope,
                     float * y) {
    const float32x4_t sl = vdupq_n_f32(slope);
    float32x4_t mx = vdupq_n_f32(-INFINITY);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vmulq_n_f32(vld1q_f32(x + i), scale);
        if (m32) v = vfmaq_f32(v, sl, vld1q_f32(m32 + i));
        if (m16) v = vfmaq_f32(v, sl, load_f16x4(m16 + i));
        vst1q_f32(y + i, v);
        mx = vmaxq_f32(mx, v);
    }
    // the tail with a vector lane's operations (one rounding per multiply and fused add)
    float mt = -INFINITY;
    for (; i < n; ++i) {
        float v = x[i] * scale;
        if (m32) v = std::fma(slope, m32[i], v);
        if (m16) v = std::fma(slope, from_f16(m16[i]), v);
        y[i] = v;
        mt = v > mt ? v : mt;
    }
    const float mv = vmaxvq_f32(mx);
    return mt > mv ? mt : mv;
}

void scale(int64_t n, float * y, float s) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_n_f32(vld1q_f32(y + i), s));
    for (; i < n; ++i) y[i] *= s;
}

void widen_f16(int64_t n, const uint16_t * x, float * y) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, load_f16x4(x + i));
    for (; i < n; ++i) y[i] = from_f16(x[i]);
}

} // namespace

void fill_neon_math(KernelSet & k) {
    k.math.exp_sum = exp_sum;
    k.math.silu = silu;
    k.math.scale_mask_max = scale_mask_max;
    k.math.scale = scale;
    k.math.widen_f16 = widen_f16;
}

} // namespace lmggml::cpu::arch::arm

#endif

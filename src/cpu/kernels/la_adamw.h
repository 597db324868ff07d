#pragma once
// One row of OPT_STEP_ADAMW (la_backward.cpp), written so that the compiler
// vectorises it. A plain loop with sqrtf stays scalar: under -fmath-errno
// (the default) each sqrtf keeps a branch to the libm call that sets errno
// for negative inputs. So the row is done in blocks: a vectorisable loop
// updates m and v and keeps beta2h v, the square roots are taken 4 at a
// time with the instruction (SSE2 / NEON: IEEE sqrt, the same results, NaN
// for negative inputs as sqrtf), and a second loop updates w. Every element
// gets the same float operations in the same order as the formula.

#include "la_common.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace lmggml::cpu::la {

struct AdamW {
    float alpha, beta1, beta2, eps, beta1h, beta2h;
    float keep; // 1 - alpha wd
};

// y[i] = sqrt(y[i]) for i < n, n a multiple of 4 (y 16-byte aligned)
inline void sqrt_block(float * y, int64_t n) {
#if defined(__SSE2__)
    for (int64_t i = 0; i < n; i += 4) _mm_store_ps(y + i, _mm_sqrt_ps(_mm_load_ps(y + i)));
#elif defined(__ARM_NEON) && defined(__aarch64__)
    for (int64_t i = 0; i < n; i += 4) vst1q_f32(y + i, vsqrtq_f32(vld1q_f32(y + i)));
#else
    for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(y[i]);
#endif
}

// m, v updated in place; w = the new weights from w0 (w0 may be w)
inline void adamw_block(const AdamW & a, int64_t n, const float * w0, float * w, const float * LM_GGML_RESTRICT g,
                        float * LM_GGML_RESTRICT m, float * LM_GGML_RESTRICT v, float * LM_GGML_RESTRICT s) {
    const float c1 = 1.0f - a.beta1, c2 = 1.0f - a.beta2;
    for (int64_t i = 0; i < n; ++i) {
        m[i] = m[i] * a.beta1 + g[i] * c1;
        v[i] = v[i] * a.beta2 + g[i] * g[i] * c2;
        s[i] = v[i] * a.beta2h;
    }
    for (int64_t i = n; i < ((n + 3) & ~(int64_t) 3); ++i) s[i] = 0.0f; // lanes past n: defined, unused
    sqrt_block(s, (n + 3) & ~(int64_t) 3);
    if (w0 == w) { // in place, the op's usual case: one pointer, so the loop vectorises
        float * LM_GGML_RESTRICT x = w;
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] * a.keep - a.alpha * (m[i] * a.beta1h) / (s[i] + a.eps);
    } else {
        for (int64_t i = 0; i < n; ++i) w[i] = w0[i] * a.keep - a.alpha * (m[i] * a.beta1h) / (s[i] + a.eps);
    }
}

inline void adamw_row(const AdamW & a, int64_t n, const float * w0, float * w, const float * g, float * m, float * v) {
    constexpr int64_t kBlock = 256;
    alignas(64) float s[kBlock];
    for (int64_t i = 0; i < n; i += kBlock) {
        const int64_t nb = std::min(kBlock, n - i);
        adamw_block(a, nb, w0 + i, w + i, g + i, m + i, v + i, s);
    }
}

} // namespace lmggml::cpu::la

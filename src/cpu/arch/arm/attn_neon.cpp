// Plain ARMv8 NEON attention over an F16 KV cache (kernels.h AttnF16; twins
// in ref_attn.cpp): each K / V chunk of 8 values is widened to float once
// (fcvtl) and used for up to 4 query rows of the group before the next.
// d % 8 == 0 (the contract), so there are no tails.
#if defined(__aarch64__)

#include "arm.h"
#include "simd_neon.h"

namespace lmggml::cpu::arch::arm {
namespace {

constexpr int64_t kRows = 4; // query rows per pass over a K row

void scores(int64_t d, int64_t n, const void * k, size_t ldk, const float * q, int64_t g, float * s) {
    for (int64_t j = 0; j < n; ++j) {
        const auto * row = reinterpret_cast<const uint16_t *>(static_cast<const char *>(k) + j * (int64_t) ldk);
        for (int64_t i0 = 0; i0 < g; i0 += kRows) {
            const int64_t rows = g - i0 < kRows ? g - i0 : kRows;
            float32x4_t acc[kRows][2];
            for (auto & a : acc) a[0] = a[1] = vdupq_n_f32(0.0f);
            for (int64_t c = 0; c < d; c += 8) {
                const float32x4_t k0 = load_f16x4(row + c), k1 = load_f16x4(row + c + 4);
                for (int64_t r = 0; r < rows; ++r) {
                    const float * qr = q + (i0 + r) * d + c;
                    acc[r][0] = vfmaq_f32(acc[r][0], vld1q_f32(qr), k0);
                    acc[r][1] = vfmaq_f32(acc[r][1], vld1q_f32(qr + 4), k1);
                }
            }
            for (int64_t r = 0; r < rows; ++r) s[(i0 + r) * n + j] = vaddvq_f32(vaddq_f32(acc[r][0], acc[r][1]));
        }
    }
}

void accumulate(int64_t d, int64_t n, const void * v, size_t ldv, const float * p, int64_t g, float * acc) {
    for (int64_t j = 0; j < n; ++j) {
        const auto * row = reinterpret_cast<const uint16_t *>(static_cast<const char *>(v) + j * (int64_t) ldv);
        for (int64_t c = 0; c < d; c += 8) {
            const float32x4_t v0 = load_f16x4(row + c), v1 = load_f16x4(row + c + 4);
            for (int64_t i = 0; i < g; ++i) {
                const float w = p[i * n + j];
                float * a = acc + i * d + c;
                vst1q_f32(a, vfmaq_n_f32(vld1q_f32(a), v0, w));
                vst1q_f32(a + 4, vfmaq_n_f32(vld1q_f32(a + 4), v1, w));
            }
        }
    }
}

} // namespace

void fill_neon_attn(KernelSet & k) {
    k.attn_f16.scores = scores;
    k.attn_f16.accumulate = accumulate;
}

} // namespace lmggml::cpu::arch::arm

#endif

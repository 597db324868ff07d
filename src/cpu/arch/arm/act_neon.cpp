// Plain ARMv8 NEON activation converters (from_float): F32 -> F16, and
// F32 -> Q8_0 / Q8_1 rounded as ggml's x86 SIMD path (layouts.h), which the scalar twins
// (ref_act.cpp) define: amax = max |x|, q = round-half-even(x * (127 / amax)),
// d = amax / 127. The same float operations in the same order, so the bytes
// equal the twin's (fcvtns rounds half to even, as nearbyint does).
#if defined(__aarch64__)

#include "arm.h"
#include "simd_neon.h"

#include "../../../quant/quants.h"

namespace lmggml::cpu::arch::arm {
namespace {

constexpr int kQK = 32;

// one block: levels to q, returns d (unrounded) and the levels' sum. As the
// twin: amax is the max of the |x| bit patterns (a NaN makes d NaN), a
// product that is NaN or outside int32 converts to INT32_MIN as x86's
// cvtps2dq does (fcvtns would give 0 or saturate), levels saturate to
// int8 and the sum wraps.
static inline float quantize_block(const float * x, int8_t * q, int * sum) {
    float32x4_t v[8];
    uint32x4_t amax = vdupq_n_u32(0);
    for (int j = 0; j < 8; ++j) {
        v[j] = vld1q_f32(x + 4 * j);
        amax = vmaxq_u32(amax, vandq_u32(vreinterpretq_u32_f32(v[j]), vdupq_n_u32(0x7fffffffu)));
    }
    const uint32_t abits = vmaxvq_u32(amax);
    float a;
    std::memcpy(&a, &abits, sizeof(a));
    const float id = a != 0.0f ? 127.0f / a : 0.0f;
    const float32x4_t lo = vdupq_n_f32(-2147483648.0f), hi = vdupq_n_f32(2147483648.0f);
    const int32x4_t bad = vdupq_n_s32(INT32_MIN);
    int32x4_t s = vdupq_n_s32(0);
    for (int j = 0; j < 8; j += 2) {
        int32x4_t i[2];
        for (int h = 0; h < 2; ++h) {
            const float32x4_t t = vmulq_n_f32(v[j + h], id);
            const uint32x4_t in = vandq_u32(vcgeq_f32(t, lo), vcltq_f32(t, hi)); // false for NaN
            i[h] = vbslq_s32(in, vcvtnq_s32_f32(t), bad);
        }
        s = vaddq_s32(s, vaddq_s32(i[0], i[1]));
        const int16x8_t w = vcombine_s16(vqmovn_s32(i[0]), vqmovn_s32(i[1]));
        vst1_s8(q + 4 * j, vqmovn_s16(w));
    }
    *sum = vaddvq_s32(s);
    return a / 127.0f;
}

void quantize_row_q8_0(const float * x, void * vy, int64_t k) {
    auto * y = static_cast<lm_block_q8_0 *>(vy);
    for (int64_t i = 0; i < k / kQK; ++i) {
        int sum;
        y[i].d = to_f16(quantize_block(x + i * kQK, y[i].qs, &sum));
    }
}

void quantize_row_q8_1(const float * x, void * vy, int64_t k) {
    auto * y = static_cast<lm_block_q8_1 *>(vy);
    for (int64_t i = 0; i < k / kQK; ++i) {
        int sum;
        const float d = quantize_block(x + i * kQK, y[i].qs, &sum);
        y[i].d = to_f16(d);
        y[i].s = to_f16(d * (float) sum);
    }
}

// F32 -> F16 with fcvtn (round to nearest even, as the twin), 8 at a time
void convert_row_f16(const float * x, void * vy, int64_t k) {
    auto * y = static_cast<uint16_t *>(vy);
    int64_t i = 0;
    for (; i + 8 <= k; i += 8) {
        const float16x8_t h = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(x + i)), vld1q_f32(x + i + 4));
        vst1q_u16(y + i, vreinterpretq_u16_f16(h));
    }
    for (; i < k; ++i) y[i] = to_f16(x[i]);
}

} // namespace

void fill_neon_act(KernelSet & k) {
    k.from_float[LM_GGML_TYPE_F16] = convert_row_f16;
    k.from_float[LM_GGML_TYPE_Q8_0] = quantize_row_q8_0;
    k.from_float[LM_GGML_TYPE_Q8_1] = quantize_row_q8_1;
}

} // namespace lmggml::cpu::arch::arm

#endif

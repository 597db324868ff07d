// Scalar twins: activation row conversions and the float dots.
#include "ref.h"

#include "../kernels/la_common.h"
#include "../../quant/quants.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace lmggml::cpu::arch::ref {
namespace {

constexpr int QK = 32;

// x86's float -> int32 conversion (cvtps2dq): round half to even (nearbyint
// in the default mode); NaN and out-of-range values give INT32_MIN.
int32_t cvt_x86(float t) { return t >= -2147483648.0f && t < 2147483648.0f ? (int32_t) std::nearbyint(t) : INT32_MIN; }

// One block the way the x86 SIMD code quantizes it (layouts.h); returns d
// (unrounded) and the sum of the levels (int32, wrapping like the vectors').
// amax is the max of the |x| bit patterns, which order like the values and
// put every NaN above Inf: a NaN in the block makes d NaN (fmax would drop it).
float quantize_block(const float * x, int8_t * q, int * sum) {
    uint32_t abits = 0;
    for (int j = 0; j < QK; ++j) {
        abits = std::max(abits, std::bit_cast<uint32_t>(x[j]) & 0x7fffffffu);
    }
    const float amax = std::bit_cast<float>(abits);
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    uint32_t s = 0;
    for (int j = 0; j < QK; ++j) {
        // |x * id| <= 127 (+ rounding) for finite x; the packs saturate the rest to int8
        const int32_t v = cvt_x86(x[j] * id);
        q[j] = (int8_t) std::clamp(v, -128, 127);
        s += (uint32_t) v;
    }
    *sum = (int) s;
    return amax / 127.0f;
}

} // namespace

void quantize_row_q8_0(const float * x, void * vy, int64_t k) {
    auto * y = static_cast<lm_block_q8_0 *>(vy);
    for (int64_t i = 0; i < k / QK; ++i) {
        int sum;
        y[i].d = lm_ggml_compute_fp32_to_fp16(quantize_block(x + i * QK, y[i].qs, &sum));
    }
}

void quantize_row_q8_1(const float * x, void * vy, int64_t k) {
    auto * y = static_cast<lm_block_q8_1 *>(vy);
    for (int64_t i = 0; i < k / QK; ++i) {
        int sum;
        const float d = quantize_block(x + i * QK, y[i].qs, &sum);
        y[i].d = lm_ggml_compute_fp32_to_fp16(d);
        y[i].s = lm_ggml_compute_fp32_to_fp16(d * (float) sum);
    }
}

void convert_row_f16(const float * x, void * y, int64_t k) {
    auto * out = static_cast<lm_ggml_fp16_t *>(y);
    for (int64_t i = 0; i < k; ++i) {
        out[i] = lm_ggml_compute_fp32_to_fp16(x[i]);
    }
}

void convert_row_bf16(const float * x, void * y, int64_t k) {
    auto * out = static_cast<lm_ggml_bf16_t *>(y);
    for (int64_t i = 0; i < k; ++i) {
        out[i] = lm_ggml_compute_fp32_to_bf16(x[i]);
    }
}

void vec_dot_f32(int n, float * s, size_t, const void * x, size_t, const void * y, size_t, int) {
    *s = la::dot_f32(n, (const float *) x, (const float *) y);
}

void vec_dot_f16(int n, float * s, size_t, const void * x, size_t, const void * y, size_t, int) {
    *s = la::dot_f16(n, (const lm_ggml_fp16_t *) x, (const lm_ggml_fp16_t *) y);
}

void vec_dot_bf16(int n, float * s, size_t, const void * x, size_t, const void * y, size_t, int) {
    *s = la::dot_bf16(n, (const uint16_t *) x, (const uint16_t *) y);
}

} // namespace lmggml::cpu::arch::ref

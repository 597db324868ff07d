// Scalar twins of the vector math (kernels.h VecMath): libm's expf and tanhf.
#include "ref.h"

#include "../../core/ggml-impl.h" // fp16 conversion

#include <cmath>

namespace lmggml::cpu::arch::ref {

float exp_sum(int64_t n, const float * x, float shift, float * y) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        y[i] = expf(x[i] - shift);
        sum += y[i];
    }
    return sum;
}

void silu(int64_t n, const float * x, float * y) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + expf(-x[i]));
}

void gelu(int64_t n, const float * x, float * y) {
    const float c = 0.79788456080286535587989211986876f; // sqrt(2 / pi)
    for (int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(c * v * (1.0f + 0.044715f * v * v)));
    }
}

float scale_mask_max(int64_t n, const float * x, float scale, const float * m32, const uint16_t * m16, float slope,
                     float * y) {
    float max = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
        float v = x[i] * scale;
        if (m32) v += slope * m32[i];
        if (m16) v += slope * lm_ggml_compute_fp16_to_fp32(m16[i]);
        y[i] = v;
        max = v > max ? v : max;
    }
    return max;
}

void scale(int64_t n, float * y, float s) {
    for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

void widen_f16(int64_t n, const uint16_t * x, float * y) {
    for (int64_t i = 0; i < n; ++i) y[i] = lm_ggml_compute_fp16_to_fp32(x[i]);
}

} // namespace lmggml::cpu::arch::ref

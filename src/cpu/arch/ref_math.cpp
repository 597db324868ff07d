// Scalar twins of the vector math (kernels.h VecMath): libm's expf.
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

} // namespace lmggml::cpu::arch::ref

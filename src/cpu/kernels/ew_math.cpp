// One-input math ops outside LM_GGML_OP_UNARY: SQR, SQRT, LOG, SIN, COS and
// the parameterised SCALE (f32[0]=s), CLAMP (f32[0]=min, f32[1]=max) and
// LEAKY_RELU (f32[0]=negative_slope). Float math as ggml 1.4.1.

#include "ew_map.h"
#include "ew_ops.h"

#include <cmath>

namespace lm_cpu_ew {

void sqr_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return x * x; });
}
void sqrt_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return std::sqrt(x); });
}
void log_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return std::log(x); });
}
void sin_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return std::sin(x); });
}
void cos_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return std::cos(x); });
}

bool sqr_supports(const lm_ggml_tensor * d) { return map_supported(d); }
bool sqrt_supports(const lm_ggml_tensor * d) { return map_supported(d); }
bool log_supports(const lm_ggml_tensor * d) { return map_supported(d); }
bool sin_supports(const lm_ggml_tensor * d) { return map_supported(d); }
bool cos_supports(const lm_ggml_tensor * d) { return map_supported(d); }

void scale_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    const float s = lm_ggml_get_op_params_f32(d, 0);
    map_rows(p, d, [s](float x) { return x * s; });
}
bool scale_supports(const lm_ggml_tensor * d) { return map_supported(d); }

void clamp_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    const float lo = lm_ggml_get_op_params_f32(d, 0);
    const float hi = lm_ggml_get_op_params_f32(d, 1);
    // same comparison order as ggml: a NaN input comes out as `hi`
    map_rows(p, d, [lo, hi](float x) {
        const float t = x < hi ? x : hi;
        return t > lo ? t : lo;
    });
}
bool clamp_supports(const lm_ggml_tensor * d) { return map_supported(d); }

void leaky_relu_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    const float slope = lm_ggml_get_op_params_f32(d, 0);
    map_rows(p, d, [slope](float x) { return (x > 0.0f ? x : 0.0f) + slope * (x < 0.0f ? x : 0.0f); });
}
bool leaky_relu_supports(const lm_ggml_tensor * d) { return map_supported(d); }

} // namespace lm_cpu_ew

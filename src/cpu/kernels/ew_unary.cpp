// LM_GGML_OP_UNARY: activations, computed in float for F32/F16/BF16 with the
// formulas of ggml 1.4.1. GELU is the tanh approximation: F32 rows go
// through the vector math (arch/kernels.h VecMath); F16 / BF16 rows through
// the formula itself, because ggml reads a table of fp16 results and for F16
// data that table holds exactly fp16(gelu(x)), which that path reproduces.

#include "ew_map.h"
#include "ew_ops.h"
#include "../arch/kernels.h"

#include <cmath>

namespace lm_cpu_ew {

namespace {

constexpr float kGeluQuickCoef = -1.702f;
constexpr float kGeluCoefA = 0.044715f;
constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;

inline float gelu(float x) { return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kGeluCoefA * x * x))); }

inline float gelu_quick(float x) { return x * (1.0f / (1.0f + std::exp(kGeluQuickCoef * x))); }
inline float hardsigmoid(float x) { return std::fmin(1.0f, std::fmax(0.0f, (x + 3.0f) / 6.0f)); }

void abs_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return std::fabs(x); });
}
void sgn_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); });
}
void neg_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return -x; });
}
void step_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return x > 0.0f ? 1.0f : 0.0f; });
}
void tanh_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return std::tanh(x); });
}
void elu_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return x > 0.0f ? x : std::expm1(x); });
}
void relu_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return x > 0.0f ? x : 0.0f; });
}
void sigmoid_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}
void gelu_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) {
    if (d->type == LM_GGML_TYPE_F32 && d->src[0]->type == LM_GGML_TYPE_F32) {
        map_rows_vec(p, d, lmggml::cpu::arch::kernels().math.gelu);
    } else {
        map_rows(p, d, gelu);
    }
}
void gelu_quick_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) { map_rows(p, d, gelu_quick); }
void silu_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows_vec(p, d, lmggml::cpu::arch::kernels().math.silu);
}
void hardswish_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return x * hardsigmoid(x); });
}
void hardsigmoid_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) { map_rows(p, d, hardsigmoid); }
void exp_fwd(const lm_cpu_params * p, lm_ggml_tensor * d) {
    map_rows(p, d, [](float x) { return std::exp(x); });
}

} // namespace

lm_cpu_forward_fn unary_kernel(lm_ggml_unary_op op) {
    switch (op) {
        case LM_GGML_UNARY_OP_ABS: return abs_fwd;
        case LM_GGML_UNARY_OP_SGN: return sgn_fwd;
        case LM_GGML_UNARY_OP_NEG: return neg_fwd;
        case LM_GGML_UNARY_OP_STEP: return step_fwd;
        case LM_GGML_UNARY_OP_TANH: return tanh_fwd;
        case LM_GGML_UNARY_OP_ELU: return elu_fwd;
        case LM_GGML_UNARY_OP_RELU: return relu_fwd;
        case LM_GGML_UNARY_OP_SIGMOID: return sigmoid_fwd;
        case LM_GGML_UNARY_OP_GELU: return gelu_fwd;
        case LM_GGML_UNARY_OP_GELU_QUICK: return gelu_quick_fwd;
        case LM_GGML_UNARY_OP_SILU: return silu_fwd;
        case LM_GGML_UNARY_OP_HARDSWISH: return hardswish_fwd;
        case LM_GGML_UNARY_OP_HARDSIGMOID: return hardsigmoid_fwd;
        case LM_GGML_UNARY_OP_EXP: return exp_fwd;
        default: return nullptr;
    }
}

void unary_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_cpu_forward_fn fn = unary_kernel(static_cast<lm_ggml_unary_op>(lm_ggml_get_op_params_i32(dst, 0)));
    LM_GGML_ASSERT(fn != nullptr);
    fn(params, dst);
}

bool unary_supports(const lm_ggml_tensor * dst) {
    const int32_t op = lm_ggml_get_op_params_i32(dst, 0);
    return op >= 0 && op < LM_GGML_UNARY_OP_COUNT && map_supported(dst);
}

} // namespace lm_cpu_ew

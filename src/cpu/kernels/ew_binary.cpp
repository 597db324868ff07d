// ADD, SUB, MUL, DIV with src1 repeated over src0 (any dim whose size
// divides src0's), and ADD1 (src1 a scalar). Every mix of F32/F16/BF16 for
// src0, src1 and dst works: values are widened to float, combined in float
// and rounded to dst's type, as ggml's F16/BF16 paths do. Quantized src0
// (ggml's add_q_f32) is not handled here.

#include "ew_map.h"
#include "ew_ops.h"

namespace lm_cpu_ew {

namespace {

bool can_repeat(const lm_ggml_tensor * small, const lm_ggml_tensor * big) {
    if (is_empty(small)) {
        return is_empty(big);
    }
    for (int i = 0; i < LM_GGML_MAX_DIMS; ++i) {
        if (big->ne[i] % small->ne[i] != 0) {
            return false;
        }
    }
    return true;
}

bool binary_supported(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    return a && b && is_float_type(a->type) && is_float_type(b->type) && is_float_type(dst->type) &&
           same_shape(a, dst) && can_repeat(b, a);
}

} // namespace

void add_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    zip_rows(p, d, [](float x, float y) { return x + y; });
}
void sub_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    zip_rows(p, d, [](float x, float y) { return x - y; });
}
void mul_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    zip_rows(p, d, [](float x, float y) { return x * y; });
}
void div_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    zip_rows(p, d, [](float x, float y) { return x / y; });
}

bool add_supports(const lm_ggml_tensor * d) { return binary_supported(d); }
bool sub_supports(const lm_ggml_tensor * d) { return binary_supported(d); }
bool mul_supports(const lm_ggml_tensor * d) { return binary_supported(d); }
bool div_supports(const lm_ggml_tensor * d) { return binary_supported(d); }

void add1_forward(const lm_cpu_params * p, lm_ggml_tensor * d) {
    const lm_ggml_tensor * b = d->src[1];
    const float v = load_one(b->type, static_cast<const char *>(b->data));
    map_rows(p, d, [v](float x) { return x + v; });
}

bool add1_supports(const lm_ggml_tensor * d) {
    const lm_ggml_tensor * b = d->src[1];
    return map_supported(d) && b && is_float_type(b->type) && b->ne[0] == 1 && b->ne[1] == 1 && b->ne[2] == 1 &&
           b->ne[3] == 1;
}

} // namespace lm_cpu_ew

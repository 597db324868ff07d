// Scalar twins of the vector math (kernels.h VecMath): libm's expf.
#include "ref.h"

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

} // namespace lmggml::cpu::arch::ref

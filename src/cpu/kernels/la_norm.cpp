// NORM and RMS_NORM over dim 0, one row at a time (rows may be strided;
// dst may alias src for the in-place variants). eps is f32 op_params[0].
// Sums are accumulated in double, as ggml does.
//   NORM:     y = (x - mean) / sqrt(var + eps)
//   RMS_NORM: y = x / sqrt(mean(x^2) + eps)
#include "la_ops.h"
#include "la_common.h"

namespace lmggml::cpu::la {
namespace {

float eps_of(const lm_ggml_tensor * dst) { return lm_ggml_get_op_params_f32(dst, 0); }

void norm_row(int64_t n, const float * x, float * y, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        sum += (double) x[i];
    }
    const float mean = (float) (sum / (double) n);
    double sum2 = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const float v = x[i] - mean;
        y[i] = v;
        sum2 += (double) (v * v);
    }
    const float variance = (float) (sum2 / (double) n);
    scale_f32(n, y, 1.0f / sqrtf(variance + eps));
}

// sum of x[i]^2 in double: 8 independent partial sums, which the compiler
// vectorizes (one sequential chain is latency-bound: ~0.7 us for a row of 576)
double sum_squares(int64_t n, const float * x) {
    double part[8] = {};
    const int64_t n8 = n & ~(int64_t) 7;
    for (int64_t i = 0; i < n8; i += 8) {
        for (int j = 0; j < 8; ++j) {
            part[j] += (double) (x[i + j] * x[i + j]);
        }
    }
    for (int64_t i = n8; i < n; ++i) {
        part[i - n8] += (double) (x[i] * x[i]);
    }
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

float rms_scale(int64_t n, const float * x, float eps) {
    const float mean = (float) (sum_squares(n, x) / (double) n);
    return 1.0f / sqrtf(mean + eps);
}

void rms_norm_row(int64_t n, const float * x, float * y, float eps) {
    const float scale = rms_scale(n, x, eps);
    for (int64_t i = 0; i < n; ++i) {
        y[i] = x[i] * scale;
    }
}

template <void (*RowFn)(int64_t, const float *, float *, float)>
void for_each_row(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    const float eps = eps_of(dst);
    const int64_t ne1 = src->ne[1];
    const int64_t ne2 = src->ne[2];
    const Range r = split(ne1 * ne2 * src->ne[3], params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t i3 = ir / (ne1 * ne2);
        const int64_t i2 = (ir / ne1) % ne2;
        const int64_t i1 = ir % ne1;
        RowFn(src->ne[0], (const float *) row_of(src, i1, i2, i3), (float *) row_of(dst, i1, i2, i3), eps);
    }
}

} // namespace

bool norm_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    return src != nullptr && src->type == LM_GGML_TYPE_F32 && dst->type == LM_GGML_TYPE_F32 &&
           lm_ggml_are_same_shape(src, dst) && src->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float);
}

void norm_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) { for_each_row<norm_row>(params, dst); }

void rms_norm_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    const int64_t n = src->ne[0];
    const auto * xb = (const char *) src->data;
    const auto * yb = (const char *) dst->data;
    const bool overlap = xb < yb + n * sizeof(float) && yb < xb + n * sizeof(float);
    if (lm_ggml_nrows(src) == 1 && params->nth > 1 && n >= 64 && !overlap) {
        // One row (generation): every thread sums all of it, then scales its
        // own piece (16 floats aligned); not in place, where one thread's
        // output would overwrite another's input.
        const auto * x = (const float *) src->data;
        auto * y = (float *) dst->data;
        const float scale = rms_scale(n, x, eps_of(dst));
        const Range r = split((n + 15) / 16, params->ith, params->nth);
        const int64_t end = std::min(n, r.end * 16);
        for (int64_t i = r.begin * 16; i < end; ++i) {
            y[i] = x[i] * scale;
        }
        return;
    }
    for_each_row<rms_norm_row>(params, dst);
}

} // namespace lmggml::cpu::la

// Row-wise training kernels: REPEAT_BACK, SILU_BACK, RMS_NORM_BACK,
// GET_ROWS_BACK, SOFT_MAX_BACK, CROSS_ENTROPY_LOSS(_BACK), OPT_STEP_ADAMW.
// All F32 (GET_ROWS_BACK also reads F16 gradients); rows may be strided,
// elements are packed. Work is split over dst rows, so no two threads
// write the same memory. Reductions are accumulated in double.
#include "la_adamw.h"
#include "la_backward.h"
#include "la_common.h"

namespace lmggml::cpu::la {
namespace {

bool packed_f32(const lm_ggml_tensor * t) {
    return t != nullptr && t->type == LM_GGML_TYPE_F32 && t->nb[0] == sizeof(float);
}

// Row ir of t's rows (dims 1..3) as (i1, i2, i3).
struct RowIdx {
    int64_t i1, i2, i3;
};
inline RowIdx row_idx(const lm_ggml_tensor * t, int64_t ir) {
    return {ir % t->ne[1], (ir / t->ne[1]) % t->ne[2], ir / (t->ne[1] * t->ne[2])};
}

inline const float * frow(const lm_ggml_tensor * t, RowIdx r) { return (const float *) row_of(t, r.i1, r.i2, r.i3); }
inline float * frow(lm_ggml_tensor * t, RowIdx r) { return (float *) row_of(t, r.i1, r.i2, r.i3); }

// dst and srcs[0..n) F32, packed, same shape
bool same_shape_f32(const lm_ggml_tensor * dst, int n) {
    if (!packed_f32(dst)) {
        return false;
    }
    for (int s = 0; s < n; ++s) {
        if (!packed_f32(dst->src[s]) || !lm_ggml_are_same_shape(dst->src[s], dst)) {
            return false;
        }
    }
    return true;
}

// sum of x[0..n) in kLanes partial sums (vectorises without -ffast-math)
float sum_f32(int64_t n, const float * x) {
    float acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
            acc[j] += x[i + j];
        }
    }
    float tail = 0.0f;
    for (; i < n; ++i) {
        tail += x[i];
    }
    return reduce_lanes(acc) + tail;
}

// log(sum_i exp(x_i - max)) and max over a row
struct LogSumExp {
    double max, log_sum;
};
LogSumExp log_sum_exp(int64_t n, const float * x) {
    double m = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
        m = std::max(m, (double) x[i]);
    }
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        sum += std::exp((double) x[i] - m);
    }
    return {m, std::log(sum)};
}

} // namespace

// ---------------------------------------------------------------- REPEAT_BACK
bool repeat_back_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    return packed_f32(src) && packed_f32(dst) && lm_ggml_can_repeat(dst, src);
}

// Each thread owns whole dst rows and sums every repeat into them. A
// repeat's source row is nr0 copies of the dst row side by side; when dst
// has one row per plane and src's rows are packed, the nr1 rows of a plane
// are one contiguous run, so they are summed as one (the conv bias's
// gradient: [W, H, C, N] to [1, 1, C, 1] reads runs of W*H floats).
void repeat_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    const int64_t ne0 = dst->ne[0];
    const int64_t nr2 = src->ne[2] / dst->ne[2];
    const int64_t nr3 = src->ne[3] / dst->ne[3];
    const bool runs = dst->ne[1] == 1 && src->nb[1] == (size_t) src->ne[0] * sizeof(float);
    const int64_t n1 = runs ? 1 : src->ne[1] / dst->ne[1];           // pieces per plane
    const int64_t len = runs ? src->ne[0] * src->ne[1] : src->ne[0]; // floats per piece

    const Range r = split(lm_ggml_nrows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx k = row_idx(dst, ir);
        float * y = frow(dst, k);
        std::fill(y, y + ne0, 0.0f);
        for (int64_t i3 = 0; i3 < nr3; ++i3) {
            for (int64_t i2 = 0; i2 < nr2; ++i2) {
                for (int64_t i1 = 0; i1 < n1; ++i1) {
                    const float * x = (const float *) row_of(src, i1 * dst->ne[1] + k.i1, i2 * dst->ne[2] + k.i2,
                                                             i3 * dst->ne[3] + k.i3);
                    if (ne0 == 1) {
                        y[0] += sum_f32(len, x);
                        continue;
                    }
                    for (int64_t i0 = 0; i0 < len; i0 += ne0) {
                        for (int64_t j = 0; j < ne0; ++j) {
                            y[j] += x[i0 + j];
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------- SILU_BACK
bool silu_back_supports(const lm_ggml_tensor * dst) { return same_shape_f32(dst, 2); }

// d/dx x*s(x) = s * (1 + x * (1 - s)), s the logistic sigmoid
void silu_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * dy = dst->src[0];
    const lm_ggml_tensor * x = dst->src[1];
    const int64_t n = dst->ne[0];
    const Range r = split(lm_ggml_nrows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx k = row_idx(dst, ir);
        const float * g = frow(dy, k);
        const float * xr = frow(x, k);
        float * y = frow(dst, k);
        for (int64_t i = 0; i < n; ++i) {
            const float s = 1.0f / (1.0f + expf(-xr[i]));
            y[i] = g[i] * s * (1.0f + xr[i] * (1.0f - s));
        }
    }
}

// ---------------------------------------------------------------- RMS_NORM_BACK
bool rms_norm_back_supports(const lm_ggml_tensor * dst) { return same_shape_f32(dst, 2); }

// y = x * r with r = (mean(x^2) + eps)^-1/2 gives
// dx = r * (dy - x * dot(x, dy) / (sum(x^2) + n*eps))
void rms_norm_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * dy = dst->src[0];
    const lm_ggml_tensor * x = dst->src[1];
    const double eps = lm_ggml_get_op_params_f32(dst, 0);
    const int64_t n = dst->ne[0];
    const Range r = split(lm_ggml_nrows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx k = row_idx(dst, ir);
        const float * g = frow(dy, k);
        const float * xr = frow(x, k);
        float * y = frow(dst, k);
        double sum_xx = 0.0, sum_xg = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            sum_xx += (double) xr[i] * xr[i];
            sum_xg += (double) xr[i] * g[i];
        }
        const double rrms = 1.0 / std::sqrt(sum_xx / (double) n + eps);
        const double c = sum_xg / (sum_xx + (double) n * eps);
        for (int64_t i = 0; i < n; ++i) {
            y[i] = (float) (rrms * ((double) g[i] - (double) xr[i] * c));
        }
    }
}

// ---------------------------------------------------------------- GET_ROWS_BACK
bool get_rows_back_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    const lm_ggml_tensor * ids = dst->src[1];
    return src != nullptr && ids != nullptr && packed_f32(dst) &&
           (src->type == LM_GGML_TYPE_F32 || src->type == LM_GGML_TYPE_F16) &&
           src->nb[0] == lm_ggml_type_size(src->type) && ids->type == LM_GGML_TYPE_I32 && src->ne[0] == dst->ne[0] &&
           src->ne[1] >= lm_ggml_nelements(ids) && src->ne[2] == 1 && src->ne[3] == 1 && dst->ne[2] == 1 &&
           dst->ne[3] == 1;
}

// Each thread owns a range of dst rows and adds, in id order, every source
// row whose id falls in it (ids may repeat). Ids outside dst are skipped.
void get_rows_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    const lm_ggml_tensor * ids = dst->src[1];
    const int64_t nc = dst->ne[0];
    const int64_t n_ids = lm_ggml_nelements(ids);
    const Range r = split(dst->ne[1], params->ith, params->nth);
    for (int64_t i1 = r.begin; i1 < r.end; ++i1) {
        float * y = (float *) row_of(dst, i1, 0, 0);
        std::fill(y, y + nc, 0.0f);
    }
    for (int64_t i = 0; i < n_ids; ++i) {
        // ids is a vector: element i along its one non-trivial dim
        const int64_t i0 = i % ids->ne[0], i1 = (i / ids->ne[0]) % ids->ne[1];
        const int64_t i2 = (i / (ids->ne[0] * ids->ne[1])) % ids->ne[2],
                      i3 = i / (ids->ne[0] * ids->ne[1] * ids->ne[2]);
        const int64_t id = *(const int32_t *) ((const char *) ids->data + i0 * ids->nb[0] + i1 * ids->nb[1] +
                                               i2 * ids->nb[2] + i3 * ids->nb[3]);
        if (id < r.begin || id >= r.end) {
            continue;
        }
        float * y = (float *) row_of(dst, id, 0, 0);
        if (src->type == LM_GGML_TYPE_F32) {
            const float * x = (const float *) row_of(src, i, 0, 0);
            for (int64_t j = 0; j < nc; ++j) {
                y[j] += x[j];
            }
        } else {
            const lm_ggml_fp16_t * x = (const lm_ggml_fp16_t *) row_of(src, i, 0, 0);
            for (int64_t j = 0; j < nc; ++j) {
                y[j] += fp16_to_f32(x[j]);
            }
        }
    }
}

// ---------------------------------------------------------------- SOFT_MAX_BACK
// The mask and ALiBi slope of the forward op only shift its input, so
// max_bias does not change the gradient (ggml's CPU refuses max_bias != 0;
// this kernel computes the same formula for any value).
bool soft_max_back_supports(const lm_ggml_tensor * dst) { return same_shape_f32(dst, 2); }

// y = softmax(scale * x + ...) gives dx = scale * y * (dy - dot(y, dy))
void soft_max_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * dy = dst->src[0];
    const lm_ggml_tensor * y = dst->src[1];
    const float scale = lm_ggml_get_op_params_f32(dst, 0);
    const int64_t n = dst->ne[0];
    const Range r = split(lm_ggml_nrows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx k = row_idx(dst, ir);
        const float * g = frow(dy, k);
        const float * yr = frow(y, k);
        float * dx = frow(dst, k); // may be g's memory (in place)
        double dot = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            dot += (double) yr[i] * g[i];
        }
        for (int64_t i = 0; i < n; ++i) {
            dx[i] = (float) ((double) scale * yr[i] * ((double) g[i] - dot));
        }
    }
}

// ---------------------------------------------------------------- CROSS_ENTROPY_LOSS
bool cross_entropy_loss_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    return packed_f32(a) && packed_f32(b) && lm_ggml_are_same_shape(a, b) && dst->type == LM_GGML_TYPE_F32 &&
           lm_ggml_is_scalar(dst);
}

// one cache line per thread for its partial sum
size_t cross_entropy_loss_work_size(const lm_ggml_tensor * /*dst*/, int n_threads) {
    return (size_t) n_threads * kLine;
}

// loss = -1/nr * sum over rows of sum_i b_i * log softmax(a)_i
void cross_entropy_loss_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    const int64_t n = a->ne[0];
    const int64_t nr = lm_ggml_nrows(a);
    const Range r = split(nr, params->ith, params->nth);
    double part = 0.0;
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx k = row_idx(a, ir);
        const float * ar = frow(a, k);
        const float * br = frow(b, k);
        const LogSumExp l = log_sum_exp(n, ar);
        for (int64_t i = 0; i < n; ++i) {
            part += (double) br[i] * ((double) ar[i] - l.max - l.log_sum);
        }
    }
    char * slots = (char *) params->wdata;
    *(double *) (slots + (size_t) params->ith * kLine) = part;
    sync(params);
    if (params->ith == 0) {
        double sum = 0.0;
        for (int t = 0; t < params->nth; ++t) {
            sum += *(const double *) (slots + (size_t) t * kLine);
        }
        *(float *) dst->data = (float) (-sum / (double) nr);
    }
}

// ---------------------------------------------------------------- CROSS_ENTROPY_LOSS_BACK
bool cross_entropy_loss_back_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * grad = dst->src[0];
    return packed_f32(grad) && lm_ggml_is_scalar(grad) && dst->src[1] != nullptr && dst->src[2] != nullptr &&
           packed_f32(dst) && packed_f32(dst->src[1]) && packed_f32(dst->src[2]) &&
           lm_ggml_are_same_shape(dst->src[1], dst) && lm_ggml_are_same_shape(dst->src[2], dst);
}

// d loss / d a = (softmax(a) - b) * grad / nr
void cross_entropy_loss_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[1];
    const lm_ggml_tensor * b = dst->src[2];
    const int64_t n = a->ne[0];
    const int64_t nr = lm_ggml_nrows(a);
    const double d = (double) *(const float *) dst->src[0]->data / (double) nr;
    const Range r = split(nr, params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx k = row_idx(a, ir);
        const float * ar = frow(a, k);
        const float * br = frow(b, k);
        float * y = frow(dst, k);
        const LogSumExp l = log_sum_exp(n, ar);
        for (int64_t i = 0; i < n; ++i) {
            const double p = std::exp((double) ar[i] - l.max - l.log_sum);
            y[i] = (float) ((p - (double) br[i]) * d);
        }
    }
}

// ---------------------------------------------------------------- OPT_STEP_ADAMW
bool opt_step_adamw_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * p = dst->src[4];
    return same_shape_f32(dst, 4) && p != nullptr && p->type == LM_GGML_TYPE_F32 && lm_ggml_nelements(p) == 7 &&
           lm_ggml_is_contiguous(p);
}

// m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
// w = w (1 - alpha wd) - alpha (beta1h m) / (sqrt(beta2h v) + eps)
// (beta1h, beta2h: the bias corrections, computed by the caller per step)
void opt_step_adamw_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const float * p = (const float *) dst->src[4]->data;
    AdamW a;
    a.alpha = p[0];
    a.beta1 = p[1];
    a.beta2 = p[2];
    a.eps = p[3];
    a.beta1h = p[5];
    a.beta2h = p[6];
    a.keep = 1.0f - a.alpha * p[4]; // decoupled weight decay

    // reads the weights from src0 and writes dst: the same memory, as the
    // op's result is a view of its parameter
    const lm_ggml_tensor * wt = dst->src[0];
    const lm_ggml_tensor * gt = dst->src[1];
    lm_ggml_tensor * mt = dst->src[2];
    lm_ggml_tensor * vt = dst->src[3];
    const int64_t n = dst->ne[0];
    const Range r = split(lm_ggml_nrows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx k = row_idx(dst, ir);
        adamw_row(a, n, frow(wt, k), frow(dst, k), frow(gt, k), frow(mt, k), frow(vt, k));
    }
}

} // namespace lmggml::cpu::la

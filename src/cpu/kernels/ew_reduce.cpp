// Reductions over rows or the whole tensor (SUM, SUM_ROWS, MEAN, ARGMAX) and
// per-row ARGSORT. Sums accumulate in double (ggml's lm_ggml_float) and are
// rounded once at the end.

#include "ew_common.h"
#include "ew_ops.h"

#include <cmath>

namespace lm_cpu_ew {

namespace {

// Sum of n elements of type t, `stride` bytes apart, in double.
double row_sum(lm_ggml_type t, const char * p, size_t stride, int64_t n) {
    double s = 0.0;
    if (t == LM_GGML_TYPE_F32 && stride == sizeof(float)) {
        const float * x = reinterpret_cast<const float *>(p);
        for (int64_t k = 0; k < n; ++k) s += static_cast<double>(x[k]);
        return s;
    }
    float buf[kChunk];
    for (int64_t k0 = 0; k0 < n; k0 += kChunk) {
        const int64_t m = std::min<int64_t>(kChunk, n - k0);
        load_run(t, p + k0 * stride, stride, m, buf);
        for (int64_t k = 0; k < m; ++k) s += static_cast<double>(buf[k]);
    }
    return s;
}

bool is_i32_out(const lm_ggml_tensor * dst) { return dst->type == LM_GGML_TYPE_I32; }

// dst has src's rows collapsed to one element: [1, ne1, ne2, ne3]
bool row_reduce_supported(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    return a && is_float_type(a->type) && is_float_type(dst->type) && dst->ne[0] == 1 && dst->ne[1] == a->ne[1] &&
           dst->ne[2] == a->ne[2] && dst->ne[3] == a->ne[3];
}

template <class Finish> void row_reduce(const lm_cpu_params * params, lm_ggml_tensor * dst, const Finish & finish) {
    const lm_ggml_tensor * a = dst->src[0];
    const Range r = split(nrows(a), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, a->ne);
        const double s = row_sum(a->type, row_ptr(a, i.i1, i.i2, i.i3), a->nb[0], a->ne[0]);
        store_one(dst->type, row_ptr_mut(dst, i.i1, i.i2, i.i3), finish(s));
    }
}

} // namespace

// ---------------------------------------------------------------- SUM
void sum_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    if (params->ith != 0) {
        return; // one scalar: the first thread does it all
    }
    const lm_ggml_tensor * a = dst->src[0];
    double s = 0.0;
    const int64_t rows = nrows(a);
    for (int64_t ir = 0; ir < rows; ++ir) {
        const RowIdx i = row_idx(ir, a->ne);
        s += row_sum(a->type, row_ptr(a, i.i1, i.i2, i.i3), a->nb[0], a->ne[0]);
    }
    store_one(dst->type, static_cast<char *>(dst->data), static_cast<float>(s));
}

bool sum_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    return a && is_float_type(a->type) && is_float_type(dst->type) && dst->ne[0] == 1 && dst->ne[1] == 1 &&
           dst->ne[2] == 1 && dst->ne[3] == 1;
}

// ---------------------------------------------------------------- SUM_ROWS, MEAN
void sum_rows_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    row_reduce(params, dst, [](double s) { return static_cast<float>(s); });
}

bool sum_rows_supports(const lm_ggml_tensor * dst) { return row_reduce_supported(dst); }

void mean_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    // ggml rounds the sum to float, then divides in float
    const float n = static_cast<float>(dst->src[0]->ne[0]);
    row_reduce(params, dst, [n](double s) { return static_cast<float>(s) / n; });
}

bool mean_supports(const lm_ggml_tensor * dst) { return row_reduce_supported(dst); }

// ---------------------------------------------------------------- ARGMAX
// Index of the maximum of each row of a matrix. Ties go to the last
// occurrence, exactly as ggml's running-max loop does.
void argmax_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const int64_t ne00 = a->ne[0];
    const Range r = split(a->ne[1], params->ith, params->nth);
    float buf[kChunk];
    for (int64_t i1 = r.begin; i1 < r.end; ++i1) {
        const char * p = row_ptr(a, i1, 0, 0);
        float best = -INFINITY;
        int32_t idx = 0;
        for (int64_t k0 = 0; k0 < ne00; k0 += kChunk) {
            const int64_t m = std::min<int64_t>(kChunk, ne00 - k0);
            load_run(a->type, p + k0 * a->nb[0], a->nb[0], m, buf);
            for (int64_t k = 0; k < m; ++k) {
                best = best > buf[k] ? best : buf[k];
                if (best == buf[k]) idx = static_cast<int32_t>(k0 + k);
            }
        }
        const int32_t out = idx;
        std::memcpy(static_cast<char *>(dst->data) + i1 * dst->nb[0], &out, sizeof(out));
    }
}

bool argmax_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    return a && is_float_type(a->type) && is_i32_out(dst) && a->ne[2] == 1 && a->ne[3] == 1 && dst->ne[0] == a->ne[1] &&
           dst->ne[1] == 1 && dst->ne[2] == 1 && dst->ne[3] == 1 && a->ne[0] <= INT32_MAX;
}

// ---------------------------------------------------------------- ARGSORT
// i32[0] = order (0 ascending, 1 descending). The order is total: NaNs go
// last in both orders and equal values keep their index order, so the
// result is deterministic (ggml's exchange sort leaves ties unspecified).
void argsort_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const bool desc = lm_ggml_get_op_params_i32(dst, 0) == LM_GGML_SORT_ORDER_DESC;
    const int64_t ne00 = a->ne[0];
    const size_t nb00 = a->nb[0];
    const Range r = split(nrows(a), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, a->ne);
        const char * src = row_ptr(a, i.i1, i.i2, i.i3);
        int32_t * idx = reinterpret_cast<int32_t *>(row_ptr_mut(dst, i.i1, i.i2, i.i3));
        for (int64_t k = 0; k < ne00; ++k) idx[k] = static_cast<int32_t>(k);

        const lm_ggml_type t = a->type;
        std::sort(idx, idx + ne00, [=](int32_t x, int32_t y) {
            const float vx = load_one(t, src + x * nb00);
            const float vy = load_one(t, src + y * nb00);
            const bool nx = std::isnan(vx), ny = std::isnan(vy);
            if (nx || ny) {
                return nx == ny ? x < y : ny; // non-NaN before NaN
            }
            if (vx != vy) {
                return desc ? vx > vy : vx < vy;
            }
            return x < y;
        });
    }
}

bool argsort_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const int32_t order = lm_ggml_get_op_params_i32(dst, 0);
    return a && is_float_type(a->type) && is_i32_out(dst) && same_shape(a, dst) && dst->nb[0] == sizeof(int32_t) &&
           a->ne[0] <= INT32_MAX && (order == LM_GGML_SORT_ORDER_ASC || order == LM_GGML_SORT_ORDER_DESC);
}

} // namespace lm_cpu_ew

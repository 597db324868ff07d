#pragma once
// Row engines for element-wise ops: map_rows applies y = f(x) (unary ops),
// zip_rows applies y = f(a, b) with b broadcast over a (binary ops). Rows are
// split across threads; plain contiguous F32 goes straight through pointers,
// anything else (F16/BF16, strided rows) through float chunks on the stack.
// dst may alias src0 or src1 element for element (in-place ops).

#include "ew_common.h"

namespace lm_cpu_ew {

// Calls fn(ir, k0, k1) for this thread's share of rows x elements: whole
// rows, or, with fewer rows than threads (generation's single row) and a
// splittable row, pieces of rows, 16 floats aligned so that threads do not
// share cache lines. Elementwise results do not depend on the split.
template <class Fn>
void for_row_parts(const lm_cpu_params * params, int64_t nrows, int64_t ne0, bool splittable, Fn fn) {
    if (!splittable || nrows >= params->nth || ne0 < 64) {
        const Range r = split(nrows, params->ith, params->nth);
        for (int64_t ir = r.begin; ir < r.end; ++ir) fn(ir, (int64_t) 0, ne0);
        return;
    }
    const int64_t segs = (params->nth + nrows - 1) / nrows;
    const int64_t len = ((ne0 + segs - 1) / segs + 15) / 16 * 16;
    const Range r = split(nrows * segs, params->ith, params->nth);
    for (int64_t u = r.begin; u < r.end; ++u) {
        const int64_t k0 = (u % segs) * len;
        if (k0 < ne0) fn(u / segs, k0, std::min(ne0, k0 + len));
    }
}

// y = fn(x) by rows: fn(n, x, y) handles n contiguous floats (a vector
// kernel of arch/kernels.h, or map_rows' element loop); y may alias x.
template <class RowFn> void map_rows_vec(const lm_cpu_params * params, lm_ggml_tensor * dst, RowFn fn) {
    const lm_ggml_tensor * src = dst->src[0];
    const int64_t ne0 = dst->ne[0];
    const size_t snb0 = src->nb[0];
    const size_t dnb0 = dst->nb[0];
    const bool plain = src->type == LM_GGML_TYPE_F32 && dst->type == LM_GGML_TYPE_F32 && snb0 == sizeof(float) &&
                       dnb0 == sizeof(float);
    if (plain && lm_ggml_is_contiguous(src) &&
        lm_ggml_is_contiguous(dst)) { // one run: no per-row overhead on short rows
        for_row_parts(params, 1, lm_ggml_nelements(dst), true, [&](int64_t, int64_t k0, int64_t k1) {
            fn(k1 - k0, static_cast<const float *>(src->data) + k0, static_cast<float *>(dst->data) + k0);
        });
        return;
    }

    float buf[kChunk];
    for_row_parts(params, nrows(dst), ne0, plain, [&](int64_t ir, int64_t k0, int64_t k1) {
        const RowIdx i = row_idx(ir, dst->ne);
        const char * s = row_ptr(src, i.i1, i.i2, i.i3);
        char * d = row_ptr_mut(dst, i.i1, i.i2, i.i3);
        if (plain) {
            fn(k1 - k0, reinterpret_cast<const float *>(s) + k0, reinterpret_cast<float *>(d) + k0);
            return;
        }
        for (int64_t c0 = 0; c0 < ne0; c0 += kChunk) {
            const int64_t m = std::min<int64_t>(kChunk, ne0 - c0);
            load_run(src->type, s + c0 * snb0, snb0, m, buf);
            fn(m, buf, buf);
            store_run(dst->type, d + c0 * dnb0, dnb0, m, buf);
        }
    });
}

// y = f(x) for every element; dst and src0 have the same shape.
template <class F> void map_rows(const lm_cpu_params * params, lm_ggml_tensor * dst, const F & f) {
    map_rows_vec(params, dst, [&f](int64_t n, const float * x, float * y) {
        for (int64_t k = 0; k < n; ++k) y[k] = f(x[k]);
    });
}

// y = f(a, b) with src1 repeated over src0 in every dim (ggml_can_repeat).
template <class F> void zip_rows(const lm_cpu_params * params, lm_ggml_tensor * dst, const F & f) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    const int64_t ne0 = dst->ne[0];
    const int64_t ne10 = b->ne[0];
    const size_t anb0 = a->nb[0];
    const size_t bnb0 = b->nb[0];
    const size_t dnb0 = dst->nb[0];
    const bool plain = a->type == LM_GGML_TYPE_F32 && b->type == LM_GGML_TYPE_F32 && dst->type == LM_GGML_TYPE_F32 &&
                       anb0 == sizeof(float) && bnb0 == sizeof(float) && dnb0 == sizeof(float);

    if (plain && same_shape(a, b) && lm_ggml_is_contiguous(a) && lm_ggml_is_contiguous(b) &&
        lm_ggml_is_contiguous(dst)) { // one run: no per-row overhead on short rows
        const float * x = static_cast<const float *>(a->data);
        const float * y = static_cast<const float *>(b->data);
        float * z = static_cast<float *>(dst->data);
        for_row_parts(params, 1, lm_ggml_nelements(dst), true, [&](int64_t, int64_t k0, int64_t k1) {
            for (int64_t k = k0; k < k1; ++k) z[k] = f(x[k], y[k]);
        });
        return;
    }

    if (plain && ne10 == 1 && b->ne[1] == 1 && a->nb[1] == ne0 * sizeof(float) && dst->nb[1] == ne0 * sizeof(float)) {
        // one src1 value per plane (a bias per channel): whole planes at once
        const Range r = split(dst->ne[2] * dst->ne[3], params->ith, params->nth);
        const int64_t n = ne0 * dst->ne[1];
        for (int64_t pl = r.begin; pl < r.end; ++pl) {
            const int64_t i2 = pl % dst->ne[2], i3 = pl / dst->ne[2];
            const float * x = reinterpret_cast<const float *>(row_ptr(a, 0, i2, i3));
            const float v = *reinterpret_cast<const float *>(row_ptr(b, 0, i2 % b->ne[2], i3 % b->ne[3]));
            float * z = reinterpret_cast<float *>(row_ptr_mut(dst, 0, i2, i3));
            for (int64_t k = 0; k < n; ++k) z[k] = f(x[k], v);
        }
        return;
    }

    float abuf[kChunk];
    float bbuf[kChunk];
    // rows split into pieces only where src1's row is as long as dst's
    for_row_parts(params, nrows(dst), ne0, plain && ne10 == ne0, [&](int64_t ir, int64_t p0, int64_t p1) {
        const RowIdx i = row_idx(ir, dst->ne);
        const char * ap = row_ptr(a, i.i1, i.i2, i.i3);
        const char * bp = row_ptr(b, i.i1 % b->ne[1], i.i2 % b->ne[2], i.i3 % b->ne[3]);
        char * dp = row_ptr_mut(dst, i.i1, i.i2, i.i3);
        if (plain) {
            const float * x = reinterpret_cast<const float *>(ap);
            const float * y = reinterpret_cast<const float *>(bp);
            float * z = reinterpret_cast<float *>(dp);
            if (ne10 == ne0) {
                for (int64_t k = p0; k < p1; ++k) z[k] = f(x[k], y[k]);
                return;
            }
            if (ne10 == 1) { // one value per row (a bias per channel)
                const float v = y[0];
                for (int64_t k = 0; k < ne0; ++k) z[k] = f(x[k], v);
                return;
            }
            // src1's row repeats ne0/ne10 times along the row
            for (int64_t k0 = 0; k0 < ne0; k0 += ne10) {
                for (int64_t k = 0; k < ne10; ++k) z[k0 + k] = f(x[k0 + k], y[k]);
            }
            return;
        }
        for (int64_t k0 = 0; k0 < ne0; k0 += kChunk) {
            const int64_t m = std::min<int64_t>(kChunk, ne0 - k0);
            load_run(a->type, ap + k0 * anb0, anb0, m, abuf);
            if (ne10 == ne0) {
                load_run(b->type, bp + k0 * bnb0, bnb0, m, bbuf);
            } else {
                for (int64_t k = 0; k < m; ++k) bbuf[k] = load_one(b->type, bp + ((k0 + k) % ne10) * bnb0);
            }
            for (int64_t k = 0; k < m; ++k) abuf[k] = f(abuf[k], bbuf[k]);
            store_run(dst->type, dp + k0 * dnb0, dnb0, m, abuf);
        }
    });
}

// Shared supports() rule of unary maps: float types in and out, same shape.
inline bool map_supported(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    return src && is_float_type(src->type) && is_float_type(dst->type) && same_shape(src, dst);
}

} // namespace lm_cpu_ew

// Convolution helpers (tier 2): IM2COL, POOL_1D, POOL_2D.

#include "ew_common.h"
#include "ew_ops.h"

#include <cfloat>

namespace lm_cpu_ew {

namespace {

struct Im2colShape {
    int64_t N, IC, IH, IW, KH, KW, OH, OW;
    bool is_2d;
};

// src0 is only a shape: the kernel [KW, KH, IC, OC] (2D) or [KW, IC, OC] (1D);
// src1 the input [IW, IH, IC, N] (2D) or [IW, IC, N] (1D).
Im2colShape im2col_shape(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * k = dst->src[0];
    const lm_ggml_tensor * x = dst->src[1];
    const bool is_2d = lm_ggml_get_op_params_i32(dst, 6) == 1;
    Im2colShape s;
    s.is_2d = is_2d;
    s.N = is_2d ? x->ne[3] : x->ne[2];
    s.IC = is_2d ? x->ne[2] : x->ne[1];
    s.IH = is_2d ? x->ne[1] : 1;
    s.IW = x->ne[0];
    s.KH = is_2d ? k->ne[1] : 1;
    s.KW = k->ne[0];
    s.OH = is_2d ? dst->ne[2] : 1;
    s.OW = dst->ne[1];
    return s;
}

struct Im2colStrides {
    int64_t s0, s1, p0, p1, d0, d1;
    size_t xw, xh, xc, xn; // input strides by role (bytes)
};

// im2col_forward for F32 in and packed F32 out: a kernel row outside the
// input is zero-filled at once, the input row's address is formed once per
// kernel row, no type dispatch per element. Same values as the general loop.
void im2col_rows_f32(const lm_ggml_tensor * x, lm_ggml_tensor * dst, const Im2colShape & sh, const Im2colStrides & t,
                     Range r) {
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, dst->ne);
        const int64_t iow = i.i1;
        const int64_t ioh = sh.is_2d ? i.i2 : 0;
        const int64_t in = sh.is_2d ? i.i3 : i.i2;
        float * d = reinterpret_cast<float *>(row_ptr_mut(dst, i.i1, i.i2, i.i3));
        for (int64_t iic = 0; iic < sh.IC; ++iic) {
            const char * plane = static_cast<const char *>(x->data) + in * t.xn + iic * t.xc;
            for (int64_t ikh = 0; ikh < sh.KH; ++ikh, d += sh.KW) {
                const int64_t iih = ioh * t.s1 + ikh * t.d1 - t.p1;
                if (iih < 0 || iih >= sh.IH) {
                    std::fill_n(d, sh.KW, 0.0f);
                    continue;
                }
                const char * row = plane + iih * t.xh;
                for (int64_t ikw = 0; ikw < sh.KW; ++ikw) {
                    const int64_t iiw = iow * t.s0 + ikw * t.d0 - t.p0;
                    d[ikw] = iiw >= 0 && iiw < sh.IW ? *reinterpret_cast<const float *>(row + iiw * t.xw) : 0.0f;
                }
            }
        }
    }
}

} // namespace

// ---------------------------------------------------------------- IM2COL
// op_params i32: [0]=s0 [1]=s1 [2]=p0 [3]=p1 [4]=d0 [5]=d1 [6]=is_2D.
// dst (IC*KH*KW, OW, OH, N) (2D) or (IC*KW, OW, N) (1D); element
// (iic*KH + ikh)*KW + ikw of row (iow, ioh, in) is input pixel
// (iow*s0 + ikw*d0 - p0, ioh*s1 + ikh*d1 - p1) of channel iic, or 0 outside.
void im2col_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * x = dst->src[1];
    const Im2colShape sh = im2col_shape(dst);
    const int64_t s0 = lm_ggml_get_op_params_i32(dst, 0), s1 = lm_ggml_get_op_params_i32(dst, 1);
    const int64_t p0 = lm_ggml_get_op_params_i32(dst, 2), p1 = lm_ggml_get_op_params_i32(dst, 3);
    const int64_t d0 = lm_ggml_get_op_params_i32(dst, 4), d1 = lm_ggml_get_op_params_i32(dst, 5);

    // input strides by role
    const size_t xw = x->nb[0];
    const size_t xh = sh.is_2d ? x->nb[1] : 0;
    const size_t xc = sh.is_2d ? x->nb[2] : x->nb[1];
    const size_t xn = sh.is_2d ? x->nb[3] : x->nb[2];

    const Range r = split(nrows(dst), params->ith, params->nth);
    if (x->type == LM_GGML_TYPE_F32 && dst->type == LM_GGML_TYPE_F32 && dst->nb[0] == sizeof(float)) {
        const Im2colStrides st = {s0, s1, p0, p1, d0, d1, xw, xh, xc, xn};
        im2col_rows_f32(x, dst, sh, st, r);
        return;
    }
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, dst->ne);
        const int64_t iow = i.i1;
        const int64_t ioh = sh.is_2d ? i.i2 : 0;
        const int64_t in = sh.is_2d ? i.i3 : i.i2;
        char * d = row_ptr_mut(dst, i.i1, i.i2, i.i3);
        for (int64_t iic = 0; iic < sh.IC; ++iic) {
            const char * plane = static_cast<const char *>(x->data) + in * xn + iic * xc;
            for (int64_t ikh = 0; ikh < sh.KH; ++ikh) {
                const int64_t iih = ioh * s1 + ikh * d1 - p1;
                for (int64_t ikw = 0; ikw < sh.KW; ++ikw) {
                    const int64_t iiw = iow * s0 + ikw * d0 - p0;
                    float v = 0.0f;
                    if (iih >= 0 && iih < sh.IH && iiw >= 0 && iiw < sh.IW) {
                        v = load_one(x->type, plane + iih * xh + iiw * xw);
                    }
                    store_one(dst->type, d + ((iic * sh.KH + ikh) * sh.KW + ikw) * dst->nb[0], v);
                }
            }
        }
    }
}

bool im2col_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * k = dst->src[0];
    const lm_ggml_tensor * x = dst->src[1];
    if (!k || !x || !is_float_type(x->type) || !is_float_type(dst->type)) {
        return false;
    }
    const Im2colShape sh = im2col_shape(dst);
    const int64_t n_dim = sh.is_2d ? dst->ne[3] : dst->ne[2];
    return dst->ne[0] == sh.IC * sh.KH * sh.KW && n_dim == sh.N && (sh.is_2d || dst->ne[3] == 1);
}

// ---------------------------------------------------------------- POOL_1D
// op_params i32: [0]=op (0 MAX, 1 AVG) [1]=k0 [2]=s0 [3]=p0. Window i covers
// src elements i*s0 - p0 .. +k0-1; elements outside are skipped, AVG divides
// by k0 (padding counts), MAX starts at -FLT_MAX. ggml's CPU kernel only
// accepts p0 == 0 and k0 == s0, where this is the same computation; the
// general case follows POOL_2D's rules.
void pool_1d_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const bool is_max = lm_ggml_get_op_params_i32(dst, 0) == LM_GGML_OP_POOL_MAX;
    const int64_t k0 = lm_ggml_get_op_params_i32(dst, 1);
    const int64_t s0 = lm_ggml_get_op_params_i32(dst, 2);
    const int64_t p0 = lm_ggml_get_op_params_i32(dst, 3);
    const Range r = split(nrows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, dst->ne);
        const char * s = row_ptr(a, i.i1, i.i2, i.i3);
        char * d = row_ptr_mut(dst, i.i1, i.i2, i.i3);
        for (int64_t o = 0; o < dst->ne[0]; ++o) {
            float acc = is_max ? -FLT_MAX : 0.0f;
            for (int64_t ki = 0; ki < k0; ++ki) {
                const int64_t j = o * s0 - p0 + ki;
                if (j < 0 || j >= a->ne[0]) continue;
                const float v = load_one(a->type, s + j * a->nb[0]);
                if (is_max) {
                    if (v > acc) acc = v;
                } else {
                    acc += v;
                }
            }
            if (!is_max) acc /= static_cast<float>(k0);
            store_one(dst->type, d + o * dst->nb[0], acc);
        }
    }
}

bool pool_1d_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const int32_t op = lm_ggml_get_op_params_i32(dst, 0);
    return a && is_float_type(a->type) && is_float_type(dst->type) &&
           (op == LM_GGML_OP_POOL_MAX || op == LM_GGML_OP_POOL_AVG) && lm_ggml_get_op_params_i32(dst, 1) > 0 &&
           lm_ggml_get_op_params_i32(dst, 2) > 0 && dst->ne[1] == a->ne[1] && dst->ne[2] == a->ne[2] &&
           dst->ne[3] == a->ne[3];
}

// ---------------------------------------------------------------- POOL_2D
namespace {

// pool_2d_forward on packed F32 rows: the window clipped to the input once,
// then plain pointer loops; the max by select (the winner is data-dependent,
// a branch mispredicts). Same operations in the same order as the general loop.
template <bool is_max>
void pool_2d_rows_f32(const lm_ggml_tensor * a, lm_ggml_tensor * dst, Range r, int64_t k0, int64_t k1, int64_t s0,
                      int64_t s1, int64_t p0, int64_t p1) {
    const float area = static_cast<float>(k0 * k1);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, dst->ne);
        const int64_t y0 = i.i1 * s1 - p1;
        const int64_t ya = std::max<int64_t>(y0, 0), yb = std::min<int64_t>(y0 + k1, a->ne[1]);
        const char * s = row_ptr(a, 0, i.i2, i.i3);
        float * d = reinterpret_cast<float *>(row_ptr_mut(dst, i.i1, i.i2, i.i3));
        for (int64_t ox = 0; ox < dst->ne[0]; ++ox) {
            const int64_t x0 = ox * s0 - p0;
            const int64_t xa = std::max<int64_t>(x0, 0), xb = std::min<int64_t>(x0 + k0, a->ne[0]);
            float acc = is_max ? -FLT_MAX : 0.0f;
            for (int64_t y = ya; y < yb; ++y) {
                const float * row = reinterpret_cast<const float *>(s + y * a->nb[1]);
                for (int64_t x = xa; x < xb; ++x) {
                    if constexpr (is_max) {
                        acc = row[x] > acc ? row[x] : acc;
                    } else {
                        acc += row[x];
                    }
                }
            }
            d[ox] = is_max ? acc : acc / area;
        }
    }
}

} // namespace

// op_params i32: [0]=op [1]=k0 [2]=k1 [3]=s0 [4]=s1 [5]=p0 [6]=p1. Output
// (ox, oy) pools src window x in ox*s0 - p0 .. +k0-1, y in oy*s1 - p1 .. +k1-1
// of the same plane, skipping positions outside; AVG divides by k0*k1.
void pool_2d_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const bool is_max = lm_ggml_get_op_params_i32(dst, 0) == LM_GGML_OP_POOL_MAX;
    const int64_t k0 = lm_ggml_get_op_params_i32(dst, 1), k1 = lm_ggml_get_op_params_i32(dst, 2);
    const int64_t s0 = lm_ggml_get_op_params_i32(dst, 3), s1 = lm_ggml_get_op_params_i32(dst, 4);
    const int64_t p0 = lm_ggml_get_op_params_i32(dst, 5), p1 = lm_ggml_get_op_params_i32(dst, 6);
    const float area = static_cast<float>(k0 * k1);
    const Range r = split(nrows(dst), params->ith, params->nth);
    if (a->type == LM_GGML_TYPE_F32 && dst->type == LM_GGML_TYPE_F32 && a->nb[0] == sizeof(float) &&
        dst->nb[0] == sizeof(float)) {
        if (is_max) {
            pool_2d_rows_f32<true>(a, dst, r, k0, k1, s0, s1, p0, p1);
        } else {
            pool_2d_rows_f32<false>(a, dst, r, k0, k1, s0, s1, p0, p1);
        }
        return;
    }
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, dst->ne);
        const int64_t oy = i.i1;
        char * d = row_ptr_mut(dst, i.i1, i.i2, i.i3);
        for (int64_t ox = 0; ox < dst->ne[0]; ++ox) {
            float acc = is_max ? -FLT_MAX : 0.0f;
            for (int64_t ky = 0; ky < k1; ++ky) {
                const int64_t y = oy * s1 - p1 + ky;
                if (y < 0 || y >= a->ne[1]) continue;
                const char * s = row_ptr(a, y, i.i2, i.i3);
                for (int64_t kx = 0; kx < k0; ++kx) {
                    const int64_t x = ox * s0 - p0 + kx;
                    if (x < 0 || x >= a->ne[0]) continue;
                    const float v = load_one(a->type, s + x * a->nb[0]);
                    if (is_max) {
                        if (v > acc) acc = v;
                    } else {
                        acc += v;
                    }
                }
            }
            if (!is_max) acc /= area;
            store_one(dst->type, d + ox * dst->nb[0], acc);
        }
    }
}

bool pool_2d_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const int32_t op = lm_ggml_get_op_params_i32(dst, 0);
    return a && is_float_type(a->type) && is_float_type(dst->type) &&
           (op == LM_GGML_OP_POOL_MAX || op == LM_GGML_OP_POOL_AVG) && lm_ggml_get_op_params_i32(dst, 1) > 0 &&
           lm_ggml_get_op_params_i32(dst, 2) > 0 && lm_ggml_get_op_params_i32(dst, 3) > 0 &&
           lm_ggml_get_op_params_i32(dst, 4) > 0 && dst->ne[2] == a->ne[2] && dst->ne[3] == a->ne[3];
}

} // namespace lm_cpu_ew

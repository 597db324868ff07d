// Training kernels of the positional and spatial ops: ROPE_BACK,
// IM2COL_BACK, POOL_2D_BACK.
#include "la_backward.h"
#include "la_common.h"
#include "la_ops.h"

#include <cfloat>

namespace lmggml::cpu::la {
namespace {

// ---------------------------------------------------------------- ROPE_BACK
// ROPE rotates each pair (x0, x1) by m * [[c, -s], [s, c]]; its gradient is
// the transposed rotation m * [[c, s], [-s, c]]. With P = diag(1, -1),
// P R(theta) P = R(theta)^T, so ROPE_BACK = P . ROPE . P: negate the second
// element of every rotated pair, run the ROPE kernel in place with the same
// parameters, negate again. Negation is exact, so this gives the inverse
// rotation with the forward kernel's own angles, caches and modes.

// The ROPE node with the same parameters whose input is dst itself.
lm_ggml_tensor forward_view(lm_ggml_tensor * dst) {
    lm_ggml_tensor f = *dst;
    f.op = LM_GGML_OP_ROPE;
    f.src[0] = dst;
    return f;
}

// Negates the second element of each pair ROPE rotates in one row. Pairs:
// normal (2k, 2k+1), NeoX and M-RoPE (k, k + n_dims/2) for k < n_dims/2;
// vision (k, k + n_dims) for k < n_dims.
template <typename Bits> void negate_second(Bits * row, int64_t ne0, int n_dims, int mode) {
    constexpr Bits sign = (Bits) ((Bits) 1 << (8 * sizeof(Bits) - 1));
    if (mode == LM_GGML_ROPE_TYPE_VISION) {
        for (int64_t k = 0; k < n_dims && k + n_dims < ne0; ++k) {
            row[k + n_dims] ^= sign;
        }
    } else if ((mode & (LM_GGML_ROPE_TYPE_NEOX | LM_GGML_ROPE_TYPE_MROPE)) != 0) {
        for (int64_t k = 0; k < n_dims / 2; ++k) {
            row[k + n_dims / 2] ^= sign;
        }
    } else {
        for (int64_t k = 0; k < n_dims / 2; ++k) {
            row[2 * k + 1] ^= sign;
        }
    }
}

// dst rows [r) = P . rows of src (src may be dst)
template <typename Bits>
void reflect_rows(const lm_ggml_tensor * src, lm_ggml_tensor * dst, Range r, int n_dims, int mode) {
    const int64_t ne0 = dst->ne[0];
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t i1 = ir % dst->ne[1], i2 = (ir / dst->ne[1]) % dst->ne[2], i3 = ir / (dst->ne[1] * dst->ne[2]);
        Bits * y = (Bits *) row_of(dst, i1, i2, i3);
        const Bits * x = (const Bits *) row_of(src, i1, i2, i3);
        if (x != y) {
            memmove(y, x, (size_t) ne0 * sizeof(Bits));
        }
        negate_second(y, ne0, n_dims, mode);
    }
}

void reflect(const lm_ggml_tensor * src, lm_ggml_tensor * dst, Range r) {
    const int n_dims = lm_ggml_get_op_params_i32(dst, 1);
    const int mode = lm_ggml_get_op_params_i32(dst, 2);
    if (dst->type == LM_GGML_TYPE_F16) {
        reflect_rows<uint16_t>(src, dst, r, n_dims, mode);
    } else {
        reflect_rows<uint32_t>(src, dst, r, n_dims, mode);
    }
}

// ---------------------------------------------------------------- IM2COL_BACK
struct Im2colGeom {
    bool is_2d;
    int s0, s1, p0, p1, d0, d1;
    int64_t IW, IH, IC, N; // dst: 2D (IW, IH, IC, N), 1D (IW, IC, N)
    int64_t KW, KH;        // from the conv kernel (src1)
    int64_t OW, OH;        // from the gradient (src0)
};

Im2colGeom im2col_geom(const lm_ggml_tensor * dst) {
    Im2colGeom g{};
    g.s0 = lm_ggml_get_op_params_i32(dst, 0);
    g.s1 = lm_ggml_get_op_params_i32(dst, 1);
    g.p0 = lm_ggml_get_op_params_i32(dst, 2);
    g.p1 = lm_ggml_get_op_params_i32(dst, 3);
    g.d0 = lm_ggml_get_op_params_i32(dst, 4);
    g.d1 = lm_ggml_get_op_params_i32(dst, 5);
    g.is_2d = lm_ggml_get_op_params_i32(dst, 6) == 1;
    const lm_ggml_tensor * grad = dst->src[0];
    const lm_ggml_tensor * kern = dst->src[1];
    g.IW = dst->ne[0];
    g.IH = g.is_2d ? dst->ne[1] : 1;
    g.IC = g.is_2d ? dst->ne[2] : dst->ne[1];
    g.N = g.is_2d ? dst->ne[3] : dst->ne[2];
    g.KW = kern->ne[0];
    g.KH = g.is_2d ? kern->ne[1] : 1;
    g.OW = grad->ne[1];
    g.OH = g.is_2d ? grad->ne[2] : 1;
    return g;
}

// The output position o with o*s + k*d - p == i, or -1 if there is none.
inline int64_t source_of(int64_t i, int64_t k, int s, int p, int d, int64_t n_out) {
    const int64_t t = i + p - k * d;
    if (t < 0 || t % s != 0 || t / s >= n_out) {
        return -1;
    }
    return t / s;
}

} // namespace

bool rope_back_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    if (src == nullptr || !lm_ggml_are_same_shape(src, dst) || src->type != dst->type ||
        src->nb[0] != lm_ggml_type_size(src->type)) {
        return false;
    }
    lm_ggml_tensor f = forward_view(const_cast<lm_ggml_tensor *>(dst));
    return rope_supports(&f);
}

size_t rope_back_work_size(const lm_ggml_tensor * dst, int n_threads) {
    lm_ggml_tensor f = forward_view(const_cast<lm_ggml_tensor *>(dst));
    return rope_work_size(&f, n_threads);
}

void rope_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const Range r = split(lm_ggml_nrows(dst), params->ith, params->nth);
    reflect(dst->src[0], dst, r);
    sync(params); // the ROPE kernel may split rows differently
    lm_ggml_tensor f = forward_view(dst);
    rope_forward(params, &f);
    sync(params);
    reflect(dst, dst, r);
}

bool im2col_back_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * grad = dst->src[0];
    const lm_ggml_tensor * kern = dst->src[1];
    if (grad == nullptr || kern == nullptr || grad->type != LM_GGML_TYPE_F32 || dst->type != LM_GGML_TYPE_F32 ||
        grad->nb[0] != sizeof(float) || dst->nb[0] != sizeof(float)) {
        return false;
    }
    const Im2colGeom g = im2col_geom(dst);
    if (g.s0 <= 0 || (g.is_2d && g.s1 <= 0) || grad->ne[0] != g.IC * g.KH * g.KW) {
        return false;
    }
    return g.is_2d ? grad->ne[3] == g.N : (grad->ne[2] == g.N && grad->ne[3] == 1 && dst->ne[3] == 1);
}

// dst[iw, ih, c, n] = sum over taps (kh, kw) that read it of the gradient of
// column (c*KH + kh)*KW + kw at the output position that tap serves.
void im2col_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * grad = dst->src[0];
    const Im2colGeom g = im2col_geom(dst);
    const Range r = split(g.IH * g.IC * g.N, params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t ih = ir % g.IH, c = (ir / g.IH) % g.IC, n = ir / (g.IH * g.IC);
        float * y = g.is_2d ? (float *) row_of(dst, ih, c, n) : (float *) row_of(dst, c, n, 0);
        for (int64_t iw = 0; iw < g.IW; ++iw) {
            float sum = 0.0f;
            for (int64_t kh = 0; kh < g.KH; ++kh) {
                const int64_t oh = g.is_2d ? source_of(ih, kh, g.s1, g.p1, g.d1, g.OH) : 0;
                if (oh < 0) {
                    continue;
                }
                for (int64_t kw = 0; kw < g.KW; ++kw) {
                    const int64_t ow = source_of(iw, kw, g.s0, g.p0, g.d0, g.OW);
                    if (ow < 0) {
                        continue;
                    }
                    const int64_t col = (c * g.KH + kh) * g.KW + kw;
                    const char * base = g.is_2d ? row_of(grad, ow, oh, n) : row_of(grad, ow, n, 0);
                    sum += *(const float *) (base + col * grad->nb[0]);
                }
            }
            y[iw] = sum;
        }
    }
}

// ---------------------------------------------------------------- POOL_2D_BACK
bool pool_2d_back_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * grad = dst->src[0];
    const lm_ggml_tensor * xf = dst->src[1];
    if (grad == nullptr || xf == nullptr || grad->type != LM_GGML_TYPE_F32 || grad->nb[0] != sizeof(float) ||
        dst->type != LM_GGML_TYPE_F32 || dst->nb[0] != sizeof(float) ||
        (xf->type != LM_GGML_TYPE_F32 && xf->type != LM_GGML_TYPE_F16) || xf->nb[0] != lm_ggml_type_size(xf->type) ||
        !lm_ggml_are_same_shape(xf, dst) || grad->ne[2] != dst->ne[2] || grad->ne[3] != dst->ne[3]) {
        return false;
    }
    const int32_t op = lm_ggml_get_op_params_i32(dst, 0);
    const int32_t k0 = lm_ggml_get_op_params_i32(dst, 1), k1 = lm_ggml_get_op_params_i32(dst, 2);
    const int32_t s0 = lm_ggml_get_op_params_i32(dst, 3), s1 = lm_ggml_get_op_params_i32(dst, 4);
    return (op == LM_GGML_OP_POOL_MAX || op == LM_GGML_OP_POOL_AVG) && k0 > 0 && k1 > 0 && s0 > 0 && s1 > 0;
}

namespace {

struct PoolBack {
    int32_t op, k0, k1, s0, s1, p0, p1;
};

// One plane: y (dst, rows of W floats ldy bytes apart, zeroed here), g (the
// gradient, OW x OH, rows ldg bytes apart), x (the forward input, rows ldx
// bytes apart, packed elements of type X). Addresses are formed from the
// plane's bases so the inner loops are plain pointer walks.
template <typename X>
void pool_back_plane(const PoolBack & q, int64_t W, int64_t H, char * y, size_t ldy, int64_t OW, int64_t OH,
                     const char * g, size_t ldg, const char * x, size_t ldx) {
    auto val = [](const X * p, int64_t i) {
        if constexpr (sizeof(X) == 2) {
            return fp16_to_f32(p[i]);
        } else {
            return p[i];
        }
    };
    for (int64_t iy = 0; iy < H; ++iy) {
        std::fill_n((float *) (y + iy * ldy), W, 0.0f);
    }
    const float inv_area = 1.0f / (float) (q.k0 * q.k1);
    for (int64_t oy = 0; oy < OH; ++oy) {
        const float * gr = (const float *) (g + oy * ldg);
        const int64_t y0 = oy * q.s1 - q.p1;
        const int64_t ya = std::max<int64_t>(y0, 0), yb = std::min<int64_t>(y0 + q.k1, H);
        for (int64_t ox = 0; ox < OW; ++ox) {
            const int64_t x0 = ox * q.s0 - q.p0;
            const int64_t xa = std::max<int64_t>(x0, 0), xb = std::min<int64_t>(x0 + q.k0, W);
            if (q.op == LM_GGML_OP_POOL_AVG) {
                const float v = gr[ox] * inv_area;
                for (int64_t iy = ya; iy < yb; ++iy) {
                    float * yr = (float *) (y + iy * ldy);
                    for (int64_t ix = xa; ix < xb; ++ix) {
                        yr[ix] += v;
                    }
                }
                continue;
            }
            float best = -FLT_MAX;
            int64_t bx = -1, by = -1;
            for (int64_t iy = ya; iy < yb; ++iy) {
                const X * xr = (const X *) (x + iy * ldx);
                // masks, not branches: the winner is data-dependent, a branch
                // mispredicts (and the compiler turns plain selects into one)
                for (int64_t ix = xa; ix < xb; ++ix) {
                    const float v = val(xr, ix);
                    const int64_t gt = -(int64_t) (v > best); // all ones where v wins
                    best = v > best ? v : best;
                    bx = (ix & gt) | (bx & ~gt);
                    by = (iy & gt) | (by & ~gt);
                }
            }
            if (bx >= 0) {
                ((float *) (y + by * ldy))[bx] += gr[ox];
            }
        }
    }
}

} // namespace

// Window (ox, oy) covers input (ox*s0 - p0 + kx, oy*s1 - p1 + ky). AVG adds
// grad / (k0*k1) to each covered element inside the input (padding counts in
// the divisor, as in the forward op); MAX adds grad to the window's first
// largest element (values <= -FLT_MAX never win, as in ggml).
void pool_2d_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * grad = dst->src[0];
    const lm_ggml_tensor * xf = dst->src[1];
    PoolBack q;
    q.op = lm_ggml_get_op_params_i32(dst, 0);
    q.k0 = lm_ggml_get_op_params_i32(dst, 1), q.k1 = lm_ggml_get_op_params_i32(dst, 2);
    q.s0 = lm_ggml_get_op_params_i32(dst, 3), q.s1 = lm_ggml_get_op_params_i32(dst, 4);
    q.p0 = lm_ggml_get_op_params_i32(dst, 5), q.p1 = lm_ggml_get_op_params_i32(dst, 6);

    // a thread owns whole planes (i2, i3): windows overlap only within one
    const Range r = split(dst->ne[2] * dst->ne[3], params->ith, params->nth);
    for (int64_t pl = r.begin; pl < r.end; ++pl) {
        const int64_t i2 = pl % dst->ne[2], i3 = pl / dst->ne[2];
        char * y = row_of(dst, 0, i2, i3);
        const char * g = row_of(grad, 0, i2, i3);
        const char * x = row_of(xf, 0, i2, i3);
        if (xf->type == LM_GGML_TYPE_F16) {
            pool_back_plane<lm_ggml_fp16_t>(q, dst->ne[0], dst->ne[1], y, dst->nb[1], grad->ne[0], grad->ne[1], g,
                                            grad->nb[1], x, xf->nb[1]);
        } else {
            pool_back_plane<float>(q, dst->ne[0], dst->ne[1], y, dst->nb[1], grad->ne[0], grad->ne[1], g, grad->nb[1],
                                   x, xf->nb[1]);
        }
    }
}

} // namespace lmggml::cpu::la

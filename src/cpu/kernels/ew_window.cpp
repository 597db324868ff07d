// PAD_REFLECT_1D, WIN_PART, WIN_UNPART, GET_REL_POS, ADD_REL_POS, DIAG and
// COUNT_EQUAL: data movement and small reductions, split over output rows.
// Sources are read through their strides (ggml's CPU assumes contiguous
// sources; that is the common case here too).
#include "cv_ops.h"
#include "la_common.h"

namespace lmggml::cpu::cv {

using la::Range;
using la::row_of;
using la::split;

namespace {

// Output row ir -> (i1, i2, i3)
struct Row {
    int64_t i1, i2, i3;
};
inline Row row_at(const lm_ggml_tensor * t, int64_t ir) {
    return {ir % t->ne[1], (ir / t->ne[1]) % t->ne[2], ir / (t->ne[1] * t->ne[2])};
}
inline int64_t n_rows(const lm_ggml_tensor * t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

inline float f32_at(const lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return *(const float *) (row_of(t, i1, i2, i3) + i0 * t->nb[0]);
}

bool f32_pair(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * s = dst->src[0];
    return s != nullptr && s->type == LM_GGML_TYPE_F32 && dst->type == LM_GGML_TYPE_F32 && dst->nb[0] == sizeof(float);
}

} // namespace

// ---------------------------------------------------------------- PAD_REFLECT_1D
// dst[i] = src[|i - p0|] mirrored at both ends: index j = i - p0 maps to -j
// below 0 and to 2*(n-1) - j past the end. op_params i32: [0]=p0 [1]=p1.
bool pad_reflect_1d_supports(const lm_ggml_tensor * dst) {
    if (!f32_pair(dst)) {
        return false;
    }
    const lm_ggml_tensor * s = dst->src[0];
    const int32_t p0 = lm_ggml_get_op_params_i32(dst, 0), p1 = lm_ggml_get_op_params_i32(dst, 1);
    return p0 >= 0 && p1 >= 0 && p0 < s->ne[0] && p1 < s->ne[0] && dst->ne[0] == s->ne[0] + p0 + p1 &&
           dst->ne[1] == s->ne[1] && dst->ne[2] == s->ne[2] && dst->ne[3] == s->ne[3];
}

void pad_reflect_1d_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * s = dst->src[0];
    const int64_t p0 = lm_ggml_get_op_params_i32(dst, 0);
    const int64_t n = s->ne[0];
    const Range r = split(n_rows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const Row w = row_at(dst, ir);
        const char * src = row_of(s, w.i1, w.i2, w.i3);
        float * out = (float *) row_of(dst, w.i1, w.i2, w.i3);
        for (int64_t i = 0; i < dst->ne[0]; ++i) {
            int64_t j = i - p0;
            j = j < 0 ? -j : (j >= n ? 2 * (n - 1) - j : j);
            out[i] = *(const float *) (src + j * s->nb[0]);
        }
    }
}

// ---------------------------------------------------------------- WIN_PART
// src (C, W, H, 1) -> dst (C, w, w, npx*npy); window i3 = py*npx + px holds
// src[:, px*w + i1, py*w + i2], 0 past the edges. op_params i32: [0]=npx [1]=npy [2]=w.
bool win_part_supports(const lm_ggml_tensor * dst) {
    if (!f32_pair(dst)) {
        return false;
    }
    const lm_ggml_tensor * s = dst->src[0];
    const int32_t npx = lm_ggml_get_op_params_i32(dst, 0), npy = lm_ggml_get_op_params_i32(dst, 1);
    const int32_t w = lm_ggml_get_op_params_i32(dst, 2);
    return w > 0 && s->ne[3] == 1 && dst->ne[0] == s->ne[0] && dst->ne[1] == w && dst->ne[2] == w &&
           dst->ne[3] == (int64_t) npx * npy && (int64_t) npx * w >= s->ne[1] && (int64_t) npy * w >= s->ne[2];
}

void win_part_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * s = dst->src[0];
    const int64_t npx = lm_ggml_get_op_params_i32(dst, 0);
    const int64_t w = lm_ggml_get_op_params_i32(dst, 2);
    const Range r = split(n_rows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const Row d = row_at(dst, ir);
        const int64_t x = (d.i3 % npx) * w + d.i1;
        const int64_t y = (d.i3 / npx) * w + d.i2;
        float * out = (float *) row_of(dst, d.i1, d.i2, d.i3);
        if (x >= s->ne[1] || y >= s->ne[2]) {
            std::memset(out, 0, (size_t) dst->ne[0] * sizeof(float));
            continue;
        }
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            out[i0] = f32_at(s, i0, x, y, 0);
        }
    }
}

// ---------------------------------------------------------------- WIN_UNPART
// src (C, w, w, n) -> dst (C, W, H): dst[:, x, y] = src[:, x % w, y % w,
// (y / w)*npx + x / w] with npx = ceil(W / w). op_params i32: [0]=w.
bool win_unpart_supports(const lm_ggml_tensor * dst) {
    if (!f32_pair(dst)) {
        return false;
    }
    const lm_ggml_tensor * s = dst->src[0];
    const int64_t w = lm_ggml_get_op_params_i32(dst, 0);
    if (w <= 0 || s->ne[1] != w || s->ne[2] != w || dst->ne[0] != s->ne[0] || dst->ne[3] != 1) {
        return false;
    }
    return s->ne[3] >= ((dst->ne[1] + w - 1) / w) * ((dst->ne[2] + w - 1) / w);
}

void win_unpart_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * s = dst->src[0];
    const int64_t w = lm_ggml_get_op_params_i32(dst, 0);
    const int64_t npx = (dst->ne[1] + w - 1) / w;
    const Range r = split(dst->ne[1] * dst->ne[2], params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t x = ir % dst->ne[1], y = ir / dst->ne[1];
        float * out = (float *) row_of(dst, x, y, 0);
        const int64_t win = (y / w) * npx + x / w;
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            out[i0] = f32_at(s, i0, x % w, y % w, win);
        }
    }
}

// ---------------------------------------------------------------- GET_REL_POS
// src (C, 2*k - 1) F16 -> dst (C, k, q) F16: dst[:, i1, i2] = src[:, k - 1 - i1 + i2].
bool get_rel_pos_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * s = dst->src[0];
    // ggml's CPU also takes BF16 but copies its bits into the F16 result,
    // which is not a meaningful value; only F16 is accepted here
    return s != nullptr && s->type == LM_GGML_TYPE_F16 && dst->type == LM_GGML_TYPE_F16 && dst->ne[0] == s->ne[0] &&
           dst->ne[1] == dst->ne[2] && s->ne[1] == 2 * dst->ne[1] - 1 && dst->ne[3] == 1;
}

void get_rel_pos_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * s = dst->src[0];
    const int64_t k = dst->ne[1];
    const Range r = split(dst->ne[1] * dst->ne[2], params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t i1 = ir % k, i2 = ir / k;
        const char * src = row_of(s, k - 1 - i1 + i2, 0, 0);
        char * out = row_of(dst, i1, i2, 0);
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            std::memcpy(out + i0 * dst->nb[0], src + i0 * s->nb[0], sizeof(lm_ggml_fp16_t));
        }
    }
}

// ---------------------------------------------------------------- ADD_REL_POS
// a (K*K, QW*QH, B), pw/ph (K, QW, QH, B): element (u*K + v, qw + QW*qh, b)
// of dst is a's plus ph[u, qw, qh, b] + pw[v, qw, qh, b]. In place when
// dst aliases a (op_params i32 [0]=1); every element is read before it is written.
bool add_rel_pos_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * pw = dst->src[1];
    const lm_ggml_tensor * ph = dst->src[2];
    if (!f32_pair(dst) || pw == nullptr || ph == nullptr || pw->type != LM_GGML_TYPE_F32 ||
        ph->type != LM_GGML_TYPE_F32 || !lm_ggml_are_same_shape(pw, ph) || !lm_ggml_are_same_shape(a, dst)) {
        return false;
    }
    return a->ne[0] == pw->ne[0] * pw->ne[0] && a->ne[1] == pw->ne[1] * pw->ne[2] && a->ne[2] == pw->ne[3] &&
           a->ne[3] == 1;
}

void add_rel_pos_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * pw = dst->src[1];
    const lm_ggml_tensor * ph = dst->src[2];
    const int64_t K = pw->ne[0], QW = pw->ne[1];
    const Range r = split(dst->ne[1] * dst->ne[2], params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t q = ir % dst->ne[1], b = ir / dst->ne[1];
        const int64_t qw = q % QW, qh = q / QW;
        const char * h_row = row_of(ph, qw, qh, b);
        const char * w_row = row_of(pw, qw, qh, b);
        const char * src = row_of(a, q, b, 0);
        float * out = (float *) row_of(dst, q, b, 0);
        for (int64_t u = 0; u < K; ++u) {
            const float h = *(const float *) (h_row + u * ph->nb[0]);
            for (int64_t v = 0; v < K; ++v) {
                const float x = *(const float *) (src + (u * K + v) * a->nb[0]);
                out[u * K + v] = x + h + *(const float *) (w_row + v * pw->nb[0]);
            }
        }
    }
}

// ---------------------------------------------------------------- DIAG
// src (N, 1, B2, B3) -> dst (N, N, B2, B3): dst[i0, i1] = i0 == i1 ? src[i0] : 0.
bool diag_supports(const lm_ggml_tensor * dst) {
    if (!f32_pair(dst)) {
        return false;
    }
    const lm_ggml_tensor * s = dst->src[0];
    return s->ne[1] == 1 && dst->ne[0] == s->ne[0] && dst->ne[1] == s->ne[0] && dst->ne[2] == s->ne[2] &&
           dst->ne[3] == s->ne[3];
}

void diag_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * s = dst->src[0];
    const Range r = split(n_rows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const Row d = row_at(dst, ir);
        float * out = (float *) row_of(dst, d.i1, d.i2, d.i3);
        std::memset(out, 0, (size_t) dst->ne[0] * sizeof(float));
        out[d.i1] = f32_at(s, d.i1, 0, d.i2, d.i3);
    }
}

// ---------------------------------------------------------------- COUNT_EQUAL
// a, b I32 of one shape -> dst: one I64, the number of equal positions.
// Registered single-threaded (one pass over the data, no scratch).
bool count_equal_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    return a != nullptr && b != nullptr && a->type == LM_GGML_TYPE_I32 && b->type == LM_GGML_TYPE_I32 &&
           lm_ggml_are_same_shape(a, b) && dst->type == LM_GGML_TYPE_I64 && lm_ggml_nelements(dst) == 1;
}

void count_equal_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    if (params->ith != 0) {
        return;
    }
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    int64_t count = 0;
    for (int64_t ir = 0; ir < n_rows(a); ++ir) {
        const Row w = row_at(a, ir);
        const char * ra = row_of(a, w.i1, w.i2, w.i3);
        const char * rb = row_of(b, w.i1, w.i2, w.i3);
        for (int64_t i0 = 0; i0 < a->ne[0]; ++i0) {
            count += *(const int32_t *) (ra + i0 * a->nb[0]) == *(const int32_t *) (rb + i0 * b->nb[0]);
        }
    }
    std::memcpy(dst->data, &count, sizeof(count));
}

} // namespace lmggml::cpu::cv

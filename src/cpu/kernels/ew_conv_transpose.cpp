// CONV_TRANSPOSE_1D and CONV_TRANSPOSE_2D (no padding, no dilation).
//
// Every input sample scatters kernel * value into the output at
// (input position * stride + kernel position), summed over input channels.
// As in ggml, the threads first repack the kernel and the input with the
// input channel innermost into shared scratch (an F16 kernel makes the input
// round to F16 too, like ggml's F16 path), meet at a barrier, and then each
// thread accumulates whole output rows (1D) or planes (2D) it owns, so no two
// threads write the same element.
#include "cv_ops.h"
#include "la_common.h"

namespace lmggml::cpu::cv {

using la::dot_f32;
using la::pad_line;
using la::Range;
using la::row_of;
using la::split;

namespace {

inline float load_kernel(lm_ggml_type t, const char * p) {
    if (t == LM_GGML_TYPE_F16) {
        lm_ggml_fp16_t h;
        std::memcpy(&h, p, sizeof(h));
        return la::fp16_to_f32(h);
    }
    float f;
    std::memcpy(&f, p, sizeof(f));
    return f;
}

// The input value as the product sees it: rounded to F16 for an F16 kernel.
inline float input_value(float v, bool half) {
    return half ? lm_ggml_compute_fp16_to_fp32(lm_ggml_compute_fp32_to_fp16(v)) : v;
}

bool packed_dim0(const lm_ggml_tensor * t) { return t->nb[0] == lm_ggml_type_size(t->type); }

} // namespace

// ---------------------------------------------------------------- 1D
// a (K, OC, IC), b (IL, IC), dst (OL, OC) with OL = (IL - 1)*s0 + K:
// dst[l*s0 + k, oc] = sum over (l, k) of sum_ic a[k, oc, ic] * b[l, ic].
// op_params i32: [0]=s0 [1]=p0 (0) [2]=d0 (1).
size_t conv_transpose_1d_work_size(const lm_ggml_tensor * dst, int n_threads) {
    (void) n_threads; // one shared copy
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    return pad_line((size_t) (a->ne[0] * a->ne[1] * a->ne[2]) * sizeof(float)) +
           pad_line((size_t) (b->ne[0] * b->ne[1]) * sizeof(float));
}

bool conv_transpose_1d_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    if (a == nullptr || b == nullptr || (a->type != LM_GGML_TYPE_F32 && a->type != LM_GGML_TYPE_F16) ||
        b->type != LM_GGML_TYPE_F32 || dst->type != LM_GGML_TYPE_F32 || !packed_dim0(a) || !packed_dim0(dst)) {
        return false;
    }
    const int32_t s0 = lm_ggml_get_op_params_i32(dst, 0);
    return s0 > 0 && lm_ggml_get_op_params_i32(dst, 1) == 0 && lm_ggml_get_op_params_i32(dst, 2) == 1 &&
           a->ne[3] == 1 && b->ne[2] == 1 && b->ne[3] == 1 && a->ne[2] == b->ne[1] &&
           dst->ne[0] == (b->ne[0] - 1) * s0 + a->ne[0] && dst->ne[1] == a->ne[1] && dst->ne[2] == 1 && dst->ne[3] == 1;
}

void conv_transpose_1d_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    const int64_t K = a->ne[0], OC = a->ne[1], IC = a->ne[2], IL = b->ne[0];
    const int64_t s0 = lm_ggml_get_op_params_i32(dst, 0);
    const bool half = a->type == LM_GGML_TYPE_F16;

    // wk[(oc*K + k)*IC + ic], wx[l*IC + ic]
    float * wk = (float *) params->wdata;
    float * wx = (float *) ((char *) params->wdata + pad_line((size_t) (K * OC * IC) * sizeof(float)));

    const Range rk = split(OC * IC, params->ith, params->nth);
    for (int64_t r = rk.begin; r < rk.end; ++r) {
        const int64_t oc = r % OC, ic = r / OC;
        const char * row = row_of(a, oc, ic, 0);
        for (int64_t k = 0; k < K; ++k) {
            wk[(oc * K + k) * IC + ic] = load_kernel(a->type, row + k * a->nb[0]);
        }
    }
    const Range rx = split(IC, params->ith, params->nth);
    for (int64_t ic = rx.begin; ic < rx.end; ++ic) {
        const char * row = row_of(b, ic, 0, 0);
        for (int64_t l = 0; l < IL; ++l) {
            wx[l * IC + ic] = input_value(*(const float *) (row + l * b->nb[0]), half);
        }
    }
    la::sync(params);

    const Range ro = split(OC, params->ith, params->nth);
    for (int64_t oc = ro.begin; oc < ro.end; ++oc) {
        float * out = (float *) row_of(dst, oc, 0, 0);
        std::memset(out, 0, (size_t) dst->ne[0] * sizeof(float));
        for (int64_t l = 0; l < IL; ++l) {
            const float * x = wx + l * IC;
            for (int64_t k = 0; k < K; ++k) {
                out[l * s0 + k] += dot_f32(IC, x, wk + (oc * K + k) * IC);
            }
        }
    }
}

// ---------------------------------------------------------------- 2D
// a (KW, KH, OC, IC) F16, b (IW, IH, IC, N) F32, dst (OW, OH, OC, N):
// dst[iw*s + kw, ih*s + kh, oc, n] += sum_ic a[kw, kh, oc, ic] * b[iw, ih, ic, n].
// op_params i32: [0]=stride. (ggml's CPU computes only batch 0 and leaves
// the other batches zero; every batch is computed here.)
size_t conv_transpose_2d_work_size(const lm_ggml_tensor * dst, int n_threads) {
    (void) n_threads;
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    return pad_line((size_t) (a->ne[0] * a->ne[1] * a->ne[2] * a->ne[3]) * sizeof(float)) +
           pad_line((size_t) (b->ne[0] * b->ne[1] * b->ne[2] * b->ne[3]) * sizeof(float));
}

bool conv_transpose_2d_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    // ggml's CPU has only the F16-kernel path
    if (a == nullptr || b == nullptr || a->type != LM_GGML_TYPE_F16 || b->type != LM_GGML_TYPE_F32 ||
        dst->type != LM_GGML_TYPE_F32 || !packed_dim0(a) || !packed_dim0(dst)) {
        return false;
    }
    const int32_t s = lm_ggml_get_op_params_i32(dst, 0);
    return s > 0 && a->ne[3] == b->ne[2] && dst->ne[0] == (b->ne[0] - 1) * s + a->ne[0] &&
           dst->ne[1] == (b->ne[1] - 1) * s + a->ne[1] && dst->ne[2] == a->ne[2] && dst->ne[3] == b->ne[3];
}

void conv_transpose_2d_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    const int64_t KW = a->ne[0], KH = a->ne[1], OC = a->ne[2], IC = a->ne[3];
    const int64_t IW = b->ne[0], IH = b->ne[1], N = b->ne[3];
    const int64_t s = lm_ggml_get_op_params_i32(dst, 0);

    // wk[((oc*KH + kh)*KW + kw)*IC + ic], wx[((n*IH + ih)*IW + iw)*IC + ic]
    float * wk = (float *) params->wdata;
    float * wx = (float *) ((char *) params->wdata + pad_line((size_t) (KW * KH * OC * IC) * sizeof(float)));

    const Range rk = split(KH * OC * IC, params->ith, params->nth);
    for (int64_t r = rk.begin; r < rk.end; ++r) {
        const int64_t kh = r % KH, oc = (r / KH) % OC, ic = r / (KH * OC);
        const char * row = row_of(a, kh, oc, ic);
        for (int64_t kw = 0; kw < KW; ++kw) {
            wk[((oc * KH + kh) * KW + kw) * IC + ic] = load_kernel(a->type, row + kw * a->nb[0]);
        }
    }
    const Range rx = split(IH * IC * N, params->ith, params->nth);
    for (int64_t r = rx.begin; r < rx.end; ++r) {
        const int64_t ih = r % IH, ic = (r / IH) % IC, n = r / (IH * IC);
        const char * row = row_of(b, ih, ic, n);
        for (int64_t iw = 0; iw < IW; ++iw) {
            wx[((n * IH + ih) * IW + iw) * IC + ic] = input_value(*(const float *) (row + iw * b->nb[0]), true);
        }
    }
    la::sync(params);

    const Range rp = split(OC * N, params->ith, params->nth);
    for (int64_t p = rp.begin; p < rp.end; ++p) {
        const int64_t oc = p % OC, n = p / OC;
        for (int64_t oh = 0; oh < dst->ne[1]; ++oh) {
            std::memset(row_of(dst, oh, oc, n), 0, (size_t) dst->ne[0] * sizeof(float));
        }
        for (int64_t ih = 0; ih < IH; ++ih) {
            for (int64_t kh = 0; kh < KH; ++kh) {
                float * out = (float *) row_of(dst, ih * s + kh, oc, n);
                const float * k_row = wk + (oc * KH + kh) * KW * IC;
                for (int64_t iw = 0; iw < IW; ++iw) {
                    const float * x = wx + ((n * IH + ih) * IW + iw) * IC;
                    for (int64_t kw = 0; kw < KW; ++kw) {
                        out[iw * s + kw] += dot_f32(IC, x, k_row + kw * IC);
                    }
                }
            }
        }
    }
}

} // namespace lmggml::cpu::cv

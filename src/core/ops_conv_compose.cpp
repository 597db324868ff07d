// Convolutions. conv_1d/2d and their depthwise and fixed-padding variants are
// not ops of their own: like ggml they build im2col + mul_mat + reshapes
// (and a permute + cont for 2D), so a backend needs nothing new for them.
// conv_transpose_1d/2d are real ops (CONV_TRANSPOSE_1D/2D).
// Layouts: docs/OPS.md.
//
// Each builder checks up front what the sub-ops would otherwise assert
// (channel counts, contiguity for the reshapes, positive output sizes), so
// bad input gives one log line and NULL.

#include "ops_common.h"

using namespace lmggml::ops;

namespace {

int64_t conv_out_size(int64_t in, int64_t k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

// stride >= 1 and a non-empty output
bool conv_dims_ok(const char * fn, const char * axis, int64_t in, int64_t k, int s, int p, int d) {
    if (s <= 0 || d <= 0) {
        LM_GGML_LOG_ERROR("%s: %s: stride %d and dilation %d must be positive\n", fn, axis, s, d);
        return false;
    }
    if (conv_out_size(in, k, s, p, d) <= 0) {
        LM_GGML_LOG_ERROR("%s: %s: input of %lld is too small for a kernel of %lld (padding %d, dilation %d)\n", fn,
                          axis, (long long) in, (long long) k, p, d);
        return false;
    }
    return true;
}

bool contiguous_ok(const char * fn, const char * name, const lm_ggml_tensor * t) {
    if (!lm_ggml_is_contiguous(t)) {
        LM_GGML_LOG_ERROR("%s: %s must be contiguous (it is reshaped)\n", fn, name);
        return false;
    }
    return true;
}

} // namespace

extern "C" {

// a: kernel (K, IC, OC), b: input (IL, IC, N).
// im2col (IC*K, OL, N) F16, times a as (K*IC, OC): (OL*N, OC), reshaped to
// (OL, OC, N). The reshape keeps mul_mat's element order, so for N > 1 the
// result is ggml's reshape of (OL*N, OC), not a batch-major layout.
lm_ggml_tensor * lm_ggml_conv_1d(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int s0, int p0,
                                 int d0) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    if (a->ne[1] != b->ne[1] || a->ne[3] != 1 || b->ne[3] != 1) {
        LM_GGML_LOG_ERROR("%s: kernel (K, IC, OC) and input (IL, IC, N) disagree: IC %lld vs %lld\n", __func__,
                          (long long) a->ne[1], (long long) b->ne[1]);
        return nullptr;
    }
    if (!contiguous_ok(__func__, "a", a) || !conv_dims_ok(__func__, "dim 0", b->ne[0], a->ne[0], s0, p0, d0)) {
        return nullptr;
    }
    lm_ggml_tensor * im2col = lm_ggml_im2col(ctx, a, b, s0, 0, p0, 0, d0, 0, false, LM_GGML_TYPE_F16);
    if (im2col == nullptr) {
        return nullptr;
    }
    lm_ggml_tensor * r =
        lm_ggml_mul_mat(ctx, lm_ggml_reshape_2d(ctx, im2col, im2col->ne[0], im2col->ne[2] * im2col->ne[1]),
                        lm_ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1], a->ne[2]));
    return lm_ggml_reshape_3d(ctx, r, im2col->ne[1], a->ne[2], im2col->ne[2]);
}

// conv_1d with half-kernel padding
lm_ggml_tensor * lm_ggml_conv_1d_ph(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int s, int d) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    return lm_ggml_conv_1d(ctx, a, b, s, (int) (a->ne[0] / 2), d);
}

// Depthwise: a (K, 1, C), b (IL, C, 1). Each channel is convolved with its
// own kernel: im2col of b as (IL, 1, C) gives (K, OL, C), times a per channel:
// (OL, 1, C), reshaped to (IL, C, 1) — so, as in ggml, the output must be as
// long as the input (OL == IL).
lm_ggml_tensor * lm_ggml_conv_1d_dw(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int s0, int p0,
                                    int d0) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    if (a->ne[3] != 1 || b->ne[2] != 1 || b->ne[3] != 1 || b->ne[1] == 0 || a->ne[2] % b->ne[1] != 0) {
        LM_GGML_LOG_ERROR("%s: kernel (K, 1, C) and input (IL, C, 1) disagree\n", __func__);
        return nullptr;
    }
    if (!contiguous_ok(__func__, "a", a) || !contiguous_ok(__func__, "b", b) ||
        !conv_dims_ok(__func__, "dim 0", b->ne[0], a->ne[0], s0, p0, d0)) {
        return nullptr;
    }
    const int64_t OL = conv_out_size(b->ne[0], a->ne[0], s0, p0, d0);
    if (OL * a->ne[1] * a->ne[2] != b->ne[0] * b->ne[1]) {
        LM_GGML_LOG_ERROR("%s: output length %lld differs from the input length %lld (the result keeps b's shape)\n",
                          __func__, (long long) OL, (long long) b->ne[0]);
        return nullptr;
    }
    lm_ggml_tensor * new_a = lm_ggml_reshape_4d(ctx, a, a->ne[0], 1, a->ne[1], a->ne[2]);
    lm_ggml_tensor * new_b = lm_ggml_reshape_4d(ctx, b, b->ne[0], 1, b->ne[1], b->ne[2]);
    lm_ggml_tensor * im2col = lm_ggml_im2col(ctx, new_a, new_b, s0, 0, p0, 0, d0, 0, false, LM_GGML_TYPE_F16);
    lm_ggml_tensor * r = lm_ggml_mul_mat(ctx, im2col, a);
    return lm_ggml_reshape_3d(ctx, r, b->ne[0], b->ne[1], 1);
}

lm_ggml_tensor * lm_ggml_conv_1d_dw_ph(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int s0, int d0) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    return lm_ggml_conv_1d_dw(ctx, a, b, s0, (int) (a->ne[0] / 2), d0);
}

// a: kernel (K, OC, IC), b: input (IL, IC); result (OL, OC, 1, 1) F32 with
// OL = (IL - 1)*s0 + K. Only p0 == 0 and d0 == 1 exist (as in ggml).
lm_ggml_tensor * lm_ggml_conv_transpose_1d(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int s0,
                                           int p0, int d0) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    if (!lm_ggml_is_matrix(b) || a->ne[2] != b->ne[1] || a->ne[3] != 1) {
        LM_GGML_LOG_ERROR("%s: kernel (K, OC, IC) and input (IL, IC) disagree: IC %lld vs %lld\n", __func__,
                          (long long) a->ne[2], (long long) b->ne[1]);
        return nullptr;
    }
    if (p0 != 0 || d0 != 1 || s0 <= 0) {
        LM_GGML_LOG_ERROR("%s: only p0 = 0, d0 = 1 and s0 > 0 are supported (got %d, %d, %d)\n", __func__, p0, d0, s0);
        return nullptr;
    }
    const int64_t ne[4] = {(b->ne[0] - 1) * s0 + a->ne[0], a->ne[1], b->ne[2], 1};
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    if (r == nullptr) {
        return nullptr;
    }
    const int32_t params[3] = {s0, p0, d0};
    lm_ggml_set_op_params(r, params, sizeof(params));
    return finish(r, LM_GGML_OP_CONV_TRANSPOSE_1D, a, b);
}

// a: kernel (KW, KH, IC, OC), b: input (IW, IH, IC, N).
// im2col (IC*KH*KW, OW, OH, N) in a's type, times a as (IC*KH*KW, OC):
// (OW*OH*N, OC) -> (OW, OH, N, OC) -> permuted and made contiguous: (OW, OH, OC, N).
lm_ggml_tensor * lm_ggml_conv_2d(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int s0, int s1, int p0,
                                 int p1, int d0, int d1) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    if (a->ne[2] != b->ne[2]) {
        LM_GGML_LOG_ERROR("%s: kernel (KW, KH, IC, OC) and input (IW, IH, IC, N) disagree: IC %lld vs %lld\n", __func__,
                          (long long) a->ne[2], (long long) b->ne[2]);
        return nullptr;
    }
    if (!contiguous_ok(__func__, "a", a) || !conv_dims_ok(__func__, "dim 0", b->ne[0], a->ne[0], s0, p0, d0) ||
        !conv_dims_ok(__func__, "dim 1", b->ne[1], a->ne[1], s1, p1, d1)) {
        return nullptr;
    }
    lm_ggml_tensor * im2col = lm_ggml_im2col(ctx, a, b, s0, s1, p0, p1, d0, d1, true, a->type);
    if (im2col == nullptr) {
        return nullptr;
    }
    lm_ggml_tensor * r = lm_ggml_mul_mat(
        ctx, lm_ggml_reshape_2d(ctx, im2col, im2col->ne[0], im2col->ne[3] * im2col->ne[2] * im2col->ne[1]),
        lm_ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1] * a->ne[2], a->ne[3]));
    r = lm_ggml_reshape_4d(ctx, r, im2col->ne[1], im2col->ne[2], im2col->ne[3], a->ne[3]);
    return lm_ggml_cont(ctx, lm_ggml_permute(ctx, r, 0, 1, 3, 2));
}

// kernel-sized stride, no padding: non-overlapping patches
lm_ggml_tensor * lm_ggml_conv_2d_sk_p0(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    return lm_ggml_conv_2d(ctx, a, b, (int) a->ne[0], (int) a->ne[1], 0, 0, 1, 1);
}

// stride 1, half-kernel padding
lm_ggml_tensor * lm_ggml_conv_2d_s1_ph(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    return lm_ggml_conv_2d(ctx, a, b, 1, 1, (int) (a->ne[0] / 2), (int) (a->ne[1] / 2), 1, 1);
}

// Depthwise: a (KW, KH, 1, C), b (IW, IH, C, N). im2col of b as (IW, IH, 1, C*N)
// gives (KH*KW, OW, OH, C*N) F16, viewed as (KH*KW, OW*OH, C, N) and multiplied
// by a as (KH*KW, 1, C): (1, OW*OH, C, N), reshaped to (OW, OH, C, N).
lm_ggml_tensor * lm_ggml_conv_2d_dw(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int s0, int s1,
                                    int p0, int p1, int d0, int d1) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    const int64_t n_kernels = a->ne[2] * a->ne[3];
    if (n_kernels == 0 || b->ne[2] % n_kernels != 0) {
        LM_GGML_LOG_ERROR("%s: %lld kernels do not divide the %lld input channels\n", __func__, (long long) n_kernels,
                          (long long) b->ne[2]);
        return nullptr;
    }
    if (!contiguous_ok(__func__, "a", a) || !contiguous_ok(__func__, "b", b) ||
        !conv_dims_ok(__func__, "dim 0", b->ne[0], a->ne[0], s0, p0, d0) ||
        !conv_dims_ok(__func__, "dim 1", b->ne[1], a->ne[1], s1, p1, d1)) {
        return nullptr;
    }
    lm_ggml_tensor * new_a = lm_ggml_reshape_4d(ctx, a, a->ne[0], a->ne[1], 1, n_kernels);
    lm_ggml_tensor * im2col =
        lm_ggml_im2col(ctx, new_a, lm_ggml_reshape_4d(ctx, b, b->ne[0], b->ne[1], 1, b->ne[2] * b->ne[3]), s0, s1, p0,
                       p1, d0, d1, true, LM_GGML_TYPE_F16);
    if (im2col == nullptr || new_a == nullptr) {
        return nullptr;
    }
    lm_ggml_tensor * new_b =
        lm_ggml_reshape_4d(ctx, im2col, im2col->ne[0], im2col->ne[2] * im2col->ne[1], b->ne[2], b->ne[3]);
    new_a = lm_ggml_reshape_4d(ctx, new_a, new_a->ne[0] * new_a->ne[1], new_a->ne[2], new_a->ne[3], 1);
    lm_ggml_tensor * r = lm_ggml_mul_mat(ctx, new_a, new_b);
    return lm_ggml_reshape_4d(ctx, r, im2col->ne[1], im2col->ne[2], b->ne[2], b->ne[3]);
}

// a: kernel (KW, KH, OC, IC), b: input (IW, IH, IC, N); result F32
// ((IW - 1)*stride + KW, (IH - 1)*stride + KH, OC, N).
lm_ggml_tensor * lm_ggml_conv_transpose_2d_p0(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                              int stride) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    if (a->ne[3] != b->ne[2]) {
        LM_GGML_LOG_ERROR("%s: kernel (KW, KH, OC, IC) and input (IW, IH, IC, N) disagree: IC %lld vs %lld\n", __func__,
                          (long long) a->ne[3], (long long) b->ne[2]);
        return nullptr;
    }
    if (stride <= 0) {
        LM_GGML_LOG_ERROR("%s: stride %d must be positive\n", __func__, stride);
        return nullptr;
    }
    const int64_t ne[4] = {(b->ne[0] - 1) * stride + a->ne[0], (b->ne[1] - 1) * stride + a->ne[1], a->ne[2], b->ne[3]};
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_i32(r, 0, stride);
    return finish(r, LM_GGML_OP_CONV_TRANSPOSE_2D, a, b);
}

} // extern "C"

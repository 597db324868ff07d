// Training ops: the gradients of forward ops (REPEAT_BACK, SILU_BACK,
// RMS_NORM_BACK, GET_ROWS_BACK, SOFT_MAX_BACK, ROPE_BACK, IM2COL_BACK,
// POOL_2D_BACK, FLASH_ATTN_BACK), the cross-entropy loss and its gradient,
// and the AdamW optimizer step. Layouts: docs/OPS.md. Bad shapes or types
// give NULL and one log line.
//
// Argument order follows ggml: the incoming gradient comes first, then what
// the forward op saw (its input or its output).

#include "ops_common.h"

using namespace lmggml::ops;

namespace {

// Shape and type violations are bad input: one log line, and the caller
// returns NULL.
bool require(const char * fn, bool ok, const char * what) {
    if (!ok) {
        LM_GGML_LOG_ERROR("%s: %s\n", fn, what);
    }
    return ok;
}

lm_ggml_tensor * soft_max_back_impl(const char * fn, lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                    float scale, float max_bias, bool inplace) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_f32(r, 0, scale);
    lm_ggml_set_op_params_f32(r, 1, max_bias);
    return finish(r, LM_GGML_OP_SOFT_MAX_BACK, a, b);
}

// The seven i32 words IM2COL and IM2COL_BACK share.
void set_im2col_params(lm_ggml_tensor * r, int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D) {
    const int32_t params[7] = {s0, s1, p0, p1, d0, d1, is_2D ? 1 : 0};
    lm_ggml_set_op_params(r, params, sizeof(params));
}

} // namespace

extern "C" {

// a: the gradient of repeat's result; result: shaped like b (repeat's input)
lm_ggml_tensor * lm_ggml_repeat_back(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    if (!require(__func__, lm_ggml_can_repeat(b, a), "a must be a repeat of b")) {
        return nullptr;
    }
    return finish(lm_ggml_new_tensor(ctx, a->type, LM_GGML_MAX_DIMS, b->ne), LM_GGML_OP_REPEAT_BACK, a);
}

// a: dy, b: silu's input x
lm_ggml_tensor * lm_ggml_silu_back(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    return finish(lm_ggml_dup_tensor(ctx, a), LM_GGML_OP_SILU_BACK, a, b);
}

// a: dy, b: rms_norm's input x
lm_ggml_tensor * lm_ggml_rms_norm_back(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, float eps) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    lm_ggml_tensor * r = lm_ggml_dup_tensor(ctx, a);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_f32(r, 0, eps);
    return finish(r, LM_GGML_OP_RMS_NORM_BACK, a, b);
}

// a: gradient of get_rows' result (one row per id), b: the I32 ids, c: the
// table get_rows read from (only its shape is used; not a source)
lm_ggml_tensor * lm_ggml_get_rows_back(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                       lm_ggml_tensor * c) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}, {"c", c}})) {
        return nullptr;
    }
    if (!require(__func__, lm_ggml_is_matrix(a) && lm_ggml_is_vector(b) && b->type == LM_GGML_TYPE_I32,
                 "a must be a matrix and b an I32 vector") ||
        !require(__func__, lm_ggml_is_matrix(c) && a->ne[0] == c->ne[0],
                 "c must be a matrix with rows as long as a's")) {
        return nullptr;
    }
    // always F32, whatever a's type (as ggml)
    return finish(lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, c->ne[0], c->ne[1]), LM_GGML_OP_GET_ROWS_BACK, a, b);
}

// a: dy, b: soft_max's output y
lm_ggml_tensor * lm_ggml_soft_max_ext_back(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, float scale,
                                           float max_bias) {
    return soft_max_back_impl(__func__, ctx, a, b, scale, max_bias, false);
}
lm_ggml_tensor * lm_ggml_soft_max_ext_back_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                                   float scale, float max_bias) {
    return soft_max_back_impl(__func__, ctx, a, b, scale, max_bias, true);
}

// Exactly rope_ext's tensor (a: dy), with op ROPE_BACK.
lm_ggml_tensor * lm_ggml_rope_ext_back(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                       lm_ggml_tensor * c, int n_dims, int mode, int n_ctx_orig, float freq_base,
                                       float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                       float beta_slow) {
    lm_ggml_tensor * r = lm_ggml_rope_ext(ctx, a, b, c, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                                          attn_factor, beta_fast, beta_slow);
    if (r != nullptr) {
        r->op = LM_GGML_OP_ROPE_BACK;
    }
    return r;
}

// Exactly rope_multi's tensor (a: dy; b: 4 positions per token), with op
// ROPE_BACK.
lm_ggml_tensor * lm_ggml_rope_multi_back(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                         lm_ggml_tensor * c, int n_dims, int sections[4], int mode, int n_ctx_orig,
                                         float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                         float beta_fast, float beta_slow) {
    lm_ggml_tensor * r = lm_ggml_rope_multi(ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
                                            ext_factor, attn_factor, beta_fast, beta_slow);
    if (r != nullptr) {
        r->op = LM_GGML_OP_ROPE_BACK;
    }
    return r;
}

// a: gradient of im2col's result, b: the conv kernel (its shape gives KW, KH),
// ne: the shape of im2col's input (the result's shape)
lm_ggml_tensor * lm_ggml_im2col_back(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int64_t * ne,
                                     int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}, {"ne", ne}})) {
        return nullptr;
    }
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    if (r == nullptr) {
        return nullptr;
    }
    set_im2col_params(r, s0, s1, p0, p1, d0, d1, is_2D);
    return finish(r, LM_GGML_OP_IM2COL_BACK, a, b);
}

// a: gradient of pool_2d's result, af: pool_2d's input (result shape; MAX
// reads it to find each window's maximum)
lm_ggml_tensor * lm_ggml_pool_2d_back(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * af,
                                      lm_ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"af", af}})) {
        return nullptr;
    }
    if (op != LM_GGML_OP_POOL_MAX && op != LM_GGML_OP_POOL_AVG) {
        LM_GGML_LOG_ERROR("%s: op: %d is not an lm_ggml_op_pool\n", __func__, (int) op);
        return nullptr;
    }
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, af->ne);
    if (r == nullptr) {
        return nullptr;
    }
    // paddings stored as truncated integers, as pool_2d does
    const int32_t params[7] = {(int32_t) op, k0, k1, s0, s1, (int32_t) p0, (int32_t) p1};
    lm_ggml_set_op_params(r, params, sizeof(params));
    return finish(r, LM_GGML_OP_POOL_2D_BACK, a, af);
}

// Gradients of causal-or-not attention softmax(q.k / sqrt(D)) v for the
// incoming gradient d, in one F32 vector: grad q, grad k, grad v, each
// contiguous in its source's shape and starting on an LM_GGML_MEM_ALIGN
// boundary. q (D, N, H, B), k (D, M, Hkv, B), v (M, D, Hkv, B) (transposed),
// d (D, N, H, B); H a multiple of Hkv. (ggml 1.4.1 aborts here, its port to
// flash_attn_ext unfinished; this builds the tensor its CPU kernel reads,
// with d as src3.)
lm_ggml_tensor * lm_ggml_flash_attn_back(lm_ggml_context * ctx, lm_ggml_tensor * q, lm_ggml_tensor * k,
                                         lm_ggml_tensor * v, lm_ggml_tensor * d, bool masked) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"q", q}, {"k", k}, {"v", v}, {"d", d}})) {
        return nullptr;
    }
    const int64_t D = q->ne[0], N = q->ne[1], M = k->ne[1];
    const bool shapes_ok = k->ne[0] == D && v->ne[0] == M && v->ne[1] == D && d->ne[0] == D && d->ne[1] == N &&
                           v->ne[2] == k->ne[2] && k->ne[3] == q->ne[3] && v->ne[3] == q->ne[3] &&
                           d->ne[2] == q->ne[2] && d->ne[3] == q->ne[3] && k->ne[2] > 0 && q->ne[2] % k->ne[2] == 0;
    if (!require(__func__, shapes_ok,
                 "need q (D, N, H, B), k (D, M, Hkv, B), v (M, D, Hkv, B), d like q, H % Hkv == 0")) {
        return nullptr;
    }
    const size_t offs_k = LM_GGML_PAD((size_t) lm_ggml_nelements(q) * sizeof(float), LM_GGML_MEM_ALIGN);
    const size_t offs_v = offs_k + LM_GGML_PAD((size_t) lm_ggml_nelements(k) * sizeof(float), LM_GGML_MEM_ALIGN);
    const size_t end = offs_v + LM_GGML_PAD((size_t) lm_ggml_nelements(v) * sizeof(float), LM_GGML_MEM_ALIGN);
    lm_ggml_tensor * r = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, (int64_t) (end / sizeof(float)));
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_i32(r, 0, masked ? 1 : 0);
    return finish(r, LM_GGML_OP_FLASH_ATTN_BACK, q, k, v, d);
}

// Mean over rows of -sum_i b_i * log softmax(a)_i: one value of a's type.
lm_ggml_tensor * lm_ggml_cross_entropy_loss(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    if (!require(__func__, lm_ggml_are_same_shape(a, b), "a and b must have the same shape")) {
        return nullptr;
    }
    return finish(lm_ggml_new_tensor_1d(ctx, a->type, 1), LM_GGML_OP_CROSS_ENTROPY_LOSS, a, b);
}

// a: the loss's gradient (scalar), b: logits, c: labels
lm_ggml_tensor * lm_ggml_cross_entropy_loss_back(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                                 lm_ggml_tensor * c) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}, {"c", c}})) {
        return nullptr;
    }
    if (!require(__func__, lm_ggml_is_scalar(a), "a must be a scalar") ||
        !require(__func__, lm_ggml_are_same_shape(b, c), "b and c must have the same shape")) {
        return nullptr;
    }
    return finish(lm_ggml_dup_tensor(ctx, b), LM_GGML_OP_CROSS_ENTROPY_LOSS_BACK, a, b, c);
}

// Updates a, m and v in place; the result is a view of a.
lm_ggml_tensor * lm_ggml_opt_step_adamw(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * grad,
                                        lm_ggml_tensor * m, lm_ggml_tensor * v, lm_ggml_tensor * adamw_params) {
    if (!args_ok(__func__,
                 {{"ctx", ctx}, {"a", a}, {"grad", grad}, {"m", m}, {"v", v}, {"adamw_params", adamw_params}})) {
        return nullptr;
    }
    if (!require(__func__, (a->flags & LM_GGML_TENSOR_FLAG_PARAM) != 0, "a must be a parameter (lm_ggml_set_param)") ||
        !require(__func__,
                 lm_ggml_are_same_shape(a, grad) && lm_ggml_are_same_shape(a, m) && lm_ggml_are_same_shape(a, v),
                 "grad, m and v must have a's shape") ||
        !require(__func__, adamw_params->type == LM_GGML_TYPE_F32 && lm_ggml_nelements(adamw_params) == 7,
                 "adamw_params must be 7 F32 values")) {
        return nullptr;
    }
    lm_ggml_tensor * r = finish(lm_ggml_view_tensor(ctx, a), LM_GGML_OP_OPT_STEP_ADAMW, a, grad, m, v);
    if (r != nullptr) {
        r->src[4] = adamw_params;
    }
    return r;
}

} // extern "C"

// The rest of ggml's matrix-mask and position ops: DIAG, COUNT_EQUAL,
// multimodal ROPE (lm_ggml_rope_multi) and the deprecated
// lm_ggml_rope_custom wrappers (DIAG_MASK_ZERO is beside DIAG_MASK_INF in
// ops_attention.cpp). Layouts: docs/OPS.md.

#include "ops_common.h"

using namespace lmggml::ops;

extern "C" {

// a (N, 1, B2, B3) -> (N, N, B2, B3): each row vector on a diagonal.
lm_ggml_tensor * lm_ggml_diag(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    if (a->ne[1] != 1) {
        LM_GGML_LOG_ERROR("%s: a must be a row vector per matrix (ne[1] is %lld)\n", __func__, (long long) a->ne[1]);
        return nullptr;
    }
    const int64_t ne[4] = {a->ne[0], a->ne[0], a->ne[2], a->ne[3]};
    return finish(lm_ggml_new_tensor(ctx, a->type, 4, ne), LM_GGML_OP_DIAG, a);
}

// Number of positions where a and b (same shape) hold the same value: a
// one-element I64 tensor.
lm_ggml_tensor * lm_ggml_count_equal(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    if (!lm_ggml_are_same_shape(a, b)) {
        LM_GGML_LOG_ERROR("%s: a and b must have the same shape\n", __func__);
        return nullptr;
    }
    return finish(lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I64, 1), LM_GGML_OP_COUNT_EQUAL, a, b);
}

// Multimodal RoPE: a (head_dim, n_head, n_tokens, B3); b holds 4 positions per
// token (4*n_tokens I32: all t, then all h, w, e); sections[4] say how many
// rotary pairs take each of the 4 positions. Same op_params as
// lm_ggml_rope_ext with the sections in words 11..14. Never in place.
lm_ggml_tensor * lm_ggml_rope_multi(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, lm_ggml_tensor * c,
                                    int n_dims, int sections[4], int mode, int n_ctx_orig, float freq_base,
                                    float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                    float beta_slow) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}, {"sections", sections}})) {
        return nullptr;
    }
    if ((mode & 1) != 0) {
        LM_GGML_LOG_ERROR("%s: mode & 1 == 1 is no longer supported\n", __func__);
        return nullptr;
    }
    if (!lm_ggml_is_vector(b) || b->type != LM_GGML_TYPE_I32 || b->ne[0] != a->ne[2] * 4) {
        LM_GGML_LOG_ERROR("%s: b must be an I32 vector of 4 positions per token (%lld), has %lld %s\n", __func__,
                          (long long) (a->ne[2] * 4), (long long) b->ne[0], lm_ggml_type_name(b->type));
        return nullptr;
    }
    if (c != nullptr && (c->type != LM_GGML_TYPE_F32 || c->ne[0] < n_dims / 2)) {
        LM_GGML_LOG_ERROR("%s: frequency factors must be F32 with at least n_dims/2 = %d elements\n", __func__,
                          n_dims / 2);
        return nullptr;
    }
    lm_ggml_tensor * r = lm_ggml_dup_tensor(ctx, a);
    if (r == nullptr) {
        return nullptr;
    }
    int32_t params[15] = {0, n_dims, mode, 0, n_ctx_orig};
    for (int i = 0; i < 4; ++i) {
        params[11 + i] = sections[i];
    }
    lm_ggml_set_op_params(r, params, sizeof(params));
    lm_ggml_set_op_params_f32(r, 5, freq_base);
    lm_ggml_set_op_params_f32(r, 6, freq_scale);
    lm_ggml_set_op_params_f32(r, 7, ext_factor);
    lm_ggml_set_op_params_f32(r, 8, attn_factor);
    lm_ggml_set_op_params_f32(r, 9, beta_fast);
    lm_ggml_set_op_params_f32(r, 10, beta_slow);
    return finish(r, LM_GGML_OP_ROPE, a, b, c);
}

// Deprecated: lm_ggml_rope_ext without frequency factors.
lm_ggml_tensor * lm_ggml_rope_custom(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int n_dims,
                                     int mode, int n_ctx_orig, float freq_base, float freq_scale, float ext_factor,
                                     float attn_factor, float beta_fast, float beta_slow) {
    return lm_ggml_rope_ext(ctx, a, b, nullptr, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                            attn_factor, beta_fast, beta_slow);
}
lm_ggml_tensor * lm_ggml_rope_custom_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int n_dims,
                                             int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                             float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return lm_ggml_rope_ext_inplace(ctx, a, b, nullptr, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                                    attn_factor, beta_fast, beta_slow);
}

} // extern "C"

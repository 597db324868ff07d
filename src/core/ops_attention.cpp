// Attention building blocks: DIAG_MASK_INF and DIAG_MASK_ZERO, SOFT_MAX
// (mask, scale, ALiBi), ROPE (normal / NeoX, freq factors, YaRN), CLAMP,
// ARGSORT and top_k, FLASH_ATTN_EXT. Layouts: docs/OPS.md.

#include "ops_common.h"

#include <cmath>
#include <numbers>

using namespace lmggml::ops;

namespace {

// DIAG_MASK_INF and DIAG_MASK_ZERO: the same tensor, op_params i32 [0]=n_past
lm_ggml_tensor * diag_mask_impl(const char * fn, lm_ggml_op op, lm_ggml_context * ctx, lm_ggml_tensor * a, int n_past,
                                bool inplace) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_i32(r, 0, n_past);
    return finish(r, op, a);
}

// softmax(a*scale + slope*mask) over rows; slope comes from max_bias (ALiBi)
lm_ggml_tensor * soft_max_impl(const char * fn, lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * mask,
                               float scale, float max_bias, bool inplace) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_is_contiguous(a));
    if (mask != nullptr) {
        LM_GGML_ASSERT(mask->type == LM_GGML_TYPE_F16 || mask->type == LM_GGML_TYPE_F32);
        LM_GGML_ASSERT(lm_ggml_is_contiguous(mask));
        LM_GGML_ASSERT(lm_ggml_is_matrix(mask));
        LM_GGML_ASSERT(mask->ne[0] == a->ne[0]);
        LM_GGML_ASSERT(mask->ne[1] >= a->ne[1]);
    }
    if (max_bias > 0.0f) {
        LM_GGML_ASSERT(mask != nullptr); // ALiBi slopes scale the mask
    }
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_f32(r, 0, scale);
    lm_ggml_set_op_params_f32(r, 1, max_bias);
    return finish(r, LM_GGML_OP_SOFT_MAX, a, mask);
}

struct RopeParams {
    int n_dims;
    int mode;
    int n_ctx_orig;
    float freq_base;
    float freq_scale;
    float ext_factor;
    float attn_factor;
    float beta_fast;
    float beta_slow;
};

// The defaults of plain lm_ggml_rope: no context extension.
constexpr RopeParams rope_plain(int n_dims, int mode) {
    return {n_dims, mode, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f};
}

// a: (head_dim, n_head, n_tokens, B3); b: (n_tokens) I32 positions;
// c: (>= n_dims/2) F32 frequency factors or NULL
lm_ggml_tensor * rope_impl(const char * fn, lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                           lm_ggml_tensor * c, const RopeParams & p, bool inplace) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    LM_GGML_ASSERT((p.mode & 1) == 0 && "mode & 1 == 1 is no longer supported");
    LM_GGML_ASSERT(lm_ggml_is_vector(b));
    LM_GGML_ASSERT(b->type == LM_GGML_TYPE_I32);
    LM_GGML_ASSERT(a->ne[2] == b->ne[0]);
    if (c != nullptr) {
        LM_GGML_ASSERT(c->type == LM_GGML_TYPE_F32);
        LM_GGML_ASSERT(c->ne[0] >= p.n_dims / 2);
    }
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    // words 0 (n_past) and 3 (n_ctx) are legacy and stay 0; 11..14 are the
    // M-RoPE sections, also 0 for these entry points
    int32_t params[15] = {0, p.n_dims, p.mode, 0, p.n_ctx_orig};
    lm_ggml_set_op_params(r, params, sizeof(params));
    lm_ggml_set_op_params_f32(r, 5, p.freq_base);
    lm_ggml_set_op_params_f32(r, 6, p.freq_scale);
    lm_ggml_set_op_params_f32(r, 7, p.ext_factor);
    lm_ggml_set_op_params_f32(r, 8, p.attn_factor);
    lm_ggml_set_op_params_f32(r, 9, p.beta_fast);
    lm_ggml_set_op_params_f32(r, 10, p.beta_slow);
    return finish(r, LM_GGML_OP_ROPE, a, b, c);
}

// The rotary dimension whose wavelength makes n_rot turns over n_ctx_orig
// positions (YaRN): solves n_ctx_orig = n_rot * 2pi * base^(2d/n_dims) for d.
float yarn_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return (float) n_dims * logf((float) n_ctx_orig / (n_rot * 2.0f * std::numbers::pi_v<float>) ) /
           (2.0f * logf(base));
}

} // namespace

extern "C" {

lm_ggml_tensor * lm_ggml_diag_mask_inf(lm_ggml_context * ctx, lm_ggml_tensor * a, int n_past) {
    return diag_mask_impl(__func__, LM_GGML_OP_DIAG_MASK_INF, ctx, a, n_past, false);
}
lm_ggml_tensor * lm_ggml_diag_mask_inf_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, int n_past) {
    return diag_mask_impl(__func__, LM_GGML_OP_DIAG_MASK_INF, ctx, a, n_past, true);
}

// Elements above the diagonal shifted by n_past (i0 > n_past + i1) set to 0.
lm_ggml_tensor * lm_ggml_diag_mask_zero(lm_ggml_context * ctx, lm_ggml_tensor * a, int n_past) {
    return diag_mask_impl(__func__, LM_GGML_OP_DIAG_MASK_ZERO, ctx, a, n_past, false);
}
lm_ggml_tensor * lm_ggml_diag_mask_zero_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, int n_past) {
    return diag_mask_impl(__func__, LM_GGML_OP_DIAG_MASK_ZERO, ctx, a, n_past, true);
}

lm_ggml_tensor * lm_ggml_soft_max(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return soft_max_impl(__func__, ctx, a, nullptr, 1.0f, 0.0f, false);
}
lm_ggml_tensor * lm_ggml_soft_max_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return soft_max_impl(__func__, ctx, a, nullptr, 1.0f, 0.0f, true);
}
lm_ggml_tensor * lm_ggml_soft_max_ext(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * mask, float scale,
                                      float max_bias) {
    return soft_max_impl(__func__, ctx, a, mask, scale, max_bias, false);
}

lm_ggml_tensor * lm_ggml_rope(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int n_dims, int mode) {
    return rope_impl(__func__, ctx, a, b, nullptr, rope_plain(n_dims, mode), false);
}
lm_ggml_tensor * lm_ggml_rope_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int n_dims,
                                      int mode) {
    return rope_impl(__func__, ctx, a, b, nullptr, rope_plain(n_dims, mode), true);
}

lm_ggml_tensor * lm_ggml_rope_ext(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, lm_ggml_tensor * c,
                                  int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                  float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    const RopeParams p = {n_dims,     mode,        n_ctx_orig, freq_base, freq_scale,
                          ext_factor, attn_factor, beta_fast,  beta_slow};
    return rope_impl(__func__, ctx, a, b, c, p, false);
}
lm_ggml_tensor * lm_ggml_rope_ext_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                          lm_ggml_tensor * c, int n_dims, int mode, int n_ctx_orig, float freq_base,
                                          float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                          float beta_slow) {
    const RopeParams p = {n_dims,     mode,        n_ctx_orig, freq_base, freq_scale,
                          ext_factor, attn_factor, beta_fast,  beta_slow};
    return rope_impl(__func__, ctx, a, b, c, p, true);
}

// First and last rotary dims YaRN blends between interpolation and
// extrapolation (kernels call this with the op's parameters).
void lm_ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                                 float dims[2]) {
    if (dims == nullptr) {
        LM_GGML_LOG_ERROR("%s: dims: is NULL\n", __func__);
        return;
    }
    const float start = floorf(yarn_corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base));
    const float end = ceilf(yarn_corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base));
    // written as ggml's MAX/MIN macros so a NaN passes through the same way
    dims[0] = 0.0f > start ? 0.0f : start;
    dims[1] = (float) (n_dims - 1) < end ? (float) (n_dims - 1) : end;
}

// Clamp is always built in place (ggml has no separate-output form).
lm_ggml_tensor * lm_ggml_clamp(lm_ggml_context * ctx, lm_ggml_tensor * a, float min, float max) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    lm_ggml_tensor * r = lm_ggml_view_tensor(ctx, a);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_f32(r, 0, min);
    lm_ggml_set_op_params_f32(r, 1, max);
    return finish(r, LM_GGML_OP_CLAMP, a);
}

// Indices (I32) that sort each row of a.
lm_ggml_tensor * lm_ggml_argsort(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_sort_order order) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    if (order != LM_GGML_SORT_ORDER_ASC && order != LM_GGML_SORT_ORDER_DESC) {
        LM_GGML_LOG_ERROR("%s: order: %d is not an lm_ggml_sort_order\n", __func__, (int) order);
        return nullptr;
    }
    LM_GGML_ASSERT(a->ne[0] <= INT32_MAX);
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_I32, LM_GGML_MAX_DIMS, a->ne);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_i32(r, 0, (int32_t) order);
    return finish(r, LM_GGML_OP_ARGSORT, a);
}

// Indices of the k largest values of each row: the first k columns of a
// descending argsort (a VIEW of the ARGSORT tensor).
lm_ggml_tensor * lm_ggml_top_k(lm_ggml_context * ctx, lm_ggml_tensor * a, int k) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(a->ne[0] >= k);
    lm_ggml_tensor * sorted = lm_ggml_argsort(ctx, a, LM_GGML_SORT_ORDER_DESC);
    if (sorted == nullptr) {
        return nullptr;
    }
    return lm_ggml_view_4d(ctx, sorted, k, sorted->ne[1], sorted->ne[2], sorted->ne[3], sorted->nb[1], sorted->nb[2],
                           sorted->nb[3], 0);
}

// q: (D, n_q, n_head, B3); k: (D, n_kv, n_head_kv, B3k); v: (Dv, n_kv, n_head_kv, B3k)
// mask: (n_kv, >= PAD(n_q, LM_GGML_KQ_MASK_PAD)) or NULL
// result: (Dv = ne0(q), n_head, n_q, B3) F32, heads already interleaved per query
lm_ggml_tensor * lm_ggml_flash_attn_ext(lm_ggml_context * ctx, lm_ggml_tensor * q, lm_ggml_tensor * k,
                                        lm_ggml_tensor * v, lm_ggml_tensor * mask, float scale, float max_bias,
                                        float logit_softcap) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"q", q}, {"k", k}, {"v", v}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(can_mul_mat(k, q));
    if (mask != nullptr) {
        LM_GGML_ASSERT(lm_ggml_is_contiguous(mask));
        LM_GGML_ASSERT(mask->ne[2] == 1);
        LM_GGML_ASSERT(mask->ne[3] == 1);
        LM_GGML_ASSERT(mask->ne[1] >= LM_GGML_PAD(q->ne[1], LM_GGML_KQ_MASK_PAD) &&
                       "the mask must be padded to LM_GGML_KQ_MASK_PAD and cover every query");
    }
    if (max_bias > 0.0f) {
        LM_GGML_ASSERT(mask != nullptr);
    }
    const int64_t ne[4] = {q->ne[0], q->ne[2], q->ne[1], q->ne[3]};
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_f32(r, 0, scale);
    lm_ggml_set_op_params_f32(r, 1, max_bias);
    lm_ggml_set_op_params_f32(r, 2, logit_softcap);
    return finish(r, LM_GGML_OP_FLASH_ATTN_EXT, q, k, v, mask);
}

void lm_ggml_flash_attn_ext_set_prec(lm_ggml_tensor * a, lm_ggml_prec prec) {
    if (!args_ok(__func__, {{"a", a}})) {
        return;
    }
    LM_GGML_ASSERT(a->op == LM_GGML_OP_FLASH_ATTN_EXT);
    lm_ggml_set_op_params_i32(a, 3, (int32_t) prec); // after scale, max_bias, softcap
}

lm_ggml_prec lm_ggml_flash_attn_ext_get_prec(const lm_ggml_tensor * a) {
    if (!args_ok(__func__, {{"a", a}})) {
        return LM_GGML_PREC_DEFAULT;
    }
    LM_GGML_ASSERT(a->op == LM_GGML_OP_FLASH_ATTN_EXT);
    return (lm_ggml_prec) lm_ggml_get_op_params_i32(a, 3);
}

} // extern "C"

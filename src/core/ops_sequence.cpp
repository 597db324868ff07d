// Recurrent sequence-model ops (Mamba, RWKV v6, gated linear attention):
// SSM_CONV, SSM_SCAN, RWKV_WKV6, GATED_LINEAR_ATTN. The scan ops return the
// per-token outputs and the final recurrent states in one F32 tensor, outputs
// first. Layouts: docs/OPS.md.

#include "ops_common.h"

using namespace lmggml::ops;

namespace {

// Shared by RWKV_WKV6 and GATED_LINEAR_ATTN: k, v and the per-token operands
// are (S, H, n_tokens); state holds S*S*H values per sequence, state->ne[1]
// sequences. The result is (S*H, n_tokens + S*n_seqs): n_tokens output rows,
// then the new states.
lm_ggml_tensor * linear_attn_result(lm_ggml_context * ctx, lm_ggml_tensor * k, lm_ggml_tensor * state,
                                    std::initializer_list<const lm_ggml_tensor *> per_token) {
    LM_GGML_ASSERT(lm_ggml_is_contiguous(k));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(state));
    const int64_t S = k->ne[0];
    const int64_t H = k->ne[1];
    const int64_t n_tokens = k->ne[2];
    const int64_t n_seqs = state->ne[1];
    for (const lm_ggml_tensor * t : per_token) {
        LM_GGML_ASSERT(lm_ggml_is_contiguous(t));
        LM_GGML_ASSERT(t->ne[0] == S && t->ne[1] == H && t->ne[2] == n_tokens);
    }
    LM_GGML_ASSERT(lm_ggml_nelements(state) == S * S * H * n_seqs);
    const int64_t ne[4] = {S * H, n_tokens + S * n_seqs, 1, 1};
    return lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
}

} // namespace

extern "C" {

// sx: (d_conv - 1 + n_t, d_inner, n_s) conv input with its history columns,
// c: (d_conv, d_inner) weights -> (d_inner, n_t, n_s) F32
lm_ggml_tensor * lm_ggml_ssm_conv(lm_ggml_context * ctx, lm_ggml_tensor * sx, lm_ggml_tensor * c) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"sx", sx}, {"c", c}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_is_3d(sx));
    LM_GGML_ASSERT(lm_ggml_is_matrix(c));
    const int64_t d_conv = c->ne[0];
    const int64_t d_inner = c->ne[1];
    const int64_t n_t = sx->ne[0] - d_conv + 1;
    LM_GGML_ASSERT(sx->ne[1] == d_inner);
    LM_GGML_ASSERT(n_t >= 0);
    return finish(lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_inner, n_t, sx->ne[2]), LM_GGML_OP_SSM_CONV, sx, c);
}

// s: (d_state, d_inner, n_s) states, x, dt: (d_inner, n_t, n_s), A: (d_state, d_inner),
// B, C: (d_state, n_t, n_s) -> 1-d F32 of nelements(x) + nelements(s): y, then the new states
lm_ggml_tensor * lm_ggml_ssm_scan(lm_ggml_context * ctx, lm_ggml_tensor * s, lm_ggml_tensor * x, lm_ggml_tensor * dt,
                                  lm_ggml_tensor * A, lm_ggml_tensor * B, lm_ggml_tensor * C) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"s", s}, {"x", x}, {"dt", dt}, {"A", A}, {"B", B}, {"C", C}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_is_contiguous(s));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(x));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(dt));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(A));
    LM_GGML_ASSERT(lm_ggml_is_matrix(A));
    LM_GGML_ASSERT(lm_ggml_is_3d(B));
    LM_GGML_ASSERT(lm_ggml_is_3d(s));
    LM_GGML_ASSERT(B->nb[0] == lm_ggml_type_size(B->type));
    LM_GGML_ASSERT(C->nb[0] == lm_ggml_type_size(C->type));
    LM_GGML_ASSERT(lm_ggml_are_same_shape(x, dt));
    LM_GGML_ASSERT(lm_ggml_are_same_shape(B, C));
    const int64_t d_state = s->ne[0];
    const int64_t d_inner = s->ne[1];
    const int64_t n_t = x->ne[1];
    const int64_t n_s = x->ne[2];
    LM_GGML_ASSERT(s->ne[2] == n_s);
    LM_GGML_ASSERT(x->ne[0] == d_inner);
    LM_GGML_ASSERT(A->ne[0] == d_state && A->ne[1] == d_inner);
    LM_GGML_ASSERT(B->ne[0] == d_state && B->ne[1] == n_t && B->ne[2] == n_s);

    lm_ggml_tensor * r = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, lm_ggml_nelements(x) + lm_ggml_nelements(s));
    if (finish(r, LM_GGML_OP_SSM_SCAN, s, x, dt, A) == nullptr) {
        return nullptr;
    }
    r->src[4] = B;
    r->src[5] = C;
    return r;
}

// RWKV v6 time mixing. k, v, r, td: (S, H, n_tokens); tf: (S, H) bonus;
// state: S*S*H per sequence, (., n_seqs)
lm_ggml_tensor * lm_ggml_rwkv_wkv6(lm_ggml_context * ctx, lm_ggml_tensor * k, lm_ggml_tensor * v, lm_ggml_tensor * r,
                                   lm_ggml_tensor * tf, lm_ggml_tensor * td, lm_ggml_tensor * state) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"k", k}, {"v", v}, {"r", r}, {"tf", tf}, {"td", td}, {"state", state}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_is_contiguous(tf));
    lm_ggml_tensor * res = linear_attn_result(ctx, k, state, {v, r, td});
    if (finish(res, LM_GGML_OP_RWKV_WKV6, k, v, r, tf) == nullptr) {
        return nullptr;
    }
    res->src[4] = td;
    res->src[5] = state;
    return res;
}

// Gated linear attention. k, v, q, g: (S, H, n_tokens); state as rwkv_wkv6;
// scale multiplies q (f32 op_params[0])
lm_ggml_tensor * lm_ggml_gated_linear_attn(lm_ggml_context * ctx, lm_ggml_tensor * k, lm_ggml_tensor * v,
                                           lm_ggml_tensor * q, lm_ggml_tensor * g, lm_ggml_tensor * state,
                                           float scale) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"k", k}, {"v", v}, {"q", q}, {"g", g}, {"state", state}})) {
        return nullptr;
    }
    lm_ggml_tensor * res = linear_attn_result(ctx, k, state, {v, q, g});
    if (res == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_f32(res, 0, scale);
    finish(res, LM_GGML_OP_GATED_LINEAR_ATTN, k, v, q, g);
    res->src[4] = state;
    return res;
}

} // extern "C"

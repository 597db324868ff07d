// Matrix products: MUL_MAT (rows of a dotted with rows of b), MUL_MAT_ID
// (per-token expert selection for mixture-of-experts), OUT_PROD.
// Layouts: docs/OPS.md.

#include "ops_common.h"

using namespace lmggml::ops;

extern "C" {

// a: (K, M, A2, A3) weights, b: (K, N, B2, B3) with B2 % A2 == 0, B3 % A3 == 0
// result: (M, N, B2, B3) F32, result[m, n] = dot(a row m, b row n)
lm_ggml_tensor * lm_ggml_mul_mat(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(can_mul_mat(a, b));
    LM_GGML_ASSERT(!lm_ggml_is_transposed(a));
    const int64_t ne[4] = {a->ne[1], b->ne[1], b->ne[2], b->ne[3]};
    return finish(lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne), LM_GGML_OP_MUL_MAT, a, b);
}

void lm_ggml_mul_mat_set_prec(lm_ggml_tensor * a, lm_ggml_prec prec) {
    if (!args_ok(__func__, {{"a", a}})) {
        return;
    }
    LM_GGML_ASSERT(a->op == LM_GGML_OP_MUL_MAT);
    lm_ggml_set_op_params_i32(a, 0, (int32_t) prec);
}

// as:  (K, M, n_expert) one matrix per expert
// b:   (K, n_b, n_tokens) with n_expert_used % n_b == 0 (n_b = 1 broadcasts)
// ids: (n_expert_used, n_tokens) I32 expert indices
// result: (M, n_expert_used, n_tokens) F32
lm_ggml_tensor * lm_ggml_mul_mat_id(lm_ggml_context * ctx, lm_ggml_tensor * as, lm_ggml_tensor * b,
                                    lm_ggml_tensor * ids) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"as", as}, {"b", b}, {"ids", ids}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(!lm_ggml_is_transposed(as));
    LM_GGML_ASSERT(ids->type == LM_GGML_TYPE_I32);
    LM_GGML_ASSERT(as->ne[3] == 1);
    LM_GGML_ASSERT(b->ne[3] == 1);
    LM_GGML_ASSERT(ids->ne[2] == 1 && ids->ne[3] == 1);
    LM_GGML_ASSERT(ids->ne[1] == b->ne[2]);
    LM_GGML_ASSERT(as->ne[0] == b->ne[0]);
    LM_GGML_ASSERT(b->ne[1] != 0 && ids->ne[0] % b->ne[1] == 0);
    const int64_t ne[4] = {as->ne[1], ids->ne[0], b->ne[2], 1};
    return finish(lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne), LM_GGML_OP_MUL_MAT_ID, as, b, ids);
}

// a: (M, K, A2, A3), b: (N, K, B2, B3) -> (M, N, B2, B3) F32, sum over k of a[:, k] b[:, k]^T
lm_ggml_tensor * lm_ggml_out_prod(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(a->ne[1] == b->ne[1]);
    LM_GGML_ASSERT(a->ne[2] != 0 && a->ne[3] != 0);
    LM_GGML_ASSERT(b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0);
    LM_GGML_ASSERT(!lm_ggml_is_transposed(a));
    const int64_t ne[4] = {a->ne[0], b->ne[0], b->ne[2], b->ne[3]};
    return finish(lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne), LM_GGML_OP_OUT_PROD, a, b);
}

} // extern "C"

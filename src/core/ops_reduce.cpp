// Reductions: SUM (everything to one value), SUM_ROWS and MEAN (each row to
// one value), ARGMAX (index of each row's maximum). Layouts: docs/OPS.md.

#include "ops_common.h"

using namespace lmggml::ops;

extern "C" {

lm_ggml_tensor * lm_ggml_sum(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    return finish(lm_ggml_new_tensor_1d(ctx, a->type, 1), LM_GGML_OP_SUM, a); // (1)
}

lm_ggml_tensor * lm_ggml_sum_rows(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    const int64_t ne[4] = {1, a->ne[1], a->ne[2], a->ne[3]}; // (1, rows...)
    return finish(lm_ggml_new_tensor(ctx, a->type, 4, ne), LM_GGML_OP_SUM_ROWS, a);
}

lm_ggml_tensor * lm_ggml_mean(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    const int64_t ne[4] = {1, a->ne[1], a->ne[2], a->ne[3]}; // (1, rows...), always F32
    return finish(lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne), LM_GGML_OP_MEAN, a);
}

lm_ggml_tensor * lm_ggml_argmax(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_is_matrix(a));
    LM_GGML_ASSERT(a->ne[0] <= INT32_MAX);                                                       // indices are I32
    return finish(lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, a->ne[1]), LM_GGML_OP_ARGMAX, a); // (n_rows)
}

} // extern "C"

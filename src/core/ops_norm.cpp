// Normalisation over rows (NORM, RMS_NORM) and over channel groups
// (GROUP_NORM). Layouts: docs/OPS.md.

#include "ops_common.h"

using namespace lmggml::ops;

namespace {

// NORM and RMS_NORM share one layout: eps as f32 in op_params[0]
lm_ggml_tensor * row_norm(const char * fn, lm_ggml_context * ctx, lm_ggml_tensor * a, float eps, lm_ggml_op op,
                          bool inplace) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_f32(r, 0, eps);
    return finish(r, op, a);
}

lm_ggml_tensor * group_norm_impl(const char * fn, lm_ggml_context * ctx, lm_ggml_tensor * a, int n_groups, float eps,
                                 bool inplace) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_i32(r, 0, n_groups);
    lm_ggml_set_op_params_f32(r, 1, eps);
    return finish(r, LM_GGML_OP_GROUP_NORM, a);
}

} // namespace

extern "C" {

lm_ggml_tensor * lm_ggml_norm(lm_ggml_context * ctx, lm_ggml_tensor * a, float eps) {
    return row_norm(__func__, ctx, a, eps, LM_GGML_OP_NORM, false);
}
lm_ggml_tensor * lm_ggml_norm_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, float eps) {
    return row_norm(__func__, ctx, a, eps, LM_GGML_OP_NORM, true);
}

lm_ggml_tensor * lm_ggml_rms_norm(lm_ggml_context * ctx, lm_ggml_tensor * a, float eps) {
    return row_norm(__func__, ctx, a, eps, LM_GGML_OP_RMS_NORM, false);
}
lm_ggml_tensor * lm_ggml_rms_norm_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, float eps) {
    return row_norm(__func__, ctx, a, eps, LM_GGML_OP_RMS_NORM, true);
}

lm_ggml_tensor * lm_ggml_group_norm(lm_ggml_context * ctx, lm_ggml_tensor * a, int n_groups, float eps) {
    return group_norm_impl(__func__, ctx, a, n_groups, eps, false);
}
lm_ggml_tensor * lm_ggml_group_norm_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, int n_groups, float eps) {
    return group_norm_impl(__func__, ctx, a, n_groups, eps, true);
}

} // extern "C"

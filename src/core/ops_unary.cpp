// Activations: LM_GGML_OP_UNARY with the activation in op_params[0], plus
// LEAKY_RELU (its own op, slope in op_params[0]). Layouts: docs/OPS.md.

#include "ops_common.h"

using namespace lmggml::ops;

namespace {

lm_ggml_tensor * unary_impl(const char * fn, lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_unary_op op,
                            bool inplace) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    if ((unsigned) op >= (unsigned) LM_GGML_UNARY_OP_COUNT) {
        LM_GGML_LOG_ERROR("%s: op: %d is not an lm_ggml_unary_op\n", fn, (int) op);
        return nullptr;
    }
    // kernels walk rows; elements inside a row must be packed
    LM_GGML_ASSERT(lm_ggml_is_contiguous_1(a));
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_i32(r, 0, (int32_t) op);
    return finish(r, LM_GGML_OP_UNARY, a);
}

} // namespace

// Public wrappers: one plain and one _inplace function per activation.
#define LMGGML_UNARY_FN(name, OP)                                                                                      \
    lm_ggml_tensor * lm_ggml_##name(lm_ggml_context * ctx, lm_ggml_tensor * a) {                                       \
        return unary_impl(__func__, ctx, a, LM_GGML_UNARY_OP_##OP, false);                                             \
    }                                                                                                                  \
    lm_ggml_tensor * lm_ggml_##name##_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a) {                             \
        return unary_impl(__func__, ctx, a, LM_GGML_UNARY_OP_##OP, true);                                              \
    }

extern "C" {

LMGGML_UNARY_FN(abs, ABS)
LMGGML_UNARY_FN(sgn, SGN)
LMGGML_UNARY_FN(neg, NEG)
LMGGML_UNARY_FN(step, STEP)
LMGGML_UNARY_FN(tanh, TANH)
LMGGML_UNARY_FN(elu, ELU)
LMGGML_UNARY_FN(relu, RELU)
LMGGML_UNARY_FN(sigmoid, SIGMOID)
LMGGML_UNARY_FN(gelu, GELU)
LMGGML_UNARY_FN(gelu_quick, GELU_QUICK)
LMGGML_UNARY_FN(silu, SILU)
LMGGML_UNARY_FN(exp, EXP)

// ggml has no _inplace variants of these two
lm_ggml_tensor * lm_ggml_hardswish(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return unary_impl(__func__, ctx, a, LM_GGML_UNARY_OP_HARDSWISH, false);
}
lm_ggml_tensor * lm_ggml_hardsigmoid(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return unary_impl(__func__, ctx, a, LM_GGML_UNARY_OP_HARDSIGMOID, false);
}

lm_ggml_tensor * lm_ggml_unary(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_unary_op op) {
    return unary_impl(__func__, ctx, a, op, false);
}
lm_ggml_tensor * lm_ggml_unary_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_unary_op op) {
    return unary_impl(__func__, ctx, a, op, true);
}

lm_ggml_tensor * lm_ggml_leaky_relu(lm_ggml_context * ctx, lm_ggml_tensor * a, float negative_slope, bool inplace) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_f32(r, 0, negative_slope);
    return finish(r, LM_GGML_OP_LEAKY_RELU, a);
}

} // extern "C"

#undef LMGGML_UNARY_FN

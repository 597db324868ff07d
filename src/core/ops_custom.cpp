// User-function ops: MAP_UNARY, MAP_BINARY, MAP_CUSTOM1..3_F32 (the function
// pointer alone in op_params, run on one thread) and MAP_CUSTOM1..3 (function,
// thread count and userdata in op_params). Only the CPU backend runs them.
// Layouts: docs/OPS.md.

#include "custom-op-params.h"
#include "ops_common.h"

using namespace lmggml::ops;

namespace {

// dup(a) / view(a) with fun's bytes at the start of op_params, and sources
// a, b, c (those given).
template <class Fn>
lm_ggml_tensor * map_f32(lm_ggml_context * ctx, lm_ggml_op op, Fn fun, bool inplace, lm_ggml_tensor * a,
                         lm_ggml_tensor * b = nullptr, lm_ggml_tensor * c = nullptr) {
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    static_assert(sizeof(fun) <= LM_GGML_MAX_OP_PARAMS);
    lm_ggml_set_op_params(r, &fun, sizeof(fun));
    return finish(r, op, a, b, c);
}

// As map_f32, with the {fun, n_tasks, userdata} block.
template <class Fn>
lm_ggml_tensor * map_custom(const char * fn, lm_ggml_context * ctx, lm_ggml_op op, Fn fun, int n_tasks, void * userdata,
                            bool inplace, lm_ggml_tensor * a, lm_ggml_tensor * b = nullptr,
                            lm_ggml_tensor * c = nullptr) {
    if (n_tasks != LM_GGML_N_TASKS_MAX && n_tasks <= 0) {
        LM_GGML_LOG_ERROR("%s: n_tasks: %d, must be > 0 or LM_GGML_N_TASKS_MAX\n", fn, n_tasks);
        return nullptr;
    }
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    const lmggml::CustomOpParams<Fn> p = {fun, n_tasks, userdata};
    lm_ggml_set_op_params(r, &p, sizeof(p));
    return finish(r, op, a, b, c);
}

// The function is an argument like the tensors: NULL is refused.
bool fun_ok(const char * fn, bool present) {
    if (!present) {
        LM_GGML_LOG_ERROR("%s: fun: is NULL\n", fn);
    }
    return present;
}

} // namespace

extern "C" {

// ---------------------------------------------------------------- single-threaded, function only
// fun(n, dst_row, a_row) for every row

lm_ggml_tensor * lm_ggml_map_unary_f32(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_unary_op_f32_t fun) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_f32(ctx, LM_GGML_OP_MAP_UNARY, fun, false, a);
}

lm_ggml_tensor * lm_ggml_map_unary_inplace_f32(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_unary_op_f32_t fun) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_f32(ctx, LM_GGML_OP_MAP_UNARY, fun, true, a);
}

// fun(n, dst_row, a_row, b_row) for every row; a and b the same shape
lm_ggml_tensor * lm_ggml_map_binary_f32(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                        lm_ggml_binary_op_f32_t fun) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_are_same_shape(a, b));
    return map_f32(ctx, LM_GGML_OP_MAP_BINARY, fun, false, a, b);
}

lm_ggml_tensor * lm_ggml_map_binary_inplace_f32(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                                lm_ggml_binary_op_f32_t fun) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_are_same_shape(a, b));
    return map_f32(ctx, LM_GGML_OP_MAP_BINARY, fun, true, a, b);
}

// fun(dst, a [, b [, c]]) once

lm_ggml_tensor * lm_ggml_map_custom1_f32(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_custom1_op_f32_t fun) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_f32(ctx, LM_GGML_OP_MAP_CUSTOM1_F32, fun, false, a);
}

lm_ggml_tensor * lm_ggml_map_custom1_inplace_f32(lm_ggml_context * ctx, lm_ggml_tensor * a,
                                                 lm_ggml_custom1_op_f32_t fun) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_f32(ctx, LM_GGML_OP_MAP_CUSTOM1_F32, fun, true, a);
}

lm_ggml_tensor * lm_ggml_map_custom2_f32(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                         lm_ggml_custom2_op_f32_t fun) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_f32(ctx, LM_GGML_OP_MAP_CUSTOM2_F32, fun, false, a, b);
}

lm_ggml_tensor * lm_ggml_map_custom2_inplace_f32(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                                 lm_ggml_custom2_op_f32_t fun) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_f32(ctx, LM_GGML_OP_MAP_CUSTOM2_F32, fun, true, a, b);
}

lm_ggml_tensor * lm_ggml_map_custom3_f32(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                         lm_ggml_tensor * c, lm_ggml_custom3_op_f32_t fun) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}, {"c", c}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_f32(ctx, LM_GGML_OP_MAP_CUSTOM3_F32, fun, false, a, b, c);
}

lm_ggml_tensor * lm_ggml_map_custom3_inplace_f32(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                                 lm_ggml_tensor * c, lm_ggml_custom3_op_f32_t fun) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}, {"c", c}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_f32(ctx, LM_GGML_OP_MAP_CUSTOM3_F32, fun, true, a, b, c);
}

// ---------------------------------------------------------------- threaded, with userdata
// fun(dst, a [, b [, c]], ith, nth, userdata) on nth = min(n_tasks, threads) threads

lm_ggml_tensor * lm_ggml_map_custom1(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_custom1_op_t fun, int n_tasks,
                                     void * userdata) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_custom(__func__, ctx, LM_GGML_OP_MAP_CUSTOM1, fun, n_tasks, userdata, false, a);
}

lm_ggml_tensor * lm_ggml_map_custom1_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_custom1_op_t fun,
                                             int n_tasks, void * userdata) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_custom(__func__, ctx, LM_GGML_OP_MAP_CUSTOM1, fun, n_tasks, userdata, true, a);
}

lm_ggml_tensor * lm_ggml_map_custom2(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                     lm_ggml_custom2_op_t fun, int n_tasks, void * userdata) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_custom(__func__, ctx, LM_GGML_OP_MAP_CUSTOM2, fun, n_tasks, userdata, false, a, b);
}

lm_ggml_tensor * lm_ggml_map_custom2_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                             lm_ggml_custom2_op_t fun, int n_tasks, void * userdata) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_custom(__func__, ctx, LM_GGML_OP_MAP_CUSTOM2, fun, n_tasks, userdata, true, a, b);
}

lm_ggml_tensor * lm_ggml_map_custom3(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, lm_ggml_tensor * c,
                                     lm_ggml_custom3_op_t fun, int n_tasks, void * userdata) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}, {"c", c}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_custom(__func__, ctx, LM_GGML_OP_MAP_CUSTOM3, fun, n_tasks, userdata, false, a, b, c);
}

lm_ggml_tensor * lm_ggml_map_custom3_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                             lm_ggml_tensor * c, lm_ggml_custom3_op_t fun, int n_tasks,
                                             void * userdata) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}, {"c", c}}) || !fun_ok(__func__, fun != nullptr)) {
        return nullptr;
    }
    return map_custom(__func__, ctx, LM_GGML_OP_MAP_CUSTOM3, fun, n_tasks, userdata, true, a, b, c);
}

} // extern "C"

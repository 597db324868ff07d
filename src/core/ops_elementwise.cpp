// Element-wise arithmetic: DUP, ADD (and add_cast), ADD1, ACC, SUB, MUL, DIV,
// SQR, SQRT, LOG, SIN, COS. Each result has a's shape; b broadcasts onto a.
// Layouts: docs/OPS.md.

#include "ops_common.h"

using namespace lmggml::ops;

namespace {

// a (op) b with b repeated to a's shape
lm_ggml_tensor * broadcast_binary(const char * fn, lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b,
                                  lm_ggml_op op, bool inplace) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_can_repeat(b, a));
    return finish(like(ctx, a, inplace), op, a, b);
}

// f(a) element by element, no parameters
lm_ggml_tensor * elementwise_unary(const char * fn, lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_op op,
                                   bool inplace) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    return finish(like(ctx, a, inplace), op, a);
}

// b added into the region of a described by (nb1, nb2, nb3, offset)
lm_ggml_tensor * acc_impl(const char * fn, lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, size_t nb1,
                          size_t nb2, size_t nb3, size_t offset, bool inplace) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_nelements(b) <= lm_ggml_nelements(a));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(a));
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(b->type == LM_GGML_TYPE_F32);

    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    // ggml keeps these as int32 words; kernels widen them back to size_t
    const int32_t params[5] = {(int32_t) nb1, (int32_t) nb2, (int32_t) nb3, (int32_t) offset, inplace ? 1 : 0};
    lm_ggml_set_op_params(r, params, sizeof(params));
    return finish(r, LM_GGML_OP_ACC, a, b);
}

} // namespace

extern "C" {

lm_ggml_tensor * lm_ggml_dup(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return elementwise_unary(__func__, ctx, a, LM_GGML_OP_DUP, false);
}
lm_ggml_tensor * lm_ggml_dup_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return elementwise_unary(__func__, ctx, a, LM_GGML_OP_DUP, true);
}

lm_ggml_tensor * lm_ggml_add(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    return broadcast_binary(__func__, ctx, a, b, LM_GGML_OP_ADD, false);
}
lm_ggml_tensor * lm_ggml_add_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    return broadcast_binary(__func__, ctx, a, b, LM_GGML_OP_ADD, true);
}

// a (quantized / F16 / BF16) + b, stored as `type`: used to add a LoRA delta
// to a weight without a separate conversion op.
lm_ggml_tensor * lm_ggml_add_cast(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, lm_ggml_type type) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(can_repeat_rows(b, a));
    LM_GGML_ASSERT(lm_ggml_is_quantized(a->type) || a->type == LM_GGML_TYPE_F16 || a->type == LM_GGML_TYPE_BF16);
    return finish(lm_ggml_new_tensor(ctx, type, LM_GGML_MAX_DIMS, a->ne), LM_GGML_OP_ADD, a, b);
}

lm_ggml_tensor * lm_ggml_add1(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_is_scalar(b));
    LM_GGML_ASSERT(is_padded_1d(a));
    return finish(like(ctx, a, false), LM_GGML_OP_ADD1, a, b);
}
lm_ggml_tensor * lm_ggml_add1_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_is_scalar(b));
    LM_GGML_ASSERT(is_padded_1d(a));
    return finish(like(ctx, a, true), LM_GGML_OP_ADD1, a, b);
}

lm_ggml_tensor * lm_ggml_acc(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, size_t nb1, size_t nb2,
                             size_t nb3, size_t offset) {
    return acc_impl(__func__, ctx, a, b, nb1, nb2, nb3, offset, false);
}
lm_ggml_tensor * lm_ggml_acc_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, size_t nb1,
                                     size_t nb2, size_t nb3, size_t offset) {
    return acc_impl(__func__, ctx, a, b, nb1, nb2, nb3, offset, true);
}

lm_ggml_tensor * lm_ggml_sub(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    return broadcast_binary(__func__, ctx, a, b, LM_GGML_OP_SUB, false);
}
lm_ggml_tensor * lm_ggml_sub_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    return broadcast_binary(__func__, ctx, a, b, LM_GGML_OP_SUB, true);
}

lm_ggml_tensor * lm_ggml_mul(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    return broadcast_binary(__func__, ctx, a, b, LM_GGML_OP_MUL, false);
}
lm_ggml_tensor * lm_ggml_mul_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    return broadcast_binary(__func__, ctx, a, b, LM_GGML_OP_MUL, true);
}

lm_ggml_tensor * lm_ggml_div(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    return broadcast_binary(__func__, ctx, a, b, LM_GGML_OP_DIV, false);
}
lm_ggml_tensor * lm_ggml_div_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    return broadcast_binary(__func__, ctx, a, b, LM_GGML_OP_DIV, true);
}

lm_ggml_tensor * lm_ggml_sqr(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return elementwise_unary(__func__, ctx, a, LM_GGML_OP_SQR, false);
}
lm_ggml_tensor * lm_ggml_sqr_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return elementwise_unary(__func__, ctx, a, LM_GGML_OP_SQR, true);
}

lm_ggml_tensor * lm_ggml_sqrt(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return elementwise_unary(__func__, ctx, a, LM_GGML_OP_SQRT, false);
}
lm_ggml_tensor * lm_ggml_sqrt_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return elementwise_unary(__func__, ctx, a, LM_GGML_OP_SQRT, true);
}

lm_ggml_tensor * lm_ggml_log(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return elementwise_unary(__func__, ctx, a, LM_GGML_OP_LOG, false);
}
lm_ggml_tensor * lm_ggml_log_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return elementwise_unary(__func__, ctx, a, LM_GGML_OP_LOG, true);
}

lm_ggml_tensor * lm_ggml_sin(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return elementwise_unary(__func__, ctx, a, LM_GGML_OP_SIN, false);
}
lm_ggml_tensor * lm_ggml_sin_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return elementwise_unary(__func__, ctx, a, LM_GGML_OP_SIN, true);
}

lm_ggml_tensor * lm_ggml_cos(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return elementwise_unary(__func__, ctx, a, LM_GGML_OP_COS, false);
}
lm_ggml_tensor * lm_ggml_cos_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    return elementwise_unary(__func__, ctx, a, LM_GGML_OP_COS, true);
}

} // extern "C"

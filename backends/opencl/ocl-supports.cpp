// supports_op: exactly the (op, types, layouts) the kernels in ocl-ops.cpp
// compute. Anything else is left to another device by the scheduler.

#include "ocl.h"

namespace lmocl {

namespace {

constexpr int64_t kFlashAttnMaxD = 256; // FA_MAX_D in attn.cl

bool is_float(lm_ggml_type t) { return t == LM_GGML_TYPE_F32 || t == LM_GGML_TYPE_F16; }

// the types a MUL_MAT or GET_ROWS table row may hold
bool is_weight_type(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_F32:
        case LM_GGML_TYPE_F16:
        case LM_GGML_TYPE_Q4_0:
        case LM_GGML_TYPE_Q4_1:
        case LM_GGML_TYPE_Q5_0:
        case LM_GGML_TYPE_Q5_1:
        case LM_GGML_TYPE_Q8_0:
        case LM_GGML_TYPE_Q4_K:
        case LM_GGML_TYPE_Q6_K: return true;
        default: return false;
    }
}

// quantized rows are read block by block from the row's start
bool rows_are_blocks(const lm_ggml_tensor * t) {
    return is_float(t->type) || (t->nb[0] == lm_ggml_type_size(t->type) && t->ne[0] % lm_ggml_blck_size(t->type) == 0);
}

bool supports_unary(const lm_ggml_tensor * op) {
    switch (lm_ggml_get_unary_op(op)) {
        case LM_GGML_UNARY_OP_SILU:
        case LM_GGML_UNARY_OP_GELU:
        case LM_GGML_UNARY_OP_GELU_QUICK:
        case LM_GGML_UNARY_OP_TANH:
        case LM_GGML_UNARY_OP_RELU:
        case LM_GGML_UNARY_OP_NEG:
        case LM_GGML_UNARY_OP_SIGMOID:
        case LM_GGML_UNARY_OP_ABS:
        case LM_GGML_UNARY_OP_SGN:
        case LM_GGML_UNARY_OP_STEP:
        case LM_GGML_UNARY_OP_ELU:
        case LM_GGML_UNARY_OP_HARDSWISH:
        case LM_GGML_UNARY_OP_HARDSIGMOID:
        case LM_GGML_UNARY_OP_EXP:
            return is_float(op->src[0]->type) && is_float(op->type) && lm_ggml_are_same_shape(op, op->src[0]);
        default: return false;
    }
}

} // namespace

bool supports_op(const device_ctx *, const lm_ggml_tensor * op) {
    const lm_ggml_tensor * s0 = op->src[0];
    const lm_ggml_tensor * s1 = op->src[1];
    switch (op->op) {
        case LM_GGML_OP_NONE:
        case LM_GGML_OP_VIEW:
        case LM_GGML_OP_RESHAPE:
        case LM_GGML_OP_PERMUTE:
        case LM_GGML_OP_TRANSPOSE: return true;
        case LM_GGML_OP_ADD:
        case LM_GGML_OP_SUB:
        case LM_GGML_OP_MUL:
        case LM_GGML_OP_DIV:
            return is_float(s0->type) && is_float(s1->type) && is_float(op->type) && lm_ggml_are_same_shape(op, s0) &&
                   lm_ggml_can_repeat(s1, s0);
        case LM_GGML_OP_SCALE:
        case LM_GGML_OP_SQR:
        case LM_GGML_OP_SQRT:
        case LM_GGML_OP_SIN:
        case LM_GGML_OP_COS:
        case LM_GGML_OP_LOG:
        case LM_GGML_OP_CLAMP: return is_float(s0->type) && is_float(op->type) && lm_ggml_are_same_shape(op, s0);
        case LM_GGML_OP_UNARY: return supports_unary(op);
        case LM_GGML_OP_CPY:
        case LM_GGML_OP_CONT:
        case LM_GGML_OP_DUP:
            return is_float(s0->type) && is_float(op->type) && lm_ggml_nelements(op) == lm_ggml_nelements(s0);
        case LM_GGML_OP_CONCAT: {
            const int32_t dim = op_i32(op, 0);
            return dim >= 0 && dim < 4 && is_float(s0->type) && s1->type == s0->type && op->type == s0->type;
        }
        case LM_GGML_OP_GET_ROWS:
            return is_weight_type(s0->type) && rows_are_blocks(s0) && s1->type == LM_GGML_TYPE_I32 &&
                   is_float(op->type);
        case LM_GGML_OP_NORM:
        case LM_GGML_OP_RMS_NORM: return s0->type == LM_GGML_TYPE_F32 && op->type == LM_GGML_TYPE_F32;
        case LM_GGML_OP_SOFT_MAX: {
            const lm_ggml_tensor * m = s1;
            return s0->type == LM_GGML_TYPE_F32 && op->type == LM_GGML_TYPE_F32 && s0->nb[0] == sizeof(float) &&
                   op->nb[0] == sizeof(float) &&
                   (m == nullptr || (is_float(m->type) && m->ne[2] == 1 && m->ne[3] == 1 && m->ne[1] >= s0->ne[1] &&
                                     m->ne[0] == s0->ne[0]));
        }
        case LM_GGML_OP_ROPE: {
            const int32_t n_dims = op_i32(op, 1);
            const int32_t mode = op_i32(op, 2);
            const lm_ggml_tensor * ff = op->src[2];
            return (mode == 0 || mode == LM_GGML_ROPE_TYPE_NEOX) && is_float(s0->type) && op->type == s0->type &&
                   s0->ne[0] % 2 == 0 && n_dims > 0 && n_dims % 2 == 0 && n_dims <= s0->ne[0] &&
                   s1->type == LM_GGML_TYPE_I32 && s1->nb[0] == sizeof(int32_t) && s1->ne[0] >= s0->ne[2] &&
                   (ff == nullptr ||
                    (ff->type == LM_GGML_TYPE_F32 && ff->nb[0] == sizeof(float) && ff->ne[0] >= n_dims / 2));
        }
        case LM_GGML_OP_MUL_MAT:
            return is_weight_type(s0->type) && rows_are_blocks(s0) && is_float(s1->type) &&
                   op->type == LM_GGML_TYPE_F32 && op->nb[0] == sizeof(float) && s0->ne[2] > 0 && s0->ne[3] > 0 &&
                   s1->ne[2] % s0->ne[2] == 0 && s1->ne[3] % s0->ne[3] == 0;
        case LM_GGML_OP_FLASH_ATTN_EXT: {
            const lm_ggml_tensor * k = s1;
            const lm_ggml_tensor * v = op->src[2];
            const lm_ggml_tensor * m = op->src[3];
            return s0->type == LM_GGML_TYPE_F32 && s0->nb[0] == sizeof(float) && s0->ne[0] <= kFlashAttnMaxD &&
                   is_float(k->type) && is_float(v->type) && v->ne[0] == s0->ne[0] && op->type == LM_GGML_TYPE_F32 &&
                   op->nb[0] == sizeof(float) && k->ne[2] > 0 && k->ne[3] > 0 && v->ne[2] > 0 && v->ne[3] > 0 &&
                   s0->ne[2] % k->ne[2] == 0 && s0->ne[3] % k->ne[3] == 0 && s0->ne[2] % v->ne[2] == 0 &&
                   s0->ne[3] % v->ne[3] == 0 &&
                   (m == nullptr || (is_float(m->type) && m->ne[0] >= k->ne[1] && m->ne[1] >= s0->ne[1] &&
                                     m->ne[2] == 1 && m->ne[3] == 1));
        }
        default: return false;
    }
}

} // namespace lmocl

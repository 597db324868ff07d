// Fills the CPU op table with the element-wise kernel family (ew_*.cpp).

#include "ew_ops.h"

namespace lm_cpu_ew {

void noop_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    (void) params;
    (void) dst;
}

bool noop_supports(const lm_ggml_tensor * dst) {
    (void) dst;
    return true;
}

} // namespace lm_cpu_ew

namespace {

using namespace lm_cpu_ew;

void put(lm_cpu_op_desc & d, lm_cpu_forward_fn fwd, lm_cpu_supports_fn sup, bool single_thread = false) {
    d.forward = fwd;
    d.work_size = nullptr; // no kernel of this family needs scratch
    d.supports = sup;
    d.single_thread = single_thread;
    d.light = true; // every kernel of this family does a few operations per element
    d.private_scratch = nullptr;
}

} // namespace

void lm_cpu_register_elementwise_ops(struct lm_cpu_op_table * table) {
    auto & ops = table->ops;

    // views and reshapes only change metadata
    put(ops[LM_GGML_OP_NONE], noop_forward, noop_supports, true);
    put(ops[LM_GGML_OP_RESHAPE], noop_forward, noop_supports, true);
    put(ops[LM_GGML_OP_VIEW], noop_forward, noop_supports, true);
    put(ops[LM_GGML_OP_PERMUTE], noop_forward, noop_supports, true);
    put(ops[LM_GGML_OP_TRANSPOSE], noop_forward, noop_supports, true);

    put(ops[LM_GGML_OP_DUP], dup_forward, dup_supports);
    put(ops[LM_GGML_OP_CPY], dup_forward, dup_supports);
    put(ops[LM_GGML_OP_CONT], dup_forward, dup_supports);
    put(ops[LM_GGML_OP_SET], set_forward, set_supports);
    put(ops[LM_GGML_OP_ACC], acc_forward, acc_supports);

    put(ops[LM_GGML_OP_ADD], add_forward, add_supports);
    put(ops[LM_GGML_OP_SUB], sub_forward, sub_supports);
    put(ops[LM_GGML_OP_MUL], mul_forward, mul_supports);
    put(ops[LM_GGML_OP_DIV], div_forward, div_supports);
    put(ops[LM_GGML_OP_ADD1], add1_forward, add1_supports);

    put(ops[LM_GGML_OP_SQR], sqr_forward, sqr_supports);
    put(ops[LM_GGML_OP_SQRT], sqrt_forward, sqrt_supports);
    put(ops[LM_GGML_OP_LOG], log_forward, log_supports);
    put(ops[LM_GGML_OP_SIN], sin_forward, sin_supports);
    put(ops[LM_GGML_OP_COS], cos_forward, cos_supports);
    put(ops[LM_GGML_OP_SCALE], scale_forward, scale_supports);
    put(ops[LM_GGML_OP_CLAMP], clamp_forward, clamp_supports);
    put(ops[LM_GGML_OP_LEAKY_RELU], leaky_relu_forward, leaky_relu_supports);

    put(ops[LM_GGML_OP_SUM], sum_forward, sum_supports, true);
    put(ops[LM_GGML_OP_SUM_ROWS], sum_rows_forward, sum_rows_supports);
    put(ops[LM_GGML_OP_MEAN], mean_forward, mean_supports);
    put(ops[LM_GGML_OP_ARGMAX], argmax_forward, argmax_supports);
    put(ops[LM_GGML_OP_ARGSORT], argsort_forward, argsort_supports);

    put(ops[LM_GGML_OP_REPEAT], repeat_forward, repeat_supports);
    put(ops[LM_GGML_OP_CONCAT], concat_forward, concat_supports);
    put(ops[LM_GGML_OP_GET_ROWS], get_rows_forward, get_rows_supports);
    put(ops[LM_GGML_OP_PAD], pad_forward, pad_supports);
    put(ops[LM_GGML_OP_UPSCALE], upscale_forward, upscale_supports);

    put(ops[LM_GGML_OP_IM2COL], im2col_forward, im2col_supports);
    put(ops[LM_GGML_OP_POOL_1D], pool_1d_forward, pool_1d_supports);
    put(ops[LM_GGML_OP_POOL_2D], pool_2d_forward, pool_2d_supports);

    put(ops[LM_GGML_OP_ARANGE], arange_forward, arange_supports);
    put(ops[LM_GGML_OP_TIMESTEP_EMBEDDING], timestep_embedding_forward, timestep_embedding_supports);
    put(ops[LM_GGML_OP_GROUP_NORM], group_norm_forward, group_norm_supports);

    // LM_GGML_OP_UNARY: a dispatcher in ops[], and each unary op in unary[]
    put(ops[LM_GGML_OP_UNARY], unary_forward, unary_supports);
    for (int op = 0; op < LM_GGML_UNARY_OP_COUNT; ++op) {
        const lm_cpu_forward_fn fn = unary_kernel(static_cast<lm_ggml_unary_op>(op));
        if (fn) {
            put(table->unary[op], fn, unary_supports);
        }
    }
}

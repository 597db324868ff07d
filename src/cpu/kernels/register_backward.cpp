// Registration of the backward op kernels (see kernel.h): the training ops
// of la_backward*.cpp.
#include "kernel.h"
#include "la_backward.h"
#include "la_ops.h"

using namespace lmggml::cpu::la;

namespace {

// light: a few operations per element, so a small node runs on one thread
lm_cpu_op_desc desc(lm_cpu_forward_fn fwd, lm_cpu_supports_fn sup, bool light, lm_cpu_work_size_fn work = nullptr,
                    lm_cpu_private_scratch_fn priv = nullptr) {
    return {.forward = fwd,
            .work_size = work,
            .supports = sup,
            .single_thread = false,
            .light = light,
            .private_scratch = priv};
}

} // namespace

void lm_cpu_register_backward_ops(struct lm_cpu_op_table * table) {
    auto & ops = table->ops;
    ops[LM_GGML_OP_REPEAT_BACK] = desc(repeat_back_forward, repeat_back_supports, true);
    ops[LM_GGML_OP_SILU_BACK] = desc(silu_back_forward, silu_back_supports, true);
    ops[LM_GGML_OP_RMS_NORM_BACK] = desc(rms_norm_back_forward, rms_norm_back_supports, true);
    ops[LM_GGML_OP_GET_ROWS_BACK] = desc(get_rows_back_forward, get_rows_back_supports, true);
    ops[LM_GGML_OP_SOFT_MAX_BACK] = desc(soft_max_back_forward, soft_max_back_supports, true);
    // the rope kernel's cache lives in each thread's own scratch slice
    ops[LM_GGML_OP_ROPE_BACK] =
        desc(rope_back_forward, rope_back_supports, true, rope_back_work_size, thread_slices_only);
    ops[LM_GGML_OP_IM2COL_BACK] = desc(im2col_back_forward, im2col_back_supports, false);
    ops[LM_GGML_OP_POOL_2D_BACK] = desc(pool_2d_back_forward, pool_2d_back_supports, false);
    ops[LM_GGML_OP_CROSS_ENTROPY_LOSS] =
        desc(cross_entropy_loss_forward, cross_entropy_loss_supports, false, cross_entropy_loss_work_size);
    ops[LM_GGML_OP_CROSS_ENTROPY_LOSS_BACK] =
        desc(cross_entropy_loss_back_forward, cross_entropy_loss_back_supports, false);
    ops[LM_GGML_OP_OPT_STEP_ADAMW] = desc(opt_step_adamw_forward, opt_step_adamw_supports, true);
    ops[LM_GGML_OP_FLASH_ATTN_BACK] =
        desc(flash_attn_back_forward, flash_attn_back_supports, false, flash_attn_back_work_size, thread_slices_only);
}

// Fills the CPU op table with the linear-algebra kernel family (la_*.cpp).
#include "kernel.h"
#include "la_ops.h"

using namespace lmggml::cpu::la;

bool lmggml::cpu::la::thread_slices_only(const lm_ggml_tensor * dst, int n_threads) {
    (void) dst;
    (void) n_threads;
    return true;
}

void lm_cpu_register_linalg_ops(lm_cpu_op_table * table) {
    auto & ops = table->ops;
    ops[LM_GGML_OP_MUL_MAT] = {.forward = mul_mat_forward,
                               .work_size = mul_mat_work_size,
                               .supports = mul_mat_supports,
                               .single_thread = false,
                               .light = false,
                               .private_scratch = mul_mat_private_scratch};
    ops[LM_GGML_OP_MUL_MAT_ID] = {.forward = mul_mat_id_forward,
                                  .work_size = mul_mat_id_work_size,
                                  .supports = mul_mat_id_supports,
                                  .single_thread = false,
                                  .light = false,
                                  .private_scratch = nullptr};
    ops[LM_GGML_OP_OUT_PROD] = {.forward = out_prod_forward,
                                .work_size = out_prod_work_size,
                                .supports = out_prod_supports,
                                .single_thread = false,
                                .light = false,
                                .private_scratch = nullptr};
    ops[LM_GGML_OP_NORM] = {.forward = norm_forward,
                            .work_size = nullptr,
                            .supports = norm_supports,
                            .single_thread = false,
                            .light = true,
                            .private_scratch = nullptr};
    ops[LM_GGML_OP_RMS_NORM] = {.forward = rms_norm_forward,
                                .work_size = nullptr,
                                .supports = norm_supports,
                                .single_thread = false,
                                .light = true,
                                .private_scratch = nullptr};
    ops[LM_GGML_OP_DIAG_MASK_INF] = {.forward = diag_mask_inf_forward,
                                     .work_size = nullptr,
                                     .supports = diag_mask_supports,
                                     .single_thread = false,
                                     .light = true,
                                     .private_scratch = nullptr};
    ops[LM_GGML_OP_DIAG_MASK_ZERO] = {.forward = diag_mask_zero_forward,
                                      .work_size = nullptr,
                                      .supports = diag_mask_supports,
                                      .single_thread = false,
                                      .light = true,
                                      .private_scratch = nullptr};
    ops[LM_GGML_OP_SOFT_MAX] = {.forward = soft_max_forward,
                                .work_size = soft_max_work_size,
                                .supports = soft_max_supports,
                                .single_thread = false,
                                .light = true,
                                .private_scratch = thread_slices_only};
    ops[LM_GGML_OP_ROPE] = {.forward = rope_forward,
                            .work_size = rope_work_size,
                            .supports = rope_supports,
                            .single_thread = false,
                            .light = true,
                            .private_scratch = thread_slices_only};
    ops[LM_GGML_OP_FLASH_ATTN_EXT] = {.forward = flash_attn_ext_forward,
                                      .work_size = flash_attn_ext_work_size,
                                      .supports = flash_attn_ext_supports,
                                      .single_thread = false,
                                      .light = false,
                                      .private_scratch = flash_attn_ext_private_scratch};
}

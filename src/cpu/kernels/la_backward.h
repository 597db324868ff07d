#pragma once
// Entry points of the training kernels (la_backward*.cpp), registered into
// the CPU op table by register_backward.cpp and called by the kernel tests.
// Each op has forward (every thread of the node calls it) and supports (type
// and layout check, false makes supports_op false); work_size where the
// kernel needs scratch. Semantics of each op: docs/OPS.md.

#include "kernel.h"

namespace lmggml::cpu::la {

// REPEAT_BACK: dst = sum of src over the repeats of dst's shape
void repeat_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool repeat_back_supports(const lm_ggml_tensor * dst);

// SILU_BACK: dst = dy * silu'(x), src0 = dy, src1 = x
void silu_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool silu_back_supports(const lm_ggml_tensor * dst);

// RMS_NORM_BACK: dst = gradient of rms_norm at x (src1) for dy (src0)
void rms_norm_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool rms_norm_back_supports(const lm_ggml_tensor * dst);

// GET_ROWS_BACK: dst (zeroed) row ids[i] += src0 row i
void get_rows_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool get_rows_back_supports(const lm_ggml_tensor * dst);

// SOFT_MAX_BACK: dst = scale * y * (dy - dot(y, dy)) per row, src0 = dy, src1 = y
void soft_max_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool soft_max_back_supports(const lm_ggml_tensor * dst);

// CROSS_ENTROPY_LOSS (scalar) and CROSS_ENTROPY_LOSS_BACK
void cross_entropy_loss_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
size_t cross_entropy_loss_work_size(const lm_ggml_tensor * dst, int n_threads);
bool cross_entropy_loss_supports(const lm_ggml_tensor * dst);
void cross_entropy_loss_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool cross_entropy_loss_back_supports(const lm_ggml_tensor * dst);

// OPT_STEP_ADAMW: updates src0 (= dst's memory), src2 (m) and src3 (v)
void opt_step_adamw_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool opt_step_adamw_supports(const lm_ggml_tensor * dst);

// ROPE_BACK: the inverse rotation of ROPE with the same parameters
void rope_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
size_t rope_back_work_size(const lm_ggml_tensor * dst, int n_threads);
bool rope_back_supports(const lm_ggml_tensor * dst);

// IM2COL_BACK: dst = sum of im2col's gradient over the columns each input element fed
void im2col_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool im2col_back_supports(const lm_ggml_tensor * dst);

// POOL_2D_BACK: the gradient of POOL_2D (AVG spreads, MAX routes to the argmax)
void pool_2d_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool pool_2d_back_supports(const lm_ggml_tensor * dst);

// FLASH_ATTN_BACK: grad q, k, v of softmax(q.k / sqrt(D)) v in one F32 vector
void flash_attn_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
size_t flash_attn_back_work_size(const lm_ggml_tensor * dst, int n_threads);
bool flash_attn_back_supports(const lm_ggml_tensor * dst);

} // namespace lmggml::cpu::la

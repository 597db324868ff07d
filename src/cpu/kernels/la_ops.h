#pragma once
// Entry points of the linear-algebra kernel family, registered into the CPU
// op table by register_linalg.cpp and called directly by the kernel tests.
// Each op has forward (every thread of the node calls it), supports (type
// and layout check, false makes supports_op false) and, where scratch is
// needed, work_size (bytes of params->wdata for n_threads threads).

#include "kernel.h"
#include "la_vec_dot.h"

namespace lmggml::cpu::la {

// MUL_MAT: dst (ne01(a), ne1(b), ne2(b), ne3(b)) F32 = a . b, a broadcast over b's dims 2, 3
void mul_mat_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
size_t mul_mat_work_size(const lm_ggml_tensor * dst, int n_threads);
bool mul_mat_supports(const lm_ggml_tensor * dst);
bool mul_mat_private_scratch(const lm_ggml_tensor * dst, int n_threads);
// Kernels whose scratch is only their thread's slice (lm_cpu_thread_scratch).
bool thread_slices_only(const lm_ggml_tensor * dst, int n_threads);

// MUL_MAT_ID: per token, the experts chosen by ids multiply b's rows
void mul_mat_id_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
size_t mul_mat_id_work_size(const lm_ggml_tensor * dst, int n_threads);
bool mul_mat_id_supports(const lm_ggml_tensor * dst);

// OUT_PROD: dst[i0, i1] = sum_k a[i0, k] * b[i1, k] per (i2, i3)
void out_prod_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
size_t out_prod_work_size(const lm_ggml_tensor * dst, int n_threads);
bool out_prod_supports(const lm_ggml_tensor * dst);

// NORM, RMS_NORM over ne0 (eps in f32 op_params[0])
void norm_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
void rms_norm_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool norm_supports(const lm_ggml_tensor * dst);

// DIAG_MASK_INF / DIAG_MASK_ZERO (n_past in i32 op_params[0])
void diag_mask_inf_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
void diag_mask_zero_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool diag_mask_supports(const lm_ggml_tensor * dst);

// SOFT_MAX with optional mask, scale and ALiBi max_bias
void soft_max_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
size_t soft_max_work_size(const lm_ggml_tensor * dst, int n_threads);
bool soft_max_supports(const lm_ggml_tensor * dst);

// ROPE, normal and NeoX modes, F32 and F16, with freq factors and YaRN
void rope_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
size_t rope_work_size(const lm_ggml_tensor * dst, int n_threads);
bool rope_supports(const lm_ggml_tensor * dst);

// FLASH_ATTN_EXT: softmax(scale * q.k + mask) . v with online softmax
void flash_attn_ext_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
size_t flash_attn_ext_work_size(const lm_ggml_tensor * dst, int n_threads);
bool flash_attn_ext_supports(const lm_ggml_tensor * dst);
bool flash_attn_ext_private_scratch(const lm_ggml_tensor * dst, int n_threads);
// ALiBi slope of head h (1 without max_bias)
float flash_attn_slope(float max_bias, int64_t n_head, int64_t h);
// Its F16 K/V path on the AttnF16 kernels (la_flash_attn_f16.cpp)
bool flash_attn_f16_path(const lm_ggml_tensor * dst);
size_t flash_attn_f16_work_size(const lm_ggml_tensor * dst, int n_threads);
bool flash_attn_f16_private_scratch(const lm_ggml_tensor * dst, int n_threads);
void flash_attn_f16_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
// ... and its prompt path, blocks of query rows on the F32/F16 Gemm
// (la_flash_attn_tiled.cpp), taken by flash_attn_f16_* where this says so
bool flash_attn_tiled_path(const lm_ggml_tensor * dst);
size_t flash_attn_tiled_work_size(const lm_ggml_tensor * dst, int n_threads);
void flash_attn_tiled_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);

// The same three kernels with an explicit plan for the weight (K) type
// instead of plan_for(type): the registered entry points call these, and
// tests use them to force the decode path (to_float + dot_f32) for a type
// that has a direct dot. The plan must suit the operand types.
void mul_mat_forward_with(const lm_cpu_params * params, lm_ggml_tensor * dst, const Plan & plan);
size_t mul_mat_work_size_with(const lm_ggml_tensor * dst, int n_threads, const Plan & plan);
void mul_mat_id_forward_with(const lm_cpu_params * params, lm_ggml_tensor * dst, const Plan & plan);
size_t mul_mat_id_work_size_with(const lm_ggml_tensor * dst, int n_threads, const Plan & plan);
void flash_attn_ext_forward_with(const lm_cpu_params * params, lm_ggml_tensor * dst, const Plan & k_plan);
size_t flash_attn_ext_work_size_with(const lm_ggml_tensor * dst, int n_threads, const Plan & k_plan);

} // namespace lmggml::cpu::la

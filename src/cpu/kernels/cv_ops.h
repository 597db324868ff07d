#pragma once
// Entry points of the conv-family kernels that are ops of their own (the
// conv_1d/2d builders are im2col + mul_mat graphs and need none), registered
// by register_conv.cpp: transposed convolutions, reflection padding, the
// windowing and relative-position ops of SAM-style encoders, DIAG and
// COUNT_EQUAL. Each op has forward, supports and, where it needs scratch,
// work_size (see kernel.h).

#include "kernel.h"

namespace lmggml::cpu::cv {

// ew_conv_transpose.cpp
// CONV_TRANSPOSE_1D: a (K, OC, IC) F16/F32, b (IL, IC) F32 -> (OL, OC) F32
void conv_transpose_1d_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
size_t conv_transpose_1d_work_size(const lm_ggml_tensor * dst, int n_threads);
bool conv_transpose_1d_supports(const lm_ggml_tensor * dst);
// CONV_TRANSPOSE_2D: a (KW, KH, OC, IC) F16, b (IW, IH, IC, N) F32 -> (OW, OH, OC, N) F32
void conv_transpose_2d_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
size_t conv_transpose_2d_work_size(const lm_ggml_tensor * dst, int n_threads);
bool conv_transpose_2d_supports(const lm_ggml_tensor * dst);

// ew_window.cpp
void pad_reflect_1d_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool pad_reflect_1d_supports(const lm_ggml_tensor * dst);
void win_part_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool win_part_supports(const lm_ggml_tensor * dst);
void win_unpart_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool win_unpart_supports(const lm_ggml_tensor * dst);
void get_rel_pos_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool get_rel_pos_supports(const lm_ggml_tensor * dst);
void add_rel_pos_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool add_rel_pos_supports(const lm_ggml_tensor * dst);
void diag_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool diag_supports(const lm_ggml_tensor * dst);
void count_equal_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool count_equal_supports(const lm_ggml_tensor * dst);

} // namespace lmggml::cpu::cv

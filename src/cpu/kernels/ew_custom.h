#pragma once
// User-function ops on the CPU (ew_custom.cpp): MAP_UNARY, MAP_BINARY,
// MAP_CUSTOM1..3_F32 run on one thread; MAP_CUSTOM1..3 call the function on
// the number of threads it asked for. The graph runtime asks the two
// questions below when it plans threads and barriers.

#include "kernel.h"

// The op calls a user function: it may read or write any memory its tensors
// reach, so barrier placement must assume it touches everything.
bool lm_cpu_op_calls_user(enum lm_ggml_op op);

// Threads a MAP_CUSTOM1..3 node runs its function on when n_threads are
// available (1..n_threads); 0 for any other node.
int lm_cpu_custom_n_tasks(const struct lm_ggml_tensor * node, int n_threads);

namespace lmggml::cpu::custom {

// MAP_UNARY / MAP_BINARY: fun(ne0, dst_row, a_row [, b_row]) per row (F32, packed rows)
void map_unary_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool map_unary_supports(const lm_ggml_tensor * dst);
void map_binary_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool map_binary_supports(const lm_ggml_tensor * dst);
// Any types: the user's function decides what it handles.
bool any_types(const lm_ggml_tensor * dst);
// MAP_CUSTOMn_F32: fun(dst, a [, b [, c]]) once
void custom1_f32_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
void custom2_f32_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
void custom3_f32_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
// MAP_CUSTOMn: fun(dst, a [, b [, c]], ith, n_tasks, userdata) on threads ith < n_tasks
void custom1_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
void custom2_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
void custom3_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);

} // namespace lmggml::cpu::custom

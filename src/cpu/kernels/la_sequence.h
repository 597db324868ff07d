#pragma once
// Entry points of the sequence-model kernels (la_sequence.cpp), registered by
// register_sequence.cpp. Every thread of a node calls forward and computes
// its share of independent recurrences (rows, or sequence x head pairs);
// none needs scratch or a barrier.

#include "kernel.h"

namespace lmggml::cpu::la {

// SSM_CONV: dst[i1, t, s] = sum_k sx[t + k, i1, s] * c[k, i1]
void ssm_conv_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool ssm_conv_supports(const lm_ggml_tensor * dst);

// SSM_SCAN: Mamba's selective scan; dst = y (x's shape), then the final states (s's shape)
void ssm_scan_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool ssm_scan_supports(const lm_ggml_tensor * dst);

// RWKV_WKV6 and GATED_LINEAR_ATTN: per sequence and head, an S x S state
// updated token by token; dst = outputs (S*H, n_tokens), then the final states
void rwkv_wkv6_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool rwkv_wkv6_supports(const lm_ggml_tensor * dst);
void gated_linear_attn_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool gated_linear_attn_supports(const lm_ggml_tensor * dst);

} // namespace lmggml::cpu::la

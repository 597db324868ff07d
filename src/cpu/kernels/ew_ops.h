#pragma once
// Entry points of the element-wise kernel family, wired into the CPU op
// table by register_elementwise.cpp. Each op has forward (every thread of the
// node calls it with its ith/nth) and supports (true only for the type and
// layout combinations the forward really handles). None uses the barrier
// or scratch memory.

#include "kernel.h"

namespace lm_cpu_ew {

#define LM_CPU_EW_OP(name)                                                                                             \
    void name##_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);                                           \
    bool name##_supports(const lm_ggml_tensor * dst);

// ew_copy.cpp: DUP, CPY, CONT (one kernel), SET, ACC
LM_CPU_EW_OP(dup)
LM_CPU_EW_OP(set)
LM_CPU_EW_OP(acc)

// ew_binary.cpp: broadcasting arithmetic, ADD1
LM_CPU_EW_OP(add)
LM_CPU_EW_OP(sub)
LM_CPU_EW_OP(mul)
LM_CPU_EW_OP(div)
LM_CPU_EW_OP(add1)

// ew_math.cpp: one-input math with op_params
LM_CPU_EW_OP(sqr)
LM_CPU_EW_OP(sqrt)
LM_CPU_EW_OP(log)
LM_CPU_EW_OP(sin)
LM_CPU_EW_OP(cos)
LM_CPU_EW_OP(scale)
LM_CPU_EW_OP(clamp)
LM_CPU_EW_OP(leaky_relu)

// ew_reduce.cpp: reductions and sorting
LM_CPU_EW_OP(sum)
LM_CPU_EW_OP(sum_rows)
LM_CPU_EW_OP(mean)
LM_CPU_EW_OP(argmax)
LM_CPU_EW_OP(argsort)

// ew_layout.cpp: data movement
LM_CPU_EW_OP(repeat)
LM_CPU_EW_OP(concat)
LM_CPU_EW_OP(get_rows)
LM_CPU_EW_OP(pad)
LM_CPU_EW_OP(upscale)

// ew_conv.cpp: tier-2 vision/speech helpers
LM_CPU_EW_OP(im2col)
LM_CPU_EW_OP(pool_1d)
LM_CPU_EW_OP(pool_2d)

// ew_gen.cpp: generators and group norm
LM_CPU_EW_OP(arange)
LM_CPU_EW_OP(timestep_embedding)
LM_CPU_EW_OP(group_norm)

// RESHAPE, VIEW, PERMUTE, TRANSPOSE, NONE: metadata only, nothing to compute
LM_CPU_EW_OP(noop)

#undef LM_CPU_EW_OP

// ew_unary.cpp: the LM_GGML_OP_UNARY family. unary_kernel(op) is the
// forward of one unary op (NULL for an unknown op); unary_forward dispatches
// on dst's op_params[0]; unary_supports holds for every unary op.
lm_cpu_forward_fn unary_kernel(lm_ggml_unary_op op);
void unary_forward(const lm_cpu_params * params, lm_ggml_tensor * dst);
bool unary_supports(const lm_ggml_tensor * dst);

} // namespace lm_cpu_ew

#pragma once
// GET_ROWS from quantized tables and CPY/DUP/CONT between F32 and the block
// formats. The element-wise kernels (ew_*.cpp) handle every other type
// combination and report these as unsupported; lm_cpu_register_quant_ops
// routes the quantized cases here.

#include "kernel.h"

// GET_ROWS: src0 (ne00, ne01, ne02, ne03) block type, src1 (ne10, ne11, ne12) I32,
// dst (ne00, ne10, ne11, ne12) F32 with contiguous rows.
void lm_cpu_q_get_rows_forward(const struct lm_cpu_params * params, struct lm_ggml_tensor * dst);
bool lm_cpu_q_get_rows_supports(const struct lm_ggml_tensor * dst);

// DUP/CPY/CONT: F32 -> block type (quantized with the reference quantizer,
// bytes identical to lm_ggml_quantize_chunk) or block type -> F32. Either the
// rows have the same length on both sides (any row strides), or both tensors
// are contiguous.
void lm_cpu_q_cpy_forward(const struct lm_cpu_params * params, struct lm_ggml_tensor * dst);
bool lm_cpu_q_cpy_supports(const struct lm_ggml_tensor * dst);

// Replaces the GET_ROWS, DUP, CPY and CONT entries of the table (filled by
// lm_cpu_register_elementwise_ops first) with dispatchers: conversions that
// involve a block type run the kernels above, all else the element-wise ones.
void lm_cpu_register_quant_ops(struct lm_cpu_op_table * table);

#pragma once
// The CPU_REPACK buffer type: weights stored in the x8 layout
// (src/cpu/arch/x8.h) for the RowDotX8 kernels. It is the CPU device's extra
// buffer type (lm_ggml_backend_dev_get_extra_bufts); a model loader puts
// the weights there that the device accepts for MUL_MAT with src0 in it.
//
// A tensor in such a buffer is stored repacked when its type has an x8
// kernel at this CPU's level, it has whole groups of 8 rows (ne[1] % 8 == 0)
// and it is contiguous; any other tensor is stored as is. Reads and writes
// through the buffer (lm_ggml_backend_tensor_get/set/memset, any byte
// range, views included) see ggml's layout either way. The buffer is not
// host memory: nothing may read a repacked tensor's data directly except the
// ops below.
//
// Ops that read repacked tensors: MUL_MAT (src0, F32 src1) and GET_ROWS
// (src0). Any other use, or a view of a repacked tensor as an operand, is
// not supported (lm_cpu_repack_op_ok), so graphs with one fail to validate
// instead of reading permuted bytes.

#include "ggml-backend.h"
#include "ggml.h"

lm_ggml_backend_buffer_type_t lm_cpu_repack_buffer_type(void);

// True when this CPU repacks any type (otherwise the device lists no extra
// buffer type).
bool lm_cpu_repack_available(void);

// t's bytes are in the x8 layout (see above).
bool lm_cpu_is_repacked(const struct lm_ggml_tensor * t);

// True unless node reads a repacked tensor in a way the CPU cannot: every
// source that is repacked (or a view of one) must be src0 of a MUL_MAT with
// an F32 src1 or of a GET_ROWS, and the node itself must not be repacked.
bool lm_cpu_repack_op_ok(const struct lm_ggml_tensor * node);

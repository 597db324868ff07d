#pragma once
// Shared between the CPU backend's runtime files (device, backend, buffers,
// graph walk). Not used by kernels: their contract is kernels/kernel.h.

#include "ggml.h"
#include "ggml-backend-impl.h"
#include "cpu/kernels/kernel.h"

// The one CPU device (owned by the library, lives until process exit).
lm_ggml_backend_dev_t lm_cpu_device(void);

// Memory of the CPU buffer types (64-byte aligned; large blocks on huge
// pages where the OS offers them). NULL when out of memory. Free with the
// size it was allocated with.
void * lm_cpu_buffer_alloc(size_t size);
void lm_cpu_buffer_free(void * data, size_t size);

// Ops that only reinterpret memory (NONE, RESHAPE, VIEW, PERMUTE, TRANSPOSE):
// nothing to compute.
bool lm_cpu_is_layout_op(enum lm_ggml_op op);

// Nodes the graph walk skips: layout ops and empty tensors (any ne == 0).
bool lm_cpu_node_is_noop(const struct lm_ggml_tensor * node);

// The kernel entry for a node (the unary table for LM_GGML_OP_UNARY), or NULL
// when the op value is out of range. The entry's forward may still be NULL.
const struct lm_cpu_op_desc * lm_cpu_find_op(const struct lm_ggml_tensor * node);

// Buffers whose tensors CPU kernels may read: host memory and CPU_REPACK
// (whose repacked tensors only some ops read, lm_cpu_repack_op_ok).
bool lm_cpu_buft_readable(lm_ggml_backend_buffer_type_t buft);

// True when the CPU can compute node: a layout op, or a kernel exists and its
// supports() accepts the node's types.
bool lm_cpu_can_compute(const struct lm_ggml_tensor * node);

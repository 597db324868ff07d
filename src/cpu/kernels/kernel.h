#pragma once
// The contract between the CPU runtime (threadpool, graph walk) and the op
// kernels. Kernels are pure: pointers, strides, a thread index and count; they
// never allocate, log, or touch global state.

#include "ggml.h"
#include "../../core/ggml-impl.h"

#include <stdint.h>

struct lm_cpu_barrier;    // owned by the threadpool
struct lm_cpu_chunk_slot; // one per thread of a graph compute (graph walk)

struct lm_cpu_params {
    int ith;      // this thread, 0 <= ith < nth
    int nth;      // threads working on this node
    size_t wsize; // bytes of shared scratch, as asked for by work_size()
    void * wdata; // shared scratch (64-byte aligned), the same pointer for every thread
    struct lm_cpu_barrier * barrier;
    struct lm_cpu_chunk_slot * chunks; // nth slots for lm_cpu_chunks_*; NULL: static shares
    uint32_t node_seq;                 // distinct for every node of one graph compute, > 0
};

// Waits until all nth threads of this node reach it (e.g. after a kernel
// converted src1 into wdata). Implemented by the runtime.
void lm_cpu_barrier_wait(const struct lm_cpu_params * params);

// Chunks 0..n-1 of a node, each handed to exactly one thread: a thread takes
// its own contiguous share front to back, then steals from the back of the
// other threads' shares, so a thread that starts late or runs slow (another
// tenant on its core) is helped while each share is still read in order.
// A take is at most max_take chunks and at most half of what is left in the
// share, so the two ends meet in single chunks and nobody waits long for the
// last one. At most one chunked loop per node (node_seq tells them apart).
struct lm_cpu_chunk_iter {
    int64_t next, end; // static mode: what is left of the own share
    int64_t max_take;
    int victim;  // threads stolen from so far
    int dynamic; // 0: static shares (no slots, one thread, or too many chunks)
};
void lm_cpu_chunks_begin(const struct lm_cpu_params * params, int64_t n, int64_t max_take,
                         struct lm_cpu_chunk_iter * it);
// Next run of chunks [*begin, *end); false when every chunk is taken.
int lm_cpu_chunks_next(const struct lm_cpu_params * params, struct lm_cpu_chunk_iter * it, int64_t * begin,
                       int64_t * end);

// Every thread calls forward(params, dst) for the same node; each does its share.
typedef void (*lm_cpu_forward_fn)(const struct lm_cpu_params * params, struct lm_ggml_tensor * dst);
// Scratch bytes the node needs with n_threads threads (NULL: none).
typedef size_t (*lm_cpu_work_size_fn)(const struct lm_ggml_tensor * dst, int n_threads);
// True when the kernel handles dst's types/layout; false makes supports_op false.
typedef bool (*lm_cpu_supports_fn)(const struct lm_ggml_tensor * dst);

// True when, with n_threads threads, the node touches scratch only through
// lm_cpu_thread_scratch (each thread its own slice).
typedef bool (*lm_cpu_private_scratch_fn)(const struct lm_ggml_tensor * dst, int n_threads);

struct lm_cpu_op_desc {
    lm_cpu_forward_fn forward;     // NULL: op not implemented on CPU
    lm_cpu_work_size_fn work_size; // optional
    lm_cpu_supports_fn supports;   // optional: NULL means every type combination works
    bool single_thread;            // run with nth = 1 (cheap or inherently serial ops)
    // A few operations per element: a small node (lm_cpu_node_n_tasks) runs
    // on one thread, cheaper than splitting it and meeting at a barrier.
    bool light;
    lm_cpu_private_scratch_fn private_scratch; // optional: NULL means shared scratch
};

// This thread's own slice of the scratch: every thread gets an equal,
// line-aligned part of wsize (the same slices for every node of a graph, so
// nodes using only these need no barrier between them for their scratch).
static inline size_t lm_cpu_scratch_slice(size_t wsize, int nth) { return (wsize / (size_t) nth) & ~(size_t) 63; }
static inline void * lm_cpu_thread_scratch(const struct lm_cpu_params * params) {
    return (char *) params->wdata + (size_t) params->ith * lm_cpu_scratch_slice(params->wsize, params->nth);
}

// The op table: one entry per lm_ggml_op, plus one per unary op for LM_GGML_OP_UNARY.
struct lm_cpu_op_table {
    struct lm_cpu_op_desc ops[LM_GGML_OP_COUNT];
    struct lm_cpu_op_desc unary[LM_GGML_UNARY_OP_COUNT];
};

// Each kernel family fills its entries; the runtime calls these once at init.
// element-wise, unary, reductions, copies, layout ops, get_rows, concat, repeat,
// argsort, clamp, set/acc, scale, and the tier-2 ops
void lm_cpu_register_elementwise_ops(struct lm_cpu_op_table * table);
// mul_mat, mul_mat_id, out_prod, norms, soft_max, diag_mask, rope, flash_attn_ext
void lm_cpu_register_linalg_ops(struct lm_cpu_op_table * table);

// conv_1d/2d families' own ops (conv_transpose, pad_reflect_1d, win_part/unpart,
// rel_pos), diag, count_equal
void lm_cpu_register_conv_ops(struct lm_cpu_op_table * table);
// sequence models: ssm_conv, ssm_scan, rwkv_wkv6, gated_linear_attn
void lm_cpu_register_sequence_ops(struct lm_cpu_op_table * table);
// user functions: map_unary/binary, map_custom1..3 (_f32 and the threaded ones)
void lm_cpu_register_custom_ops(struct lm_cpu_op_table * table);
// training: the *_BACK ops, cross_entropy_loss(_back), opt_step_adamw
void lm_cpu_register_backward_ops(struct lm_cpu_op_table * table);

// The table after registration (built once, thread-safe).
const struct lm_cpu_op_table * lm_cpu_get_op_table(void);

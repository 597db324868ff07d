#pragma once
// Which threads run each node of a CPU graph, and before which nodes the
// graph walk must stop at a barrier.
//
// ggml meets at a barrier after every node. Here a barrier is only placed
// where a node could see another thread's unfinished work: it reads or writes
// memory that a node since the last barrier, run by other threads, writes, or
// writes memory such a node reads, or both use shared scratch. Nodes that run
// on thread 0 alone never conflict with each other (one thread, in order).
// Small light nodes (a few operations per element) run on thread 0 alone, so
// a chain of them (residual add, RMS norm, scale) costs no barrier at all.

#include "cpu/kernels/kernel.h"

#include <cstdint>
#include <vector>

// Nodes with at most this many elements (dst or any src) run on one thread
// when their op is light.
constexpr int64_t kLightNodeElements = 2048;

// Threads node runs on with n_threads in the graph (1 or n_threads).
int lm_cpu_node_n_tasks(const struct lm_cpu_op_desc * desc, const struct lm_ggml_tensor * node, int n_threads);

struct lm_cpu_node_sync {
    bool solo;        // runs on thread 0 only
    bool sync_before; // every thread waits at the barrier before it
};

// One entry per node of cgraph (no-op nodes: solo, no barrier). The graph
// must have passed validation (every node has a kernel). every_node: a
// barrier before every node (ggml's walk), for exact stops on abort.
void lm_cpu_plan_sync(const struct lm_ggml_cgraph * cgraph, int n_threads, bool every_node,
                      std::vector<lm_cpu_node_sync> & plan);

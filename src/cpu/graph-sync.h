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

// Threads node runs on with n_threads in the graph: 1 or n_threads, or for a
// MAP_CUSTOMn node its n_tasks up to n_threads (the walk then runs it on all
// threads and its kernel idles the extra ones).
int lm_cpu_node_n_tasks(const struct lm_cpu_op_desc * desc, const struct lm_ggml_tensor * node, int n_threads);

struct lm_cpu_node_sync {
    bool solo;        // runs on thread 0 only
    bool sync_before; // every thread waits at the barrier before it
};

// Source ranges a node access records; a node with more non-empty sources,
// or one calling a user function, conflicts with every other (barriers on
// both sides, unless both run on thread 0 alone).
constexpr int kMaxNodeReads = 6;

struct lm_cpu_span {
    uintptr_t lo = 0, hi = 0; // [lo, hi), empty when lo == hi
};

// What one node touches, for barrier placement.
struct lm_cpu_node_access {
    lm_cpu_span write;
    lm_cpu_span reads[kMaxNodeReads];
    int n_reads = 0;
    bool noop = false;       // layout op or empty: skipped by the walk
    bool many_reads = false; // more sources than reads[] holds
    bool solo = false;       // runs on thread 0 alone
    bool scratch = false;    // uses scratch
    bool priv = false;       // ... only its threads' own slices (lm_cpu_thread_scratch)
};

// The access of one node; desc is the node's op (validated; ignored for a
// no-op node). Nodes are independent: threads may fill slices of a graph.
void lm_cpu_node_access_of(const struct lm_ggml_tensor * node, const struct lm_cpu_op_desc * desc, int n_threads,
                           lm_cpu_node_access * access);

// plan[i] for the n_nodes accesses of a graph, in order (no-op nodes: solo,
// no barrier). every_node: a barrier before every node (ggml's walk), for
// exact stops on abort.
void lm_cpu_place_barriers(const lm_cpu_node_access * access, int n_nodes, bool every_node, lm_cpu_node_sync * plan);

// Both steps for a whole graph, on the calling thread. The graph must have
// passed validation (every node has a kernel).
void lm_cpu_plan_sync(const struct lm_ggml_cgraph * cgraph, int n_threads, bool every_node,
                      std::vector<lm_cpu_node_sync> & plan);

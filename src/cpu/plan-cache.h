#pragma once
// The CPU backend's memory of the last graph it planned, so that computing
// that graph again (an LLM's generation step: the same graph with new
// inputs) skips most of the per-node work done before the walk:
// lm_ggml_graph_plan (threads, scratch size), validation and barrier
// placement (graph-sync.h), about 1 kcycle per node.
//
// The key holds, per node, every field those steps read (op, op parameters,
// flags, type, shape, strides, data pointer, buffer and its type, the tensor
// it views, its source pointers), and the same fields of each tensor the
// nodes read that is not a node itself (weights, inputs, viewed tensors):
// the fields themselves, not a hash, so a match is exact. A node whose
// fields changed but that still views and reads the same tensors (a
// generation step moves the KV-cache views it writes) is validated and
// planned again with every node that reads it, then the barriers are placed
// again. Anything else (node count, thread count, abort callback, a tensor
// outside the nodes, a node's sources) plans the whole graph again.

#include "cpu/graph-sync.h"

#include "ggml-cpu.h"
#include "ggml.h"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

struct lm_cpu_plan_cache {
    // node i's fields are key[start[i] .. start[i + 1]); then the outside tensors'
    std::vector<uint64_t> key;
    std::vector<uint32_t> start;
    std::vector<const lm_ggml_tensor *> outside; // sources that are not nodes, in key order
    // where each outside tensor was reached: (node index, read slot of
    // for_each_read). update() reaches it again through the graph it is given
    // and only compares the stored pointer's value: the tensors of the graph
    // planned last may have been freed since (a new context at the same size).
    std::vector<std::pair<int32_t, int32_t>> outside_at;
    // the nodes each node reads fields of (itself first): node i's are
    // reads[read_start[i] .. read_start[i + 1]), indices into the graph
    std::vector<int32_t> reads;
    std::vector<uint32_t> read_start;
    std::vector<uint8_t> changed;           // update's scratch, per node: its words changed
    std::vector<lm_cpu_node_access> access; // per node (several threads)
    std::vector<lm_cpu_node_sync> sync;     // per node (several threads)
    int n_threads = 0;                      // requested (lm_ggml_graph_plan's argument)
    bool every_node = false;
    int max_tasks = 1; // lm_ggml_graph_plan's maxima over the nodes
    size_t max_work = 0;
    // A few words of the last graph missed: a graph is only remembered when
    // seen twice in a row, so a backend that computes a different graph each
    // time (several splits) does not pay for keys never used.
    uint64_t seen[4] = {0, 0, 0, 0};
};

// Makes cache describe cgraph computed with n_threads and (every_node) an
// abort callback, re-planning the nodes that changed. False: not possible
// (nothing cached, or more than single nodes changed, or a changed node is
// invalid): plan the whole graph (lm_ggml_graph_plan, then compute with
// prepare) and store it.
bool lm_cpu_plan_cache_update(lm_cpu_plan_cache & cache, const lm_ggml_cgraph * cgraph, int n_threads, bool every_node);

// The plan of the cached graph (after lm_cpu_plan_cache_update returned true).
lm_ggml_cplan lm_cpu_plan_cache_cplan(const lm_cpu_plan_cache & cache, lm_ggml_threadpool * pool);

// After a miss: whether cgraph looks like the graph missed last time (then
// store it once computed). Updates what the next call compares with.
bool lm_cpu_plan_cache_seen_twice(lm_cpu_plan_cache & cache, const lm_ggml_cgraph * cgraph);

// Remembers cgraph, computed with the barrier plan sync and node accesses
// access (both empty with one thread). May throw std::bad_alloc.
void lm_cpu_plan_cache_store(lm_cpu_plan_cache & cache, const lm_ggml_cgraph * cgraph, int n_threads, bool every_node,
                             std::vector<lm_cpu_node_sync> && sync, std::vector<lm_cpu_node_access> && access);

void lm_cpu_plan_cache_clear(lm_cpu_plan_cache & cache);

// ---------------------------------------------------------------- graph-compute.cpp

// lm_ggml_graph_compute with the planning done elsewhere:
//   known      cgraph passed validation and sync is its barrier plan (one entry
//              per node; NULL when cplan has one thread): neither validation
//              nor barrier placement runs;
//   out        otherwise, when not NULL: receives the barrier plan and the node
//              accesses the threads made (left empty with one thread).
struct lm_cpu_plan_out {
    std::vector<lm_cpu_node_sync> sync;
    std::vector<lm_cpu_node_access> access;
};
enum lm_ggml_status lm_cpu_graph_compute_planned(lm_ggml_cgraph * cgraph, lm_ggml_cplan * cplan, bool known,
                                                 const lm_cpu_node_sync * sync, lm_cpu_plan_out * out);

// Whether node (index i of its graph) can be computed; log: say why not.
bool lm_cpu_validate_node(const lm_ggml_tensor * node, int i, bool log);

// lm_ggml_graph_plan's view of one node: threads it runs on, scratch bytes.
void lm_cpu_node_plan(const lm_ggml_tensor * node, int n_threads, int * n_tasks, size_t * work);

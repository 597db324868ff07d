#pragma once
// The multi-device scheduler (lm_ggml_backend_sched_*), internal layout.
//
// Life of a graph:
//   assign (sched-assign.cpp)  every node and leaf gets a backend id;
//   split  (sched-split.cpp)   maximal runs of nodes on one backend become
//                              splits; sources living where the split's
//                              backend cannot read them get copy tensors,
//                              and the consuming nodes are rewired to them;
//                              the scheduler's own graph (copies + nodes) is
//                              built for the graph allocator;
//   run    (sched-run.cpp)     gallocr places everything, then each split
//                              copies its inputs in and computes.
// sched.cpp holds the public entry points.

#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-backend.h"
#include "core/ggml-impl.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

namespace lmggml::sched {

constexpr int kMaxCopies = 4; // pipeline copies in parallel mode (ggml's value)

// Open-addressing table keyed by tensor pointer: the backend id of every
// tensor of the graph being scheduled and, for tensors that are copied, the
// index of their copies in Sched::copy_table. Cleared at every split.
// Power-of-two capacity with a multiplicative hash: the scheduler looks
// tensors up tens of thousands of times per graph, so no division per probe.
class TensorTable {
public:
    // Makes room for n tensors at a load factor <= 1/2; clears the table.
    // False (nothing logged) when memory runs out.
    bool prepare(size_t n);
    // Empties the table in O(entries): only the slots in use are reset.
    void clear();

    // Slot of t, inserting it when absent; SIZE_MAX when the table is full.
    size_t slot(lm_ggml_tensor * t);
    // Backend id of t, or -1 when t is unknown or unassigned (no insertion).
    int backend_of(const lm_ggml_tensor * t) const;

    lm_ggml_tensor * key(size_t slot) const { return keys_[slot]; }
    int & backend(size_t slot) { return backend_[slot]; }
    int backend(size_t slot) const { return backend_[slot]; }
    int & copy_index(size_t slot) { return copy_index_[slot]; }
    int & view_slot(size_t slot) { return view_slot_[slot]; } // slot of key's view_src, -1 if none
    int view_slot(size_t slot) const { return view_slot_[slot]; }

private:
    size_t home(const lm_ggml_tensor * t) const {
        return (size_t) (((uint64_t) (uintptr_t) t * 0x9E3779B97F4A7C15ull) >> shift_);
    }
    std::vector<lm_ggml_tensor *> keys_; // (capacity) nullptr = empty
    std::vector<int> backend_;           // (capacity) backend id or -1
    std::vector<int> copy_index_;        // (capacity) first entry in copy_table or -1
    std::vector<int> view_slot_;         // (capacity) slot of the view source or -1
    std::vector<size_t> used_;           // slots in use, for clear()
    size_t mask_ = 0;
    int shift_ = 64;
};

// Stable storage for copy tensors (their addresses go into user nodes' src).
// Reused from the start at every split.
class TensorPool {
public:
    lm_ggml_tensor * take(); // zero-initialised tensor; nullptr when out of memory
    void reset() { used_ = 0; }
    bool contains(const lm_ggml_tensor * t) const;

private:
    static constexpr size_t kBlock = 256;
    std::vector<std::unique_ptr<lm_ggml_tensor[]>> blocks_;
    size_t used_ = 0;
};

// One tensor copied into a split's backend before the split runs.
struct SplitInput {
    lm_ggml_tensor * src; // the original (in another backend's memory)
    int first;            // copy_table[first + c] is pipeline copy c
};

struct Split {
    int backend_id = 0;
    int i_start = 0, i_end = 0;      // node range [i_start, i_end) of the user graph
    size_t in_begin = 0, in_end = 0; // its inputs: Sched::split_inputs[in_begin, in_end)
    lm_ggml_cgraph graph{};          // view of the user graph's nodes [i_start, i_end)
};

// A user node source pointed at a copy; re-pointed when the pipeline copy
// index moves on while the same allocated graph is computed again.
struct Rewire {
    lm_ggml_tensor * node;
    int src_index;
    int first; // copy_table[first + c]
};

} // namespace lmggml::sched

struct lm_ggml_backend_sched {
    std::vector<lm_ggml_backend_t> backends;          // priority order, CPU last
    std::vector<lm_ggml_backend_buffer_type_t> bufts; // compute buffer type per backend
    lm_ggml_gallocr_t galloc = nullptr;

    int n_copies = 1;                            // pipeline copies (4 when parallel)
    int cur_copy = 0;                            // copy used by the next evaluation
    std::vector<lm_ggml_backend_event_t> events; // (n_backends * n_copies), NULL without event support

    // user placements (set_tensor_backend), kept until sched_reset
    std::unordered_map<const lm_ggml_tensor *, int> overrides;

    // state of the last split graph
    lmggml::sched::TensorTable table;
    std::vector<int> node_slot; // (n_nodes) table slot of each node
    std::vector<int> leaf_slot; // (n_leafs)
    std::vector<int> src_slot;  // (n_nodes * LM_GGML_MAX_SRC) slot of node i's source j, -1 if none
    lmggml::sched::TensorPool pool;
    std::vector<lm_ggml_tensor *> copy_table; // (n_copied * n_backends * n_copies)
    std::vector<lmggml::sched::Split> splits;
    std::vector<lmggml::sched::SplitInput> split_inputs; // of all splits, in split order
    std::vector<lmggml::sched::Rewire> rewires;
    int rewired_copy = 0; // copy index the rewired sources point at now
    int n_inputs = 0;     // tensors copied between backends per evaluation
    // what get_n_splits / get_n_inputs report: the counts of the last graph
    // split, kept by sched_reset and sched_reserve (ggml keeps n_splits there)
    int last_n_splits = 0, last_n_inputs = 0;

    // the scheduler's graph handed to gallocr: copies first, then each split's nodes
    std::vector<lm_ggml_tensor *> graph_nodes, graph_leafs;
    std::vector<int> node_ids, leaf_ids;           // buffer (= backend) id per entry
    std::vector<int> prev_node_ids, prev_leaf_ids; // of the previous split
    lm_ggml_cgraph graph{};

    bool is_alloc = false; // the last split graph is allocated

    lm_ggml_backend_sched_eval_callback callback_eval = nullptr;
    void * callback_eval_user_data = nullptr;

    int debug = 0; // LM_GGML_SCHED_DEBUG: 1 prints splits, 2 also every node
};

namespace lmggml::sched {

// The inputs of one split.
inline std::span<const SplitInput> inputs_of(const lm_ggml_backend_sched * s, const Split & sp) {
    return {s->split_inputs.data() + sp.in_begin, sp.in_end - sp.in_begin};
}

// Backend id of `backend` in the scheduler, -1 when absent.
int backend_index(const lm_ggml_backend_sched * s, lm_ggml_backend_t backend);

// Memory a tensor lives in: its view source's buffer, else its own (or NULL).
inline lm_ggml_backend_buffer_t storage_buffer(const lm_ggml_tensor * t) {
    if (t->view_src != nullptr && t->view_src->buffer != nullptr) {
        return t->view_src->buffer;
    }
    return t->buffer;
}

// Ops that only reinterpret their source's memory: they follow their source's
// backend and never start a split.
inline bool is_view_op(lm_ggml_op op) {
    return op == LM_GGML_OP_VIEW || op == LM_GGML_OP_RESHAPE || op == LM_GGML_OP_PERMUTE || op == LM_GGML_OP_TRANSPOSE;
}

// Can backend b read the tensor in table slot `slot` where it lives, or where
// it will live once its assigned backend allocates it?
bool buffer_supported(const lm_ggml_backend_sched * s, int slot, int b);

// Fills the table and node_slot/leaf_slot/src_slot for `graph`, so later
// passes work on slot numbers instead of hashing pointers again.
bool index_graph(lm_ggml_backend_sched * s, lm_ggml_cgraph * graph);

// Passes 1-4: gives every node and leaf of `graph` a backend id in s->table.
// False (logged) when a node cannot run anywhere.
bool assign_backends(lm_ggml_backend_sched * s, lm_ggml_cgraph * graph);

// Pass 5 and graph building: splits, copy tensors, rewiring, s->graph.
// False (logged) on failure (out of memory, graph already split).
bool build_splits(lm_ggml_backend_sched * s, lm_ggml_cgraph * graph);

// Undoes the rewiring of the last split (used by sched_reserve, which must
// leave the measure graph as it found it).
void restore_sources(lm_ggml_backend_sched * s);

// Clears every per-graph state (not the overrides).
void clear_graph_state(lm_ggml_backend_sched * s);

// assign + split; false (logged) on failure.
bool split_graph(lm_ggml_backend_sched * s, lm_ggml_cgraph * graph);

// Places the scheduler's graph with gallocr, re-planning when needed.
bool alloc_splits(lm_ggml_backend_sched * s);

// Copies inputs and computes every split of the allocated graph.
lm_ggml_status compute_splits(lm_ggml_backend_sched * s);

// LM_GGML_SCHED_DEBUG output.
void print_assignments(lm_ggml_backend_sched * s, lm_ggml_cgraph * graph);

} // namespace lmggml::sched

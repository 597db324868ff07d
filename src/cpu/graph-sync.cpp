// Barrier placement for the CPU graph walk (graph-sync.h).
#include "cpu/graph-sync.h"

#include "cpu/cpu-internal.h"
#include "cpu/kernels/ew_custom.h"
#include "core/ggml-impl.h"

#include <algorithm>

namespace {

// Nodes remembered since the last barrier; past this a barrier is placed
// anyway, which bounds the planning cost per node.
constexpr int kMaxSegment = 32;

using Span = lm_cpu_span;

bool overlap(Span a, Span b) { return a.lo < b.hi && b.lo < a.hi; }

Span span_of(const lm_ggml_tensor * t) {
    if (t == nullptr || t->data == nullptr || lm_ggml_is_empty_ne(t->ne)) {
        return {};
    }
    const uintptr_t lo = (uintptr_t) t->data;
    return {lo, lo + lm_ggml_nbytes(t)};
}

int64_t max_elements(const lm_ggml_tensor * node) {
    int64_t n = lm_ggml_nelements(node);
    for (int s = 0; s < LM_GGML_MAX_SRC; ++s) {
        if (node->src[s] != nullptr) {
            n = std::max(n, lm_ggml_nelements(node->src[s]));
        }
    }
    return n;
}

// Whether b, run after a with no barrier between, could race with a.
bool conflicts(const lm_cpu_node_access & a, const lm_cpu_node_access & b) {
    if (a.solo && b.solo) {
        return false; // both on thread 0, in order
    }
    if (a.many_reads || b.many_reads) {
        return true; // ranges not all recorded
    }
    if (a.scratch && b.scratch && !(a.priv && b.priv)) {
        return true;
    }
    if (overlap(a.write, b.write)) {
        return true;
    }
    for (int i = 0; i < b.n_reads; ++i) {
        if (overlap(a.write, b.reads[i])) {
            return true; // b reads what a writes
        }
    }
    for (int i = 0; i < a.n_reads; ++i) {
        if (overlap(a.reads[i], b.write)) {
            return true; // b overwrites what a reads (memory the allocator reused)
        }
    }
    return false;
}

} // namespace

int lm_cpu_node_n_tasks(const lm_cpu_op_desc * desc, const lm_ggml_tensor * node, int n_threads) {
    if (desc->single_thread || (desc->light && max_elements(node) <= kLightNodeElements)) {
        return 1;
    }
    // a user function asks for its own count; the walk still gives a node of
    // more than one task all threads, and the kernel idles the ones past it
    const int custom = lm_cpu_custom_n_tasks(node, n_threads);
    return custom > 0 ? custom : n_threads;
}

void lm_cpu_node_access_of(const lm_ggml_tensor * node, const lm_cpu_op_desc * desc, int n_threads,
                           lm_cpu_node_access * a) {
    *a = lm_cpu_node_access{};
    if (lm_cpu_node_is_noop(node)) {
        a->noop = true;
        return;
    }
    const int n_tasks = lm_cpu_node_n_tasks(desc, node, n_threads);
    a->write = span_of(node);
    for (int s = 0; s < LM_GGML_MAX_SRC; ++s) {
        const Span r = span_of(node->src[s]);
        if (r.lo == r.hi) {
            continue;
        }
        if (a->n_reads == kMaxNodeReads) {
            a->many_reads = true;
            break;
        }
        a->reads[a->n_reads++] = r;
    }
    // OPT_STEP_ADAMW also writes two of its sources (m and v): writes not
    // recorded above, so it conflicts with every node (barriers on both sides)
    if (node->op == LM_GGML_OP_OPT_STEP_ADAMW) {
        a->many_reads = true;
    }
    if (lm_cpu_op_calls_user(node->op)) {
        // a user function may touch any memory its tensors reach (a view's
        // whole base, a source it writes): its ranges are unknown, so it is
        // fenced off from every other node
        a->many_reads = true;
    }
    a->solo = n_tasks == 1;
    a->scratch = desc->work_size != nullptr && desc->work_size(node, n_tasks) > 0;
    // a node on thread 0 alone only gets thread 0's slice (graph_walk)
    a->priv = a->solo || (desc->private_scratch != nullptr && desc->private_scratch(node, n_tasks));
}

void lm_cpu_place_barriers(const lm_cpu_node_access * access, int n_nodes, bool every_node, lm_cpu_node_sync * plan) {
    int segment[kMaxSegment]; // nodes since the last barrier
    int n_seg = 0;
    for (int i = 0; i < n_nodes; ++i) {
        const lm_cpu_node_access & a = access[i];
        if (a.noop) {
            plan[i] = {true, false};
            continue;
        }
        bool sync = every_node || n_seg == kMaxSegment;
        for (int j = 0; j < n_seg && !sync; ++j) {
            sync = conflicts(access[segment[j]], a);
        }
        if (sync) {
            n_seg = 0;
        }
        segment[n_seg++] = i;
        plan[i] = {a.solo, sync};
    }
}

void lm_cpu_plan_sync(const lm_ggml_cgraph * cgraph, int n_threads, bool every_node,
                      std::vector<lm_cpu_node_sync> & plan) {
    std::vector<lm_cpu_node_access> access((size_t) cgraph->n_nodes);
    for (int i = 0; i < cgraph->n_nodes; ++i) {
        const lm_ggml_tensor * node = cgraph->nodes[i];
        lm_cpu_node_access_of(node, lm_cpu_node_is_noop(node) ? nullptr : lm_cpu_find_op(node), n_threads,
                              &access[(size_t) i]);
    }
    plan.resize((size_t) cgraph->n_nodes);
    lm_cpu_place_barriers(access.data(), cgraph->n_nodes, every_node, plan.data());
}

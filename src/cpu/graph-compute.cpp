// The CPU graph walk: the op table, planning (threads, scratch size) and
// lm_ggml_graph_compute, which runs every node on a thread pool.
//
// Per node, every participating thread calls the op's forward(ith, nth);
// single-thread and small light ops run on thread 0 only (nth = 1). Threads
// meet at a barrier only before the nodes graph-sync.h marks (a node that
// could race with work since the last barrier). Layout ops and empty tensors
// are skipped. Thread 0 polls the abort callback after each node; the node
// index it records is read by everyone after the next barrier, so all
// threads stop at the same node.

#include "cpu/chunks.h"
#include "cpu/cpu-internal.h"
#include "cpu/graph-sync.h"
#include "cpu/plan-cache.h"
#include "cpu/repack/repack.h"
#include "cpu/threadpool.h"
#include "cpu/kernels/q_convert.h"

#include "core/ggml-impl.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <vector>

namespace {

constexpr size_t kCacheLine = 64;

lm_cpu_op_table * build_op_table() {
    static lm_cpu_op_table table; // zero-initialised: no kernels
    lm_cpu_register_elementwise_ops(&table);
    lm_cpu_register_linalg_ops(&table);
    lm_cpu_register_conv_ops(&table);
    lm_cpu_register_sequence_ops(&table);
    lm_cpu_register_custom_ops(&table);
    lm_cpu_register_backward_ops(&table);
    lm_cpu_register_quant_ops(&table); // after the element-wise family: routes block-type GET_ROWS/CPY
    return &table;
}

const char * op_label(const lm_ggml_tensor * node) {
    if (node->op == LM_GGML_OP_UNARY) {
        const int32_t u = lm_ggml_get_op_params_i32(node, 0);
        if (u >= 0 && u < LM_GGML_UNARY_OP_COUNT) {
            return lm_ggml_unary_op_name((enum lm_ggml_unary_op) u);
        }
        return "UNARY(?)";
    }
    if ((int) node->op >= 0 && node->op < LM_GGML_OP_COUNT) {
        return lm_ggml_op_name(node->op);
    }
    return "?";
}

// Shared by all threads of one lm_ggml_graph_compute call.
struct compute_state {
    const lm_ggml_cgraph * cgraph;
    uint8_t * wdata;
    size_t wsize;
    lm_cpu_chunk_slot * chunks; // one per thread (kernel.h: lm_cpu_chunks_*)
    lm_cpu_node_sync * sync;    // per node (graph-sync.h); NULL with one thread
    // Set when the threads validate the graph and place the barriers
    // themselves before the walk (prepare): access is one per node.
    bool prepare;
    bool every_node; // a barrier before every node (abort callback)
    lm_cpu_node_access * access;
    std::atomic<int> first_invalid{INT_MAX};
    bool invalid = false; // written by thread 0 between prepare's barriers
    lm_ggml_abort_callback abort_callback;
    void * abort_callback_data;
    // Index of the node after which to stop (INT_MAX: none). An index, not
    // a flag: a slow thread that checks after node i-1 while thread 0 is
    // already asking about node i must not stop one node early.
    std::atomic<int> stop_after{INT_MAX};
};

// Operands up to this size of a node thread 0 runs alone are prefetched while
// the node before it runs.
constexpr size_t kPrefetchOperandBytes = 16 * 1024;

void prefetch_tensor(const lm_ggml_tensor * t, bool write) {
    if (t == nullptr || t->data == nullptr) {
        return;
    }
    const size_t n = lm_ggml_nbytes(t);
    if (n > kPrefetchOperandBytes) {
        return;
    }
    const char * p = static_cast<const char *>(t->data);
    for (size_t b = 0; b < n; b += kCacheLine) {
        if (write) {
            __builtin_prefetch(p + b, 1, 3);
        } else {
            __builtin_prefetch(p + b, 0, 3);
        }
    }
}

// A token's small nodes (norm weights, the KV-cache rows a copy writes, the
// positions a rope reads) are cold: the weights streamed through every cache
// level since the last token. Run back to back on thread 0, each would wait
// on its own misses; so while a big node runs (a matmul, long and bound by
// bandwidth), thread 0 asks for the operands of the run of small nodes after
// it: the solo nodes, or with one thread those that would be solo with two.
bool small_node(const compute_state * st, int j) {
    if (st->sync != nullptr) {
        return st->sync[j].solo;
    }
    const lm_ggml_tensor * node = st->cgraph->nodes[j];
    return lm_cpu_node_n_tasks(lm_cpu_find_op(node), node, 2) == 1;
}

// Returns the index of the first node after i that is not small (n_nodes if
// none), so the walk need not ask again.
int prefetch_solo_run(const compute_state * st, int i) {
    for (int j = i + 1; j < st->cgraph->n_nodes; ++j) {
        const lm_ggml_tensor * next = st->cgraph->nodes[j];
        if (lm_cpu_node_is_noop(next)) {
            continue;
        }
        if (!small_node(st, j)) {
            return j;
        }
        for (int s = 0; s < LM_GGML_MAX_SRC; ++s) {
            prefetch_tensor(next->src[s], false);
        }
        prefetch_tensor(next, true);
    }
    return st->cgraph->n_nodes;
}

// A thread that reaches the barrier before a matrix x vector node early
// (the others still run small nodes) spends the wait fetching the start of
// its own share of the weight rows into its L2, up to this many bytes: the
// memory bus is otherwise idle while thread 0 runs the solo nodes.
constexpr size_t kIdlePrefetchBytes = 256 * 1024;

struct IdlePrefetch {
    const char * next;
    const char * end;
};

bool idle_prefetch(void * ctx) {
    auto * pf = static_cast<IdlePrefetch *>(ctx);
    for (int k = 0; k < 16 && pf->next < pf->end; ++k, pf->next += kCacheLine) {
        __builtin_prefetch(pf->next, 0, 2);
    }
    return pf->next < pf->end;
}

// The range thread ith would prefetch while waiting before node; false: none.
bool idle_prefetch_range(const lm_ggml_tensor * node, int ith, int nth, IdlePrefetch * pf) {
    const lm_ggml_tensor * w = node->src[0];
    if (node->op != LM_GGML_OP_MUL_MAT || node->src[1]->ne[1] > 8 || w->ne[2] * w->ne[3] != 1) {
        return false;
    }
    // the chunked walks start each thread at its even share of the rows
    const int64_t r0 = w->ne[1] * ith / nth, r1 = w->ne[1] * (ith + 1) / nth;
    const char * p = static_cast<const char *>(w->data);
    pf->next = p + (size_t) r0 * w->nb[1];
    pf->end = p + std::min((size_t) r1 * w->nb[1], (size_t) r0 * w->nb[1] + kIdlePrefetchBytes);
    return true;
}

bool validate_node(const lm_ggml_tensor * node, int i, bool log);

// Validation and barrier placement, shared by the threads instead of done
// by the caller before the walk while the workers spin: each thread checks
// its slice of the nodes and records what they touch, then thread 0 places
// the barriers (or reports the first invalid node). True: walk the graph.
bool prepare(compute_state * st, int ith, int nth, lm_cpu_barrier * barrier) {
    const int n = st->cgraph->n_nodes;
    const int begin = (int) ((int64_t) n * ith / nth), end = (int) ((int64_t) n * (ith + 1) / nth);
    for (int i = begin; i < end; ++i) {
        const lm_ggml_tensor * node = st->cgraph->nodes[i];
        if (!validate_node(node, i, false)) {
            int seen = st->first_invalid.load(std::memory_order_relaxed);
            while (i < seen && !st->first_invalid.compare_exchange_weak(seen, i, std::memory_order_relaxed)) {
            }
            break; // the first invalid node of this slice is the one that counts
        }
        lm_cpu_node_access_of(node, lm_cpu_node_is_noop(node) ? nullptr : lm_cpu_find_op(node), nth, &st->access[i]);
    }
    if (nth > 1) {
        barrier->wait();
    }
    if (ith == 0) {
        const int bad = st->first_invalid.load(std::memory_order_relaxed);
        if (bad != INT_MAX) {
            validate_node(st->cgraph->nodes[bad], bad, true); // says why
            st->invalid = true;
        } else {
            lm_cpu_place_barriers(st->access, n, st->every_node, st->sync);
        }
    }
    if (nth > 1) {
        barrier->wait();
    }
    return !st->invalid;
}

void graph_walk(void * ctx, int ith, int nth, lm_cpu_barrier * barrier) noexcept {
    compute_state * st = static_cast<compute_state *>(ctx);
    lm_cpu_params params = {ith, nth, st->wsize, st->wdata, barrier, st->chunks, 0};
    // a node on thread 0 alone gets thread 0's slice of the scratch, so it
    // never touches the slices other threads' nodes may be using meanwhile
    const size_t slice0 = nth > 1 ? lm_cpu_scratch_slice(st->wsize, nth) : st->wsize;
    const lm_cpu_params solo = {0, 1, slice0, st->wdata, barrier, nullptr, 0};
    if (st->prepare && !prepare(st, ith, nth, barrier)) {
        return;
    }
    int next_big = -1; // thread 0: the nodes between a big node and next_big are small

    for (int i = 0; i < st->cgraph->n_nodes; i++) {
        lm_ggml_tensor * node = st->cgraph->nodes[i];
        if (lm_cpu_node_is_noop(node)) {
            continue;
        }
        const bool on_one = nth == 1 || st->sync[i].solo;
        const bool at_barrier = nth > 1 && st->sync[i].sync_before;
        if (at_barrier) {
            IdlePrefetch pf;
            if (!on_one && idle_prefetch_range(node, ith, nth, &pf)) {
                barrier->wait(idle_prefetch, &pf); // also publishes stop_after
            } else {
                barrier->wait();
            }
        }
        if ((nth == 1 || at_barrier) && st->stop_after.load(std::memory_order_relaxed) < i) {
            break;
        }
        const lm_cpu_op_desc * desc = lm_cpu_find_op(node); // validated before the walk
        params.node_seq = (uint32_t) i + 1;
        if (ith == 0) {
            const bool big = nth > 1 ? !on_one : i == next_big || (i > next_big && !small_node(st, i));
            if (big) {
                next_big = prefetch_solo_run(st, i);
            }
        }
        if (on_one) {
            if (ith == 0) {
                desc->forward(&solo, node);
            }
        } else {
            desc->forward(&params, node);
        }
        if (ith == 0 && st->abort_callback && st->abort_callback(st->abort_callback_data) &&
            st->stop_after.load(std::memory_order_relaxed) == INT_MAX) {
            st->stop_after.store(i, std::memory_order_relaxed);
        }
    }
}

// Whether node i can be computed; log: say why not (one line).
bool validate_node(const lm_ggml_tensor * node, int i, bool log) {
    if (node == nullptr) {
        if (log) {
            LM_GGML_LOG_ERROR("lm_ggml_graph_compute: node %d: is NULL\n", i);
        }
        return false;
    }
    if (lm_cpu_node_is_noop(node)) {
        return true;
    }
    const lm_cpu_op_desc * desc = lm_cpu_find_op(node);
    if (desc == nullptr || desc->forward == nullptr) {
        if (log) {
            LM_GGML_LOG_ERROR("lm_ggml_graph_compute: node %d '%s': op %s has no CPU kernel\n", i, node->name,
                              op_label(node));
        }
        return false;
    }
    if (desc->supports != nullptr && !desc->supports(node)) {
        if (log) {
            LM_GGML_LOG_ERROR("lm_ggml_graph_compute: node %d '%s': op %s does not support type %s on CPU\n", i,
                              node->name, op_label(node), lm_ggml_type_name(node->type));
        }
        return false;
    }
    if (!lm_cpu_repack_op_ok(node)) {
        if (log) {
            LM_GGML_LOG_ERROR(
                "lm_ggml_graph_compute: node %d '%s': op %s cannot read a repacked (CPU_REPACK) tensor this way\n", i,
                node->name, op_label(node));
        }
        return false;
    }
    if (node->data == nullptr) {
        if (log) {
            LM_GGML_LOG_ERROR("lm_ggml_graph_compute: node %d '%s': tensor has no data (not allocated)\n", i,
                              node->name);
        }
        return false;
    }
    if (node->buffer != nullptr && !lm_ggml_backend_buffer_is_host(node->buffer)) {
        if (log) {
            LM_GGML_LOG_ERROR("lm_ggml_graph_compute: node %d '%s': tensor is not in host memory (buffer %s)\n", i,
                              node->name, lm_ggml_backend_buffer_name(node->buffer));
        }
        return false;
    }
    for (int s = 0; s < LM_GGML_MAX_SRC; s++) {
        const lm_ggml_tensor * src = node->src[s];
        if (src == nullptr) {
            continue;
        }
        if (src->data == nullptr && !lm_ggml_is_empty_ne(src->ne)) {
            if (log) {
                LM_GGML_LOG_ERROR("lm_ggml_graph_compute: node %d '%s': src[%d] '%s' has no data (not allocated)\n", i,
                                  node->name, s, src->name);
            }
            return false;
        }
        if (src->buffer != nullptr && !lm_cpu_buft_readable(src->buffer->buft)) {
            if (log) {
                LM_GGML_LOG_ERROR(
                    "lm_ggml_graph_compute: node %d '%s': src[%d] '%s' is not in host memory (buffer %s)\n", i,
                    node->name, s, src->name, lm_ggml_backend_buffer_name(src->buffer));
            }
            return false;
        }
    }
    return true;
}

// Every node must be computable before any runs: no partial results.
bool validate_graph(const lm_ggml_cgraph * cgraph) {
    for (int i = 0; i < cgraph->n_nodes; i++) {
        if (!validate_node(cgraph->nodes[i], i, true)) {
            return false;
        }
    }
    return true;
}

enum lm_ggml_status run_graph(compute_state & st, lm_ggml_threadpool * pool, int n_threads) {
    if (pool != nullptr) {
        return lm_cpu_threadpool_run(pool, n_threads, graph_walk, &st);
    }
    if (n_threads == 1) { // no pool needed: run on the calling thread
        lm_cpu_barrier solo_barrier;
        graph_walk(&st, 0, 1, &solo_barrier);
        return LM_GGML_STATUS_SUCCESS;
    }
    // No pool given: a disposable one for this call, as ggml does.
    lm_ggml_threadpool_params tpp = lm_ggml_threadpool_params_default(n_threads);
    lm_ggml_threadpool * tmp = lm_ggml_threadpool_new(&tpp);
    if (tmp == nullptr) {
        return LM_GGML_STATUS_ALLOC_FAILED;
    }
    const enum lm_ggml_status status = lm_cpu_threadpool_run(tmp, n_threads, graph_walk, &st);
    lm_ggml_threadpool_free(tmp);
    return status;
}

} // namespace

// ---------------------------------------------------------------- op table

const struct lm_cpu_op_table * lm_cpu_get_op_table(void) {
    static const lm_cpu_op_table * table = build_op_table(); // once, thread-safe
    return table;
}

bool lm_cpu_is_layout_op(enum lm_ggml_op op) {
    return op == LM_GGML_OP_NONE || op == LM_GGML_OP_RESHAPE || op == LM_GGML_OP_VIEW || op == LM_GGML_OP_PERMUTE ||
           op == LM_GGML_OP_TRANSPOSE;
}

bool lm_cpu_node_is_noop(const struct lm_ggml_tensor * node) {
    return lm_cpu_is_layout_op(node->op) || lm_ggml_is_empty_ne(node->ne);
}

const struct lm_cpu_op_desc * lm_cpu_find_op(const struct lm_ggml_tensor * node) {
    const lm_cpu_op_table * table = lm_cpu_get_op_table();
    if ((int) node->op < 0 || node->op >= LM_GGML_OP_COUNT) {
        return nullptr;
    }
    if (node->op == LM_GGML_OP_UNARY) {
        const int32_t u = lm_ggml_get_op_params_i32(node, 0);
        if (u < 0 || u >= LM_GGML_UNARY_OP_COUNT) {
            return nullptr;
        }
        return &table->unary[u];
    }
    return &table->ops[node->op];
}

bool lm_cpu_buft_readable(lm_ggml_backend_buffer_type_t buft) {
    return lm_ggml_backend_buft_is_host(buft) || buft == lm_cpu_repack_buffer_type();
}

bool lm_cpu_can_compute(const struct lm_ggml_tensor * node) {
    if (lm_cpu_is_layout_op(node->op)) {
        return true;
    }
    if (!lm_cpu_repack_op_ok(node)) {
        return false;
    }
    const lm_cpu_op_desc * desc = lm_cpu_find_op(node);
    if (desc == nullptr || desc->forward == nullptr) {
        return false;
    }
    return desc->supports == nullptr || desc->supports(node);
}

void lm_cpu_barrier_wait(const struct lm_cpu_params * params) {
    if (params->nth > 1) {
        params->barrier->wait();
    }
}

bool lm_cpu_validate_node(const lm_ggml_tensor * node, int i, bool log) { return validate_node(node, i, log); }

void lm_cpu_node_plan(const lm_ggml_tensor * node, int n_threads, int * n_tasks, size_t * work) {
    *n_tasks = 1;
    *work = 0;
    const lm_cpu_op_desc * desc = lm_cpu_find_op(node);
    if (desc == nullptr || desc->forward == nullptr) {
        return; // reported by lm_ggml_graph_compute
    }
    *n_tasks = lm_cpu_node_n_tasks(desc, node, n_threads);
    if (desc->work_size != nullptr) {
        // a node on one thread of several works in thread 0's slice (graph_walk)
        *work = desc->work_size(node, *n_tasks) * (*n_tasks == 1 ? (size_t) n_threads : 1);
    }
}

// ---------------------------------------------------------------- public API

struct lm_ggml_cplan lm_ggml_graph_plan(const struct lm_ggml_cgraph * cgraph, int n_threads,
                                        struct lm_ggml_threadpool * threadpool) {
    lm_ggml_cplan cplan;
    memset(&cplan, 0, sizeof(cplan));
    if (cgraph == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_graph_plan: cgraph is NULL\n");
        return cplan; // n_threads 0: lm_ggml_graph_compute refuses it
    }
    if (n_threads <= 0) {
        n_threads = threadpool ? lm_ggml_threadpool_get_n_threads(threadpool) : LM_GGML_DEFAULT_N_THREADS;
    }

    size_t work_size = 0;
    int max_tasks = 1;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const lm_ggml_tensor * node = cgraph->nodes[i];
        if (node == nullptr || lm_cpu_node_is_noop(node)) {
            continue;
        }
        int n_tasks = 1;
        size_t cur = 0;
        lm_cpu_node_plan(node, n_threads, &n_tasks, &cur);
        max_tasks = n_tasks > max_tasks ? n_tasks : max_tasks;
        work_size = cur > work_size ? cur : work_size;
    }
    if (work_size > 0) {
        // room to align the start to a cache line, and per-thread padding
        // for kernels that give each thread its own slice
        work_size += kCacheLine * (size_t) n_threads;
    }

    cplan.threadpool = threadpool;
    cplan.n_threads = max_tasks < n_threads ? max_tasks : n_threads;
    cplan.work_size = work_size;
    cplan.work_data = nullptr;
    return cplan;
}

enum lm_ggml_status lm_ggml_graph_compute(struct lm_ggml_cgraph * cgraph, struct lm_ggml_cplan * cplan) {
    return lm_cpu_graph_compute_planned(cgraph, cplan, false, nullptr, nullptr);
}

enum lm_ggml_status lm_cpu_graph_compute_planned(lm_ggml_cgraph * cgraph, lm_ggml_cplan * cplan, bool known,
                                                 const lm_cpu_node_sync * known_sync, lm_cpu_plan_out * out) {
    if (cgraph == nullptr || cplan == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_graph_compute: %s is NULL\n", cgraph == nullptr ? "cgraph" : "cplan");
        return LM_GGML_STATUS_FAILED;
    }
    if (cplan->n_threads <= 0) {
        LM_GGML_LOG_ERROR("lm_ggml_graph_compute: cplan: n_threads is %d, must be >= 1 (use lm_ggml_graph_plan)\n",
                          cplan->n_threads);
        return LM_GGML_STATUS_FAILED;
    }
    if (cplan->work_size > 0 && cplan->work_data == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_graph_compute: cplan: work_size is %zu but work_data is NULL "
                          "(allocate work_size bytes, or use lm_ggml_graph_compute_with_ctx)\n",
                          cplan->work_size);
        return LM_GGML_STATUS_FAILED;
    }
    try {
        lm_ggml_cpu_init();
        const bool threads = cplan->n_threads > 1;
        if (known && threads && known_sync == nullptr) {
            LM_GGML_LOG_ERROR("lm_ggml_graph_compute: a known graph on %d threads needs its barrier plan\n",
                              cplan->n_threads);
            return LM_GGML_STATUS_FAILED;
        }
        // with several threads and no known plan, the threads validate and
        // place the barriers themselves (prepare); with one, it is done here
        const bool prepare = threads && !known;
        if (!threads && !known && !validate_graph(cgraph)) {
            return LM_GGML_STATUS_FAILED;
        }

        std::unique_ptr<lm_cpu_chunk_slot[]> chunks(new lm_cpu_chunk_slot[(size_t) cplan->n_threads]);
        lm_cpu_plan_out own;
        lm_cpu_plan_out & made = out != nullptr ? *out : own;
        made.sync.clear();
        made.access.clear();
        if (prepare) {
            made.sync.resize((size_t) cgraph->n_nodes);
            made.access.resize((size_t) cgraph->n_nodes);
        }
        compute_state st;
        st.chunks = chunks.get();
        // the walk only reads the plan; prepare writes the one it makes
        st.sync = known ? const_cast<lm_cpu_node_sync *>(known_sync) : (prepare ? made.sync.data() : nullptr);
        st.prepare = prepare;
        // with an abort callback, a barrier before every node: no node
        // after the one it stopped at may run, on any thread
        st.every_node = cplan->abort_callback != nullptr;
        st.access = prepare ? made.access.data() : nullptr;
        st.cgraph = cgraph;
        st.wdata = nullptr;
        st.wsize = 0;
        if (cplan->work_size > 0) {
            // kernels get a cache-line aligned start; the plan's padding pays for it
            const uintptr_t raw = (uintptr_t) cplan->work_data;
            const uintptr_t aligned = (raw + kCacheLine - 1) & ~(uintptr_t) (kCacheLine - 1);
            const size_t skip = (size_t) (aligned - raw);
            st.wdata = (uint8_t *) aligned;
            st.wsize = cplan->work_size > skip ? cplan->work_size - skip : 0;
        }
        st.abort_callback = cplan->abort_callback;
        st.abort_callback_data = cplan->abort_callback_data;

        const enum lm_ggml_status status = run_graph(st, cplan->threadpool, cplan->n_threads);
        if (status != LM_GGML_STATUS_SUCCESS) {
            return status;
        }
        if (st.invalid) {
            return LM_GGML_STATUS_FAILED;
        }
        return st.stop_after.load() != INT_MAX ? LM_GGML_STATUS_ABORTED : LM_GGML_STATUS_SUCCESS;
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_ggml_graph_compute: out of memory\n");
        return LM_GGML_STATUS_ALLOC_FAILED;
    } catch (const std::exception & e) {
        LM_GGML_LOG_ERROR("lm_ggml_graph_compute: %s\n", e.what());
        return LM_GGML_STATUS_FAILED;
    }
}

// The work buffer comes from ctx's arena (lm_ggml_new_buffer), so ctx needs
// room for it; it lives as long as ctx.
enum lm_ggml_status lm_ggml_graph_compute_with_ctx(struct lm_ggml_context * ctx, struct lm_ggml_cgraph * cgraph,
                                                   int n_threads) {
    if (ctx == nullptr || cgraph == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_graph_compute_with_ctx: %s is NULL\n", ctx == nullptr ? "ctx" : "cgraph");
        return LM_GGML_STATUS_FAILED;
    }
    lm_ggml_cplan cplan = lm_ggml_graph_plan(cgraph, n_threads, nullptr);
    if (cplan.work_size > 0) {
        cplan.work_data = (uint8_t *) lm_ggml_new_buffer(ctx, cplan.work_size);
        if (cplan.work_data == nullptr) {
            LM_GGML_LOG_ERROR("lm_ggml_graph_compute_with_ctx: ctx: no room for a %zu-byte work buffer\n",
                              cplan.work_size);
            return LM_GGML_STATUS_ALLOC_FAILED;
        }
    }
    return lm_ggml_graph_compute(cgraph, &cplan);
}

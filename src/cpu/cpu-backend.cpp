// The CPU backend (stream): owns its thread pool and work buffer and computes
// graphs with lm_ggml_graph_compute. Plugs in through the seed's
// lm_ggml_backend_i like any other backend.
//
// Threads: unless the application hands in its own pool
// (lm_ggml_backend_cpu_set_threadpool), the backend creates a pool of
// n_threads workers on first use and keeps it across graphs; changing
// n_threads replaces it at the next compute.

#include "cpu/cpu-internal.h"
#include "cpu/plan-cache.h"
#include "cpu/threadpool.h"

#include "core/ggml-impl.h"
#include "ggml-cpu.h"

#include <new>

namespace {

struct cpu_backend_context {
    int n_threads = LM_GGML_DEFAULT_N_THREADS;
    lm_ggml_threadpool * user_pool = nullptr; // set by the application, not owned
    lm_ggml_threadpool * own_pool = nullptr;  // owned; n_threads workers
    uint8_t * work_data = nullptr;            // owned, grows to the largest plan
    size_t work_size = 0;
    lm_ggml_abort_callback abort_callback = nullptr;
    void * abort_callback_data = nullptr;
    lm_cpu_plan_cache last; // the last graph computed (plan-cache.h)
};

// A plan keeps a shallow copy of the graph (the caller keeps the nodes alive)
// and its own work buffer.
struct cpu_plan {
    lm_ggml_cplan cplan;
    lm_ggml_cgraph cgraph;
};

lm_ggml_guid_t cpu_guid() {
    static lm_ggml_guid guid = {0xaa, 0x67, 0xc7, 0x43, 0x96, 0xe6, 0xa3, 0x8a,
                                0xe3, 0xaf, 0xea, 0x92, 0x36, 0xbc, 0xfc, 0x89};
    return &guid;
}

cpu_backend_context * context_of(lm_ggml_backend_t backend) {
    return static_cast<cpu_backend_context *>(backend->context);
}

// The pool to run on and the thread count to plan with. *status is set to
// ALLOC_FAILED when a needed pool cannot be created.
lm_ggml_threadpool * acquire_pool(cpu_backend_context * ctx, int * n_threads, enum lm_ggml_status * status) {
    *status = LM_GGML_STATUS_SUCCESS;
    if (ctx->user_pool != nullptr) {
        const int max = lm_ggml_threadpool_get_n_threads(ctx->user_pool);
        *n_threads = ctx->n_threads < max ? ctx->n_threads : max;
        return ctx->user_pool;
    }
    *n_threads = ctx->n_threads;
    if (ctx->n_threads <= 1) {
        lm_ggml_threadpool_free(ctx->own_pool); // runs on the calling thread: no idle workers kept
        ctx->own_pool = nullptr;
        return nullptr;
    }
    if (ctx->own_pool != nullptr && lm_ggml_threadpool_get_n_threads(ctx->own_pool) == ctx->n_threads) {
        return ctx->own_pool;
    }
    lm_ggml_threadpool_free(ctx->own_pool);
    lm_ggml_threadpool_params params = lm_ggml_threadpool_params_default(ctx->n_threads);
    ctx->own_pool = lm_ggml_threadpool_new(&params);
    if (ctx->own_pool == nullptr) {
        *status = LM_GGML_STATUS_ALLOC_FAILED;
    }
    return ctx->own_pool;
}

const char * cpu_backend_get_name(lm_ggml_backend_t backend) {
    (void) backend;
    return "CPU";
}

void cpu_backend_free(lm_ggml_backend_t backend) {
    cpu_backend_context * ctx = context_of(backend);
    lm_ggml_threadpool_free(ctx->own_pool);
    delete[] ctx->work_data;
    delete ctx;
    delete backend;
}

lm_ggml_backend_graph_plan_t cpu_backend_graph_plan_create(lm_ggml_backend_t backend,
                                                           const struct lm_ggml_cgraph * cgraph) {
    cpu_backend_context * ctx = context_of(backend);
    if (cgraph == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_graph_plan_create: CPU: cgraph is NULL\n");
        return nullptr;
    }
    enum lm_ggml_status status;
    int n_threads = 0;
    lm_ggml_threadpool * pool = acquire_pool(ctx, &n_threads, &status);
    if (status != LM_GGML_STATUS_SUCCESS) {
        return nullptr;
    }
    cpu_plan * plan = new (std::nothrow) cpu_plan;
    if (plan == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_graph_plan_create: CPU: out of memory\n");
        return nullptr;
    }
    plan->cplan = lm_ggml_graph_plan(cgraph, n_threads, pool);
    plan->cgraph = *cgraph;
    if (plan->cplan.work_size > 0) {
        plan->cplan.work_data = new (std::nothrow) uint8_t[plan->cplan.work_size];
        if (plan->cplan.work_data == nullptr) {
            LM_GGML_LOG_ERROR("lm_ggml_backend_graph_plan_create: CPU: cannot allocate a %zu-byte work buffer\n",
                              plan->cplan.work_size);
            delete plan;
            return nullptr;
        }
    }
    return plan;
}

void cpu_backend_graph_plan_free(lm_ggml_backend_t backend, lm_ggml_backend_graph_plan_t plan) {
    (void) backend;
    cpu_plan * p = static_cast<cpu_plan *>(plan);
    if (p == nullptr) {
        return;
    }
    delete[] p->cplan.work_data;
    delete p;
}

// The pool and abort callback are taken from the backend at compute time, so
// set_n_threads / set_threadpool / set_abort_callback apply to existing plans.
enum lm_ggml_status cpu_backend_graph_plan_compute(lm_ggml_backend_t backend, lm_ggml_backend_graph_plan_t plan) {
    cpu_backend_context * ctx = context_of(backend);
    cpu_plan * p = static_cast<cpu_plan *>(plan);
    if (p == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_graph_plan_compute: CPU: plan is NULL\n");
        return LM_GGML_STATUS_FAILED;
    }
    enum lm_ggml_status status;
    int n_threads = 0;
    lm_ggml_threadpool * pool = acquire_pool(ctx, &n_threads, &status);
    if (status != LM_GGML_STATUS_SUCCESS) {
        return status;
    }
    lm_ggml_cplan cplan = p->cplan;
    cplan.threadpool = pool;
    if (pool == nullptr) {
        cplan.n_threads = 1;
    } else if (cplan.n_threads > n_threads) {
        cplan.n_threads = n_threads; // fewer threads than planned: the buffer is big enough
    }
    cplan.abort_callback = ctx->abort_callback;
    cplan.abort_callback_data = ctx->abort_callback_data;
    return lm_ggml_graph_compute(&p->cgraph, &cplan);
}

// Grows the backend's work buffer to at least size bytes; false: out of memory.
bool reserve_work(cpu_backend_context * ctx, size_t size) {
    if (size <= ctx->work_size) {
        return true;
    }
    delete[] ctx->work_data;
    ctx->work_data = new (std::nothrow) uint8_t[size];
    if (ctx->work_data == nullptr) {
        ctx->work_size = 0;
        LM_GGML_LOG_ERROR("lm_ggml_backend_graph_compute: CPU: cannot allocate a %zu-byte work buffer\n", size);
        return false;
    }
    ctx->work_size = size;
    return true;
}

// The graph computed last time again, maybe with a few nodes moved (a
// generation step): its plan is reused (plan-cache.h).
enum lm_ggml_status cpu_backend_graph_compute(lm_ggml_backend_t backend, struct lm_ggml_cgraph * cgraph) {
    cpu_backend_context * ctx = context_of(backend);
    enum lm_ggml_status status;
    int n_threads = 0;
    lm_ggml_threadpool * pool = acquire_pool(ctx, &n_threads, &status);
    if (status != LM_GGML_STATUS_SUCCESS) {
        return status;
    }
    const bool every_node = ctx->abort_callback != nullptr;
    bool known = false;
    try {
        known = lm_cpu_plan_cache_update(ctx->last, cgraph, n_threads, every_node);
    } catch (const std::bad_alloc &) {
        known = false;
    }
    if (!known) {
        lm_cpu_plan_cache_clear(ctx->last);
    }
    lm_ggml_cplan cplan =
        known ? lm_cpu_plan_cache_cplan(ctx->last, pool) : lm_ggml_graph_plan(cgraph, n_threads, pool);
    if (!reserve_work(ctx, cplan.work_size)) {
        return LM_GGML_STATUS_ALLOC_FAILED;
    }
    cplan.work_data = ctx->work_data;
    cplan.work_size = ctx->work_size > cplan.work_size ? ctx->work_size : cplan.work_size;
    cplan.abort_callback = ctx->abort_callback;
    cplan.abort_callback_data = ctx->abort_callback_data;
    if (known) {
        return lm_cpu_graph_compute_planned(cgraph, &cplan, true,
                                            ctx->last.sync.empty() ? nullptr : ctx->last.sync.data(), nullptr);
    }
    const bool remember = cgraph != nullptr && lm_cpu_plan_cache_seen_twice(ctx->last, cgraph);
    lm_cpu_plan_out made;
    status = lm_cpu_graph_compute_planned(cgraph, &cplan, false, nullptr, remember ? &made : nullptr);
    if (remember && status == LM_GGML_STATUS_SUCCESS) {
        try {
            lm_cpu_plan_cache_store(ctx->last, cgraph, n_threads, every_node, std::move(made.sync),
                                    std::move(made.access));
        } catch (const std::bad_alloc &) {
            lm_cpu_plan_cache_clear(ctx->last); // no memory to remember it: plan again next time
        }
    }
    return status;
}

constexpr struct lm_ggml_backend_i cpu_backend_iface = {
    .get_name = cpu_backend_get_name,
    .free = cpu_backend_free,
    .set_tensor_async = nullptr, // synchronous backend: the wrappers fall back to set/get
    .get_tensor_async = nullptr,
    .cpy_tensor_async = nullptr,
    .synchronize = nullptr,
    .graph_plan_create = cpu_backend_graph_plan_create,
    .graph_plan_free = cpu_backend_graph_plan_free,
    .graph_plan_update = nullptr,
    .graph_plan_compute = cpu_backend_graph_plan_compute,
    .graph_compute = cpu_backend_graph_compute,
    .event_record = nullptr,
    .event_wait = nullptr,
};

// Setters take any backend; a non-CPU one is reported and ignored.
cpu_backend_context * checked_context(lm_ggml_backend_t backend, const char * fn) {
    if (!lm_ggml_backend_is_cpu(backend)) {
        LM_GGML_LOG_ERROR("%s: backend: %s\n", fn, backend == nullptr ? "is NULL" : "is not a CPU backend");
        return nullptr;
    }
    return context_of(backend);
}

} // namespace

// Ownership: the caller frees the backend with lm_ggml_backend_free.
lm_ggml_backend_t lm_ggml_backend_cpu_init(void) {
    lm_ggml_cpu_init(); // feature detection and op table now, not in the first graph
    cpu_backend_context * ctx = new (std::nothrow) cpu_backend_context;
    lm_ggml_backend * backend = new (std::nothrow) lm_ggml_backend{
        .guid = cpu_guid(),
        .iface = cpu_backend_iface,
        .device = lm_cpu_device(),
        .context = ctx,
    };
    if (ctx == nullptr || backend == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_cpu_init: out of memory\n");
        delete ctx;
        delete backend;
        return nullptr;
    }
    return backend;
}

bool lm_ggml_backend_is_cpu(lm_ggml_backend_t backend) {
    return backend != nullptr && backend->guid != nullptr && lm_ggml_guid_matches(backend->guid, cpu_guid());
}

void lm_ggml_backend_cpu_set_n_threads(lm_ggml_backend_t backend_cpu, int n_threads) {
    cpu_backend_context * ctx = checked_context(backend_cpu, "lm_ggml_backend_cpu_set_n_threads");
    if (ctx == nullptr) {
        return;
    }
    if (n_threads < 1 || n_threads > LM_GGML_MAX_N_THREADS) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_cpu_set_n_threads: n_threads: %d, must be in [1, %d]\n", n_threads,
                          LM_GGML_MAX_N_THREADS);
        return;
    }
    ctx->n_threads = n_threads;
}

// The pool stays owned by the caller and must outlive its use by this backend
// (until it is replaced here or the backend is freed). NULL returns to the
// backend's own pool. A pool being replaced is paused, so it stops polling.
void lm_ggml_backend_cpu_set_threadpool(lm_ggml_backend_t backend_cpu, lm_ggml_threadpool_t threadpool) {
    cpu_backend_context * ctx = checked_context(backend_cpu, "lm_ggml_backend_cpu_set_threadpool");
    if (ctx == nullptr) {
        return;
    }
    if (ctx->user_pool != nullptr && ctx->user_pool != threadpool) {
        lm_ggml_threadpool_pause(ctx->user_pool);
    }
    ctx->user_pool = threadpool;
}

// The callback is polled by the computing thread after every node; returning
// true stops the graph and makes the compute return LM_GGML_STATUS_ABORTED.
void lm_ggml_backend_cpu_set_abort_callback(lm_ggml_backend_t backend_cpu, lm_ggml_abort_callback abort_callback,
                                            void * abort_callback_data) {
    cpu_backend_context * ctx = checked_context(backend_cpu, "lm_ggml_backend_cpu_set_abort_callback");
    if (ctx == nullptr) {
        return;
    }
    ctx->abort_callback = abort_callback;
    ctx->abort_callback_data = abort_callback_data;
}

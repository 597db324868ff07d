// Public entry points of the multi-device scheduler (lm_ggml_backend_sched_*).
// Ownership: sched_new returns a scheduler the caller frees with sched_free;
// the backends (and buffer types) passed in stay owned by the caller and must
// outlive the scheduler. A graph given to alloc/compute is rewired in place
// (its nodes read the scheduler's copies) and its tensors point into the
// scheduler's compute buffers until the next allocation: such a graph can be
// computed again as often as wanted, but not split again - after
// sched_reset, build a new graph (sched_reserve leaves its graph untouched).

#include "backend/sched/sched-internal.h"
#include "backend/backend-internal.h"

#include <cstdlib>
#include <exception>
#include <new>

using lmggml::sched::backend_index;

namespace {

bool is_cpu_backend(lm_ggml_backend_t backend) {
    lm_ggml_backend_dev_t dev = backend->device;
    return dev != nullptr && lm_ggml_backend_dev_type(dev) == LM_GGML_BACKEND_DEVICE_TYPE_CPU;
}

void sync_all(lm_ggml_backend_sched * s) {
    for (lm_ggml_backend_t b : s->backends) lm_ggml_backend_synchronize(b);
}

// one event per pipeline copy on devices that have events (NULL otherwise:
// the scheduler then synchronizes instead of waiting)
void create_events(lm_ggml_backend_sched * s) {
    s->events.assign(s->backends.size() * (size_t) s->n_copies, nullptr);
    for (size_t b = 0; b < s->backends.size(); b++) {
        lm_ggml_backend_dev_t dev = s->backends[b]->device;
        if (dev == nullptr) continue;
        lm_ggml_backend_dev_props props{};
        lm_ggml_backend_dev_get_props(dev, &props);
        if (!props.caps.events) continue;
        for (int c = 0; c < s->n_copies; c++) {
            s->events[b * (size_t) s->n_copies + (size_t) c] = lm_ggml_backend_event_new(dev);
        }
    }
}

void destroy(lm_ggml_backend_sched * s) {
    for (lm_ggml_backend_event_t ev : s->events) lm_ggml_backend_event_free(ev);
    lm_ggml_gallocr_free(s->galloc);
    delete s;
}

bool alloc_graph_impl(lm_ggml_backend_sched * s, lm_ggml_cgraph * graph, lm_ggml_status * why) {
    if (!lmggml::sched::split_graph(s, graph)) {
        *why = LM_GGML_STATUS_FAILED;
        return false;
    }
    if (!lmggml::sched::alloc_splits(s)) {
        *why = LM_GGML_STATUS_ALLOC_FAILED;
        s->is_alloc = false;
        return false;
    }
    s->is_alloc = true;
    return true;
}

} // namespace

int lmggml::sched::backend_index(const lm_ggml_backend_sched * s, lm_ggml_backend_t backend) {
    for (size_t i = 0; i < s->backends.size(); i++) {
        if (s->backends[i] == backend) return static_cast<int>(i);
    }
    return -1;
}

lm_ggml_backend_sched_t lm_ggml_backend_sched_new(lm_ggml_backend_t * backends, lm_ggml_backend_buffer_type_t * bufts,
                                                  int n_backends, size_t graph_size, bool parallel) {
    LMGGML_CHECK_ARG(backends, nullptr);
    if (n_backends <= 0) {
        LM_GGML_LOG_ERROR("%s: n_backends is %d, need at least one backend (the CPU, last)\n", __func__, n_backends);
        return nullptr;
    }
    for (int b = 0; b < n_backends; b++) {
        if (backends[b] == nullptr) {
            LM_GGML_LOG_ERROR("%s: backend %d is NULL\n", __func__, b);
            return nullptr;
        }
        for (int o = 0; o < b; o++) {
            if (backends[o] == backends[b]) {
                LM_GGML_LOG_ERROR("%s: backend %s is listed twice (%d and %d)\n", __func__,
                                  lm_ggml_backend_name(backends[b]), o, b);
                return nullptr;
            }
        }
    }
    if (!is_cpu_backend(backends[n_backends - 1])) {
        LM_GGML_LOG_ERROR("%s: the last backend must be the CPU, got %s\n", __func__,
                          lm_ggml_backend_name(backends[n_backends - 1]));
        return nullptr;
    }
    lm_ggml_backend_sched * s = nullptr;
    try {
        s = new lm_ggml_backend_sched();
        s->n_copies = parallel ? lmggml::sched::kMaxCopies : 1;
        for (int b = 0; b < n_backends; b++) {
            lm_ggml_backend_buffer_type_t buft =
                (bufts && bufts[b]) ? bufts[b] : lm_ggml_backend_get_default_buffer_type(backends[b]);
            if (buft == nullptr || !lm_ggml_backend_supports_buft(backends[b], buft)) {
                LM_GGML_LOG_ERROR("%s: backend %s cannot use buffer type %s\n", __func__,
                                  lm_ggml_backend_name(backends[b]), buft ? lm_ggml_backend_buft_name(buft) : "NULL");
                destroy(s);
                return nullptr;
            }
            s->backends.push_back(backends[b]);
            s->bufts.push_back(buft);
        }
        if (parallel) create_events(s);
        s->galloc = lm_ggml_gallocr_new_n(s->bufts.data(), n_backends);
        // the table grows with the graphs it sees; graph_size is only a first guess
        const size_t first_guess = graph_size < ((size_t) 1 << 16) ? graph_size : ((size_t) 1 << 16);
        if (s->galloc == nullptr || !s->table.prepare(first_guess)) {
            LM_GGML_LOG_ERROR("%s: out of memory\n", __func__);
            destroy(s);
            return nullptr;
        }
        if (const char * dbg = std::getenv("LM_GGML_SCHED_DEBUG")) s->debug = std::atoi(dbg);
        return s;
    } catch (const std::exception &) { // bad_alloc, length_error: out of memory
        LM_GGML_LOG_ERROR("%s: out of memory\n", __func__);
        if (s) destroy(s);
        return nullptr;
    }
}

void lm_ggml_backend_sched_free(lm_ggml_backend_sched_t sched) {
    if (sched == nullptr) return; // like free(NULL)
    destroy(sched);
}

bool lm_ggml_backend_sched_reserve(lm_ggml_backend_sched_t sched, struct lm_ggml_cgraph * measure_graph) {
    LMGGML_CHECK_ARG(sched, false);
    LMGGML_CHECK_ARG(measure_graph, false);
    try {
        if (!lmggml::sched::split_graph(sched, measure_graph)) return false;
        sync_all(sched);
        const bool ok =
            lm_ggml_gallocr_reserve_n(sched->galloc, &sched->graph, sched->node_ids.data(), sched->leaf_ids.data());
        lmggml::sched::restore_sources(sched);
        lm_ggml_backend_sched_reset(sched);
        if (!ok) {
            LM_GGML_LOG_ERROR("%s: failed to reserve compute buffers for %d nodes\n", __func__, measure_graph->n_nodes);
        }
        return ok;
    } catch (const std::exception &) { // bad_alloc, length_error: out of memory
        LM_GGML_LOG_ERROR("%s: out of memory\n", __func__);
        lm_ggml_backend_sched_reset(sched);
        return false;
    }
}

int lm_ggml_backend_sched_get_n_backends(lm_ggml_backend_sched_t sched) {
    LMGGML_CHECK_ARG(sched, 0);
    return static_cast<int>(sched->backends.size());
}

lm_ggml_backend_t lm_ggml_backend_sched_get_backend(lm_ggml_backend_sched_t sched, int i) {
    LMGGML_CHECK_ARG(sched, nullptr);
    if (i < 0 || i >= static_cast<int>(sched->backends.size())) {
        LM_GGML_LOG_ERROR("%s: index %d out of range (%zu backends)\n", __func__, i, sched->backends.size());
        return nullptr;
    }
    return sched->backends[(size_t) i];
}

int lm_ggml_backend_sched_get_n_splits(lm_ggml_backend_sched_t sched) {
    LMGGML_CHECK_ARG(sched, 0);
    return sched->last_n_splits;
}

int lm_ggml_backend_sched_get_n_copies(lm_ggml_backend_sched_t sched) {
    LMGGML_CHECK_ARG(sched, 0);
    return sched->n_copies;
}

int lm_ggml_backend_sched_get_n_inputs(lm_ggml_backend_sched_t sched) {
    LMGGML_CHECK_ARG(sched, 0);
    return sched->last_n_inputs;
}

size_t lm_ggml_backend_sched_get_buffer_size(lm_ggml_backend_sched_t sched, lm_ggml_backend_t backend) {
    LMGGML_CHECK_ARG(sched, 0);
    const int b = backend_index(sched, backend);
    if (b < 0) {
        LM_GGML_LOG_ERROR("%s: backend %s is not one of the scheduler's\n", __func__,
                          backend ? lm_ggml_backend_name(backend) : "NULL");
        return 0;
    }
    return lm_ggml_gallocr_get_buffer_size(sched->galloc, b);
}

void lm_ggml_backend_sched_set_tensor_backend(lm_ggml_backend_sched_t sched, struct lm_ggml_tensor * node,
                                              lm_ggml_backend_t backend) {
    LMGGML_CHECK_ARG(sched, );
    LMGGML_CHECK_ARG(node, );
    const int b = backend_index(sched, backend);
    if (b < 0) {
        LM_GGML_LOG_ERROR("%s: node '%s': backend %s is not one of the scheduler's\n", __func__, node->name,
                          backend ? lm_ggml_backend_name(backend) : "NULL");
        return;
    }
    try {
        sched->overrides[node] = b;
    } catch (const std::exception &) { // bad_alloc, length_error: out of memory
        LM_GGML_LOG_ERROR("%s: node '%s': out of memory\n", __func__, node->name);
    }
}

lm_ggml_backend_t lm_ggml_backend_sched_get_tensor_backend(lm_ggml_backend_sched_t sched,
                                                           struct lm_ggml_tensor * node) {
    LMGGML_CHECK_ARG(sched, nullptr);
    LMGGML_CHECK_ARG(node, nullptr);
    int b = sched->table.backend_of(node);
    if (b < 0) {
        auto it = sched->overrides.find(node);
        if (it != sched->overrides.end()) b = it->second;
    }
    return b < 0 ? nullptr : sched->backends[(size_t) b];
}

bool lm_ggml_backend_sched_alloc_graph(lm_ggml_backend_sched_t sched, struct lm_ggml_cgraph * graph) {
    LMGGML_CHECK_ARG(sched, false);
    LMGGML_CHECK_ARG(graph, false);
    try {
        lm_ggml_status why;
        return alloc_graph_impl(sched, graph, &why);
    } catch (const std::exception &) { // bad_alloc, length_error: out of memory
        LM_GGML_LOG_ERROR("%s: out of memory\n", __func__);
        lmggml::sched::clear_graph_state(sched);
        return false;
    }
}

enum lm_ggml_status lm_ggml_backend_sched_graph_compute_async(lm_ggml_backend_sched_t sched,
                                                              struct lm_ggml_cgraph * graph) {
    LMGGML_CHECK_ARG(sched, LM_GGML_STATUS_FAILED);
    LMGGML_CHECK_ARG(graph, LM_GGML_STATUS_FAILED);
    try {
        // an allocated graph is computed as it was split; anything else is split first
        if (!sched->is_alloc) {
            lm_ggml_status why = LM_GGML_STATUS_FAILED;
            if (!alloc_graph_impl(sched, graph, &why)) return why;
        }
        return lmggml::sched::compute_splits(sched);
    } catch (const std::exception &) { // bad_alloc, length_error: out of memory
        LM_GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return LM_GGML_STATUS_ALLOC_FAILED;
    }
}

enum lm_ggml_status lm_ggml_backend_sched_graph_compute(lm_ggml_backend_sched_t sched, struct lm_ggml_cgraph * graph) {
    const lm_ggml_status status = lm_ggml_backend_sched_graph_compute_async(sched, graph);
    if (sched != nullptr) lm_ggml_backend_sched_synchronize(sched);
    return status;
}

void lm_ggml_backend_sched_synchronize(lm_ggml_backend_sched_t sched) {
    LMGGML_CHECK_ARG(sched, );
    sync_all(sched);
}

void lm_ggml_backend_sched_reset(lm_ggml_backend_sched_t sched) {
    LMGGML_CHECK_ARG(sched, );
    lmggml::sched::clear_graph_state(sched);
    sched->overrides.clear();
}

void lm_ggml_backend_sched_set_eval_callback(lm_ggml_backend_sched_t sched,
                                             lm_ggml_backend_sched_eval_callback callback, void * user_data) {
    LMGGML_CHECK_ARG(sched, );
    sched->callback_eval = callback;
    sched->callback_eval_user_data = user_data;
}

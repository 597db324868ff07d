// Scheduler run time: allocating the split graph and computing it split by
// split, copying each split's inputs in first.
//
// Ordering without events: every transfer synchronizes the streams involved.
// With events (parallel mode on devices that have them) each (backend, copy)
// pair has one event, recorded after a split that consumed inputs; the next
// use of that copy slot waits on it, so up to n_copies evaluations can be in
// flight before a copy buffer is overwritten.

#include "backend/sched/sched-internal.h"

namespace lmggml::sched {

namespace {

bool ids_changed(const lm_ggml_backend_sched * s, const std::vector<int> & now, const std::vector<int> & prev) {
    if (now.size() != prev.size()) return true;
    for (size_t i = 0; i < now.size(); i++) {
        if (now[i] != prev[i] && s->bufts[(size_t) now[i]] != s->bufts[(size_t) prev[i]]) return true;
    }
    return false;
}

lm_ggml_backend_event_t event_of(lm_ggml_backend_sched * s, int backend_id) {
    if (s->events.empty()) return nullptr;
    return s->events[(size_t) (backend_id * s->n_copies + s->cur_copy)];
}

// brings one input of split `sp` into its copy on the split's backend
void copy_input(lm_ggml_backend_sched * s, const Split & sp, const SplitInput & in) {
    lm_ggml_backend_t dst_backend = s->backends[(size_t) sp.backend_id];
    lm_ggml_backend_event_t ev = event_of(s, sp.backend_id);
    lm_ggml_tensor * dst = s->copy_table[(size_t) (in.first + s->cur_copy)];
    lm_ggml_tensor * src = in.src;

    if (src->flags & LM_GGML_TENSOR_FLAG_INPUT) {
        // user data: copy now, so the caller may overwrite its tensor as soon as we return
        if (ev)
            lm_ggml_backend_event_synchronize(ev);
        else
            lm_ggml_backend_synchronize(dst_backend);
        lm_ggml_backend_tensor_copy(src, dst);
        return;
    }
    // the copy slot may still be read by the previous evaluation that used it
    if (ev)
        lm_ggml_backend_event_wait(dst_backend, ev);
    else
        lm_ggml_backend_synchronize(dst_backend);
    const int sb = s->table.backend_of(src);
    lm_ggml_backend_t src_backend = sb >= 0 ? s->backends[(size_t) sb] : dst_backend;
    if (dst_backend->iface.cpy_tensor_async != nullptr &&
        dst_backend->iface.cpy_tensor_async(src_backend, dst_backend, src, dst)) {
        return;
    }
    lm_ggml_backend_synchronize(src_backend);
    if (ev)
        lm_ggml_backend_event_synchronize(ev);
    else
        lm_ggml_backend_synchronize(dst_backend);
    lm_ggml_backend_tensor_copy(src, dst);
}

// Computes a split node by node range, asking the callback which nodes it
// wants to see; *stop is set when the callback asks to cancel.
lm_ggml_status compute_observed(lm_ggml_backend_sched * s, Split & sp, bool * stop) {
    lm_ggml_backend_t backend = s->backends[(size_t) sp.backend_id];
    const int n = sp.graph.n_nodes;
    for (int j0 = 0; j0 < n; j0++) {
        lm_ggml_tensor * t = sp.graph.nodes[j0];
        bool need = s->callback_eval(t, true, s->callback_eval_user_data);
        int j1 = j0;
        while (!need && j1 < n - 1) {
            t = sp.graph.nodes[++j1];
            need = s->callback_eval(t, true, s->callback_eval_user_data);
        }
        lm_ggml_cgraph range = lm_ggml_graph_view(&sp.graph, j0, j1 + 1);
        const lm_ggml_status st = lm_ggml_backend_graph_compute_async(backend, &range);
        if (st != LM_GGML_STATUS_SUCCESS) return st;
        lm_ggml_backend_synchronize(backend);
        if (need && !s->callback_eval(t, false, s->callback_eval_user_data)) {
            *stop = true;
            return LM_GGML_STATUS_SUCCESS;
        }
        j0 = j1;
    }
    return LM_GGML_STATUS_SUCCESS;
}

} // namespace

bool alloc_splits(lm_ggml_backend_sched * s) {
    const bool changed = ids_changed(s, s->node_ids, s->prev_node_ids) || ids_changed(s, s->leaf_ids, s->prev_leaf_ids);
    if (!changed && lm_ggml_gallocr_alloc_graph(s->galloc, &s->graph)) {
        return true;
    }
    // re-planning may move split inputs: nothing in flight may still use them
    for (lm_ggml_backend_t b : s->backends) lm_ggml_backend_synchronize(b);
    if (!lm_ggml_gallocr_reserve_n(s->galloc, &s->graph, s->node_ids.data(), s->leaf_ids.data()) ||
        !lm_ggml_gallocr_alloc_graph(s->galloc, &s->graph)) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_sched_alloc_graph: failed to allocate the compute buffers for %d nodes\n",
                          s->graph.n_nodes);
        // the planner's record no longer matches anything: force a re-plan next time
        s->prev_node_ids.clear();
        s->node_ids.clear();
        return false;
    }
    return true;
}

lm_ggml_status compute_splits(lm_ggml_backend_sched * s) {
    // the same allocated graph evaluated again: point readers at this round's copies
    if (s->rewired_copy != s->cur_copy) {
        for (const Rewire & r : s->rewires) {
            r.node->src[r.src_index] = s->copy_table[(size_t) (r.first + s->cur_copy)];
        }
        s->rewired_copy = s->cur_copy;
    }

    lm_ggml_status status = LM_GGML_STATUS_SUCCESS;
    bool stop = false;
    for (Split & sp : s->splits) {
        lm_ggml_backend_t backend = s->backends[(size_t) sp.backend_id];
        for (const SplitInput & in : inputs_of(s, sp)) {
            copy_input(s, sp, in);
        }
        if (s->callback_eval == nullptr) {
            status = lm_ggml_backend_graph_compute_async(backend, &sp.graph);
        } else {
            status = compute_observed(s, sp, &stop);
        }
        if (status != LM_GGML_STATUS_SUCCESS) {
            return status;
        }
        lm_ggml_backend_event_t ev = event_of(s, sp.backend_id);
        if (sp.in_end > sp.in_begin && ev != nullptr) {
            lm_ggml_backend_event_record(ev, backend);
        }
        if (stop) {
            break;
        }
    }
    s->cur_copy = (s->cur_copy + 1) % s->n_copies;
    return status;
}

} // namespace lmggml::sched

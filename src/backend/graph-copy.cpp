// Copying an allocated graph (structure and current tensor contents) onto
// another backend, and running two backends node by node side by side.
// The copy places its tensors sequentially in the destination backend's
// default buffer type, one buffer per max_size chunk (a multi-buffer when
// more than one is needed).

#include "backend/backend-internal.h"

#include <algorithm>
#include <new>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

using graph_copy_t = struct lm_ggml_backend_graph_copy; // the function of the same name hides the struct

bool is_view_op(lm_ggml_op op) {
    return op == LM_GGML_OP_VIEW || op == LM_GGML_OP_RESHAPE || op == LM_GGML_OP_PERMUTE || op == LM_GGML_OP_TRANSPOSE;
}

struct copier {
    lm_ggml_context * ctx_allocated = nullptr;   // copies that own memory
    lm_ggml_context * ctx_unallocated = nullptr; // views (memory of their source)
    std::unordered_map<lm_ggml_tensor *, lm_ggml_tensor *> copy_of;
    std::vector<lm_ggml_tensor *> order; // originals, dependencies first

    // Copies t (and, first, what it depends on). NULL when out of context memory.
    lm_ggml_tensor * dup(lm_ggml_tensor * t) {
        if (auto it = copy_of.find(t); it != copy_of.end()) {
            return it->second;
        }
        lm_ggml_tensor * view_src = t->view_src ? dup(t->view_src) : nullptr;
        lm_ggml_tensor * srcs[LM_GGML_MAX_SRC] = {};
        for (int i = 0; i < LM_GGML_MAX_SRC; i++) {
            if (t->src[i] != nullptr && (srcs[i] = dup(t->src[i])) == nullptr) {
                return nullptr;
            }
        }
        if (t->view_src != nullptr && view_src == nullptr) {
            return nullptr;
        }
        lm_ggml_tensor * c = lm_ggml_dup_tensor(t->view_src ? ctx_unallocated : ctx_allocated, t);
        if (c == nullptr) {
            return nullptr;
        }
        std::copy(std::begin(t->nb), std::end(t->nb), std::begin(c->nb)); // same layout, not just shape
        c->op = t->op;
        c->flags = t->flags;
        c->view_src = view_src;
        c->view_offs = t->view_offs;
        std::copy(std::begin(t->op_params), std::end(t->op_params), std::begin(c->op_params));
        std::copy(std::begin(srcs), std::end(srcs), std::begin(c->src));
        lm_ggml_set_name(c, t->name);
        copy_of.emplace(t, c);
        order.push_back(t);
        return c;
    }
};

// Every tensor reachable from the graph's nodes; false (logged) if one has no data.
bool collect(lm_ggml_cgraph * graph, std::unordered_set<lm_ggml_tensor *> & seen) {
    std::vector<lm_ggml_tensor *> stack(graph->nodes, graph->nodes + graph->n_nodes);
    while (!stack.empty()) {
        lm_ggml_tensor * t = stack.back();
        stack.pop_back();
        if (t == nullptr || !seen.insert(t).second) {
            continue;
        }
        if (t->data == nullptr) {
            LM_GGML_LOG_ERROR("lm_ggml_backend_graph_copy: tensor '%s': graph is not allocated\n", t->name);
            return false;
        }
        stack.push_back(t->view_src);
        for (lm_ggml_tensor * s : t->src) {
            stack.push_back(s);
        }
    }
    return true;
}

// Places every tensor of ctx sequentially in buffers of buft; returns the
// buffer (a multi-buffer when the tensors need more than one), or NULL.
lm_ggml_backend_buffer_t place_tensors(lm_ggml_context * ctx, lm_ggml_backend_buffer_type_t buft) {
    const size_t align = std::max<size_t>(lm_ggml_backend_buft_get_alignment(buft), 1);
    const size_t max_size = lm_ggml_backend_buft_get_max_size(buft);
    struct chunk {
        size_t size = 0;
        std::vector<std::pair<lm_ggml_tensor *, size_t>> tensors;
    };
    std::vector<chunk> chunks(1);
    for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t != nullptr; t = lm_ggml_get_next_tensor(ctx, t)) {
        const size_t size = (lm_ggml_backend_buft_get_alloc_size(buft, t) + align - 1) / align * align;
        if (chunks.back().size > 0 && chunks.back().size + size > max_size) {
            chunks.emplace_back();
        }
        chunks.back().tensors.emplace_back(t, chunks.back().size);
        chunks.back().size += size;
    }
    std::vector<lm_ggml_backend_buffer_t> buffers;
    for (const chunk & c : chunks) {
        lm_ggml_backend_buffer_t buf = lm_ggml_backend_buft_alloc_buffer(buft, std::max<size_t>(c.size, align));
        if (buf == nullptr) {
            for (lm_ggml_backend_buffer_t b : buffers) {
                lm_ggml_backend_buffer_free(b);
            }
            return nullptr;
        }
        buffers.push_back(buf);
        char * base = (char *) lm_ggml_backend_buffer_get_base(buf);
        for (auto [t, offset] : c.tensors) {
            lm_ggml_backend_tensor_alloc(buf, t, base + offset);
        }
    }
    if (buffers.size() == 1) {
        return buffers[0];
    }
    lm_ggml_backend_buffer_t multi = lm_ggml_backend_multi_buffer_alloc_buffer(buffers.data(), buffers.size());
    if (multi == nullptr) {
        for (lm_ggml_backend_buffer_t b : buffers) {
            lm_ggml_backend_buffer_free(b);
        }
    }
    return multi;
}

graph_copy_t make_copy(lm_ggml_backend_t backend, lm_ggml_cgraph * graph) {
    const graph_copy_t failed = {nullptr, nullptr, nullptr, nullptr};
    std::unordered_set<lm_ggml_tensor *> seen;
    if (!collect(graph, seen)) {
        return failed;
    }
    lm_ggml_backend_buffer_type_t buft = lm_ggml_backend_get_default_buffer_type(backend);
    if (buft == nullptr) {
        return failed;
    }
    const size_t graph_size = (size_t) std::max(graph->size, graph->n_nodes);
    const size_t mem = lm_ggml_tensor_overhead() * (seen.size() + 1) + lm_ggml_graph_overhead_custom(graph_size, false);
    copier cp;
    cp.ctx_allocated = lm_ggml_init({mem, nullptr, true});
    cp.ctx_unallocated = lm_ggml_init({mem, nullptr, true});
    auto fail = [&](const char * what) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_graph_copy: backend %s: %s\n", lm_ggml_backend_name(backend), what);
        lm_ggml_free(cp.ctx_allocated);
        lm_ggml_free(cp.ctx_unallocated);
        return failed;
    };
    if (cp.ctx_allocated == nullptr || cp.ctx_unallocated == nullptr) {
        return fail("cannot create contexts");
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        if (cp.dup(graph->nodes[i]) == nullptr) {
            return fail("out of context memory");
        }
    }
    lm_ggml_backend_buffer_t buffer = place_tensors(cp.ctx_allocated, buft);
    if (buffer == nullptr) {
        return fail("cannot allocate the buffer");
    }
    // contents: dependencies come first in `order`, so a view's source is ready
    for (lm_ggml_tensor * t : cp.order) {
        lm_ggml_tensor * c = cp.copy_of[t];
        if (c->view_src != nullptr) {
            lm_ggml_backend_view_init(c);
        } else {
            lm_ggml_backend_tensor_copy(t, c);
        }
    }
    lm_ggml_cgraph * g = lm_ggml_new_graph_custom(cp.ctx_allocated, graph_size, false);
    if (g == nullptr) {
        lm_ggml_backend_buffer_free(buffer);
        return fail("cannot create the graph");
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        lm_ggml_tensor * c = cp.copy_of[graph->nodes[i]];
        g->nodes[i] = c;
        lm_ggml_hash_insert(&g->visited_hash_set, c);
    }
    g->n_nodes = graph->n_nodes;
    return {buffer, cp.ctx_allocated, cp.ctx_unallocated, g};
}

} // namespace

struct lm_ggml_backend_graph_copy lm_ggml_backend_graph_copy(lm_ggml_backend_t backend, struct lm_ggml_cgraph * graph) {
    const graph_copy_t failed = {nullptr, nullptr, nullptr, nullptr};
    LMGGML_CHECK_ARG(backend, failed);
    LMGGML_CHECK_ARG(graph, failed);
    try {
        return make_copy(backend, graph);
    } catch (const std::bad_alloc &) {
        // the contexts/buffer of a half-built copy leak here; out of host memory anyway
        LM_GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return failed;
    }
}

void lm_ggml_backend_graph_copy_free(struct lm_ggml_backend_graph_copy copy) {
    lm_ggml_backend_buffer_free(copy.buffer);
    if (copy.ctx_allocated != nullptr) {
        lm_ggml_free(copy.ctx_allocated);
    }
    if (copy.ctx_unallocated != nullptr) {
        lm_ggml_free(copy.ctx_unallocated);
    }
}

bool lm_ggml_backend_compare_graph_backend(lm_ggml_backend_t backend1, lm_ggml_backend_t backend2,
                                           struct lm_ggml_cgraph * graph, lm_ggml_backend_eval_callback callback,
                                           void * user_data) {
    LMGGML_CHECK_ARG(backend1, false);
    LMGGML_CHECK_ARG(backend2, false);
    LMGGML_CHECK_ARG(graph, false);
    LMGGML_CHECK_ARG(callback, false);
    graph_copy_t copy = lm_ggml_backend_graph_copy(backend2, graph);
    if (copy.graph == nullptr) {
        return false;
    }
    bool ok = true;
    for (int i = 0; i < graph->n_nodes; i++) {
        lm_ggml_tensor * t1 = graph->nodes[i];
        lm_ggml_tensor * t2 = copy.graph->nodes[i];
        // one node at a time, so both sides start each node from equal inputs
        lm_ggml_cgraph g1 = lm_ggml_graph_view(graph, i, i + 1);
        lm_ggml_cgraph g2 = lm_ggml_graph_view(copy.graph, i, i + 1);
        if (lm_ggml_backend_graph_compute(backend1, &g1) != LM_GGML_STATUS_SUCCESS ||
            lm_ggml_backend_graph_compute(backend2, &g2) != LM_GGML_STATUS_SUCCESS) {
            LM_GGML_LOG_ERROR("%s: node %d ('%s'): compute failed\n", __func__, i, t1->name);
            ok = false;
            break;
        }
        if (is_view_op(t1->op)) {
            continue;
        }
        if (!callback(i, t1, t2, user_data)) {
            break;
        }
    }
    lm_ggml_backend_graph_copy_free(copy);
    return ok;
}

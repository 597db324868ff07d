// Graph allocator: plans every intermediate tensor of a graph into per-buffer
// arenas with reuse by liveness and in-place execution, then places tensors.
//
// Planning walks the nodes in execution order. Leafs and inputs are allocated
// first; a computed tensor is allocated when its node runs and released after
// its last consumer; a node whose op can run in place takes over the memory of a
// source that dies at this node. Graph inputs, outputs and tensors that
// already have memory are never released or overwritten.
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

#include "../../core/ggml-impl.h"
#include "dyn_alloc.h"
#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-backend.h"

using lmggml::DynAddr;
using lmggml::DynAllocator;

namespace {

bool op_can_inplace(lm_ggml_op op) {
    switch (op) {
        case LM_GGML_OP_SCALE:
        case LM_GGML_OP_DIAG_MASK_ZERO:
        case LM_GGML_OP_DIAG_MASK_INF:
        case LM_GGML_OP_ADD:
        case LM_GGML_OP_ADD1:
        case LM_GGML_OP_SUB:
        case LM_GGML_OP_MUL:
        case LM_GGML_OP_DIV:
        case LM_GGML_OP_SQR:
        case LM_GGML_OP_SQRT:
        case LM_GGML_OP_LOG:
        case LM_GGML_OP_UNARY:
        case LM_GGML_OP_ROPE:
        case LM_GGML_OP_RMS_NORM:
        case LM_GGML_OP_SOFT_MAX: return true;
        default: return false;
    }
}

bool same_layout(const lm_ggml_tensor * a, const lm_ggml_tensor * b) {
    return a->type == b->type && lm_ggml_are_same_shape(a, b) && lm_ggml_are_same_stride(a, b);
}

// needs memory from us: no data yet and not a view of another tensor
bool needs_placement(const lm_ggml_tensor * t) { return t->data == nullptr && t->view_src == nullptr; }

struct TensorState {
    int buffer_id = 0;
    int n_children = 0;
    int n_views = 0;
    bool visited = false; // allocation decided
    bool placed = false;  // got an address from the planner (own or inherited)
    bool owns = false;    // currently responsible for freeing its range
    DynAddr addr;
    size_t size = 0;
};

struct Plan {
    bool placed = false;
    int alloc = -1;
    DynAddr addr;
    size_t size = 0;
};

} // namespace

struct lm_ggml_gallocr {
    std::vector<lm_ggml_backend_buffer_type_t> bufts;  // per buffer id
    std::vector<int> alloc_of;                         // buffer id -> allocator
    std::vector<std::unique_ptr<DynAllocator>> allocs; // shared by ids with one buft
    std::vector<lm_ggml_backend_buffer_type_t> alloc_buft;
    std::vector<std::vector<lm_ggml_backend_buffer_t>> buffers; // per allocator, one per chunk

    std::unordered_map<const lm_ggml_tensor *, TensorState> state;
    std::vector<Plan> node_plans, leaf_plans;
    std::vector<int> fingerprint; // graph structure the plan was made for
    bool planned = false;
};

namespace {

TensorState & st(lm_ggml_gallocr * ga, const lm_ggml_tensor * t) { return ga->state[t]; }

int alloc_index(lm_ggml_gallocr * ga, int buffer_id) { return ga->alloc_of[buffer_id]; }

// Never released or overwritten: graph inputs and outputs, and every tensor the
// graph does not compute (op NONE): its content comes from the caller before
// compute, so it must be live from the first node on, flagged or not.
bool is_protected(const lm_ggml_tensor * t) {
    return (t->flags & (LM_GGML_TENSOR_FLAG_INPUT | LM_GGML_TENSOR_FLAG_OUTPUT)) || t->op == LM_GGML_OP_NONE;
}

bool allocate(lm_ggml_gallocr * ga, lm_ggml_tensor * t, bool is_node) {
    TensorState & s = st(ga, t);
    if (s.visited) return true;
    s.visited = true;
    if (!needs_placement(t)) return true; // pre-allocated, or a view (shares its source's memory)

    const int a = alloc_index(ga, s.buffer_id);
    if (is_node && op_can_inplace(t->op)) {
        for (int i = 0; i < LM_GGML_MAX_SRC; i++) {
            lm_ggml_tensor * p = t->src[i];
            if (!p || is_protected(p)) continue;
            TensorState & ps = st(ga, p);
            if (ps.n_children != 1 || ps.n_views != 0 || !same_layout(t, p)) continue;
            TensorState * donor = &ps;
            if (p->view_src) {
                // a view can donate only if its storage dies with it
                TensorState & vs = st(ga, p->view_src);
                if (is_protected(p->view_src) || vs.n_children != 0 || vs.n_views != 1 ||
                    !same_layout(p->view_src, t) || p->view_offs != 0) {
                    continue;
                }
                donor = &vs;
            }
            if (!donor->owns || alloc_index(ga, donor->buffer_id) != a) continue;
            s.placed = true;
            s.owns = true;
            s.addr = donor->addr;
            s.size = donor->size;
            donor->owns = false; // the node now owns (and will free) the range
            return true;
        }
    }

    const size_t size = lm_ggml_backend_buft_get_alloc_size(ga->bufts[s.buffer_id], t);
    if (!ga->allocs[a]->alloc(size, &s.addr)) {
        LM_GGML_LOG_ERROR("lm_ggml_gallocr: tensor '%s' needs %zu bytes, more than the %s buffer type's max size %zu\n",
                          t->name, size, lm_ggml_backend_buft_name(ga->bufts[s.buffer_id]),
                          lm_ggml_backend_buft_get_max_size(ga->bufts[s.buffer_id]));
        return false;
    }
    s.placed = true;
    s.owns = true;
    s.size = size;
    return true;
}

void release(lm_ggml_gallocr * ga, TensorState & s, const lm_ggml_tensor * t) {
    if (!s.owns || is_protected(t)) return;
    ga->allocs[alloc_index(ga, s.buffer_id)]->free(s.addr, s.size);
    s.owns = false;
}

// node i is done: sources whose last consumer it was give their memory back
void release_sources(lm_ggml_gallocr * ga, lm_ggml_tensor * node) {
    for (int i = 0; i < LM_GGML_MAX_SRC; i++) {
        lm_ggml_tensor * p = node->src[i];
        if (!p) continue;
        TensorState & ps = st(ga, p);
        if (--ps.n_children != 0 || ps.n_views != 0) continue;
        if (p->view_src) {
            TensorState & vs = st(ga, p->view_src);
            if (--vs.n_views == 0 && vs.n_children == 0) release(ga, vs, p->view_src);
        } else {
            release(ga, ps, p);
        }
    }
}

// positions of each node's sources, so a later graph can be matched to the plan
std::vector<int> graph_fingerprint(const lm_ggml_cgraph * g) {
    std::unordered_map<const lm_ggml_tensor *, int> pos;
    pos.reserve((size_t) (g->n_nodes + g->n_leafs) * 2);
    for (int i = 0; i < g->n_leafs; i++) pos[g->leafs[i]] = -(i + 2);
    for (int i = 0; i < g->n_nodes; i++) pos[g->nodes[i]] = i;
    std::vector<int> fp;
    fp.reserve((size_t) g->n_nodes * 3 + 2);
    fp.push_back(g->n_nodes);
    fp.push_back(g->n_leafs);
    for (int i = 0; i < g->n_nodes; i++) {
        const lm_ggml_tensor * n = g->nodes[i];
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (!n->src[j]) continue;
            auto it = pos.find(n->src[j]);
            fp.push_back(j * 1000003 + (it == pos.end() ? -1 : it->second));
        }
        fp.push_back(INT32_MIN); // node separator
    }
    return fp;
}

bool plan_graph(lm_ggml_gallocr * ga, lm_ggml_cgraph * g, const int * node_ids, const int * leaf_ids) {
    ga->state.clear();
    ga->state.reserve((size_t) (g->n_nodes + g->n_leafs) * 2);
    for (auto & a : ga->allocs) a->reset();
    const int n_ids = (int) ga->bufts.size();
    auto checked_id = [&](const int * ids, int i) {
        const int id = ids ? ids[i] : 0;
        return (id >= 0 && id < n_ids) ? id : -1;
    };
    for (int i = 0; i < g->n_leafs; i++) {
        const int id = checked_id(leaf_ids, i);
        if (id < 0) {
            LM_GGML_LOG_ERROR("lm_ggml_gallocr_reserve_n: leaf %d has buffer id out of range\n", i);
            return false;
        }
        st(ga, g->leafs[i]).buffer_id = id;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const int id = checked_id(node_ids, i);
        if (id < 0) {
            LM_GGML_LOG_ERROR("lm_ggml_gallocr_reserve_n: node %d has buffer id out of range\n", i);
            return false;
        }
        st(ga, g->nodes[i]).buffer_id = id;
    }
    // consumers and views of every tensor
    for (int i = 0; i < g->n_nodes; i++) {
        lm_ggml_tensor * n = g->nodes[i];
        if (n->view_src) st(ga, n->view_src).n_views++;
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (!n->src[j]) continue;
            const bool known = ga->state.count(n->src[j]) != 0;
            TensorState & s = st(ga, n->src[j]);
            if (!known) s.buffer_id = st(ga, n).buffer_id; // not listed in the graph: use its consumer's buffer
            s.n_children++;
        }
    }
    // inputs and leafs first, so nothing planned before them can overlap
    for (int i = 0; i < g->n_leafs; i++) {
        if (!allocate(ga, g->leafs[i], false)) return false;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        if ((g->nodes[i]->flags & LM_GGML_TENSOR_FLAG_INPUT) && !allocate(ga, g->nodes[i], true)) return false;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        lm_ggml_tensor * n = g->nodes[i];
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (n->src[j] && !allocate(ga, n->src[j], false)) return false;
        }
        if (!allocate(ga, n, true)) return false;
        release_sources(ga, n);
    }

    auto record = [&](const lm_ggml_tensor * t) {
        const TensorState & s = ga->state[t];
        Plan p;
        p.placed = s.placed;
        p.alloc = alloc_index(ga, s.buffer_id);
        p.addr = s.addr;
        p.size = s.size;
        return p;
    };
    ga->node_plans.resize((size_t) g->n_nodes);
    ga->leaf_plans.resize((size_t) g->n_leafs);
    for (int i = 0; i < g->n_nodes; i++) ga->node_plans[(size_t) i] = record(g->nodes[i]);
    for (int i = 0; i < g->n_leafs; i++) ga->leaf_plans[(size_t) i] = record(g->leafs[i]);
    ga->fingerprint = graph_fingerprint(g);
    ga->planned = true;
    return true;
}

// grow the real buffers to the plan's high-water marks (never shrink)
bool ensure_buffers(lm_ggml_gallocr * ga) {
    for (size_t a = 0; a < ga->allocs.size(); a++) {
        DynAllocator & da = *ga->allocs[a];
        std::vector<lm_ggml_backend_buffer_t> & bufs = ga->buffers[a];
        if ((int) bufs.size() < da.n_chunks()) bufs.resize((size_t) da.n_chunks(), nullptr);
        for (int c = 0; c < da.n_chunks(); c++) {
            const size_t need = da.chunk_high_water(c);
            lm_ggml_backend_buffer_t & buf = bufs[(size_t) c];
            if (need == 0 || (buf && lm_ggml_backend_buffer_get_size(buf) >= need)) continue;
            if (buf) lm_ggml_backend_buffer_free(buf);
            buf = lm_ggml_backend_buft_alloc_buffer(ga->alloc_buft[a], need);
            if (!buf) {
                LM_GGML_LOG_ERROR("lm_ggml_gallocr: failed to allocate a %s buffer of %zu bytes\n",
                                  lm_ggml_backend_buft_name(ga->alloc_buft[a]), need);
                ga->planned = false;
                return false;
            }
            lm_ggml_backend_buffer_set_usage(buf, LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE);
        }
    }
    return true;
}

bool plan_fits(lm_ggml_gallocr * ga, lm_ggml_cgraph * g) {
    if (!ga->planned || (size_t) g->n_nodes != ga->node_plans.size() || (size_t) g->n_leafs != ga->leaf_plans.size()) {
        return false;
    }
    auto fits = [&](lm_ggml_tensor * t, const Plan & p) {
        if (!needs_placement(t)) return true;
        if (!p.placed) return false;
        return lm_ggml_backend_buft_get_alloc_size(ga->alloc_buft[(size_t) p.alloc], t) <= p.size;
    };
    for (int i = 0; i < g->n_nodes; i++) {
        if (!fits(g->nodes[i], ga->node_plans[(size_t) i])) return false;
    }
    for (int i = 0; i < g->n_leafs; i++) {
        if (!fits(g->leafs[i], ga->leaf_plans[(size_t) i])) return false;
    }
    return graph_fingerprint(g) == ga->fingerprint;
}

void place(lm_ggml_gallocr * ga, lm_ggml_tensor * t, const Plan & p) {
    if (!needs_placement(t) || !p.placed) return;
    lm_ggml_backend_buffer_t buf = ga->buffers[(size_t) p.alloc][(size_t) p.addr.chunk];
    char * base = static_cast<char *>(lm_ggml_backend_buffer_get_base(buf));
    lm_ggml_backend_tensor_alloc(buf, t, base + p.addr.offset);
}

void place_view(lm_ggml_tensor * t) {
    if (t->data == nullptr && t->view_src && t->view_src->data) lm_ggml_backend_view_init(t);
}

} // namespace

extern "C" lm_ggml_gallocr_t lm_ggml_gallocr_new_n(lm_ggml_backend_buffer_type_t * bufts, int n_bufs) {
    if (!bufts || n_bufs <= 0) {
        LM_GGML_LOG_ERROR("lm_ggml_gallocr_new_n: need at least one buffer type\n");
        return nullptr;
    }
    try {
        auto ga = std::make_unique<lm_ggml_gallocr>();
        for (int i = 0; i < n_bufs; i++) {
            if (!bufts[i]) {
                LM_GGML_LOG_ERROR("lm_ggml_gallocr_new_n: buffer type %d is NULL\n", i);
                return nullptr;
            }
            ga->bufts.push_back(bufts[i]);
            int shared = -1;
            for (size_t a = 0; a < ga->alloc_buft.size(); a++) {
                if (ga->alloc_buft[a] == bufts[i]) shared = (int) a;
            }
            if (shared < 0) {
                ga->allocs.push_back(std::make_unique<DynAllocator>(lm_ggml_backend_buft_get_alignment(bufts[i]),
                                                                    lm_ggml_backend_buft_get_max_size(bufts[i])));
                ga->alloc_buft.push_back(bufts[i]);
                ga->buffers.emplace_back();
                shared = (int) ga->allocs.size() - 1;
            }
            ga->alloc_of.push_back(shared);
        }
        return ga.release();
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_ggml_gallocr_new_n: out of memory\n");
        return nullptr;
    }
}

extern "C" lm_ggml_gallocr_t lm_ggml_gallocr_new(lm_ggml_backend_buffer_type_t buft) {
    return lm_ggml_gallocr_new_n(&buft, 1);
}

extern "C" void lm_ggml_gallocr_free(lm_ggml_gallocr_t galloc) {
    if (!galloc) return;
    for (auto & bufs : galloc->buffers) {
        for (lm_ggml_backend_buffer_t b : bufs) {
            if (b) lm_ggml_backend_buffer_free(b);
        }
    }
    delete galloc;
}

extern "C" bool lm_ggml_gallocr_reserve_n(lm_ggml_gallocr_t galloc, struct lm_ggml_cgraph * graph,
                                          const int * node_buffer_ids, const int * leaf_buffer_ids) {
    if (!galloc || !graph) {
        LM_GGML_LOG_ERROR("lm_ggml_gallocr_reserve_n: %s is NULL\n", galloc ? "graph" : "allocator");
        return false;
    }
    try {
        return plan_graph(galloc, graph, node_buffer_ids, leaf_buffer_ids) && ensure_buffers(galloc);
    } catch (const std::bad_alloc &) {
        galloc->planned = false;
        LM_GGML_LOG_ERROR("lm_ggml_gallocr_reserve_n: out of memory while planning %d nodes\n", graph->n_nodes);
        return false;
    }
}

extern "C" bool lm_ggml_gallocr_reserve(lm_ggml_gallocr_t galloc, struct lm_ggml_cgraph * graph) {
    return lm_ggml_gallocr_reserve_n(galloc, graph, nullptr, nullptr);
}

extern "C" bool lm_ggml_gallocr_alloc_graph(lm_ggml_gallocr_t galloc, struct lm_ggml_cgraph * graph) {
    if (!galloc || !graph) {
        LM_GGML_LOG_ERROR("lm_ggml_gallocr_alloc_graph: %s is NULL\n", galloc ? "graph" : "allocator");
        return false;
    }
    try {
        if (!plan_fits(galloc, graph)) {
            if (galloc->bufts.size() != 1) {
                // with several buffers the caller must say which node goes where
                LM_GGML_LOG_DEBUG(
                    "lm_ggml_gallocr_alloc_graph: graph differs from the reserved one, reserve_n needed\n");
                return false;
            }
            if (!lm_ggml_gallocr_reserve_n(galloc, graph, nullptr, nullptr)) return false;
        }
        // as ggml: every compute buffer is reset before its tensors are placed
        // again (backends drop per-tensor state there; init_tensor rebuilds it)
        for (auto & bufs : galloc->buffers) {
            for (lm_ggml_backend_buffer_t b : bufs) {
                if (b) lm_ggml_backend_buffer_reset(b);
            }
        }
        for (int i = 0; i < graph->n_leafs; i++) place(galloc, graph->leafs[i], galloc->leaf_plans[(size_t) i]);
        for (int i = 0; i < graph->n_nodes; i++) place(galloc, graph->nodes[i], galloc->node_plans[(size_t) i]);
        for (int i = 0; i < graph->n_leafs; i++) place_view(graph->leafs[i]);
        for (int i = 0; i < graph->n_nodes; i++) {
            lm_ggml_tensor * n = graph->nodes[i];
            for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
                if (n->src[j]) place_view(n->src[j]);
            }
            place_view(n);
        }
        return true;
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_ggml_gallocr_alloc_graph: out of memory\n");
        return false;
    }
}

extern "C" size_t lm_ggml_gallocr_get_buffer_size(lm_ggml_gallocr_t galloc, int buffer_id) {
    if (!galloc || buffer_id < 0 || buffer_id >= (int) galloc->bufts.size()) {
        LM_GGML_LOG_ERROR("lm_ggml_gallocr_get_buffer_size: %s\n",
                          galloc ? "buffer id out of range" : "allocator is NULL");
        return 0;
    }
    const int a = galloc->alloc_of[(size_t) buffer_id];
    for (int i = 0; i < buffer_id; i++) {
        if (galloc->alloc_of[(size_t) i] == a) return 0; // counted under the first id that shares it
    }
    size_t total = 0;
    for (lm_ggml_backend_buffer_t b : galloc->buffers[(size_t) a]) {
        if (b) total += lm_ggml_backend_buffer_get_size(b);
    }
    return total;
}

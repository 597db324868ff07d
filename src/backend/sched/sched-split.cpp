// Scheduler pass 5: cut the assigned graph into splits, give every source a
// split cannot read in place a copy on the split's backend, and build the
// graph the allocator plans.
//
// A copy tensor has its source's layout (type, ne, nb), op DUP and src[0] =
// the source: in the scheduler's graph it sits as a node right before the
// split that needs it, so the allocator keeps the source alive until the copy
// is made and frees the copy after its last reader. The copy itself is made
// by the scheduler at run time (tensor copy), never computed by a backend.
// Consumers are rewired (node->src[j] = copy), as ggml does; a tensor copied
// once to a backend is reused by later splits on that backend.
// In pipeline mode each input has n_copies copies (one per evaluation in
// flight), flagged INPUT|OUTPUT so they are allocated up front and never
// overwritten; they are listed as leafs as well.

#include "backend/sched/sched-internal.h"

#include <algorithm>
#include <cstdio>
#include <exception>

namespace lmggml::sched {

namespace {

lm_ggml_tensor * make_copy(lm_ggml_backend_sched * s, lm_ggml_tensor * src, int backend_id, int c) {
    lm_ggml_tensor * t = s->pool.take();
    if (t == nullptr) return nullptr;
    t->type = src->type;
    for (int d = 0; d < LM_GGML_MAX_DIMS; d++) {
        t->ne[d] = src->ne[d];
        t->nb[d] = src->nb[d];
    }
    t->op = LM_GGML_OP_DUP;
    t->src[0] = src;
    if (s->n_copies > 1) {
        t->flags = LM_GGML_TENSOR_FLAG_INPUT | LM_GGML_TENSOR_FLAG_OUTPUT;
    }
    lm_ggml_format_name(t, "%s#%s#%d", lm_ggml_backend_name(s->backends[(size_t) backend_id]), src->name, c);
    return t;
}

// New split at node i when a weight it reads sits on another backend whose
// memory this one cannot use: the previous weight copies can then be freed.
bool weight_forces_split(lm_ggml_backend_sched * s, const lm_ggml_tensor * node, int i, int cur) {
    for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
        const lm_ggml_tensor * src = node->src[j];
        if (src == nullptr) continue;
        lm_ggml_backend_buffer_t buf = storage_buffer(src);
        if (buf == nullptr || lm_ggml_backend_buffer_get_usage(buf) != LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS) continue;
        const int ss = s->src_slot[(size_t) i * LM_GGML_MAX_SRC + (size_t) j];
        if (s->table.backend((size_t) ss) != cur && !buffer_supported(s, ss, cur)) return true;
    }
    return false;
}

// gives source j of node i a copy on backend `cur` when needed; false on failure
bool route_source(lm_ggml_backend_sched * s, lm_ggml_tensor * node, int i, int j, int cur) {
    lm_ggml_tensor * src = node->src[j];
    if (s->pool.contains(src)) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_sched: node '%s' reads '%s', a copy made by this scheduler: the graph "
                          "was already split; build a new graph (after lm_ggml_backend_sched_reset)\n",
                          node->name, src->name);
        return false;
    }
    const int ss = s->src_slot[(size_t) i * LM_GGML_MAX_SRC + (size_t) j];
    if (s->table.backend((size_t) ss) == cur || buffer_supported(s, ss, cur)) {
        return true;
    }
    const int n_b = static_cast<int>(s->backends.size());
    int & base = s->table.copy_index((size_t) ss);
    if (base < 0) {
        base = static_cast<int>(s->copy_table.size());
        s->copy_table.resize(s->copy_table.size() + (size_t) (n_b * s->n_copies), nullptr);
    }
    const int first = base + cur * s->n_copies;
    if (s->copy_table[(size_t) first] == nullptr) {
        for (int c = 0; c < s->n_copies; c++) {
            lm_ggml_tensor * t = make_copy(s, src, cur, c);
            if (t == nullptr) {
                LM_GGML_LOG_ERROR("lm_ggml_backend_sched: out of memory for a copy of '%s'\n", src->name);
                return false;
            }
            s->copy_table[(size_t) (first + c)] = t;
        }
        s->split_inputs.push_back({src, first});
    }
    node->src[j] = s->copy_table[(size_t) (first + s->cur_copy)];
    s->rewires.push_back({node, j, first});
    return true;
}

bool cut(lm_ggml_backend_sched * s, lm_ggml_cgraph * g) {
    auto backend_of_node = [s](int i) { return s->table.backend((size_t) s->node_slot[(size_t) i]); };
    int i = 0;
    while (i < g->n_nodes && is_view_op(g->nodes[i]->op)) i++;
    Split split;
    split.backend_id = backend_of_node(i < g->n_nodes ? i : 0);
    split.i_start = 0;
    int cur = split.backend_id;
    for (; i < g->n_nodes; i++) {
        lm_ggml_tensor * node = g->nodes[i];
        if (is_view_op(node->op)) continue;
        const int nb = backend_of_node(i);
        if (nb != cur || (s->split_inputs.size() > split.in_begin && weight_forces_split(s, node, i, cur))) {
            split.i_end = i;
            split.in_end = s->split_inputs.size();
            s->splits.push_back(split);
            split = Split{};
            split.backend_id = nb;
            split.i_start = i;
            split.in_begin = s->split_inputs.size();
            cur = nb;
        }
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (node->src[j] != nullptr && !route_source(s, node, i, j, cur)) return false;
        }
    }
    split.i_end = g->n_nodes;
    split.in_end = s->split_inputs.size();
    s->splits.push_back(split);
    return true;
}

void build_graph(lm_ggml_backend_sched * s, lm_ggml_cgraph * g) {
    std::swap(s->node_ids, s->prev_node_ids);
    std::swap(s->leaf_ids, s->prev_leaf_ids);
    s->graph_nodes.clear();
    s->graph_leafs.clear();
    s->node_ids.clear();
    s->leaf_ids.clear();

    int n_inputs = 0;
    for (Split & sp : s->splits) {
        sp.graph = lm_ggml_graph_view(g, sp.i_start, sp.i_end);
        for (const SplitInput & in : inputs_of(s, sp)) {
            s->graph_nodes.push_back(s->copy_table[(size_t) (in.first + s->cur_copy)]);
            s->node_ids.push_back(sp.backend_id);
            n_inputs++;
        }
        for (int k = sp.i_start; k < sp.i_end; k++) {
            s->graph_nodes.push_back(g->nodes[k]);
            s->node_ids.push_back(s->table.backend((size_t) s->node_slot[(size_t) k]));
        }
    }
    if (s->n_copies > 1) {
        for (const Split & sp : s->splits) {
            for (const SplitInput & in : inputs_of(s, sp)) {
                for (int c = 0; c < s->n_copies; c++) {
                    s->graph_leafs.push_back(s->copy_table[(size_t) (in.first + c)]);
                    s->leaf_ids.push_back(sp.backend_id);
                }
            }
        }
    }
    for (int k = 0; k < g->n_leafs; k++) {
        s->graph_leafs.push_back(g->leafs[k]);
        s->leaf_ids.push_back(s->table.backend((size_t) s->leaf_slot[(size_t) k]));
    }
    s->n_inputs = n_inputs;

    lm_ggml_cgraph & out = s->graph;
    out = lm_ggml_cgraph{};
    out.n_nodes = static_cast<int>(s->graph_nodes.size());
    out.n_leafs = static_cast<int>(s->graph_leafs.size());
    out.size = std::max(out.n_nodes, out.n_leafs);
    out.nodes = s->graph_nodes.data();
    out.leafs = s->graph_leafs.data();
    out.order = g->order;
}

const char * backend_name_of(lm_ggml_backend_sched * s, const lm_ggml_tensor * t) {
    const int b = s->table.backend_of(t);
    return b < 0 ? "NULL" : lm_ggml_backend_name(s->backends[(size_t) b]);
}

} // namespace

void clear_graph_state(lm_ggml_backend_sched * s) {
    s->table.clear();
    s->pool.reset();
    s->copy_table.clear();
    s->splits.clear();
    s->split_inputs.clear();
    s->rewires.clear();
    s->n_inputs = 0;
    s->rewired_copy = s->cur_copy;
    s->is_alloc = false;
}

bool build_splits(lm_ggml_backend_sched * s, lm_ggml_cgraph * g) {
    if (g->n_nodes > 0 && !cut(s, g)) {
        return false;
    }
    s->rewired_copy = s->cur_copy;
    build_graph(s, g);
    return true;
}

void restore_sources(lm_ggml_backend_sched * s) {
    for (const Rewire & r : s->rewires) {
        r.node->src[r.src_index] = s->copy_table[(size_t) r.first]->src[0];
    }
    s->rewires.clear();
}

bool split_graph(lm_ggml_backend_sched * s, lm_ggml_cgraph * graph) {
    clear_graph_state(s);
    s->last_n_splits = 0;
    s->last_n_inputs = 0;
    if (!s->table.prepare((size_t) graph->n_nodes + (size_t) graph->n_leafs)) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_sched: out of memory for a graph of %d nodes\n", graph->n_nodes);
        return false;
    }
    bool ok = false;
    try {
        ok = index_graph(s, graph) && assign_backends(s, graph) && build_splits(s, graph);
    } catch (const std::exception &) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_sched: out of memory while splitting a graph of %d nodes\n", graph->n_nodes);
    }
    if (!ok) {
        restore_sources(s); // a cut that failed half-way leaves the graph as it was
        clear_graph_state(s);
        return false;
    }
    s->last_n_splits = static_cast<int>(s->splits.size());
    s->last_n_inputs = s->n_inputs;
    if (s->debug > 0) {
        print_assignments(s, graph);
    }
    return true;
}

void print_assignments(lm_ggml_backend_sched * s, lm_ggml_cgraph * graph) {
    for (size_t k = 0; k < s->splits.size(); k++) {
        const Split & sp = s->splits[k];
        LM_GGML_LOG_DEBUG("## SPLIT #%zu: %s, nodes %d..%d, %zu inputs:", k,
                          lm_ggml_backend_name(s->backends[(size_t) sp.backend_id]), sp.i_start, sp.i_end - 1,
                          sp.in_end - sp.in_begin);
        for (const SplitInput & in : inputs_of(s, sp)) {
            LM_GGML_LOG_DEBUG(" [%s %zu B]", in.src->name, lm_ggml_nbytes(in.src));
        }
        LM_GGML_LOG_DEBUG("\n");
        if (s->debug < 2) continue;
        for (int i = sp.i_start; i < sp.i_end; i++) {
            lm_ggml_tensor * node = graph->nodes[i];
            LM_GGML_LOG_DEBUG("node #%3d (%10.10s): %20.20s [%s]:", i, lm_ggml_op_name(node->op), node->name,
                              backend_name_of(s, node));
            for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
                if (node->src[j] != nullptr) {
                    LM_GGML_LOG_DEBUG(" %s", node->src[j]->name);
                }
            }
            LM_GGML_LOG_DEBUG("\n");
        }
    }
}

} // namespace lmggml::sched

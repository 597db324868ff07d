// Computation graphs: construction by reachability, node access, views, copies.
#include "context.h"

#include <algorithm>
#include <cstdio>
#include <new>

namespace {

size_t graph_nbytes(size_t size, bool grads) {
    const size_t hash_size = lm_ggml_hash_size(size * 2);
    size_t n = sizeof(lm_ggml_cgraph);
    n += sizeof(lm_ggml_tensor *) * size;                     // nodes
    n += sizeof(lm_ggml_tensor *) * size;                     // leafs
    n += sizeof(lm_ggml_tensor *) * hash_size;                // hash keys
    if (grads) n += sizeof(lm_ggml_tensor *) * hash_size * 2; // grads, grad_accs
    n += sizeof(uint32_t) * lm_ggml_bitset_size(hash_size);   // hash used bits
    return n;
}

// Depth-first stack of visit(): frames live on the C stack up to kInline
// deep (every real model graph), beyond that in a heap block that doubles.
// No exceptions: out of memory here is reported through the abort handler,
// like a graph that is too small.
class VisitStack {
public:
    struct Frame {
        lm_ggml_tensor * t;
        int next_src;
    };
    VisitStack() = default;
    VisitStack(const VisitStack &) = delete;
    VisitStack & operator=(const VisitStack &) = delete;
    ~VisitStack() {
        if (frames_ != inline_) delete[] frames_;
    }
    bool empty() const { return n_ == 0; }
    Frame & back() { return frames_[n_ - 1]; }
    void pop() { n_--; }
    void push(lm_ggml_tensor * t) {
        if (n_ == cap_) grow();
        frames_[n_++] = {t, 0};
    }

private:
    static constexpr size_t kInline = 256;
    void grow() {
        Frame * bigger = new (std::nothrow) Frame[cap_ * 2];
        if (!bigger) LM_GGML_ABORT("lm_ggml_build_forward_expand: out of memory for a graph %zu tensors deep", cap_);
        std::copy(frames_, frames_ + n_, bigger);
        if (frames_ != inline_) delete[] frames_;
        frames_ = bigger;
        cap_ *= 2;
    }
    Frame inline_[kInline];
    Frame * frames_ = inline_;
    size_t cap_ = kInline;
    size_t n_ = 0;
};

// Appends every not-yet-visited tensor reachable from `root` in dependency
// order (sources before users). Iterative, so deep graphs cannot overflow the stack.
void visit(lm_ggml_cgraph * g, lm_ggml_tensor * root) {
    VisitStack stack;
    if (lm_ggml_hash_insert(&g->visited_hash_set, root) == LM_GGML_HASHSET_ALREADY_EXISTS) return;
    stack.push(root);
    while (!stack.empty()) {
        VisitStack::Frame & f = stack.back();
        if (f.next_src < LM_GGML_MAX_SRC) {
            const int k =
                g->order == LM_GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT ? f.next_src : LM_GGML_MAX_SRC - 1 - f.next_src;
            f.next_src++;
            lm_ggml_tensor * src = f.t->src[k];
            if (!src) continue;
            const size_t slot = lm_ggml_hash_insert(&g->visited_hash_set, src);
            if (slot == LM_GGML_HASHSET_FULL)
                LM_GGML_ABORT("graph hash set is full (graph size %d too small)", g->size);
            if (slot != LM_GGML_HASHSET_ALREADY_EXISTS) stack.push(src);
            continue;
        }
        lm_ggml_tensor * t = f.t;
        stack.pop();
        if (t->op == LM_GGML_OP_NONE && !(t->flags & LM_GGML_TENSOR_FLAG_PARAM)) {
            if (g->n_leafs >= g->size)
                LM_GGML_ABORT("graph has more than %d leafs: create it with a larger size", g->size);
            if (t->name[0] == '\0') lm_ggml_format_name(t, "leaf_%d", g->n_leafs);
            g->leafs[g->n_leafs++] = t;
        } else {
            if (g->n_nodes >= g->size)
                LM_GGML_ABORT("graph has more than %d nodes: create it with a larger size", g->size);
            if (t->name[0] == '\0') lm_ggml_format_name(t, "node_%d", g->n_nodes);
            g->nodes[g->n_nodes++] = t;
        }
    }
}

} // namespace

extern "C" size_t lm_ggml_graph_overhead_custom(size_t size, bool grads) {
    return LM_GGML_OBJECT_SIZE + LM_GGML_PAD(graph_nbytes(size, grads), LM_GGML_MEM_ALIGN);
}

extern "C" size_t lm_ggml_graph_overhead(void) {
    return lm_ggml_graph_overhead_custom(LM_GGML_DEFAULT_GRAPH_SIZE, false);
}

extern "C" struct lm_ggml_cgraph * lm_ggml_new_graph_custom(struct lm_ggml_context * ctx, size_t size, bool grads) {
    if (!ctx) {
        LM_GGML_LOG_ERROR("lm_ggml_new_graph_custom: context is NULL\n");
        return nullptr;
    }
    if (size == 0 || size > (size_t) INT32_MAX / 2) {
        LM_GGML_LOG_ERROR("lm_ggml_new_graph_custom: invalid graph size %zu\n", size);
        return nullptr;
    }
    lm_ggml_object * obj = lm_ggml_new_object(ctx, LM_GGML_OBJECT_TYPE_GRAPH, graph_nbytes(size, grads), "a graph");
    if (!obj) return nullptr;
    char * mem = static_cast<char *>(ctx->mem_buffer) + obj->offs;
    lm_ggml_cgraph * g = reinterpret_cast<lm_ggml_cgraph *>(mem);
    const size_t hash_size = lm_ggml_hash_size(size * 2);

    // layout: [cgraph][nodes][leafs][hash keys][grads][grad_accs][hash used bits]
    lm_ggml_tensor ** p = reinterpret_cast<lm_ggml_tensor **>(mem + sizeof(lm_ggml_cgraph));
    lm_ggml_tensor ** nodes = p;
    p += size;
    lm_ggml_tensor ** leafs = p;
    p += size;
    lm_ggml_tensor ** keys = p;
    p += hash_size;
    lm_ggml_tensor ** grad_ptr = nullptr;
    lm_ggml_tensor ** grad_acc_ptr = nullptr;
    if (grads) {
        grad_ptr = p;
        p += hash_size;
        grad_acc_ptr = p;
        p += hash_size;
        std::memset(grad_ptr, 0, sizeof(lm_ggml_tensor *) * hash_size * 2);
    }
    uint32_t * used = reinterpret_cast<uint32_t *>(p);

    *g = lm_ggml_cgraph{};
    g->size = (int) size;
    g->nodes = nodes;
    g->leafs = leafs;
    g->grads = grad_ptr;
    g->grad_accs = grad_acc_ptr;
    g->visited_hash_set = lm_ggml_hash_set{hash_size, used, keys};
    g->order = LM_GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT;
    lm_ggml_hash_set_reset(&g->visited_hash_set);
    return g;
}

extern "C" struct lm_ggml_cgraph * lm_ggml_new_graph(struct lm_ggml_context * ctx) {
    return lm_ggml_new_graph_custom(ctx, LM_GGML_DEFAULT_GRAPH_SIZE, false);
}

extern "C" void lm_ggml_build_forward_expand(struct lm_ggml_cgraph * cgraph, struct lm_ggml_tensor * tensor) {
    if (!cgraph || !tensor) {
        LM_GGML_LOG_ERROR("lm_ggml_build_forward_expand: %s is NULL\n", cgraph ? "tensor" : "graph");
        return;
    }
    visit(cgraph, tensor);
}

extern "C" struct lm_ggml_cgraph lm_ggml_graph_view(struct lm_ggml_cgraph * cgraph, int i0, int i1) {
    lm_ggml_cgraph view{};
    if (!cgraph) {
        lm_ggml_null_arg("lm_ggml_graph_view");
        return view;
    }
    if (i0 < 0 || i1 < i0 || i1 > cgraph->n_nodes) { // exported (ggml-impl.h): a bad range is an error, not a crash
        LM_GGML_LOG_ERROR("lm_ggml_graph_view: nodes [%d, %d) outside the graph's %d\n", i0, i1, cgraph->n_nodes);
        return view;
    }
    view.size = i1 - i0;
    view.n_nodes = i1 - i0;
    view.n_leafs = 0;
    view.nodes = cgraph->nodes + i0;
    view.order = cgraph->order;
    return view;
}

extern "C" void lm_ggml_graph_cpy(struct lm_ggml_cgraph * src, struct lm_ggml_cgraph * dst) {
    if (!src || !dst) {
        lm_ggml_null_arg("lm_ggml_graph_cpy");
        return;
    }
    LM_GGML_ASSERT(dst->size >= src->n_leafs && dst->size >= src->n_nodes);
    LM_GGML_ASSERT(dst->visited_hash_set.size >= src->visited_hash_set.size);
    dst->n_leafs = src->n_leafs;
    dst->n_nodes = src->n_nodes;
    dst->order = src->order;
    std::memcpy(dst->leafs, src->leafs, sizeof(lm_ggml_tensor *) * src->n_leafs);
    std::memcpy(dst->nodes, src->nodes, sizeof(lm_ggml_tensor *) * src->n_nodes);
    lm_ggml_hash_set_reset(&dst->visited_hash_set);
    for (size_t i = 0; i < src->visited_hash_set.size; i++) {
        if (lm_ggml_bitset_get(src->visited_hash_set.used, i)) {
            lm_ggml_hash_insert(&dst->visited_hash_set, src->visited_hash_set.keys[i]);
        }
    }
    // gradients follow their nodes (slots differ when the hash sets differ in size)
    if (dst->grads) {
        std::memset(dst->grads, 0, sizeof(lm_ggml_tensor *) * dst->visited_hash_set.size);
        std::memset(dst->grad_accs, 0, sizeof(lm_ggml_tensor *) * dst->visited_hash_set.size);
    }
    if (src->grads) {
        if (!dst->grads) {
            LM_GGML_LOG_ERROR("lm_ggml_graph_cpy: the source has gradients, the destination has no room for them\n");
            return;
        }
        for (int i = 0; i < src->n_nodes; i++) {
            const size_t is = lm_ggml_hash_find(&src->visited_hash_set, src->nodes[i]);
            const size_t id = lm_ggml_hash_find(&dst->visited_hash_set, dst->nodes[i]);
            dst->grads[id] = src->grads[is];
            dst->grad_accs[id] = src->grad_accs[is];
        }
    }
}

extern "C" struct lm_ggml_cgraph * lm_ggml_graph_dup(struct lm_ggml_context * ctx, struct lm_ggml_cgraph * cgraph) {
    if (!ctx || !cgraph) {
        lm_ggml_null_arg("lm_ggml_graph_dup");
        return nullptr;
    }
    lm_ggml_cgraph * result = lm_ggml_new_graph_custom(ctx, cgraph->size, cgraph->grads != nullptr);
    if (!result) return nullptr;
    lm_ggml_graph_cpy(cgraph, result);
    return result;
}

extern "C" void lm_ggml_graph_clear(struct lm_ggml_cgraph * cgraph) {
    if (!cgraph) {
        lm_ggml_null_arg("lm_ggml_graph_clear");
        return;
    }
    cgraph->n_leafs = 0;
    cgraph->n_nodes = 0;
    lm_ggml_hash_set_reset(&cgraph->visited_hash_set);
}

extern "C" int lm_ggml_graph_size(struct lm_ggml_cgraph * cgraph) {
    if (!cgraph) {
        lm_ggml_null_arg("lm_ggml_graph_size");
        return 0;
    }
    return cgraph->size;
}

extern "C" struct lm_ggml_tensor * lm_ggml_graph_node(struct lm_ggml_cgraph * cgraph, int i) {
    if (!cgraph) {
        lm_ggml_null_arg("lm_ggml_graph_node");
        return nullptr;
    }
    if (i < 0) i += cgraph->n_nodes;
    if (i < 0 || i >= cgraph->n_nodes) {
        LM_GGML_LOG_ERROR("lm_ggml_graph_node: index %d out of range (graph has %d nodes)\n", i, cgraph->n_nodes);
        return nullptr;
    }
    return cgraph->nodes[i];
}

extern "C" struct lm_ggml_tensor ** lm_ggml_graph_nodes(struct lm_ggml_cgraph * cgraph) {
    if (!cgraph) {
        lm_ggml_null_arg("lm_ggml_graph_nodes");
        return nullptr;
    }
    return cgraph->nodes;
}
extern "C" int lm_ggml_graph_n_nodes(struct lm_ggml_cgraph * cgraph) {
    if (!cgraph) {
        lm_ggml_null_arg("lm_ggml_graph_n_nodes");
        return 0;
    }
    return cgraph->n_nodes;
}

extern "C" void lm_ggml_graph_add_node(struct lm_ggml_cgraph * cgraph, struct lm_ggml_tensor * tensor) {
    if (!cgraph || !tensor) {
        lm_ggml_null_arg("lm_ggml_graph_add_node");
        return;
    }
    if (cgraph->n_nodes >= cgraph->size) {
        LM_GGML_ABORT("lm_ggml_graph_add_node: graph is full (%d nodes)", cgraph->size);
    }
    cgraph->nodes[cgraph->n_nodes++] = tensor;
}

extern "C" struct lm_ggml_tensor * lm_ggml_graph_get_tensor(const struct lm_ggml_cgraph * cgraph, const char * name) {
    if (!cgraph || !name) {
        lm_ggml_null_arg("lm_ggml_graph_get_tensor");
        return nullptr;
    }
    for (int i = 0; i < cgraph->n_leafs; i++) {
        if (std::strcmp(cgraph->leafs[i]->name, name) == 0) return cgraph->leafs[i];
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        if (std::strcmp(cgraph->nodes[i]->name, name) == 0) return cgraph->nodes[i];
    }
    return nullptr;
}

extern "C" void lm_ggml_graph_print(const struct lm_ggml_cgraph * cgraph) {
    if (!cgraph) {
        lm_ggml_null_arg("lm_ggml_graph_print");
        return;
    }
    LM_GGML_LOG_INFO("=== GRAPH: %d nodes, %d leafs ===\n", cgraph->n_nodes, cgraph->n_leafs);
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const lm_ggml_tensor * t = cgraph->nodes[i];
        LM_GGML_LOG_INFO(" - %3d: [%5lld, %5lld, %5lld, %5lld] %16s %s\n", i, (long long) t->ne[0],
                         (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3], lm_ggml_op_desc(t), t->name);
    }
    for (int i = 0; i < cgraph->n_leafs; i++) {
        const lm_ggml_tensor * t = cgraph->leafs[i];
        LM_GGML_LOG_INFO(" - leaf %3d: [%5lld, %5lld] %8s %s\n", i, (long long) t->ne[0], (long long) t->ne[1],
                         lm_ggml_op_name(t->op), t->name);
    }
}

// The backward pass (ggml 1.4.1's semantics): lm_ggml_build_backward_expand
// appends to a forward graph the nodes that compute the gradient of the loss
// with respect to every parameter; lm_ggml_graph_reset seeds it; the
// lm_ggml_graph_get_grad* accessors find a node's gradient.
//
// Which nodes get a gradient: parameters, loss nodes, and every node that
// depends (through a differentiable source, see ignores_src) on a parameter;
// integer nodes never do. Loss nodes, and parameters when accumulating, get an
// accumulator tensor in ctx_static that the gradient ops add into in place, so
// gradients sum over evaluations until lm_ggml_graph_reset; the loss
// accumulator is the seed dL/dL = 1 that lm_ggml_graph_reset writes.

#include "backward.h"

#include "ggml-backend.h"

#include <cstring>

namespace lmggml::backward {

size_t Builder::slot(const lm_ggml_tensor * t) const {
    const size_t i = lm_ggml_hash_find(&g_->visited_hash_set, t);
    if (i == LM_GGML_HASHSET_FULL || !lm_ggml_bitset_get(g_->visited_hash_set.used, i)) return LM_GGML_HASHSET_FULL;
    return i;
}

bool Builder::needs(const lm_ggml_tensor * t) const {
    const size_t i = slot(t);
    return i != LM_GGML_HASHSET_FULL && needed_[i];
}

lm_ggml_tensor * Builder::grad(const lm_ggml_tensor * t) const {
    const size_t i = slot(t);
    return i == LM_GGML_HASHSET_FULL ? nullptr : g_->grads[i];
}

void Builder::set(size_t i, lm_ggml_tensor * g, const lm_ggml_tensor * src) {
    if (g == nullptr) {
        failed_ = true;
        return;
    }
    g_->grads[i] = g;
    lm_ggml_format_name(g, "grad for %s", src->name);
    lm_ggml_build_forward_expand(g_, g);
}

void Builder::add(lm_ggml_tensor * src, lm_ggml_tensor * d) {
    const size_t i = slot(src);
    if (d == nullptr || i == LM_GGML_HASHSET_FULL) {
        failed_ = true;
        return;
    }
    lm_ggml_tensor * have = g_->grads[i];
    if (have == nullptr) {
        set(i, d, src);
        return;
    }
    set(i, g_->grad_accs[i] ? lm_ggml_add_inplace(ctx_, have, d) : lm_ggml_add(ctx_, have, d), src);
}

void Builder::sub(lm_ggml_tensor * src, lm_ggml_tensor * d) {
    const size_t i = slot(src);
    if (d == nullptr || i == LM_GGML_HASHSET_FULL) {
        failed_ = true;
        return;
    }
    lm_ggml_tensor * have = g_->grads[i];
    if (have == nullptr) {
        set(i, lm_ggml_neg(ctx_, d), src);
        return;
    }
    set(i, g_->grad_accs[i] ? lm_ggml_sub_inplace(ctx_, have, d) : lm_ggml_sub(ctx_, have, d), src);
}

void Builder::add1(lm_ggml_tensor * src, lm_ggml_tensor * d) {
    const size_t i = slot(src);
    if (d == nullptr || i == LM_GGML_HASHSET_FULL) {
        failed_ = true;
        return;
    }
    lm_ggml_tensor * have = g_->grads[i];
    if (have == nullptr) {
        set(i, lm_ggml_repeat(ctx_, d, src), src);
        return;
    }
    set(i, g_->grad_accs[i] ? lm_ggml_add1_inplace(ctx_, have, d) : lm_ggml_add1(ctx_, have, d), src);
}

void Builder::acc(lm_ggml_tensor * src, lm_ggml_tensor * d, size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    const size_t i = slot(src);
    if (d == nullptr || i == LM_GGML_HASHSET_FULL) {
        failed_ = true;
        return;
    }
    lm_ggml_tensor * have = g_->grads[i];
    if (have == nullptr) {
        // zeros shaped like src (as ggml: a non-finite src would give NaN here)
        lm_ggml_tensor * zero = lm_ggml_scale(ctx_, src, 0.0f);
        set(i, zero ? lm_ggml_acc(ctx_, zero, d, nb1, nb2, nb3, offset) : nullptr, src);
        return;
    }
    set(i,
        g_->grad_accs[i] ? lm_ggml_acc_inplace(ctx_, have, d, nb1, nb2, nb3, offset)
                         : lm_ggml_acc(ctx_, have, d, nb1, nb2, nb3, offset),
        src);
}

namespace {

bool is_view_op(lm_ggml_op op) {
    return op == LM_GGML_OP_CPY || op == LM_GGML_OP_VIEW || op == LM_GGML_OP_RESHAPE || op == LM_GGML_OP_PERMUTE ||
           op == LM_GGML_OP_TRANSPOSE;
}

// Everything that can be checked before the graph is touched: on failure the
// graph stays as it was. Fills `needed` (by hash slot).
bool plan(lm_ggml_cgraph * g, std::vector<char> & needed) {
    static const char * fn = "lm_ggml_build_backward_expand";
    const lm_ggml_hash_set & hs = g->visited_hash_set;
    auto slot = [&](const lm_ggml_tensor * t) { return lm_ggml_hash_find(&hs, t); };
    auto in_graph = [&](size_t i) { return i != LM_GGML_HASHSET_FULL && lm_ggml_bitset_get(hs.used, i); };

    bool any_param = false, any_loss = false;
    for (int i = 0; i < g->n_nodes; i++) {
        const lm_ggml_tensor * n = g->nodes[i];
        any_param = any_param || (n->flags & LM_GGML_TENSOR_FLAG_PARAM);
        if (n->flags & LM_GGML_TENSOR_FLAG_LOSS) {
            any_loss = true;
            if (n->type != LM_GGML_TYPE_F32 || !lm_ggml_is_scalar(n)) {
                LM_GGML_LOG_ERROR("%s: loss '%s' must be an F32 scalar\n", fn, n->name);
                return false;
            }
        }
    }
    if (!any_param) {
        LM_GGML_LOG_ERROR("%s: the graph has no parameter (lm_ggml_set_param)\n", fn);
        return false;
    }
    if (!any_loss) {
        LM_GGML_LOG_ERROR("%s: the graph has no loss (lm_ggml_set_loss)\n", fn);
        return false;
    }

    // forward: which nodes depend on a parameter
    for (int i = 0; i < g->n_nodes; i++) {
        const lm_ggml_tensor * n = g->nodes[i];
        if (n->type == LM_GGML_TYPE_I32) continue;
        bool need = (n->flags & (LM_GGML_TENSOR_FLAG_PARAM | LM_GGML_TENSOR_FLAG_LOSS)) != 0;
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            const lm_ggml_tensor * s = n->src[j];
            if (!s || ignores_src(n, j)) continue;
            const size_t k = slot(s);
            if (!in_graph(k) || !needed[k]) continue;
            if (s->type != LM_GGML_TYPE_F32 && s->type != LM_GGML_TYPE_F16) {
                LM_GGML_LOG_ERROR("%s: node '%s' (%s): source '%s' of type %s cannot carry a gradient\n", fn, n->name,
                                  lm_ggml_op_desc(n), s->name, lm_ggml_type_name(s->type));
                return false;
            }
            need = true;
        }
        if (!need) continue;
        if (n->view_src && !is_view_op(n->op)) {
            LM_GGML_LOG_ERROR("%s: node '%s' (%s) is in place: the backward pass does not support in-place ops\n", fn,
                              n->name, lm_ggml_op_desc(n));
            return false;
        }
        needed[slot(n)] = 1;
    }

    // backward: which nodes will receive a gradient, and whether each has a rule
    std::vector<char> gets(needed.size(), 0);
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        const lm_ggml_tensor * n = g->nodes[i];
        const size_t k = slot(n);
        if (!needed[k]) continue;
        if (n->flags & LM_GGML_TENSOR_FLAG_LOSS) gets[k] = 1;
        if (!gets[k]) continue;
        bool need[LM_GGML_MAX_SRC] = {};
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            const lm_ggml_tensor * s = n->src[j];
            if (!s || ignores_src(n, j)) continue;
            const size_t ks = slot(s);
            need[j] = in_graph(ks) && needed[ks];
        }
        if (const char * why = missing_rule(n, need)) {
            LM_GGML_LOG_ERROR("%s: node '%s' (%s): %s\n", fn, n->name, lm_ggml_op_desc(n), why);
            return false;
        }
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (need[j]) gets[slot(n->src[j])] = 1;
        }
    }
    return true;
}

void zero(lm_ggml_tensor * t) {
    if (t->buffer)
        lm_ggml_backend_tensor_memset(t, 0, 0, lm_ggml_nbytes(t));
    else
        std::memset(t->data, 0, lm_ggml_nbytes(t));
}

} // namespace

} // namespace lmggml::backward

using namespace lmggml::backward;

extern "C" void lm_ggml_build_backward_expand(struct lm_ggml_context * ctx_static, struct lm_ggml_context * ctx_compute,
                                              struct lm_ggml_cgraph * cgraph, bool accumulate) {
    static const char * fn = "lm_ggml_build_backward_expand";
    if (!ctx_static || !ctx_compute || !cgraph) {
        lm_ggml_null_arg(fn);
        return;
    }
    if (!cgraph->grads || !cgraph->grad_accs) {
        LM_GGML_LOG_ERROR(
            "%s: the graph has no gradient slots (create it with lm_ggml_new_graph_custom(..., grads = true))\n", fn);
        return;
    }
    if (cgraph->n_nodes == 0) {
        LM_GGML_LOG_ERROR("%s: the graph has no nodes\n", fn);
        return;
    }
    const size_t hs = cgraph->visited_hash_set.size;
    std::vector<char> needed(hs, 0);
    if (!plan(cgraph, needed)) return;

    std::memset(cgraph->grads, 0, hs * sizeof(lm_ggml_tensor *));
    std::memset(cgraph->grad_accs, 0, hs * sizeof(lm_ggml_tensor *));
    const int n_forward = cgraph->n_nodes;
    const int n_leafs = cgraph->n_leafs;
    bool ok = true;

    for (int i = 0; i < n_forward && ok; i++) {
        lm_ggml_tensor * n = cgraph->nodes[i];
        const size_t k = lm_ggml_hash_find(&cgraph->visited_hash_set, n);
        if (!needed[k]) continue;
        const bool loss = (n->flags & LM_GGML_TENSOR_FLAG_LOSS) != 0;
        if (loss || (accumulate && (n->flags & LM_GGML_TENSOR_FLAG_PARAM))) {
            lm_ggml_tensor * a = lm_ggml_dup_tensor(ctx_static, n);
            if (!a) {
                ok = false;
                break;
            }
            lm_ggml_format_name(a, "grad acc for %s", n->name);
            cgraph->grad_accs[k] = a;
            cgraph->grads[k] = a;
        }
    }

    Builder b(ctx_compute, cgraph, needed);
    for (int i = n_forward - 1; i >= 0 && ok && !b.failed(); i--) {
        lm_ggml_tensor * n = cgraph->nodes[i];
        lm_ggml_tensor * g = b.grad(n);
        if (g) b.apply(n, g);
    }
    if (!ok || b.failed()) {
        // leave the forward graph as it was, without gradients
        LM_GGML_LOG_ERROR("%s: out of memory in %s while building the backward graph\n", fn,
                          ok ? "ctx_compute" : "ctx_static");
        std::memset(cgraph->grads, 0, hs * sizeof(lm_ggml_tensor *));
        std::memset(cgraph->grad_accs, 0, hs * sizeof(lm_ggml_tensor *));
        for (int i = n_forward; i < cgraph->n_nodes; i++) {
            const size_t k = lm_ggml_hash_find(&cgraph->visited_hash_set, cgraph->nodes[i]);
            if (k != LM_GGML_HASHSET_FULL) lm_ggml_bitset_clear(cgraph->visited_hash_set.used, k);
        }
        for (int i = n_leafs; i < cgraph->n_leafs; i++) {
            const size_t k = lm_ggml_hash_find(&cgraph->visited_hash_set, cgraph->leafs[i]);
            if (k != LM_GGML_HASHSET_FULL) lm_ggml_bitset_clear(cgraph->visited_hash_set.used, k);
        }
        cgraph->n_nodes = n_forward;
        cgraph->n_leafs = n_leafs;
        return;
    }

    // every gradient has its tensor's shape (a rule bug otherwise)
    for (int i = 0; i < n_forward; i++) {
        const lm_ggml_tensor * n = cgraph->nodes[i];
        const lm_ggml_tensor * g = b.grad(n);
        if (g && !lm_ggml_are_same_shape(g, n)) {
            LM_GGML_LOG_ERROR("%s: gradient of '%s' (%s) has the wrong shape\n", fn, n->name, lm_ggml_op_desc(n));
        }
    }
}

extern "C" void lm_ggml_graph_reset(struct lm_ggml_cgraph * cgraph) {
    if (!cgraph) {
        lm_ggml_null_arg("lm_ggml_graph_reset");
        return;
    }
    if (!cgraph->grads) {
        LM_GGML_LOG_ERROR("lm_ggml_graph_reset: the graph has no gradients\n");
        return;
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        lm_ggml_tensor * n = cgraph->nodes[i];
        if (n->op == LM_GGML_OP_OPT_STEP_ADAMW) {
            // a fresh optimizer: first and second moments start at zero
            for (int j = 2; j <= 3; j++) {
                if (n->src[j] && (n->src[j]->buffer || n->src[j]->data)) zero(n->src[j]);
            }
        }
        lm_ggml_tensor * acc = lm_ggml_graph_get_grad_acc(cgraph, n);
        if (!acc) continue;
        if (!acc->buffer && !acc->data) {
            LM_GGML_LOG_ERROR("lm_ggml_graph_reset: gradient accumulator '%s' has no memory (allocate ctx_static)\n",
                              acc->name);
            continue;
        }
        if (n->flags & LM_GGML_TENSOR_FLAG_LOSS) {
            const float one = 1.0f; // dL/dL
            if (acc->buffer)
                lm_ggml_backend_tensor_set(acc, &one, 0, sizeof(one));
            else
                *static_cast<float *>(acc->data) = one;
        } else {
            zero(acc);
        }
    }
}

extern "C" struct lm_ggml_tensor * lm_ggml_graph_get_grad(const struct lm_ggml_cgraph * cgraph,
                                                          const struct lm_ggml_tensor * node) {
    if (!cgraph || !node) {
        lm_ggml_null_arg("lm_ggml_graph_get_grad");
        return nullptr;
    }
    if (!cgraph->grads) return nullptr;
    const size_t i = lm_ggml_hash_find(&cgraph->visited_hash_set, node);
    if (i == LM_GGML_HASHSET_FULL || !lm_ggml_bitset_get(cgraph->visited_hash_set.used, i)) return nullptr;
    return cgraph->grads[i];
}

extern "C" struct lm_ggml_tensor * lm_ggml_graph_get_grad_acc(const struct lm_ggml_cgraph * cgraph,
                                                              const struct lm_ggml_tensor * node) {
    if (!cgraph || !node) {
        lm_ggml_null_arg("lm_ggml_graph_get_grad_acc");
        return nullptr;
    }
    if (!cgraph->grad_accs) return nullptr;
    const size_t i = lm_ggml_hash_find(&cgraph->visited_hash_set, node);
    if (i == LM_GGML_HASHSET_FULL || !lm_ggml_bitset_get(cgraph->visited_hash_set.used, i)) return nullptr;
    return cgraph->grad_accs[i];
}

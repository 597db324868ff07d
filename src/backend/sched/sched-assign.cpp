// Scheduler passes 1-4: which backend runs each node, where each leaf lives.
//
// Priority order is the order of sched->backends (index 0 first); the last
// backend is the CPU, the fallback that can read host memory.
//   1. fixed placements: user overrides; tensors already in a buffer go to the
//      first backend that can use that buffer and run their op; INPUT leafs
//      without memory go to the CPU; a node reading a weight goes where the
//      weight is (a higher-priority backend may claim it through offload_op
//      when the weight is in host memory);
//   2. expansion: runs of unassigned nodes join their assigned neighbours when
//      that backend supports them, first around non-CPU backends, then around
//      any, so a device keeps whole stretches of the graph;
//   3. the rest: each unassigned node goes to the backend supporting it that
//      can read most of its inputs in place (ties: higher priority); an
//      assigned node moves up to a higher-priority backend that shares its
//      buffer type and can read all its inputs;
//   4. views follow their source; sources without a backend follow their
//      first consumer; whatever is still open (unused leafs) goes to the CPU.
// View-only ops (VIEW/RESHAPE/PERMUTE/TRANSPOSE) are skipped by passes 2-3.
// Every pass works on table slots (index_graph) rather than hashing pointers.

#include "backend/sched/sched-internal.h"

namespace lmggml::sched {

namespace {

constexpr int kFail = -2; // a tensor pinned to memory no backend can run it from

class Assigner {
public:
    Assigner(lm_ggml_backend_sched * s, lm_ggml_cgraph * g)
        : s_(s), tab_(s->table), g_(g), n_(static_cast<int>(s->backends.size())), cpu_(n_ - 1) {}

    bool run() {
        if (!fixed_placements()) return false;
        if (n_ > 1) {
            expand(true, true);   // non-CPU backends downwards
            expand(false, true);  // ... and upwards
            expand(true, false);  // then every backend downwards
            expand(false, false); // ... and upwards
        }
        if (!place_rest()) return false;
        follow_sources();
        return true;
    }

private:
    lm_ggml_backend_sched * s_;
    TensorTable & tab_;
    lm_ggml_cgraph * g_;
    const int n_;
    const int cpu_;

    int & id(int slot) { return tab_.backend((size_t) slot); }
    int node_slot(int i) const { return s_->node_slot[(size_t) i]; }
    int src_slot(int i, int j) const { return s_->src_slot[(size_t) i * LM_GGML_MAX_SRC + (size_t) j]; }

    bool supports_op(int b, const lm_ggml_tensor * op) const {
        return lm_ggml_backend_supports_op(s_->backends[(size_t) b], op);
    }

    // first backend that can use `buf` and run `op`, -1 if none
    int from_buffer(lm_ggml_backend_buffer_t buf, const lm_ggml_tensor * op) const {
        for (int b = 0; b < n_; b++) {
            if (lm_ggml_backend_supports_buft(s_->backends[(size_t) b], buf->buft) && supports_op(b, op)) return b;
        }
        return -1;
    }

    // pass 1 for one tensor: backend id, -1 (open) or kFail
    int initial(lm_ggml_tensor * t) {
        if (!s_->overrides.empty()) {
            auto it = s_->overrides.find(t);
            if (it != s_->overrides.end()) return it->second;
        }
        if (lm_ggml_backend_buffer_t buf = storage_buffer(t)) {
            const int b = from_buffer(buf, t);
            if (b < 0) {
                LM_GGML_LOG_ERROR("lm_ggml_backend_sched: tensor '%s' is pre-allocated in buffer %s, but no backend "
                                  "that can use that buffer supports its op %s\n",
                                  t->name, lm_ggml_backend_buffer_name(buf), lm_ggml_op_desc(t));
                return kFail;
            }
            return b;
        }
        if (t->flags & LM_GGML_TENSOR_FLAG_INPUT) {
            return cpu_;
        }
        // ROPE's frequency factors are too small a weight to decide by
        if (t->op == LM_GGML_OP_ROPE) {
            return -1;
        }
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            const lm_ggml_tensor * src = t->src[j];
            if (src == nullptr) continue;
            lm_ggml_backend_buffer_t sbuf = storage_buffer(src);
            if (sbuf == nullptr || lm_ggml_backend_buffer_get_usage(sbuf) != LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS) {
                continue;
            }
            const int b = from_buffer(sbuf, t);
            if (b == cpu_ && lm_ggml_backend_buffer_is_host(sbuf)) {
                for (int hb = 0; hb < cpu_; hb++) {
                    if (supports_op(hb, t) && lm_ggml_backend_offload_op(s_->backends[(size_t) hb], t)) return hb;
                }
            }
            return b;
        }
        return -1;
    }

    bool fixed_placements() {
        for (int i = 0; i < g_->n_leafs; i++) {
            const int b = initial(g_->leafs[i]);
            if (b == kFail) return false;
            id(s_->leaf_slot[(size_t) i]) = b;
        }
        for (int i = 0; i < g_->n_nodes; i++) {
            const int b = initial(g_->nodes[i]);
            if (b == kFail) return false;
            id(node_slot(i)) = b;
        }
        return true;
    }

    void expand(bool forward, bool skip_cpu) {
        int cur = -1;
        for (int k = 0; k < g_->n_nodes; k++) {
            const int i = forward ? k : g_->n_nodes - 1 - k;
            lm_ggml_tensor * node = g_->nodes[i];
            if (is_view_op(node->op)) continue;
            int & b = id(node_slot(i));
            if (b != -1) {
                cur = (skip_cpu && b == cpu_) ? -1 : b;
            } else if (cur != -1 && supports_op(cur, node)) {
                b = cur;
            }
        }
    }

    // the best backend for an unassigned node, -1 if none supports it
    int best_backend(int i, lm_ggml_tensor * node) {
        int best = -1, best_n = -1;
        for (int c = 0; c < n_; c++) {
            if (!supports_op(c, node)) continue;
            int n_ok = 0;
            for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
                const int ss = src_slot(i, j);
                if (ss < 0) continue;
                const int vs = tab_.view_slot((size_t) ss);
                const bool known = id(ss) != -1 || (vs >= 0 && id(vs) != -1);
                if (known && buffer_supported(s_, ss, c)) n_ok++;
            }
            if (n_ok > best_n) {
                best_n = n_ok;
                best = c;
            }
        }
        return best;
    }

    bool place_rest() {
        for (int i = 0; i < g_->n_nodes; i++) {
            lm_ggml_tensor * node = g_->nodes[i];
            if (is_view_op(node->op)) continue;
            int & b = id(node_slot(i));
            if (b == -1) {
                b = best_backend(i, node);
                if (b < 0) {
                    LM_GGML_LOG_ERROR("lm_ggml_backend_sched: no backend supports op %s for node '%s'\n",
                                      lm_ggml_op_desc(node), node->name);
                    return false;
                }
                continue;
            }
            for (int c = 0; c < b; c++) {
                if (s_->bufts[(size_t) c] != s_->bufts[(size_t) b] || !supports_op(c, node)) continue;
                bool all = true;
                for (int j = 0; j < LM_GGML_MAX_SRC && all; j++) {
                    const int ss = src_slot(i, j);
                    if (ss >= 0 && !buffer_supported(s_, ss, c)) all = false;
                }
                if (all) {
                    b = c;
                    break;
                }
            }
        }
        return true;
    }

    void follow_sources() {
        // views take their source's backend; open sources take their first consumer's
        for (int i = 0; i < g_->n_nodes; i++) {
            const int ns = node_slot(i);
            const int nv = tab_.view_slot((size_t) ns);
            if (nv >= 0 && id(ns) == -1) id(ns) = id(nv);
            const int node_b = id(ns);
            for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
                const int ss = src_slot(i, j);
                if (ss < 0 || id(ss) != -1) continue;
                const int vs = tab_.view_slot((size_t) ss);
                id(ss) = vs >= 0 ? id(vs) : node_b;
            }
        }
        // chains of views over open leafs: hand the consumer's backend upstream
        for (int i = g_->n_nodes - 1; i >= 0; i--) {
            const int node_b = id(node_slot(i));
            if (node_b == -1) continue;
            for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
                const int ss = src_slot(i, j);
                if (ss < 0) continue;
                if (id(ss) == -1) id(ss) = node_b;
                const int vs = tab_.view_slot((size_t) ss);
                if (vs >= 0 && id(vs) == -1) id(vs) = node_b;
            }
        }
        for (int i = 0; i < g_->n_nodes; i++) {
            if (id(node_slot(i)) == -1) id(node_slot(i)) = cpu_;
        }
        for (int i = 0; i < g_->n_leafs; i++) {
            if (id(s_->leaf_slot[(size_t) i]) == -1) id(s_->leaf_slot[(size_t) i]) = cpu_;
        }
    }
};

} // namespace

bool buffer_supported(const lm_ggml_backend_sched * s, int slot, int b) {
    const TensorTable & tab = s->table;
    lm_ggml_backend_buffer_t buf = storage_buffer(tab.key((size_t) slot));
    lm_ggml_backend_buffer_type_t buft = nullptr;
    if (buf != nullptr) {
        buft = buf->buft;
    } else {
        int tb = tab.backend((size_t) slot);
        const int vs = tab.view_slot((size_t) slot);
        if (tb < 0 && vs >= 0) tb = tab.backend((size_t) vs);
        if (tb >= 0) buft = s->bufts[(size_t) tb];
    }
    return buft != nullptr && lm_ggml_backend_supports_buft(s->backends[(size_t) b], buft);
}

bool assign_backends(lm_ggml_backend_sched * s, lm_ggml_cgraph * graph) { return Assigner(s, graph).run(); }

} // namespace lmggml::sched

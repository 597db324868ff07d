// Storage helpers of the scheduler: the per-graph tensor table and the pool
// that holds copy tensors.

#include "backend/sched/sched-internal.h"

#include <algorithm>
#include <functional>
#include <new>

namespace lmggml::sched {

bool TensorTable::prepare(size_t n) {
    if (n > (SIZE_MAX >> 8)) {
        return false; // no graph is that large: the capacity below would overflow
    }
    size_t cap = 64;
    int bits = 6;
    while (cap < 2 * n + 16) {
        cap <<= 1;
        bits++;
    }
    if (keys_.size() < cap) {
        try {
            used_.reserve(cap);
            keys_.assign(cap, nullptr);
            backend_.assign(cap, -1);
            copy_index_.assign(cap, -1);
            view_slot_.assign(cap, -1);
        } catch (const std::bad_alloc &) {
            keys_.clear();
            backend_.clear();
            copy_index_.clear();
            view_slot_.clear();
            used_.clear();
            mask_ = 0;
            shift_ = 64;
            return false;
        }
        used_.clear();
        mask_ = cap - 1;
        shift_ = 64 - bits;
        return true;
    }
    clear();
    return true;
}

void TensorTable::clear() {
    for (size_t i : used_) keys_[i] = nullptr;
    used_.clear();
}

size_t TensorTable::slot(lm_ggml_tensor * t) {
    if (keys_.empty()) {
        return SIZE_MAX;
    }
    size_t i = home(t);
    while (keys_[i] != nullptr) {
        if (keys_[i] == t) return i;
        i = (i + 1) & mask_;
    }
    if (used_.size() + 1 >= keys_.size()) {
        return SIZE_MAX; // keep one slot empty so probes always end
    }
    keys_[i] = t;
    backend_[i] = -1;
    copy_index_[i] = -1;
    view_slot_[i] = -1;
    used_.push_back(i); // capacity reserved in prepare: no allocation
    return i;
}

int TensorTable::backend_of(const lm_ggml_tensor * t) const {
    if (keys_.empty() || t == nullptr) {
        return -1;
    }
    size_t i = home(t);
    while (keys_[i] != nullptr) {
        if (keys_[i] == t) return backend_[i];
        i = (i + 1) & mask_;
    }
    return -1;
}

lm_ggml_tensor * TensorPool::take() {
    try {
        if (used_ == blocks_.size() * kBlock) {
            blocks_.push_back(std::make_unique<lm_ggml_tensor[]>(kBlock));
        }
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
    lm_ggml_tensor * t = &blocks_[used_ / kBlock][used_ % kBlock];
    used_++;
    *t = lm_ggml_tensor{};
    return t;
}

bool TensorPool::contains(const lm_ggml_tensor * t) const {
    const std::less<const lm_ggml_tensor *> lt;
    for (const auto & b : blocks_) {
        if (!lt(t, b.get()) && lt(t, b.get() + kBlock)) {
            return true;
        }
    }
    return false;
}

bool index_graph(lm_ggml_backend_sched * s, lm_ggml_cgraph * g) {
    TensorTable & tab = s->table;
    bool ok = true;
    // slot of t (and of its view source), -1 when the table is full
    auto put = [&](lm_ggml_tensor * t) -> int {
        const size_t i = tab.slot(t);
        if (i == SIZE_MAX) {
            ok = false;
            return -1;
        }
        if (t->view_src != nullptr && tab.view_slot(i) < 0) {
            const size_t v = tab.slot(t->view_src);
            if (v == SIZE_MAX) {
                ok = false;
                return -1;
            }
            tab.view_slot(i) = (int) v;
        }
        return (int) i;
    };
    s->leaf_slot.resize((size_t) g->n_leafs);
    s->node_slot.resize((size_t) g->n_nodes);
    s->src_slot.assign((size_t) g->n_nodes * LM_GGML_MAX_SRC, -1);
    for (int i = 0; i < g->n_leafs && ok; i++) {
        s->leaf_slot[(size_t) i] = put(g->leafs[i]);
    }
    for (int i = 0; i < g->n_nodes && ok; i++) {
        lm_ggml_tensor * node = g->nodes[i];
        s->node_slot[(size_t) i] = put(node);
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (node->src[j] != nullptr) s->src_slot[(size_t) i * LM_GGML_MAX_SRC + (size_t) j] = put(node->src[j]);
        }
    }
    if (!ok) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_sched: graph has more tensors than its node and leaf lists say\n");
    }
    return ok;
}

} // namespace lmggml::sched

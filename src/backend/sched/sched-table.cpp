// Storage helpers of the scheduler: the per-graph tensor table and the pool
// that holds copy tensors.

#include "backend/sched/sched-internal.h"

#include <algorithm>
#include <functional>
#include <new>

namespace lmggml::sched {

TensorTable::~TensorTable() {
    lm_ggml_hash_set_free(&set_);
}

bool TensorTable::prepare(size_t n) {
    // load factor <= 1/2 keeps linear probing short
    const size_t want = lm_ggml_hash_size(2 * n + 16);
    if (set_.size < want) {
        lm_ggml_hash_set fresh = lm_ggml_hash_set_new(want);
        if (fresh.keys == nullptr || fresh.used == nullptr) {
            lm_ggml_hash_set_free(&fresh);
            return false;
        }
        try {
            backend_.assign(fresh.size, -1);
            copy_index_.assign(fresh.size, -1);
        } catch (const std::bad_alloc &) {
            lm_ggml_hash_set_free(&fresh);
            return false;
        }
        lm_ggml_hash_set_free(&set_);
        set_ = fresh;
    }
    clear();
    return true;
}

void TensorTable::clear() {
    if (set_.size == 0) {
        return;
    }
    lm_ggml_hash_set_reset(&set_);
    std::fill(backend_.begin(), backend_.end(), -1);
    std::fill(copy_index_.begin(), copy_index_.end(), -1);
}

size_t TensorTable::slot(lm_ggml_tensor * t) {
    if (set_.size == 0) {
        return SIZE_MAX;
    }
    const size_t i = lm_ggml_hash_find_or_insert(&set_, t);
    return i == LM_GGML_HASHSET_FULL ? SIZE_MAX : i;
}

int TensorTable::backend_of(const lm_ggml_tensor * t) const {
    if (set_.size == 0 || t == nullptr) {
        return -1;
    }
    const size_t i = lm_ggml_hash_find(&set_, t);
    if (i == LM_GGML_HASHSET_FULL || !lm_ggml_bitset_get(set_.used, i)) {
        return -1;
    }
    return backend_[i];
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

} // namespace lmggml::sched

// Dynamic chunks of one node (kernel.h: lm_cpu_chunks_*).
//
// Thread t's slot holds (epoch, front, back) of its share in one 64-bit word:
// the owner takes `front`, thieves take `back - 1`, both by compare-and-swap,
// so a chunk goes to exactly one thread. The epoch is the node's node_seq:
// only the owner writes a new epoch (when it starts the node), and a thief
// only takes from a slot whose epoch is its own node, so a thread that runs
// ahead into the next node (no barrier between independent nodes) never
// touches a share of the node before, and a slow owner never sees its share
// reset under it. Until the owner starts, its slot holds an older epoch and
// nobody takes from it.
#include "cpu/chunks.h"

#include <algorithm>

namespace {

constexpr int64_t kMaxDynamicChunks = 0xffff; // front and back are 16 bits

constexpr uint64_t pack(uint32_t epoch, uint64_t front, uint64_t back) {
    return (uint64_t) epoch << 32 | front << 16 | back;
}
constexpr uint32_t epoch_of(uint64_t s) { return (uint32_t) (s >> 32); }
constexpr int64_t front_of(uint64_t s) { return (int64_t) ((s >> 16) & 0xffff); }
constexpr int64_t back_of(uint64_t s) { return (int64_t) (s & 0xffff); }

void share_of(int64_t n, int ith, int nth, int64_t * b, int64_t * e) {
    const int64_t per = (n + nth - 1) / nth;
    *b = std::min<int64_t>(per * ith, n);
    *e = std::min<int64_t>(*b + per, n);
}

// Takes a run from the front (owner) or the back (thief) of slot s for
// epoch: at most max_take chunks and at most half of what is left (at least
// one). False when the slot is empty or belongs to another node.
bool take(std::atomic<uint64_t> & s, uint32_t epoch, bool front, int64_t max_take, int64_t * begin, int64_t * end) {
    uint64_t cur = s.load(std::memory_order_relaxed);
    for (;;) {
        const int64_t f = front_of(cur), b = back_of(cur);
        if (epoch_of(cur) != epoch || f >= b) {
            return false;
        }
        const int64_t n = std::max<int64_t>(1, std::min(max_take, (b - f) / 2));
        const uint64_t next =
            front ? pack(epoch, (uint64_t) (f + n), (uint64_t) b) : pack(epoch, (uint64_t) f, (uint64_t) (b - n));
        if (s.compare_exchange_weak(cur, next, std::memory_order_relaxed, std::memory_order_relaxed)) {
            *begin = front ? f : b - n;
            *end = front ? f + n : b;
            return true;
        }
    }
}

} // namespace

void lm_cpu_chunks_begin(const lm_cpu_params * params, int64_t n, int64_t max_take, lm_cpu_chunk_iter * it) {
    share_of(n, params->ith, params->nth, &it->next, &it->end);
    it->max_take = std::max<int64_t>(1, max_take);
    it->victim = 0;
    it->dynamic = params->chunks != nullptr && params->nth > 1 && n <= kMaxDynamicChunks && params->node_seq > 0;
    if (it->dynamic) {
        params->chunks[params->ith].v.store(pack(params->node_seq, (uint64_t) it->next, (uint64_t) it->end),
                                            std::memory_order_relaxed);
    }
}

int lm_cpu_chunks_next(const lm_cpu_params * params, lm_cpu_chunk_iter * it, int64_t * begin, int64_t * end) {
    if (!it->dynamic) {
        if (it->next >= it->end) {
            return 0;
        }
        *begin = it->next;
        *end = std::min(it->end, it->next + it->max_take);
        it->next = *end;
        return 1;
    }
    if (take(params->chunks[params->ith].v, params->node_seq, true, it->max_take, begin, end)) {
        return 1;
    }
    // own share done: the others', nearest thread first, from their backs
    for (; it->victim < params->nth - 1; ++it->victim) {
        const int v = (params->ith + 1 + it->victim) % params->nth;
        if (take(params->chunks[v].v, params->node_seq, false, it->max_take, begin, end)) {
            return 1;
        }
    }
    return 0;
}

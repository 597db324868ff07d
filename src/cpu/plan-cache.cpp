// The CPU backend's plan cache (plan-cache.h).
#include "cpu/plan-cache.h"

#include "cpu/cpu-internal.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace {

constexpr size_t kCacheLine = 64; // as lm_ggml_graph_plan pads the scratch

uint64_t word(const void * p) { return (uint64_t) (uintptr_t) p; }

// Words are either appended to a key (store) or compared with one, stopping
// at the first difference.
struct Appender {
    std::vector<uint64_t> & out;
    bool put(uint64_t w) {
        out.push_back(w);
        return true;
    }
};

struct Comparer {
    const uint64_t * next;
    const uint64_t * end;
    bool put(uint64_t w) { return next != end && *next++ == w; }
};

// The fields of t that validation, barrier placement and the kernels'
// supports / work_size callbacks read.
template <class Sink> bool put_tensor(Sink & s, const lm_ggml_tensor * t) {
    if (!s.put(word(t)) || t == nullptr) {
        return t == nullptr;
    }
    bool ok = s.put((uint64_t) (uint32_t) t->op | (uint64_t) (uint32_t) t->type << 32) &&
              s.put((uint64_t) (uint32_t) t->flags);
    for (int d = 0; d < LM_GGML_MAX_DIMS && ok; ++d) {
        ok = s.put((uint64_t) t->ne[d]) && s.put((uint64_t) t->nb[d]);
    }
    return ok && s.put(word(t->data)) && s.put(word(t->buffer)) &&
           s.put(word(t->buffer != nullptr ? t->buffer->buft : nullptr)) && s.put(word(t->view_src));
}

bool computed(const lm_ggml_tensor * node) { return node != nullptr && !lm_cpu_node_is_noop(node); }

// Words of one node at most: its fields, op parameters, source pointers;
// where its view_src and its source pointers are among them.
constexpr size_t kTensorWords = 15;
constexpr size_t kViewWord = kTensorWords - 1;
constexpr size_t kSrcWords = kTensorWords + LM_GGML_MAX_OP_PARAMS / sizeof(uint64_t);
constexpr size_t kNodeWords = kSrcWords + LM_GGML_MAX_SRC;

// Fills a node's words into a fixed buffer.
struct Buffer {
    uint64_t w[kNodeWords];
    size_t n = 0;
    bool put(uint64_t x) {
        w[n++] = x;
        return true;
    }
};

// A node's words: its fields, and for a node the walk computes also its op
// parameters and source pointers (the sources' fields are in their own words).
template <class Sink> bool put_node(Sink & s, const lm_ggml_tensor * node) {
    if (!put_tensor(s, node)) return false;
    if (!computed(node)) return true;
    uint64_t params[LM_GGML_MAX_OP_PARAMS / (sizeof(uint64_t))];
    static_assert(sizeof(node->op_params) == sizeof(params), "op_params are whole words");
    std::memcpy(params, node->op_params, sizeof(params));
    for (uint64_t p : params) {
        if (!s.put(p)) return false;
    }
    for (const lm_ggml_tensor * src : node->src) {
        if (!s.put(word(src))) return false;
    }
    return true;
}

// fn(t) for every tensor a computed node reads fields of besides itself.
template <class Fn> bool for_each_read(const lm_ggml_tensor * node, Fn fn) {
    if (node->view_src != nullptr && !fn(node->view_src)) return false;
    for (const lm_ggml_tensor * src : node->src) {
        if (src == nullptr) continue;
        if (!fn(src) || (src->view_src != nullptr && !fn(src->view_src))) return false;
    }
    return true;
}

// The tensor in read slot k of for_each_read(node): 0 its view_src, then
// 1 + 2j src[j] and 2 + 2j src[j]->view_src (NULL where there is none).
const lm_ggml_tensor * read_at(const lm_ggml_tensor * node, int32_t k) {
    if (k == 0) return node->view_src;
    const lm_ggml_tensor * src = node->src[(k - 1) / 2];
    if (src == nullptr || (k - 1) % 2 == 0) return src;
    return src->view_src;
}

// Appends the graph indices of the nodes node reads fields of, itself first.
void node_reads(const lm_ggml_tensor * node, const std::unordered_map<const lm_ggml_tensor *, int32_t> & index,
                std::vector<int32_t> & out) {
    out.push_back(index.at(node));
    for_each_read(node, [&](const lm_ggml_tensor * t) {
        const auto it = index.find(t);
        if (it != index.end()) out.push_back(it->second);
        return true;
    });
}

// The walk's thread count for a plan (lm_ggml_graph_plan: cplan.n_threads).
int walk_threads(const lm_cpu_plan_cache & c) { return std::min(c.max_tasks, c.n_threads); }

// Validates node i again and redoes its share of the plan; false: invalid.
bool replan_node(lm_cpu_plan_cache & c, const lm_ggml_tensor * node, int i) {
    if (!lm_cpu_validate_node(node, i, false)) {
        return false;
    }
    int n_tasks = 1;
    size_t work = 0;
    lm_cpu_node_plan(node, c.n_threads, &n_tasks, &work);
    // maxima never shrink here: a larger scratch or thread count stays correct
    c.max_tasks = std::max(c.max_tasks, n_tasks);
    c.max_work = std::max(c.max_work, work);
    if (!c.access.empty()) {
        lm_cpu_node_access_of(node, lm_cpu_find_op(node), walk_threads(c), &c.access[(size_t) i]);
    }
    return true;
}

} // namespace

bool lm_cpu_plan_cache_update(lm_cpu_plan_cache & c, const lm_ggml_cgraph * g, int n_threads, bool every_node) {
    const int n = g != nullptr ? g->n_nodes : -1;
    if (c.key.empty() || n < 0 || (size_t) n + 1 != c.start.size() || n_threads != c.n_threads ||
        every_node != c.every_node) {
        return false;
    }
    Comparer outside{c.key.data() + c.start[(size_t) n], c.key.data() + c.key.size()};
    for (size_t o = 0; o < c.outside.size(); ++o) {
        // reached through g, never through the stored pointer (see outside_at)
        const lm_ggml_tensor * t = read_at(g->nodes[c.outside_at[o].first], c.outside_at[o].second);
        if (t != c.outside[o] || !put_tensor(outside, t)) {
            return false; // a weight or input moved or changed: plan it all again
        }
    }
    std::vector<uint8_t> & changed = c.changed;
    changed.assign((size_t) n, 0);
    bool any = false;
    for (int i = 0; i < n; ++i) {
        const lm_ggml_tensor * node = g->nodes[i];
        uint64_t * k0 = c.key.data() + c.start[(size_t) i];
        const size_t len = c.start[(size_t) i + 1] - c.start[(size_t) i];
        Buffer b;
        put_node(b, node);
        if (b.n == len && std::memcmp(b.w, k0, len * sizeof(uint64_t)) == 0) {
            continue;
        }
        // a node may move or change shape, not become another tensor or
        // another kind of node, nor view or read other tensors (the read
        // lists and the outside tensors would be out of date)
        if (b.n != len || b.w[0] != k0[0] || b.w[kViewWord] != k0[kViewWord] ||
            (len == kNodeWords &&
             std::memcmp(b.w + kSrcWords, k0 + kSrcWords, LM_GGML_MAX_SRC * sizeof(uint64_t)) != 0)) {
            return false;
        }
        std::memcpy(k0, b.w, len * sizeof(uint64_t));
        changed[(size_t) i] = 1;
        any = true;
    }
    if (!any) {
        return true;
    }
    const int threads_before = walk_threads(c);
    bool replanned = false;
    for (int i = 0; i < n; ++i) {
        bool touched = false;
        for (uint32_t r = c.read_start[(size_t) i]; r < c.read_start[(size_t) i + 1] && !touched; ++r) {
            touched = changed[(size_t) c.reads[r]] != 0;
        }
        if (!touched) {
            continue; // also every node the walk skips: they have no reads
        }
        if (!replan_node(c, g->nodes[i], i)) {
            return false;
        }
        replanned = true;
    }
    if (walk_threads(c) != threads_before) {
        return false; // every node's access depends on the walk's thread count
    }
    if (replanned && !c.access.empty()) {
        lm_cpu_place_barriers(c.access.data(), n, every_node, c.sync.data());
    }
    return true;
}

lm_ggml_cplan lm_cpu_plan_cache_cplan(const lm_cpu_plan_cache & c, lm_ggml_threadpool * pool) {
    lm_ggml_cplan cplan{};
    cplan.threadpool = pool;
    cplan.n_threads = walk_threads(c);
    cplan.work_size = c.max_work > 0 ? c.max_work + kCacheLine * (size_t) c.n_threads : 0;
    return cplan;
}

bool lm_cpu_plan_cache_seen_twice(lm_cpu_plan_cache & c, const lm_ggml_cgraph * g) {
    const int n = g->n_nodes;
    const uint64_t now[4] = {word(g), (uint64_t) n, word(n > 0 ? g->nodes[0] : nullptr),
                             word(n > 0 ? g->nodes[n - 1] : nullptr)};
    const bool twice = std::memcmp(now, c.seen, sizeof(now)) == 0;
    std::memcpy(c.seen, now, sizeof(now));
    return twice;
}

void lm_cpu_plan_cache_store(lm_cpu_plan_cache & c, const lm_ggml_cgraph * g, int n_threads, bool every_node,
                             std::vector<lm_cpu_node_sync> && sync, std::vector<lm_cpu_node_access> && access) {
    lm_cpu_plan_cache_clear(c);
    const int n = g->n_nodes;
    Appender a{c.key};
    c.start.reserve((size_t) n + 1);
    std::unordered_map<const lm_ggml_tensor *, int32_t> index; // node -> its (first) index
    for (int i = 0; i < n; ++i) {
        c.start.push_back((uint32_t) c.key.size());
        put_node(a, g->nodes[i]);
        index.emplace(g->nodes[i], i);
    }
    c.start.push_back((uint32_t) c.key.size());
    std::unordered_set<const lm_ggml_tensor *> seen; // outside tensors so far
    for (int i = 0; i < n; ++i) {
        const lm_ggml_tensor * node = g->nodes[i];
        if (!computed(node)) continue;
        for (int32_t k = 0; k < 1 + 2 * LM_GGML_MAX_SRC; ++k) { // for_each_read's order
            const lm_ggml_tensor * t = read_at(node, k);
            if (t != nullptr && index.count(t) == 0 && seen.insert(t).second) {
                c.outside.push_back(t);
                c.outside_at.emplace_back(i, k);
                put_tensor(a, t);
            }
        }
    }
    c.read_start.reserve((size_t) n + 1);
    for (int i = 0; i < n; ++i) {
        c.read_start.push_back((uint32_t) c.reads.size());
        if (computed(g->nodes[i])) {
            node_reads(g->nodes[i], index, c.reads);
        }
    }
    c.read_start.push_back((uint32_t) c.reads.size());
    c.n_threads = n_threads;
    c.every_node = every_node;
    c.max_tasks = 1;
    c.max_work = 0;
    for (int i = 0; i < n; ++i) {
        if (!computed(g->nodes[i])) continue;
        int n_tasks = 1;
        size_t work = 0;
        lm_cpu_node_plan(g->nodes[i], n_threads, &n_tasks, &work);
        c.max_tasks = std::max(c.max_tasks, n_tasks);
        c.max_work = std::max(c.max_work, work);
    }
    c.sync = std::move(sync);
    c.access = std::move(access);
}

void lm_cpu_plan_cache_clear(lm_cpu_plan_cache & c) {
    c.key.clear();
    c.start.clear();
    c.outside.clear();
    c.outside_at.clear();
    c.reads.clear();
    c.read_start.clear();
    c.changed.clear();
    c.access.clear();
    c.sync.clear();
}

// plan-cache: after nodes move in place, the updated barrier plan, node
// accesses and cplan equal those made from scratch for the graph as it is
// now (lm_cpu_plan_sync, lm_cpu_node_access_of, lm_ggml_graph_plan); changes
// the cache cannot follow node by node are refused.

#include "cpu/cpu-internal.h"
#include "cpu/plan-cache.h"

#include "ggml-cpu.h"
#include "ggml.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

constexpr int64_t kN = 8192; // above kLightNodeElements: every thread works
constexpr int64_t kSlots = 4;

// y = x + x stored into one slot of a cache; big reads only slot 2, so
// whether it must wait for the store depends on where the store is.
struct Graph {
    lm_ggml_context * ctx;
    lm_ggml_tensor *x, *cache, *view, *store, *big, *after;
    lm_ggml_cgraph * gf;
    int slot = 0;
    Graph() {
        lm_ggml_init_params p = {16 * 1024 * 1024, nullptr, false};
        ctx = lm_ggml_init(p);
        x = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, kN);
        cache = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, kN, kSlots);
        view = lm_ggml_view_1d(ctx, cache, kN, 0);
        store = lm_ggml_cpy(ctx, lm_ggml_add(ctx, x, x), view);
        big = lm_ggml_add(ctx, lm_ggml_view_1d(ctx, cache, kN, 2 * kN * sizeof(float)), x);
        after = lm_ggml_add(ctx, store, x);
        gf = lm_ggml_new_graph(ctx);
        lm_ggml_build_forward_expand(gf, store);
        lm_ggml_build_forward_expand(gf, big);
        lm_ggml_build_forward_expand(gf, after);
    }
    ~Graph() { lm_ggml_free(ctx); }
    void move_to(int s) {
        const int64_t bytes = (int64_t) (s - slot) * kN * (int64_t) sizeof(float);
        for (lm_ggml_tensor * t : {view, store}) {
            t->data = (char *) t->data + bytes;
            t->view_offs = (size_t) ((int64_t) t->view_offs + bytes);
        }
        slot = s;
    }
    int index_of(const lm_ggml_tensor * t) const {
        for (int i = 0; i < gf->n_nodes; ++i)
            if (gf->nodes[i] == t) return i;
        return -1;
    }
};

// Stores g in cache as the CPU backend does after computing it.
void store(lm_cpu_plan_cache & cache, const Graph & g, int n_threads) {
    const lm_ggml_cplan cplan = lm_ggml_graph_plan(g.gf, n_threads, nullptr);
    std::vector<lm_cpu_node_sync> sync;
    std::vector<lm_cpu_node_access> access;
    if (cplan.n_threads > 1) {
        lm_cpu_plan_sync(g.gf, cplan.n_threads, false, sync);
        access.resize((size_t) g.gf->n_nodes);
        for (int i = 0; i < g.gf->n_nodes; ++i) {
            const lm_ggml_tensor * node = g.gf->nodes[i];
            lm_cpu_node_access_of(node, lm_cpu_node_is_noop(node) ? nullptr : lm_cpu_find_op(node), cplan.n_threads,
                                  &access[(size_t) i]);
        }
    }
    lm_cpu_plan_cache_store(cache, g.gf, n_threads, false, std::move(sync), std::move(access));
}

bool same_span(lm_cpu_span a, lm_cpu_span b) { return a.lo == b.lo && a.hi == b.hi; }

// The cache's plan for g equals one made from scratch.
void expect_fresh(const lm_cpu_plan_cache & cache, const Graph & g, int n_threads) {
    const lm_ggml_cplan fresh = lm_ggml_graph_plan(g.gf, n_threads, nullptr);
    const lm_ggml_cplan got = lm_cpu_plan_cache_cplan(cache, nullptr);
    EXPECT_EQ(got.n_threads, fresh.n_threads);
    EXPECT_EQ(got.work_size, fresh.work_size);
    if (fresh.n_threads == 1) {
        return;
    }
    std::vector<lm_cpu_node_sync> sync;
    lm_cpu_plan_sync(g.gf, fresh.n_threads, false, sync);
    ASSERT_EQ(cache.sync.size(), sync.size());
    for (size_t i = 0; i < sync.size(); ++i) {
        EXPECT_EQ(cache.sync[i].solo, sync[i].solo) << "node " << i;
        EXPECT_EQ(cache.sync[i].sync_before, sync[i].sync_before) << "node " << i;
        const lm_ggml_tensor * node = g.gf->nodes[i];
        lm_cpu_node_access a;
        lm_cpu_node_access_of(node, lm_cpu_node_is_noop(node) ? nullptr : lm_cpu_find_op(node), fresh.n_threads, &a);
        EXPECT_TRUE(same_span(cache.access[i].write, a.write)) << "node " << i;
        ASSERT_EQ(cache.access[i].n_reads, a.n_reads) << "node " << i;
        for (int r = 0; r < a.n_reads; ++r)
            EXPECT_TRUE(same_span(cache.access[i].reads[r], a.reads[r])) << "node " << i;
    }
}

} // namespace

TEST(PlanCache, MovedStoresGetTheBarriersAFreshPlanHas) {
    for (int n_threads : {1, 2, 3}) {
        Graph g;
        lm_cpu_plan_cache cache;
        store(cache, g, n_threads);
        ASSERT_TRUE(lm_cpu_plan_cache_update(cache, g.gf, n_threads, false)) << "the same graph";
        expect_fresh(cache, g, n_threads);
        for (int s : {2, 1, 2, 3, 0}) {
            g.move_to(s);
            ASSERT_TRUE(lm_cpu_plan_cache_update(cache, g.gf, n_threads, false)) << "slot " << s;
            expect_fresh(cache, g, n_threads);
            if (n_threads > 1) {
                EXPECT_EQ(cache.sync[(size_t) g.index_of(g.big)].sync_before, s == 2)
                    << "big reads slot 2 only: it waits for the store there, slot " << s;
            }
        }
    }
}

TEST(PlanCache, ChangesItCannotFollowNodeByNodeAreRefused) {
    Graph g;
    lm_cpu_plan_cache cache;
    EXPECT_FALSE(lm_cpu_plan_cache_update(cache, g.gf, 2, false)) << "nothing stored";
    store(cache, g, 2);
    EXPECT_FALSE(lm_cpu_plan_cache_update(cache, g.gf, 3, false)) << "another thread count";
    EXPECT_FALSE(lm_cpu_plan_cache_update(cache, g.gf, 2, true)) << "an abort callback";

    g.after->src[1] = g.cache; // a node reads another tensor
    EXPECT_FALSE(lm_cpu_plan_cache_update(cache, g.gf, 2, false));
    g.after->src[1] = g.x;
    store(cache, g, 2);

    void * data = g.x->data; // a tensor outside the nodes (an input) moved
    g.x->data = g.cache->data;
    EXPECT_FALSE(lm_cpu_plan_cache_update(cache, g.gf, 2, false));
    g.x->data = data;
    store(cache, g, 2);

    data = g.store->data;
    g.store->data = nullptr; // a node that moved is invalid now
    EXPECT_FALSE(lm_cpu_plan_cache_update(cache, g.gf, 2, false));
    g.store->data = data;
    store(cache, g, 2);

    g.gf->n_nodes -= 1; // fewer nodes
    EXPECT_FALSE(lm_cpu_plan_cache_update(cache, g.gf, 2, false));
    g.gf->n_nodes += 1;
}

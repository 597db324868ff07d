// graph-sync: the plan puts a barrier where a node reads what another
// thread's node wrote, and none between independent nodes.

#include "cpu/graph-sync.h"

#include "ggml.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

struct Ctx {
    lm_ggml_context * ctx;
    Ctx() {
        lm_ggml_init_params p = {8 * 1024 * 1024, nullptr, false};
        ctx = lm_ggml_init(p);
    }
    ~Ctx() { lm_ggml_free(ctx); }
};

} // namespace

// Two big element-wise nodes on every thread: the second reads the first's
// output (a barrier), a third reads only a leaf and writes elsewhere (none).
TEST(GraphSync, BarrierOnlyWhereANodeReadsAnotherThreadsWrites) {
    Ctx c;
    const int64_t n = 8192; // above kLightNodeElements: every thread works
    lm_ggml_tensor * x = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * y = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * a = lm_ggml_add(c.ctx, x, x); // writes a
    lm_ggml_tensor * b = lm_ggml_add(c.ctx, y, y); // independent of a
    lm_ggml_tensor * d = lm_ggml_add(c.ctx, a, b); // reads a and b
    lm_ggml_tensor * small = lm_ggml_add(c.ctx, lm_ggml_view_1d(c.ctx, d, 16, 0), lm_ggml_view_1d(c.ctx, d, 16, 0));
    lm_ggml_cgraph * gf = lm_ggml_new_graph(c.ctx);
    lm_ggml_build_forward_expand(gf, a);
    lm_ggml_build_forward_expand(gf, b);
    lm_ggml_build_forward_expand(gf, d);
    lm_ggml_build_forward_expand(gf, small);
    std::vector<lm_cpu_node_sync> plan;
    lm_cpu_plan_sync(gf, 2, false, plan);
    ASSERT_EQ(plan.size(), (size_t) lm_ggml_graph_n_nodes(gf));
    auto at = [&](const lm_ggml_tensor * t) {
        for (int i = 0; i < lm_ggml_graph_n_nodes(gf); ++i)
            if (lm_ggml_graph_node(gf, i) == t) return plan[(size_t) i];
        ADD_FAILURE() << "node not in graph";
        return lm_cpu_node_sync{};
    };
    EXPECT_FALSE(at(a).solo);
    EXPECT_FALSE(at(b).sync_before) << "b does not touch a";
    EXPECT_TRUE(at(d).sync_before) << "d reads a and b";
    EXPECT_TRUE(at(small).solo) << "16 elements: thread 0 alone";
    EXPECT_TRUE(at(small).sync_before) << "reads d, written by every thread";

    std::vector<lm_cpu_node_sync> every;
    lm_cpu_plan_sync(gf, 2, true, every);
    EXPECT_TRUE(every[1].sync_before && every[2].sync_before) << "every_node";
}

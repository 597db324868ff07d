// graph-sync and OPT_STEP_ADAMW: the op writes two of its sources (the
// moments m and v) besides its result, so a node reading m after it must
// wait at a barrier, and the step must wait for nodes still reading m.

#include "cpu/graph-sync.h"

#include "ggml.h"

#include <gtest/gtest.h>

#include <vector>

TEST(GraphSync, AdamwStepIsFencedOnBothSides) {
    lm_ggml_init_params ip = {8 * 1024 * 1024, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    ASSERT_NE(ctx, nullptr);
    const int64_t n = 8192; // above kLightNodeElements: every thread works
    lm_ggml_tensor * w = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, n);
    lm_ggml_set_param(ctx, w);
    lm_ggml_tensor * g = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * m0 = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * v = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * p = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 7);
    lm_ggml_tensor * m = lm_ggml_scale(ctx, m0, 1.0f); // written by every thread
    lm_ggml_tensor * before = lm_ggml_add(ctx, m, g);  // reads m before the step
    lm_ggml_tensor * step = lm_ggml_opt_step_adamw(ctx, w, g, m, v, p);
    lm_ggml_tensor * after = lm_ggml_add(ctx, m, m); // reads the updated m
    ASSERT_NE(step, nullptr);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, before);
    lm_ggml_build_forward_expand(gf, step);
    lm_ggml_build_forward_expand(gf, after);
    std::vector<lm_cpu_node_sync> plan;
    lm_cpu_plan_sync(gf, 2, false, plan);
    auto at = [&](const lm_ggml_tensor * t) {
        for (int i = 0; i < lm_ggml_graph_n_nodes(gf); ++i)
            if (lm_ggml_graph_node(gf, i) == t) return plan[(size_t) i];
        ADD_FAILURE() << "node not in graph";
        return lm_cpu_node_sync{};
    };
    EXPECT_FALSE(at(step).solo);
    EXPECT_TRUE(at(step).sync_before) << "the step overwrites m, which 'before' reads";
    EXPECT_TRUE(at(after).sync_before) << "'after' reads m, which the step writes";
    lm_ggml_free(ctx);
}

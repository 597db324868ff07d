// Graph construction: node order, leafs, sizes and views.
#include <gtest/gtest.h>

#include "ggml.h"

namespace {

// Builds nodes by hand (op set directly) so this test needs only the core.
lm_ggml_tensor * node(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    t->op = LM_GGML_OP_ADD;
    t->src[0] = a;
    t->src[1] = b;
    return t;
}

TEST(Graph, NodesAreInDependencyOrderAndDeduplicated) {
    lm_ggml_init_params p = {1 << 20, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * x = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    lm_ggml_tensor * y = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    lm_ggml_tensor * a = node(ctx, x, y);
    lm_ggml_tensor * b = node(ctx, a, x);
    lm_ggml_tensor * c = node(ctx, a, b); // a reached twice
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    ASSERT_NE(g, nullptr);
    lm_ggml_build_forward_expand(g, c);
    ASSERT_EQ(lm_ggml_graph_n_nodes(g), 3);
    EXPECT_EQ(lm_ggml_graph_node(g, 0), a);
    EXPECT_EQ(lm_ggml_graph_node(g, 1), b);
    EXPECT_EQ(lm_ggml_graph_node(g, 2), c);
    EXPECT_EQ(lm_ggml_graph_node(g, -1), c);
    EXPECT_EQ(lm_ggml_graph_node(g, 3), nullptr);
    EXPECT_EQ(lm_ggml_graph_nodes(g)[1], b);
    EXPECT_EQ(lm_ggml_graph_size(g), LM_GGML_DEFAULT_GRAPH_SIZE);
    EXPECT_STREQ(x->name, "leaf_0");
    EXPECT_EQ(lm_ggml_graph_get_tensor(g, "leaf_1"), y);
    // expanding again with a known root adds nothing
    lm_ggml_build_forward_expand(g, b);
    EXPECT_EQ(lm_ggml_graph_n_nodes(g), 3);
    lm_ggml_graph_clear(g);
    EXPECT_EQ(lm_ggml_graph_n_nodes(g), 0);
    lm_ggml_free(ctx);
}

TEST(Graph, OverheadCoversGraphAllocation) {
    const size_t sz = lm_ggml_graph_overhead_custom(64, false);
    lm_ggml_init_params p = {sz, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    EXPECT_NE(lm_ggml_new_graph_custom(ctx, 64, false), nullptr);
    EXPECT_EQ(lm_ggml_new_graph_custom(ctx, 64, false), nullptr); // arena full: error, not crash
    lm_ggml_free(ctx);
    EXPECT_GT(lm_ggml_graph_overhead(), lm_ggml_graph_overhead_custom(64, false));
}

TEST(Graph, DeepChainsDoNotOverflowTheStack) {
    const int n = 100000;
    lm_ggml_init_params p = {
        (size_t) n * (lm_ggml_tensor_overhead() + 64) + lm_ggml_graph_overhead_custom(n + 1, false), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    for (int i = 0; i < n - 1; i++) t = node(ctx, t, nullptr);
    lm_ggml_cgraph * g = lm_ggml_new_graph_custom(ctx, n + 1, false);
    lm_ggml_build_forward_expand(g, t);
    EXPECT_EQ(lm_ggml_graph_n_nodes(g), n - 1);
    lm_ggml_free(ctx);
}

TEST(Graph, DupCopiesNodes) {
    lm_ggml_init_params p = {1 << 20, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * x = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    lm_ggml_tensor * a = node(ctx, x, x);
    lm_ggml_cgraph * g = lm_ggml_new_graph_custom(ctx, 16, false);
    lm_ggml_build_forward_expand(g, a);
    lm_ggml_cgraph * d = lm_ggml_graph_dup(ctx, g);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(lm_ggml_graph_n_nodes(d), 1);
    EXPECT_EQ(lm_ggml_graph_node(d, 0), a);
    lm_ggml_build_forward_expand(d, a); // visited set copied too
    EXPECT_EQ(lm_ggml_graph_n_nodes(d), 1);
    lm_ggml_free(ctx);
}

} // namespace

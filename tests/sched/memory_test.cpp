// Scheduler memory: reserve, buffer sizes per backend, reuse of intermediates
// and copies.

#include "sched_fixture.h"

#include <set>

namespace schedtest {
namespace {

void set_input(const PingPong & g, int seed) {
    const std::vector<float> x = make_input(g.T, seed);
    lm_ggml_backend_tensor_set(g.x, x.data(), 0, x.size() * sizeof(float));
}

// Bytes of every distinct tensor the scheduler placed in a compute buffer of
// `buft` (nodes, and sources including the copies they read): what the graph
// would need without any reuse. *largest gets the biggest single tensor.
size_t naive_bytes(lm_ggml_cgraph * gf, lm_ggml_backend_buffer_type_t buft, size_t * largest) {
    std::set<const lm_ggml_tensor *> seen;
    size_t total = 0;
    *largest = 0;
    auto add = [&](lm_ggml_tensor * t) {
        if (t == nullptr || t->view_src != nullptr || t->buffer == nullptr || !seen.insert(t).second) return;
        if (lm_ggml_backend_buffer_get_usage(t->buffer) != LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE) return;
        if (lm_ggml_backend_buffer_get_type(t->buffer) != buft) return;
        const size_t n = lm_ggml_backend_buft_get_alloc_size(buft, t);
        total += n;
        if (n > *largest) *largest = n;
    };
    for (int i = 0; i < lm_ggml_graph_n_nodes(gf); i++) {
        lm_ggml_tensor * node = lm_ggml_graph_node(gf, i);
        add(node);
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) add(node->src[j]);
    }
    return total;
}

TEST_F(SchedTest, ReserveThenSmallerGraphsDoNotGrowTheBuffers) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    PingPong m;
    m.build(w, 32);
    ASSERT_TRUE(lm_ggml_backend_sched_reserve(s, m.graph));
    const size_t cpu0 = lm_ggml_backend_sched_get_buffer_size(s, cpu);
    const size_t ref0 = lm_ggml_backend_sched_get_buffer_size(s, ref);
    // x (kept for the whole graph) plus at least one (n, 32) f32 intermediate
    EXPECT_GE(cpu0, 2u * kN * 32 * sizeof(float));
    EXPECT_GE(ref0, 2u * kN * 32 * sizeof(float));
    // reserving leaves the measure graph as it found it
    EXPECT_EQ(m.layer_nodes[2]->src[0], m.layer_nodes[1]);
    EXPECT_EQ(m.x->buffer, nullptr);

    for (int T : {1, 7, 16, 32}) {
        lm_ggml_backend_sched_reset(s);
        PingPong g;
        g.build(w, T);
        ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph)) << T;
        set_input(g, 50 + T);
        ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, g.graph), LM_GGML_STATUS_SUCCESS);
        expect_exact(g.out, reference(w, make_input(T, 50 + T), T)["out"], "T=" + std::to_string(T));
        EXPECT_EQ(lm_ggml_backend_sched_get_buffer_size(s, cpu), cpu0) << T;
        EXPECT_EQ(lm_ggml_backend_sched_get_buffer_size(s, ref), ref0) << T;
    }
    // the measure graph itself is still a valid graph to run
    lm_ggml_backend_sched_reset(s);
    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, m.graph));
    set_input(m, 60);
    ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, m.graph), LM_GGML_STATUS_SUCCESS);
    expect_exact(m.out, reference(w, make_input(32, 60), 32)["out"], "measure graph");
    EXPECT_EQ(lm_ggml_backend_sched_get_buffer_size(s, cpu), cpu0);
}

TEST_F(SchedTest, BufferSizeIsPerBackend) {
    {
        Weights w;
        ASSERT_TRUE(w.init(ref));
        lm_ggml_backend_sched_t s = make_sched();
        ASSERT_NE(s, nullptr);
        PingPong g;
        g.build(w, 4);
        ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
        for (lm_ggml_backend_t b : {cpu, ref}) {
            size_t largest = 0;
            const size_t naive = naive_bytes(g.graph, lm_ggml_backend_get_default_buffer_type(b), &largest);
            const size_t got = lm_ggml_backend_sched_get_buffer_size(s, b);
            EXPECT_GT(largest, 0u) << lm_ggml_backend_name(b);
            EXPECT_GE(got, largest) << lm_ggml_backend_name(b);
            EXPECT_LT(got, naive) << lm_ggml_backend_name(b) << ": no reuse at all?";
        }
    }
    {
        // weights and work on the CPU: REFDEV gets no compute buffer
        Weights w;
        ASSERT_TRUE(w.init(cpu));
        lm_ggml_backend_sched_t s = make_sched();
        ASSERT_NE(s, nullptr);
        PingPong g;
        g.build(w, 4);
        ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
        EXPECT_EQ(lm_ggml_backend_sched_get_buffer_size(s, ref), 0u);
        EXPECT_GT(lm_ggml_backend_sched_get_buffer_size(s, cpu), 0u);
    }
}

TEST_F(SchedTest, CopiesAndIntermediatesAreReusedSoDepthCostsNoMemory) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    size_t cpu_size[2], ref_size[2], naive_cpu[2];
    const int depth[2] = {2, 8};
    for (int k = 0; k < 2; k++) {
        lm_ggml_backend_sched_t s = make_sched();
        ASSERT_NE(s, nullptr);
        PingPong g;
        g.build(w, 4, depth[k]);
        ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
        EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 1 + 4 * depth[k]);
        EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 1 + 4 * depth[k]);
        set_input(g, 70 + k);
        ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, g.graph), LM_GGML_STATUS_SUCCESS);
        expect_exact(g.out, reference(w, make_input(4, 70 + k), 4, depth[k])["out"],
                     "depth " + std::to_string(depth[k]), depth[k] <= 2 ? 0.0 : 1e-5);
        cpu_size[k] = lm_ggml_backend_sched_get_buffer_size(s, cpu);
        ref_size[k] = lm_ggml_backend_sched_get_buffer_size(s, ref);
        size_t largest = 0;
        naive_cpu[k] = naive_bytes(g.graph, lm_ggml_backend_cpu_buffer_type(), &largest);
    }
    EXPECT_EQ(cpu_size[1], cpu_size[0]);
    EXPECT_EQ(ref_size[1], ref_size[0]);
    EXPECT_GT(naive_cpu[1], 3 * cpu_size[1]);
}

} // namespace
} // namespace schedtest

// What the scheduler's getters report between calls, as in ggml 1.4.1: the
// split count (and lmggml's input count) of the last graph split survives
// sched_reserve and sched_reset (ggml's reset clears the tensor assignments,
// not n_splits); tensor backends are known only while a graph is allocated.

#include "sched_fixture.h"

namespace schedtest {
namespace {

TEST_F(SchedTest, ReserveKeepsTheSplitCountAndForgetsAssignments) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 0); // nothing split yet
    PingPong m;
    m.build(w, 4);
    ASSERT_TRUE(lm_ggml_backend_sched_reserve(s, m.graph));
    // ggml: 5 after reserve (llama logs it as "graph splits"); lmggml said 0
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 5);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 5);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_copies(s), 1);
    // reserve ends with a reset: no tensor has a backend any more
    for (lm_ggml_tensor * t : m.layer_nodes)
        EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, t), nullptr) << t->name;
    EXPECT_GT(lm_ggml_backend_sched_get_buffer_size(s, cpu), 0u);
    EXPECT_GT(lm_ggml_backend_sched_get_buffer_size(s, ref), 0u);

    lm_ggml_backend_sched_reset(s);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 5);
}

TEST_F(SchedTest, SplitCountSurvivesResetUntilTheNextGraph) {
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    Weights on_ref, on_cpu;
    ASSERT_TRUE(on_ref.init(ref));
    ASSERT_TRUE(on_cpu.init(cpu));
    PingPong a, b;
    a.build(on_ref, 4);
    b.build(on_cpu, 4);

    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, a.graph));
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 5);
    EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, a.layer_nodes[0]), ref);
    lm_ggml_backend_sched_reset(s);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 5);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 5);
    EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, a.layer_nodes[0]), nullptr);

    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, b.graph));
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 1);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 0);
    lm_ggml_backend_sched_reset(s);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 1);
}

TEST_F(SchedTest, ParallelReserveReportsPipelineCopies) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched(/*parallel=*/true);
    ASSERT_NE(s, nullptr);
    PingPong m;
    m.build(w, 4);
    ASSERT_TRUE(lm_ggml_backend_sched_reserve(s, m.graph));
    EXPECT_EQ(lm_ggml_backend_sched_get_n_copies(s), 4);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 5);
}

} // namespace
} // namespace schedtest

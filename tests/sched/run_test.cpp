// Scheduler at run time: pipeline mode over several evaluations, repeated
// evaluation of one graph, the eval callback, and clean failures.

#include "sched_fixture.h"

#include <cstring>

namespace schedtest {
namespace {

void set_input(const PingPong & g, int seed) {
    const std::vector<float> x = make_input(g.T, seed);
    lm_ggml_backend_tensor_set(g.x, x.data(), 0, x.size() * sizeof(float));
}

TEST_F(SchedTest, PipelineModeWithAFreshGraphPerEvaluation) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched(/*parallel=*/true);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_copies(s), 4);
    for (int e = 0; e < 6; e++) {
        lm_ggml_backend_sched_reset(s);
        PingPong g;
        g.build(w, 3);
        ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph)) << "evaluation " << e;
        EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 5);
        EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 5);
        // this evaluation's copy slot
        const std::string want = std::string(lm_ggml_backend_name(cpu)) + "#h2_0#" + std::to_string(e % 4);
        EXPECT_EQ(std::string(g.layer_nodes[2]->src[0]->name), want);
        set_input(g, 10 + e);
        ASSERT_EQ(lm_ggml_backend_sched_graph_compute_async(s, g.graph), LM_GGML_STATUS_SUCCESS);
        lm_ggml_backend_sched_synchronize(s);
        expect_exact(g.out, reference(w, make_input(3, 10 + e), 3)["out"], "evaluation " + std::to_string(e));
    }
}

TEST_F(SchedTest, OneAllocatedGraphComputedRepeatedlyWithNewInputs) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    for (bool parallel : {false, true}) {
        lm_ggml_backend_sched_t s = make_sched(parallel);
        ASSERT_NE(s, nullptr);
        PingPong g;
        g.build(w, 5);
        for (int e = 0; e < 6; e++) {
            if (e == 0) {
                ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
            }
            set_input(g, 20 + e);
            ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, g.graph), LM_GGML_STATUS_SUCCESS);
            expect_exact(g.out, reference(w, make_input(5, 20 + e), 5)["out"],
                         std::string(parallel ? "parallel" : "serial") + " evaluation " + std::to_string(e));
            // readers follow the rotating copy slots
            const int slot = parallel ? e % 4 : 0;
            EXPECT_EQ(std::string(g.layer_nodes[2]->src[0]->name),
                      std::string(lm_ggml_backend_name(cpu)) + "#h2_0#" + std::to_string(slot));
        }
    }
}

struct Observed {
    std::vector<std::string> asked, seen;
    std::map<std::string, std::vector<double>> ref;
    std::vector<std::string> wanted; // empty: every node
    std::string stop_at;
    int mismatches = 0;
};

bool observe(lm_ggml_tensor * t, bool ask, void * ud) {
    auto * o = static_cast<Observed *>(ud);
    if (ask) {
        o->asked.push_back(t->name);
        if (o->wanted.empty()) return true;
        for (const auto & n : o->wanted) {
            if (n == t->name) return true;
        }
        return false;
    }
    o->seen.push_back(t->name);
    auto it = o->ref.find(t->name);
    if (it != o->ref.end()) {
        const std::vector<float> got = read(t);
        for (size_t i = 0; i < got.size(); i++) {
            if ((double) got[i] != it->second[i]) o->mismatches++;
        }
    } else {
        o->mismatches++;
    }
    return o->stop_at != t->name;
}

TEST_F(SchedTest, EvalCallbackSeesEveryNodeInOrderWithItsValue) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    Observed o;
    lm_ggml_backend_sched_set_eval_callback(s, observe, &o);
    PingPong g;
    g.build(w, 4, 2);
    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
    set_input(g, 30);
    o.ref = reference(w, make_input(4, 30), 4, 2);
    ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, g.graph), LM_GGML_STATUS_SUCCESS);
    std::vector<std::string> nodes;
    for (int i = 0; i < lm_ggml_graph_n_nodes(g.graph); i++) nodes.push_back(lm_ggml_graph_node(g.graph, i)->name);
    EXPECT_EQ(nodes.size(), 14u); // 2 x (h1..h6) + s_0 + out
    EXPECT_EQ(o.seen, nodes);
    EXPECT_EQ(o.asked, nodes);
    EXPECT_EQ(o.mismatches, 0);
}

TEST_F(SchedTest, EvalCallbackObservesOnlyWhatItAsksFor) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    Observed o;
    o.wanted = {"h3_0", "h4_0", "out"};
    lm_ggml_backend_sched_set_eval_callback(s, observe, &o);
    PingPong g;
    g.build(w, 2);
    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
    set_input(g, 31);
    o.ref = reference(w, make_input(2, 31), 2);
    ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, g.graph), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(o.seen, o.wanted);
    EXPECT_EQ(o.asked.size(), 7u);
    EXPECT_EQ(o.mismatches, 0);
}

TEST_F(SchedTest, EvalCallbackReturningFalseCancelsTheRest) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    Observed o;
    o.stop_at = "h3_0";
    lm_ggml_backend_sched_set_eval_callback(s, observe, &o);
    PingPong g;
    g.build(w, 2);
    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
    set_input(g, 32);
    o.ref = reference(w, make_input(2, 32), 2);
    const uint64_t before = refdev_nodes_computed();
    EXPECT_EQ(lm_ggml_backend_sched_graph_compute(s, g.graph), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(o.seen, (std::vector<std::string>{"h1_0", "h2_0", "h3_0"}));
    EXPECT_EQ(o.asked, o.seen); // nothing after the cancel is even asked about
    EXPECT_EQ(refdev_nodes_computed() - before, 2u);
    EXPECT_EQ(o.mismatches, 0);

    // without the callback the same scheduler runs the next graph to the end
    lm_ggml_backend_sched_set_eval_callback(s, nullptr, nullptr);
    lm_ggml_backend_sched_reset(s);
    PingPong g2;
    g2.build(w, 2);
    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g2.graph));
    set_input(g2, 33);
    ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, g2.graph), LM_GGML_STATUS_SUCCESS);
    expect_exact(g2.out, reference(w, make_input(2, 33), 2)["out"], "after cancel");
}

TEST_F(SchedTest, AnOpNoBackendSupportsFailsCleanly) {
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    lm_ggml_init_params p{lm_ggml_tensor_overhead() * 8 + lm_ggml_graph_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * ai = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 8);
    lm_ggml_set_input(ai);
    // every op has a CPU kernel: a type combination neither the CPU nor
    // REFDEV implements (square root of integers)
    lm_ggml_tensor * bad = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 8);
    bad->op = LM_GGML_OP_SQRT;
    bad->src[0] = ai;
    lm_ggml_set_name(bad, "the_bad_node");
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, bad);
    ASSERT_FALSE(lm_ggml_backend_supports_op(cpu, bad));
    ASSERT_FALSE(lm_ggml_backend_supports_op(ref, bad));
    {
        LogCapture log;
        EXPECT_FALSE(lm_ggml_backend_sched_alloc_graph(s, gf));
        EXPECT_TRUE(log.contains("no backend supports op SQRT for node 'the_bad_node'")) << log.text();
    }
    {
        LogCapture log;
        EXPECT_NE(lm_ggml_backend_sched_graph_compute(s, gf), LM_GGML_STATUS_SUCCESS);
        EXPECT_GE(log.errors(), 1);
    }
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 0);
    lm_ggml_free(ctx);

    // the scheduler stays usable
    Weights w;
    ASSERT_TRUE(w.init(ref));
    PingPong g;
    g.build(w, 2);
    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
    set_input(g, 40);
    ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, g.graph), LM_GGML_STATUS_SUCCESS);
    expect_exact(g.out, reference(w, make_input(2, 40), 2)["out"], "after failure");
}

TEST_F(SchedTest, APreallocatedNodeWhoseDeviceLacksTheOpFailsCleanly) {
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    lm_ggml_init_params p{lm_ggml_tensor_overhead() * 8 + lm_ggml_graph_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * x = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 8);
    lm_ggml_set_input(x);
    lm_ggml_tensor * a = lm_ggml_abs(ctx, x); // REFDEV cannot compute ABS...
    lm_ggml_set_name(a, "abs_on_refdev");
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_buffer(ref, 1024);
    ASSERT_NE(buf, nullptr);
    lm_ggml_backend_tensor_alloc(buf, a, lm_ggml_backend_buffer_get_base(buf)); // ...but a lives there
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, a);
    {
        LogCapture log;
        EXPECT_FALSE(lm_ggml_backend_sched_alloc_graph(s, gf));
        EXPECT_TRUE(log.contains("abs_on_refdev")) << log.text();
        EXPECT_TRUE(log.contains("pre-allocated")) << log.text();
    }
    lm_ggml_backend_buffer_free(buf);
    lm_ggml_free(ctx);
}

TEST_F(SchedTest, SplittingAnAlreadySplitGraphIsRefused) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    PingPong g;
    g.build(w, 2);
    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
    lm_ggml_backend_sched_reset(s);
    LogCapture log;
    EXPECT_FALSE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
    EXPECT_TRUE(log.contains("already split")) << log.text();
}

TEST_F(SchedTest, BadArgumentsAreReportedNotFatal) {
    LogCapture log;
    lm_ggml_backend_t wrong_order[2] = {cpu, ref};
    EXPECT_EQ(lm_ggml_backend_sched_new(wrong_order, nullptr, 2, 64, false), nullptr);
    EXPECT_TRUE(log.contains("last backend must be the CPU")) << log.text();
    EXPECT_EQ(lm_ggml_backend_sched_new(nullptr, nullptr, 1, 64, false), nullptr);
    EXPECT_EQ(lm_ggml_backend_sched_new(&cpu, nullptr, 0, 64, false), nullptr);
    lm_ggml_backend_t twice[2] = {cpu, cpu};
    EXPECT_EQ(lm_ggml_backend_sched_new(twice, nullptr, 2, 64, false), nullptr);
    lm_ggml_backend_buffer_type_t bad_bufts[2] = {lm_ggml_backend_cpu_buffer_type(), nullptr};
    lm_ggml_backend_t both[2] = {ref, cpu};
    EXPECT_EQ(lm_ggml_backend_sched_new(both, bad_bufts, 2, 64, false), nullptr); // REFDEV cannot use host memory
    const int errors_before = log.errors();
    EXPECT_GE(errors_before, 5);

    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_backends(s), 2);
    EXPECT_EQ(lm_ggml_backend_sched_get_backend(s, 0), ref);
    EXPECT_EQ(lm_ggml_backend_sched_get_backend(s, 1), cpu);
    EXPECT_EQ(lm_ggml_backend_sched_get_backend(s, 2), nullptr);
    EXPECT_EQ(lm_ggml_backend_sched_get_backend(s, -1), nullptr);
    lm_ggml_backend_t other = lm_ggml_backend_cpu_init();
    EXPECT_EQ(lm_ggml_backend_sched_get_buffer_size(s, other), 0u);
    lm_ggml_tensor dummy{};
    lm_ggml_backend_sched_set_tensor_backend(s, &dummy, other);
    EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, &dummy), nullptr);
    lm_ggml_backend_free(other);
    EXPECT_FALSE(lm_ggml_backend_sched_alloc_graph(s, nullptr));
    EXPECT_NE(lm_ggml_backend_sched_graph_compute(s, nullptr), LM_GGML_STATUS_SUCCESS);
    EXPECT_FALSE(lm_ggml_backend_sched_reserve(nullptr, nullptr));
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(nullptr), 0);
    lm_ggml_backend_sched_reset(nullptr);
    lm_ggml_backend_sched_synchronize(nullptr);
    lm_ggml_backend_sched_free(nullptr); // like free(NULL): silent
    EXPECT_GE(log.errors(), errors_before + 9);
}

} // namespace
} // namespace schedtest

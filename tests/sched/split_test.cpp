// Scheduler: backend assignment, splits and input copies across CPU + REFDEV,
// checked against exact integer references.

#include "sched_fixture.h"

namespace schedtest {
namespace {

std::string name_of(lm_ggml_backend_t b) { return b ? lm_ggml_backend_name(b) : "NULL"; }

void set_input(const PingPong & g, int seed) {
    const std::vector<float> x = make_input(g.T, seed);
    lm_ggml_backend_tensor_set(g.x, x.data(), 0, x.size() * sizeof(float));
}

TEST_F(SchedTest, PingPongAlternatesDevicesWithExactResults) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    PingPong g;
    g.build(w, 4);
    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));

    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 5);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 5); // x, h2, h3, h4, h5
    EXPECT_EQ(lm_ggml_backend_sched_get_n_copies(s), 1);
    const char * want[] = {"REF", "REF", "CPU", "REF", "CPU", "REF"};
    for (int k = 0; k < 6; k++) {
        lm_ggml_backend_t b = lm_ggml_backend_sched_get_tensor_backend(s, g.layer_nodes[(size_t) k]);
        EXPECT_EQ(b, std::string(want[k]) == "REF" ? ref : cpu)
            << g.layer_nodes[(size_t) k]->name << " on " << name_of(b);
    }
    EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, g.out), ref);
    EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, g.x), cpu);
    // consumers read copies named "<backend>#<source>#<copy>"
    EXPECT_EQ(std::string(g.layer_nodes[2]->src[0]->name), name_of(cpu) + "#h2_0#0");
    EXPECT_EQ(std::string(g.layer_nodes[0]->src[1]->name), name_of(ref) + "#x#0");

    set_input(g, 0);
    const uint64_t before = refdev_nodes_computed();
    ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, g.graph), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(refdev_nodes_computed() - before, 5u); // h1 h2 h4 h6 out
    expect_exact(g.out, reference(w, make_input(4, 0), 4)["out"], "ping-pong");
}

TEST_F(SchedTest, WeightsOnCpuStayThereUnlessTheDeviceWantsTheOp) {
    Weights w;
    ASSERT_TRUE(w.init(cpu));
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    {
        // small batch: REFDEV does not want the products, nothing leaves the CPU
        PingPong g;
        g.build(w, 4);
        ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
        EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 1);
        EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 0);
        for (lm_ggml_tensor * t : g.layer_nodes)
            EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, t), cpu) << t->name;
        set_input(g, 1);
        ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, g.graph), LM_GGML_STATUS_SUCCESS);
        expect_exact(g.out, reference(w, make_input(4, 1), 4)["out"], "cpu only");
    }
    lm_ggml_backend_sched_reset(s);
    {
        // 32 tokens: REFDEV's offload_op claims the matrix products, the weights are copied over
        PingPong g;
        g.build(w, 32);
        ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
        const char * want[] = {"REF", "CPU", "CPU", "REF", "CPU", "CPU"};
        for (int k = 0; k < 6; k++) {
            lm_ggml_backend_t b = lm_ggml_backend_sched_get_tensor_backend(s, g.layer_nodes[(size_t) k]);
            EXPECT_EQ(b, std::string(want[k]) == "REF" ? ref : cpu) << g.layer_nodes[(size_t) k]->name;
        }
        EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 4);
        EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 6); // x W1 | h1 | h3 W2 | h4
        set_input(g, 2);
        ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, g.graph), LM_GGML_STATUS_SUCCESS);
        expect_exact(g.out, reference(w, make_input(32, 2), 32)["out"], "offloaded");
    }
}

TEST_F(SchedTest, ForcedPlacementsAreHonoured) {
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    const int n = 16;
    std::vector<float> xv(n);
    for (int i = 0; i < n; i++) xv[(size_t) i] = (float) (i % 7 - 3);
    auto build = [&](lm_ggml_context ** ctx, lm_ggml_tensor ** x, lm_ggml_tensor * nodes[3]) {
        lm_ggml_init_params p{lm_ggml_tensor_overhead() * 8 + lm_ggml_graph_overhead(), nullptr, true};
        *ctx = lm_ggml_init(p);
        *x = lm_ggml_new_tensor_1d(*ctx, LM_GGML_TYPE_F32, n);
        lm_ggml_set_name(*x, "x");
        lm_ggml_set_input(*x);
        nodes[0] = lm_ggml_add(*ctx, *x, *x);             // 2x
        nodes[1] = lm_ggml_mul(*ctx, nodes[0], nodes[0]); // 4x^2
        nodes[2] = lm_ggml_scale(*ctx, nodes[1], 0.5f);   // 2x^2
        lm_ggml_set_output(nodes[2]);
        lm_ggml_cgraph * gf = lm_ggml_new_graph(*ctx);
        lm_ggml_build_forward_expand(gf, nodes[2]);
        return gf;
    };
    auto check = [&](lm_ggml_cgraph * gf, lm_ggml_tensor * x, lm_ggml_tensor * outp) {
        lm_ggml_backend_tensor_set(x, xv.data(), 0, xv.size() * sizeof(float));
        ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, gf), LM_GGML_STATUS_SUCCESS);
        std::vector<double> want(n);
        for (int i = 0; i < n; i++) want[(size_t) i] = 2.0 * xv[(size_t) i] * xv[(size_t) i];
        expect_exact(outp, want, "forced");
    };

    // unforced: no weights anywhere, everything stays on the CPU
    {
        lm_ggml_context * ctx;
        lm_ggml_tensor * x;
        lm_ggml_tensor * nd[3];
        lm_ggml_cgraph * gf = build(&ctx, &x, nd);
        ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, gf));
        EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 1);
        EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, nd[1]), cpu);
        check(gf, x, nd[2]);
        lm_ggml_free(ctx);
    }
    // the product forced onto REFDEV pulls its neighbours along (expansion)
    {
        lm_ggml_backend_sched_reset(s);
        lm_ggml_context * ctx;
        lm_ggml_tensor * x;
        lm_ggml_tensor * nd[3];
        lm_ggml_cgraph * gf = build(&ctx, &x, nd);
        lm_ggml_backend_sched_set_tensor_backend(s, nd[1], ref);
        EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, nd[1]), ref); // visible before allocation
        ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, gf));
        for (lm_ggml_tensor * t : nd) EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, t), ref) << t->name;
        EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 1);
        EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 1); // x
        const uint64_t before = refdev_nodes_computed();
        check(gf, x, nd[2]);
        EXPECT_EQ(refdev_nodes_computed() - before, 3u);
        lm_ggml_free(ctx);
    }
    // pinning the first node to the CPU cuts the graph in two
    {
        lm_ggml_backend_sched_reset(s);
        lm_ggml_context * ctx;
        lm_ggml_tensor * x;
        lm_ggml_tensor * nd[3];
        lm_ggml_cgraph * gf = build(&ctx, &x, nd);
        lm_ggml_backend_sched_set_tensor_backend(s, nd[0], cpu);
        lm_ggml_backend_sched_set_tensor_backend(s, nd[1], ref);
        ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, gf));
        EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, nd[0]), cpu);
        EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, nd[2]), ref);
        EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 2);
        EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 1); // nd[0]
        check(gf, x, nd[2]);
        lm_ggml_free(ctx);
    }
    // reset forgets placements
    lm_ggml_backend_sched_reset(s);
    {
        lm_ggml_context * ctx;
        lm_ggml_tensor * x;
        lm_ggml_tensor * nd[3];
        build(&ctx, &x, nd);
        EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, nd[1]), nullptr);
        lm_ggml_free(ctx);
    }
}

TEST_F(SchedTest, ForcingANodeOfThePingPongAddsItsCopies) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    PingPong g;
    g.build(w, 3);
    lm_ggml_backend_sched_set_tensor_backend(s, g.layer_nodes[1], cpu); // h2 = h1 + b1 on the CPU
    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
    EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, g.layer_nodes[1]), cpu);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 5);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 6); // x | h1 b1 | h3 | h4 | h5
    set_input(g, 3);
    ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, g.graph), LM_GGML_STATUS_SUCCESS);
    expect_exact(g.out, reference(w, make_input(3, 3), 3)["out"], "forced h2");
}

TEST_F(SchedTest, AnInputForcedOntoTheDeviceIsAllocatedThere) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    PingPong g;
    g.build(w, 3);
    lm_ggml_backend_sched_set_tensor_backend(s, g.x, ref);
    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, g.graph));
    ASSERT_NE(g.x->buffer, nullptr);
    EXPECT_FALSE(lm_ggml_backend_buffer_is_host(g.x->buffer));
    EXPECT_EQ(g.layer_nodes[0]->src[1], g.x); // read in place, no copy
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 5);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 4); // h2, h3, h4, h5
    set_input(g, 4);
    ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, g.graph), LM_GGML_STATUS_SUCCESS);
    expect_exact(g.out, reference(w, make_input(3, 4), 3)["out"], "x on REFDEV");
}

TEST_F(SchedTest, ViewsFollowTheirSourceAndStartNoSplit) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    const int T = 4;
    lm_ggml_init_params p{lm_ggml_tensor_overhead() * 16 + lm_ggml_graph_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, kN, T);
    lm_ggml_set_input(x);
    lm_ggml_tensor * h1 = lm_ggml_mul_mat(ctx, w.W1, x);             // (n, T)
    lm_ggml_tensor * r = lm_ggml_reshape_2d(ctx, h1, kN / 2, 2 * T); // view
    lm_ggml_tensor * r2 = lm_ggml_reshape_2d(ctx, r, kN, T);         // view
    lm_ggml_tensor * h2 = lm_ggml_add(ctx, r2, w.b1);
    lm_ggml_tensor * tr = lm_ggml_transpose(ctx, h2); // view (T, n)
    lm_ggml_tensor * o = lm_ggml_cont(ctx, tr);       // (T, n)
    lm_ggml_set_output(o);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, o);
    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, gf));
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 1);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 1);
    for (lm_ggml_tensor * t : {h1, r, r2, h2, tr, o}) EXPECT_EQ(lm_ggml_backend_sched_get_tensor_backend(s, t), ref);

    const std::vector<float> xv = make_input(T, 5);
    lm_ggml_backend_tensor_set(x, xv.data(), 0, xv.size() * sizeof(float));
    ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, gf), LM_GGML_STATUS_SUCCESS);
    const std::vector<double> h2ref = reference(w, xv, T)["h2_0"];
    std::vector<double> want((size_t) kN * T);
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < kN; i++) want[(size_t) (t + i * T)] = h2ref[(size_t) (i + t * kN)];
    }
    expect_exact(o, want, "transposed");
    lm_ggml_free(ctx);
}

TEST_F(SchedTest, ATensorCopiedOnceServesLaterSplitsOnThatBackend) {
    Weights w;
    ASSERT_TRUE(w.init(ref));
    lm_ggml_backend_sched_t s = make_sched();
    ASSERT_NE(s, nullptr);
    const int T = 2;
    lm_ggml_init_params p{lm_ggml_tensor_overhead() * 16 + lm_ggml_graph_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, kN, T);
    lm_ggml_set_input(x);
    lm_ggml_tensor * h1 = lm_ggml_mul_mat(ctx, w.W1, x);  // REFDEV
    lm_ggml_tensor * c1 = lm_ggml_abs(ctx, h1);           // CPU, reads a copy of h1
    lm_ggml_tensor * h2 = lm_ggml_mul_mat(ctx, w.W2, c1); // REFDEV
    lm_ggml_tensor * c2 = lm_ggml_neg(ctx, h2);           // CPU
    lm_ggml_tensor * c3 = lm_ggml_concat(ctx, c2, h1, 0); // CPU, reuses the copy of h1
    lm_ggml_set_output(c3);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, c3);
    ASSERT_TRUE(lm_ggml_backend_sched_alloc_graph(s, gf));
    EXPECT_EQ(lm_ggml_backend_sched_get_n_splits(s), 4);
    EXPECT_EQ(lm_ggml_backend_sched_get_n_inputs(s), 4); // x, h1, c1, h2
    EXPECT_EQ(c3->src[1], c1->src[0]);                   // one copy of h1 on the CPU

    const std::vector<float> xv = make_input(T, 6);
    lm_ggml_backend_tensor_set(x, xv.data(), 0, xv.size() * sizeof(float));
    ASSERT_EQ(lm_ggml_backend_sched_graph_compute(s, gf), LM_GGML_STATUS_SUCCESS);
    std::vector<double> xd(xv.begin(), xv.end());
    std::vector<double> r1((size_t) kN * T), r2((size_t) kN * T);
    for (int t = 0; t < T; t++) {
        for (int o = 0; o < kN; o++) {
            double a = 0;
            for (int i = 0; i < kN; i++) a += w.w1[(size_t) (i + o * kN)] * xd[(size_t) (i + t * kN)];
            r1[(size_t) (o + t * kN)] = a;
        }
    }
    for (int t = 0; t < T; t++) {
        for (int o = 0; o < kN; o++) {
            double a = 0;
            for (int i = 0; i < kN; i++) a += w.w2[(size_t) (i + o * kN)] * std::abs(r1[(size_t) (i + t * kN)]);
            r2[(size_t) (o + t * kN)] = a;
        }
    }
    std::vector<double> want((size_t) 2 * kN * T);
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < 2 * kN; i++) {
            want[(size_t) (i + t * 2 * kN)] = i < kN ? -r2[(size_t) (i + t * kN)] : r1[(size_t) (i - kN + t * kN)];
        }
    }
    expect_exact(c3, want, "concat");
    lm_ggml_free(ctx);
}

} // namespace
} // namespace schedtest

// The CPU backend reuses the plan of the graph it computed last (plan-cache.h):
// a graph computed again, with nodes moved in place as an LLM's generation
// step moves its KV-cache store, or changed into an invalid one, must give
// the same results and errors as a graph planned from scratch. References are
// double-precision loops over the inputs.
#include "cpu_test_util.h"

#include <algorithm>
#include <cstring>
#include <memory>

using namespace cputest;

namespace {

constexpr int64_t kN = 300; // values per cache slot
constexpr int64_t kSlots = 4;

// store: y = x * scale + w written into slot `slot` of cache (a view moved
// between computes); r = y_stored + x; sums = per-slot sums of the cache.
struct StoreGraph {
    GraphCtx g;
    lm_ggml_tensor *x, *w, *cache, *slot_view, *store, *r, *sums, *scaled;
    lm_ggml_cgraph * gf;
    int slot = 0;

    StoreGraph() {
        x = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, kN);
        w = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, kN);
        cache = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, kN, kSlots);
        scaled = lm_ggml_scale(g.ctx, x, 2.0f);
        slot_view = lm_ggml_view_1d(g.ctx, cache, kN, 0);
        store = lm_ggml_cpy(g.ctx, lm_ggml_add(g.ctx, scaled, w), slot_view);
        r = lm_ggml_add(g.ctx, store, x);
        sums = lm_ggml_sum_rows(g.ctx, cache);
        gf = lm_ggml_new_graph(g.ctx);
        lm_ggml_build_forward_expand(gf, r);
        lm_ggml_build_forward_expand(gf, sums);
    }
    // Moves the store to slot s, as the LLM runner moves its KV-cache views.
    void move_to(int s) {
        const int64_t bytes = (int64_t) (s - slot) * kN * (int64_t) sizeof(float);
        for (lm_ggml_tensor * t : {slot_view, store}) {
            t->data = (char *) t->data + bytes;
            t->view_offs = (size_t) ((int64_t) t->view_offs + bytes);
        }
        slot = s;
    }
    float scale() const {
        float s;
        std::memcpy(&s, scaled->op_params, sizeof(s));
        return s;
    }
};

// Computes g on backend with n_threads; checks slot g.slot of the cache, r and
// the slot sums against double loops; expected holds every slot's values.
void compute_and_check(lm_ggml_backend_t backend, StoreGraph & g, const std::vector<float> & vx,
                       const std::vector<float> & vw, std::vector<std::vector<double>> & expected) {
    set_f32(g.x, vx);
    set_f32(g.w, vw);
    ASSERT_EQ(lm_ggml_backend_graph_compute(backend, g.gf), LM_GGML_STATUS_SUCCESS);
    std::vector<double> & cur = expected[(size_t) g.slot];
    for (int64_t i = 0; i < kN; ++i) {
        cur[(size_t) i] = (double) vx[(size_t) i] * g.scale() + vw[(size_t) i];
    }
    const std::vector<float> cache = get_f32(g.cache), r = get_f32(g.r), sums = get_f32(g.sums);
    for (int64_t s = 0; s < kSlots; ++s) {
        double sum = 0;
        for (int64_t i = 0; i < kN; ++i) {
            const double want = expected[(size_t) s][(size_t) i];
            ASSERT_NEAR(cache[(size_t) (s * kN + i)], want, 1e-5) << "slot " << s << " value " << i;
            sum += want;
        }
        ASSERT_NEAR(sums[(size_t) s], sum, 1e-3) << "sum of slot " << s;
    }
    for (int64_t i = 0; i < kN; ++i) {
        ASSERT_NEAR(r[(size_t) i], cur[(size_t) i] + vx[(size_t) i], 1e-5) << i;
    }
}

struct PlanCache : ::testing::TestWithParam<int> {
    lm_ggml_backend_t backend = nullptr;
    void SetUp() override {
        backend = lm_ggml_backend_cpu_init();
        ASSERT_NE(backend, nullptr);
        lm_ggml_backend_cpu_set_n_threads(backend, GetParam());
    }
    void TearDown() override { lm_ggml_backend_free(backend); }
};

TEST_P(PlanCache, AStoreMovedBetweenComputesLandsInItsNewSlot) {
    StoreGraph g;
    ASSERT_TRUE(g.g.alloc(backend));
    set_f32(g.cache, std::vector<float>(kN * kSlots, 0.0f));
    std::vector<std::vector<double>> expected(kSlots, std::vector<double>(kN, 0.0));
    // twice in slot 0 (the backend remembers a graph it sees twice), then on
    for (int step = 0; step < 2 + 2 * kSlots; ++step) {
        g.move_to(step < 2 ? 0 : (step - 2) % kSlots);
        compute_and_check(backend, g, ramp(kN, 1.0f + step), ramp(kN, 50.0f + step), expected);
        ASSERT_FALSE(HasFatalFailure()) << "step " << step;
    }
}

// The graph planned last is freed (context and buffer) and a graph of the
// same shape is built in new memory: the cache must not read the freed
// graph's tensors (it did: a segfault when the old context had been unmapped,
// a use-after-free under ASan).
TEST_P(PlanCache, AGraphAfterTheLastOneWasFreedIsPlannedSafely) {
    std::vector<std::vector<double>> expected(kSlots, std::vector<double>(kN, 0.0));
    for (int round = 0; round < 3; ++round) {
        auto g = std::make_unique<StoreGraph>();
        ASSERT_TRUE(g->g.alloc(backend));
        set_f32(g->cache, std::vector<float>(kN * kSlots, 0.0f));
        for (auto & e : expected) std::fill(e.begin(), e.end(), 0.0);
        for (int step = 0; step < 3; ++step) {
            g->move_to(step % kSlots);
            compute_and_check(backend, *g, ramp(kN, 1.0f + step + round), ramp(kN, 7.0f + step), expected);
            ASSERT_FALSE(HasFatalFailure()) << "round " << round << " step " << step;
        }
        g.reset(); // frees the graph the backend planned last
    }
}

TEST_P(PlanCache, ANodeMadeInvalidAfterReuseFailsWithAMessage) {
    StoreGraph g;
    ASSERT_TRUE(g.g.alloc(backend));
    set_f32(g.cache, std::vector<float>(kN * kSlots, 0.0f));
    std::vector<std::vector<double>> expected(kSlots, std::vector<double>(kN, 0.0));
    for (int step = 0; step < 3; ++step) {
        compute_and_check(backend, g, ramp(kN, 1.0f + step), ramp(kN, 9.0f), expected);
        ASSERT_FALSE(HasFatalFailure());
    }
    {
        // the store loses its memory: it changed in place, as a moved store does
        void * data = g.store->data;
        g.store->data = nullptr;
        LogCapture log;
        EXPECT_EQ(lm_ggml_backend_graph_compute(backend, g.gf), LM_GGML_STATUS_FAILED);
        EXPECT_EQ(log.errors(), 1) << log.text();
        EXPECT_TRUE(log.contains("no data")) << log.text();
        g.store->data = data;
    }
    compute_and_check(backend, g, ramp(kN, 4.0f), ramp(kN, 9.0f), expected);
    ASSERT_FALSE(HasFatalFailure());
    {
        g.r->type = LM_GGML_TYPE_I32; // an ADD the CPU has no kernel for
        LogCapture log;
        EXPECT_EQ(lm_ggml_backend_graph_compute(backend, g.gf), LM_GGML_STATUS_FAILED);
        EXPECT_EQ(log.errors(), 1) << log.text();
        g.r->type = LM_GGML_TYPE_F32;
    }
    compute_and_check(backend, g, ramp(kN, 5.0f), ramp(kN, 9.0f), expected);
}

TEST_P(PlanCache, ChangedOpParametersAndSourcesAreUsed) {
    StoreGraph g;
    ASSERT_TRUE(g.g.alloc(backend));
    set_f32(g.cache, std::vector<float>(kN * kSlots, 0.0f));
    std::vector<std::vector<double>> expected(kSlots, std::vector<double>(kN, 0.0));
    for (int step = 0; step < 2; ++step) {
        compute_and_check(backend, g, ramp(kN, 1.0f), ramp(kN, 2.0f), expected);
        ASSERT_FALSE(HasFatalFailure());
    }
    const float s = -0.5f;
    std::memcpy(g.scaled->op_params, &s, sizeof(s));
    compute_and_check(backend, g, ramp(kN, 3.0f), ramp(kN, 2.0f), expected);
    ASSERT_FALSE(HasFatalFailure());
    // r reads w instead of x now: a changed source pointer
    g.r->src[1] = g.w;
    const std::vector<float> vx = ramp(kN, 6.0f), vw = ramp(kN, 7.0f);
    set_f32(g.x, vx);
    set_f32(g.w, vw);
    ASSERT_EQ(lm_ggml_backend_graph_compute(backend, g.gf), LM_GGML_STATUS_SUCCESS);
    const std::vector<float> r = get_f32(g.r);
    for (int64_t i = 0; i < kN; ++i) {
        const double y = (double) vx[(size_t) i] * s + vw[(size_t) i];
        ASSERT_NEAR(r[(size_t) i], y + vw[(size_t) i], 1e-5) << i;
    }
}

TEST_P(PlanCache, ThreadsAbortCallbackAndOtherGraphsInBetween) {
    StoreGraph a, b;
    ASSERT_TRUE(a.g.alloc(backend));
    ASSERT_TRUE(b.g.alloc(backend));
    for (StoreGraph * g : {&a, &b}) set_f32(g->cache, std::vector<float>(kN * kSlots, 0.0f));
    std::vector<std::vector<double>> ea(kSlots, std::vector<double>(kN, 0.0)), eb = ea;
    int calls = 0;
    for (int step = 0; step < 12; ++step) {
        if (step == 4) {
            lm_ggml_backend_cpu_set_n_threads(backend, GetParam() == 1 ? 2 : 1);
        }
        if (step == 6) {
            lm_ggml_backend_cpu_set_abort_callback(
                backend,
                [](void * n) {
                    ++*static_cast<int *>(n);
                    return false;
                },
                &calls);
        }
        StoreGraph & g = step % 4 < 2 ? a : b; // a a b b a a ...: each seen twice in a row
        g.move_to(step % kSlots);
        compute_and_check(backend, g, ramp(kN, 1.0f + step), ramp(kN, 30.0f + step), &g == &a ? ea : eb);
        ASSERT_FALSE(HasFatalFailure()) << "step " << step;
    }
    EXPECT_GT(calls, 0) << "the abort callback set after the graphs were remembered is asked";
}

INSTANTIATE_TEST_SUITE_P(Threads, PlanCache, ::testing::Values(1, 2, 3));

} // namespace

// The CPU backend computing graphs through the public API: results against
// double-precision references computed here, thread counts, plans, work
// buffers, the abort callback, pool reuse, and failures as status values.

#include "cpu_test_util.h"

#include "ggml-backend-impl.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

using namespace cputest;

// ThreadSanitizer starts a helper thread of its own at an unpredictable
// moment, so the tests that count the process's threads cannot run under it.
#if defined(__SANITIZE_THREAD__)
#define SKIP_UNDER_TSAN() GTEST_SKIP() << "counts threads; ThreadSanitizer adds its own"
#else
#define SKIP_UNDER_TSAN() (void) 0
#endif

namespace {

struct BackendFixture : ::testing::Test {
    lm_ggml_backend_t backend = nullptr;
    void SetUp() override {
        backend = lm_ggml_backend_cpu_init();
        ASSERT_NE(backend, nullptr);
    }
    void TearDown() override { lm_ggml_backend_free(backend); }
};

// d = (a + b) * b + bias, bias broadcast over rows: shapes with odd sizes so
// thread splits are uneven.
struct AddMulGraph {
    static constexpr int64_t N0 = 37, N1 = 5;
    GraphCtx g;
    lm_ggml_tensor *a, *b, *bias, *d;
    lm_ggml_cgraph * gf;
    std::vector<float> va, vb, vbias;

    AddMulGraph() {
        a = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, N0, N1);
        b = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, N0, N1);
        bias = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, N0);
        d = lm_ggml_add(g.ctx, lm_ggml_mul(g.ctx, lm_ggml_add(g.ctx, a, b), b), bias);
        gf = lm_ggml_new_graph(g.ctx);
        lm_ggml_build_forward_expand(gf, d);
    }
    void set_inputs(float seed) {
        va = ramp(N0 * N1, seed);
        vb = ramp(N0 * N1, seed + 1);
        vbias = ramp(N0, seed + 2);
        set_f32(a, va);
        set_f32(b, vb);
        set_f32(bias, vbias);
    }
    void expect_result() const {
        const std::vector<float> out = get_f32(d);
        for (int64_t r = 0; r < N1; r++) {
            for (int64_t c = 0; c < N0; c++) {
                const size_t i = (size_t) (r * N0 + c);
                const double ref = ((double) va[i] + vb[i]) * vb[i] + vbias[c];
                ASSERT_NEAR(out[i], ref, 1e-5) << "at (" << c << ", " << r << ")";
            }
        }
    }
};

TEST_F(BackendFixture, AddMulMatchesReferenceForEachThreadCount) {
    AddMulGraph m;
    ASSERT_TRUE(m.g.alloc(backend));
    for (int n = 1; n <= 4; n++) {
        lm_ggml_backend_cpu_set_n_threads(backend, n);
        m.set_inputs((float) n);
        ASSERT_EQ(lm_ggml_backend_graph_compute(backend, m.gf), LM_GGML_STATUS_SUCCESS);
        m.expect_result();
    }
}

// Row-wise softmax: a kernel with a per-thread work buffer.
void expect_softmax(const std::vector<float> & in, const std::vector<float> & out, int64_t n0, int64_t n1) {
    for (int64_t r = 0; r < n1; r++) {
        double mx = -INFINITY, sum = 0.0;
        for (int64_t c = 0; c < n0; c++) mx = std::max(mx, (double) in[r * n0 + c]);
        for (int64_t c = 0; c < n0; c++) sum += std::exp((double) in[r * n0 + c] - mx);
        for (int64_t c = 0; c < n0; c++) {
            const double ref = std::exp((double) in[r * n0 + c] - mx) / sum;
            ASSERT_NEAR(out[r * n0 + c], ref, 1e-6) << "row " << r << " col " << c;
        }
    }
}

TEST_F(BackendFixture, WorkBufferOpAndPlanApi) {
    const int64_t n0 = 67, n1 = 40; // above kLightNodeElements: softmax runs on every thread
    GraphCtx g;
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, n0, n1);
    lm_ggml_tensor * s = lm_ggml_soft_max(g.ctx, a);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(g.ctx);
    lm_ggml_build_forward_expand(gf, s);
    ASSERT_TRUE(g.alloc(backend));

    const lm_ggml_cplan cplan = lm_ggml_graph_plan(gf, 3, nullptr);
    EXPECT_GT(cplan.work_size, 0u) << "softmax asks for scratch";
    EXPECT_EQ(cplan.n_threads, 3);

    lm_ggml_backend_cpu_set_n_threads(backend, 3);
    lm_ggml_backend_graph_plan_t plan = lm_ggml_backend_graph_plan_create(backend, gf);
    ASSERT_NE(plan, nullptr);
    for (float seed : {3.0f, 4.0f}) { // one plan, computed twice with new inputs
        const std::vector<float> in = ramp(n0 * n1, seed);
        set_f32(a, in);
        ASSERT_EQ(lm_ggml_backend_graph_plan_compute(backend, plan), LM_GGML_STATUS_SUCCESS);
        expect_softmax(in, get_f32(s), n0, n1);
    }
    lm_ggml_backend_graph_plan_free(backend, plan);

    const std::vector<float> in = ramp(n0 * n1, 5.0f);
    set_f32(a, in);
    ASSERT_EQ(lm_ggml_backend_graph_compute(backend, gf), LM_GGML_STATUS_SUCCESS);
    expect_softmax(in, get_f32(s), n0, n1);
}

TEST_F(BackendFixture, GraphComputeChecksTheWorkBuffer) {
    const int64_t n0 = 33, n1 = 4;
    GraphCtx g;
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, n0, n1);
    lm_ggml_tensor * s = lm_ggml_soft_max(g.ctx, a);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(g.ctx);
    lm_ggml_build_forward_expand(gf, s);
    ASSERT_TRUE(g.alloc(backend));
    const std::vector<float> in = ramp(n0 * n1, 7.0f);
    set_f32(a, in);

    lm_ggml_cplan cplan = lm_ggml_graph_plan(gf, 2, nullptr);
    ASSERT_GT(cplan.work_size, 0u);
    {
        LogCapture log;
        EXPECT_EQ(lm_ggml_graph_compute(gf, &cplan), LM_GGML_STATUS_FAILED) << "work_data missing";
        EXPECT_EQ(log.errors(), 1);
        EXPECT_TRUE(log.contains("work_data")) << log.text();
    }
    // A caller buffer that is not cache-line aligned is accepted (the runtime aligns inside it).
    std::vector<uint8_t> work(cplan.work_size + 1);
    cplan.work_data = work.data() + 1;
    ASSERT_EQ(lm_ggml_graph_compute(gf, &cplan), LM_GGML_STATUS_SUCCESS);
    expect_softmax(in, get_f32(s), n0, n1);

    // Any plan claiming scratch without providing it is refused, even for ops that need none.
    AddMulGraph m;
    ASSERT_TRUE(m.g.alloc(backend));
    lm_ggml_cplan fake = lm_ggml_graph_plan(m.gf, 1, nullptr);
    fake.work_size = 128;
    LogCapture log;
    EXPECT_EQ(lm_ggml_graph_compute(m.gf, &fake), LM_GGML_STATUS_FAILED);
}

// x[k+1] = x[k] + 1 for 40 nodes: long enough to stop in the middle.
struct ChainGraph {
    static constexpr int kNodes = 40, kLen = 19;
    GraphCtx g;
    lm_ggml_tensor * x0;
    lm_ggml_tensor * one;
    std::vector<lm_ggml_tensor *> xs;
    lm_ggml_cgraph * gf;
    ChainGraph() {
        x0 = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, kLen);
        one = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, kLen);
        lm_ggml_tensor * x = x0;
        for (int k = 0; k < kNodes; k++) {
            x = lm_ggml_add(g.ctx, x, one);
            xs.push_back(x);
        }
        gf = lm_ggml_new_graph(g.ctx);
        lm_ggml_build_forward_expand(gf, x);
    }
};

struct AbortAfter {
    int limit;
    std::atomic<int> calls{0};
    static bool cb(void * data) {
        AbortAfter * self = static_cast<AbortAfter *>(data);
        return self->calls.fetch_add(1) + 1 >= self->limit;
    }
};

// Repeated: a race between thread 0 deciding to stop and a slower thread
// checking after the previous node once made threads disagree on where to stop.
TEST_F(BackendFixture, AbortCallbackStopsALongGraph) {
    for (int n_threads : {1, 3, 4, 2, 3, 4, 2, 3, 4, 2, 3, 4}) {
        ChainGraph c;
        ASSERT_TRUE(c.g.alloc(backend));
        lm_ggml_backend_buffer_clear(c.g.buffer, 0); // nodes not computed stay 0
        set_f32(c.x0, std::vector<float>(ChainGraph::kLen, 0.0f));
        set_f32(c.one, std::vector<float>(ChainGraph::kLen, 1.0f));
        lm_ggml_backend_cpu_set_n_threads(backend, n_threads);

        AbortAfter stop{5};
        lm_ggml_backend_cpu_set_abort_callback(backend, AbortAfter::cb, &stop);
        EXPECT_EQ(lm_ggml_backend_graph_compute(backend, c.gf), LM_GGML_STATUS_ABORTED);
        EXPECT_EQ(stop.calls.load(), 5) << "polled once per node until it said stop";
        for (int k = 0; k < ChainGraph::kNodes; k++) {
            const float expect = k < 5 ? (float) (k + 1) : 0.0f; // nodes after the 5th never ran
            const std::vector<float> v = get_f32(c.xs[k]);
            ASSERT_EQ(v[0], expect) << "node " << k << " threads " << n_threads;
            ASSERT_EQ(v[ChainGraph::kLen - 1], expect) << "node " << k << " threads " << n_threads;
        }

        lm_ggml_backend_cpu_set_abort_callback(backend, nullptr, nullptr);
        ASSERT_EQ(lm_ggml_backend_graph_compute(backend, c.gf), LM_GGML_STATUS_SUCCESS);
        EXPECT_EQ(get_f32(c.xs.back())[3], (float) ChainGraph::kNodes);
    }
}

TEST(CpuCompute, ComputeWithCtxAllocatesWorkInTheContext) {
    const int64_t n0 = 29, n1 = 6;
    lm_ggml_init_params p = {2 * 1024 * 1024, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(p);
    ASSERT_NE(ctx, nullptr);
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n0, n1);
    lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n0, n1);
    lm_ggml_tensor * s = lm_ggml_soft_max(ctx, lm_ggml_add(ctx, a, b));
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, s);
    const std::vector<float> va = ramp(n0 * n1, 11.0f), vb = ramp(n0 * n1, 12.0f);
    memcpy(a->data, va.data(), lm_ggml_nbytes(a));
    memcpy(b->data, vb.data(), lm_ggml_nbytes(b));

    const size_t used_before = lm_ggml_used_mem(ctx);
    ASSERT_EQ(lm_ggml_graph_compute_with_ctx(ctx, gf, 2), LM_GGML_STATUS_SUCCESS);
    EXPECT_GT(lm_ggml_used_mem(ctx), used_before) << "the work buffer came from ctx";

    std::vector<float> sum(va.size()), out(va.size());
    for (size_t i = 0; i < va.size(); i++) sum[i] = va[i] + vb[i];
    memcpy(out.data(), s->data, lm_ggml_nbytes(s));
    expect_softmax(sum, out, n0, n1);
    lm_ggml_free(ctx);
}

TEST(CpuCompute, ComputeWithCtxWithoutRoomIsAnError) {
    const int64_t n0 = 64, n1 = 4;
    lm_ggml_init_params p = {0, nullptr, false};
    // exactly room for the two tensors and the graph, nothing for scratch
    p.mem_size = 2 * (lm_ggml_tensor_overhead() + n0 * n1 * sizeof(float)) + lm_ggml_graph_overhead() + 256;
    lm_ggml_context * ctx = lm_ggml_init(p);
    ASSERT_NE(ctx, nullptr);
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n0, n1);
    ASSERT_NE(a, nullptr);
    lm_ggml_tensor * s = lm_ggml_soft_max(ctx, a);
    ASSERT_NE(s, nullptr);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    ASSERT_NE(gf, nullptr);
    lm_ggml_build_forward_expand(gf, s);
    LogCapture log;
    EXPECT_EQ(lm_ggml_graph_compute_with_ctx(ctx, gf, 4), LM_GGML_STATUS_ALLOC_FAILED);
    EXPECT_GE(log.errors(), 1);
    lm_ggml_free(ctx);
}

// Worker threads are created once per backend and reused; changing the
// thread count replaces them; freeing the backend joins them.
TEST(CpuCompute, BackendReusesItsPoolAcrossComputations) {
    SKIP_UNDER_TSAN();
    const int base = process_thread_count();
    ASSERT_GT(base, 0);
    lm_ggml_backend_t backend = lm_ggml_backend_cpu_init();
    ASSERT_NE(backend, nullptr);
    AddMulGraph m;
    ASSERT_TRUE(m.g.alloc(backend));

    lm_ggml_backend_cpu_set_n_threads(backend, 4);
    for (int k = 0; k < 30; k++) {
        m.set_inputs((float) k);
        ASSERT_EQ(lm_ggml_backend_graph_compute(backend, m.gf), LM_GGML_STATUS_SUCCESS);
        ASSERT_EQ(process_thread_count(), base + 3) << "computation " << k;
    }
    m.expect_result();

    // through the registry's proc address, as applications do
    auto set_threads = (lm_ggml_backend_set_n_threads_t) lm_ggml_backend_reg_get_proc_address(
        lm_ggml_backend_cpu_reg(), "lm_ggml_backend_set_n_threads");
    ASSERT_NE(set_threads, nullptr);
    set_threads(backend, 2);
    ASSERT_EQ(lm_ggml_backend_graph_compute(backend, m.gf), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(process_thread_count(), base + 1);
    m.expect_result();

    lm_ggml_backend_cpu_set_n_threads(backend, 1);
    ASSERT_EQ(lm_ggml_backend_graph_compute(backend, m.gf), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(process_thread_count(), base);
    m.expect_result();

    lm_ggml_backend_cpu_set_n_threads(backend, 3);
    ASSERT_EQ(lm_ggml_backend_graph_compute(backend, m.gf), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(process_thread_count(), base + 2);
    lm_ggml_backend_free(backend);
    EXPECT_EQ(process_thread_count(), base);
}

TEST(CpuCompute, ApplicationThreadpool) {
    SKIP_UNDER_TSAN();
    const int base = process_thread_count();
    lm_ggml_threadpool_params tpp = lm_ggml_threadpool_params_default(3);
    lm_ggml_threadpool * tp = lm_ggml_threadpool_new(&tpp);
    ASSERT_NE(tp, nullptr);
    EXPECT_EQ(lm_ggml_threadpool_get_n_threads(tp), 3);
    EXPECT_EQ(process_thread_count(), base + 2);

    lm_ggml_backend_t backend = lm_ggml_backend_cpu_init();
    ASSERT_NE(backend, nullptr);
    lm_ggml_backend_cpu_set_threadpool(backend, tp);
    lm_ggml_backend_cpu_set_n_threads(backend, 3);
    AddMulGraph m;
    ASSERT_TRUE(m.g.alloc(backend));
    for (int k = 0; k < 5; k++) {
        m.set_inputs(20.0f + k);
        ASSERT_EQ(lm_ggml_backend_graph_compute(backend, m.gf), LM_GGML_STATUS_SUCCESS);
        m.expect_result();
    }
    EXPECT_EQ(process_thread_count(), base + 2) << "the backend used the application's pool";

    // the classic API with the same pool
    lm_ggml_cplan cplan = lm_ggml_graph_plan(m.gf, 3, tp);
    EXPECT_EQ(cplan.threadpool, tp);
    m.set_inputs(30.0f);
    ASSERT_EQ(lm_ggml_graph_compute(m.gf, &cplan), LM_GGML_STATUS_SUCCESS);
    m.expect_result();

    lm_ggml_backend_cpu_set_threadpool(backend, nullptr); // back to its own pool
    ASSERT_EQ(lm_ggml_backend_graph_compute(backend, m.gf), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(process_thread_count(), base + 4);
    lm_ggml_backend_free(backend);
    lm_ggml_threadpool_free(tp);
    EXPECT_EQ(process_thread_count(), base);
}

TEST(CpuCompute, ClassicApiWithoutPoolLeavesNoThreads) {
    SKIP_UNDER_TSAN();
    const int base = process_thread_count();
    lm_ggml_backend_t backend = lm_ggml_backend_cpu_init();
    AddMulGraph m;
    ASSERT_TRUE(m.g.alloc(backend));
    m.set_inputs(40.0f);
    lm_ggml_cplan cplan = lm_ggml_graph_plan(m.gf, 3, nullptr);
    EXPECT_EQ(cplan.work_size, 0u);
    ASSERT_EQ(lm_ggml_graph_compute(m.gf, &cplan), LM_GGML_STATUS_SUCCESS);
    m.expect_result();
    EXPECT_EQ(process_thread_count(), base);
    lm_ggml_backend_free(backend);
}

TEST_F(BackendFixture, LayoutAndEmptyNodesAreSkipped) {
    GraphCtx g;
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, 6, 4);
    lm_ggml_tensor * b = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, 6, 4);
    lm_ggml_tensor * r = lm_ggml_reshape_2d(g.ctx, lm_ggml_add(g.ctx, a, b), 4, 6);
    lm_ggml_tensor * d = lm_ggml_mul(g.ctx, r, r);
    lm_ggml_tensor * e0 = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, 0, 3); // empty
    lm_ggml_tensor * e = lm_ggml_add(g.ctx, e0, e0);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(g.ctx);
    lm_ggml_build_forward_expand(gf, d);
    lm_ggml_build_forward_expand(gf, e);
    ASSERT_TRUE(g.alloc(backend));
    bool has_reshape = false;
    for (int i = 0; i < lm_ggml_graph_n_nodes(gf); i++) {
        has_reshape |= lm_ggml_graph_node(gf, i)->op == LM_GGML_OP_RESHAPE;
    }
    EXPECT_TRUE(has_reshape) << "the graph really contains a layout node";

    const std::vector<float> va = ramp(24, 50.0f), vb = ramp(24, 51.0f);
    set_f32(a, va);
    set_f32(b, vb);
    lm_ggml_backend_cpu_set_n_threads(backend, 2);
    ASSERT_EQ(lm_ggml_backend_graph_compute(backend, gf), LM_GGML_STATUS_SUCCESS);
    const std::vector<float> out = get_f32(d);
    for (size_t i = 0; i < out.size(); i++) {
        const double s = (double) va[i] + vb[i];
        ASSERT_NEAR(out[i], s * s, 1e-5) << i;
    }
}

TEST_F(BackendFixture, NodesWithoutKernelFailWithAMessage) {
    AddMulGraph m;
    ASSERT_TRUE(m.g.alloc(backend));
    m.set_inputs(60.0f);
    lm_ggml_tensor * bad = lm_ggml_graph_node(m.gf, 0);
    const lm_ggml_op saved = bad->op;

    bad->op = LM_GGML_OP_COUNT; // not an op at all
    EXPECT_FALSE(lm_ggml_backend_supports_op(backend, bad));
    {
        LogCapture log;
        EXPECT_EQ(lm_ggml_backend_graph_compute(backend, m.gf), LM_GGML_STATUS_FAILED);
        EXPECT_EQ(log.errors(), 1) << log.text();
        EXPECT_TRUE(log.contains("no CPU kernel")) << log.text();
    }
    bad->op = saved;

    lm_ggml_tensor * u = lm_ggml_relu(m.g.ctx, m.a);
    ASSERT_NE(u, nullptr);
    EXPECT_TRUE(lm_ggml_backend_supports_op(backend, u));
    u->op_params[0] = 99; // unary op id out of range
    EXPECT_FALSE(lm_ggml_backend_supports_op(backend, u));
    EXPECT_TRUE(lm_ggml_backend_supports_op(backend, m.d));

    // Nothing ran: the graph is still computable and correct afterwards.
    ASSERT_EQ(lm_ggml_backend_graph_compute(backend, m.gf), LM_GGML_STATUS_SUCCESS);
    m.expect_result();
}

TEST(CpuCompute, UnallocatedTensorsFailInsteadOfCrashing) {
    AddMulGraph m; // never allocated: data pointers are NULL
    lm_ggml_cplan cplan = lm_ggml_graph_plan(m.gf, 2, nullptr);
    LogCapture log;
    EXPECT_EQ(lm_ggml_graph_compute(m.gf, &cplan), LM_GGML_STATUS_FAILED);
    EXPECT_TRUE(log.contains("no data")) << log.text();
}

TEST(CpuCompute, BadArgumentsAreStatusValues) {
    AddMulGraph m;
    lm_ggml_cplan cplan = lm_ggml_graph_plan(m.gf, 2, nullptr);
    LogCapture log;
    EXPECT_EQ(lm_ggml_graph_compute(nullptr, &cplan), LM_GGML_STATUS_FAILED);
    EXPECT_EQ(lm_ggml_graph_compute(m.gf, nullptr), LM_GGML_STATUS_FAILED);
    cplan.n_threads = 0;
    EXPECT_EQ(lm_ggml_graph_compute(m.gf, &cplan), LM_GGML_STATUS_FAILED);
    EXPECT_EQ(lm_ggml_graph_plan(nullptr, 2, nullptr).n_threads, 0);
    EXPECT_EQ(lm_ggml_graph_compute_with_ctx(nullptr, m.gf, 2), LM_GGML_STATUS_FAILED);
    EXPECT_EQ(lm_ggml_graph_compute_with_ctx(m.g.ctx, nullptr, 2), LM_GGML_STATUS_FAILED);
    EXPECT_GE(log.errors(), 6);

    lm_ggml_backend_cpu_set_n_threads(nullptr, 2);
    lm_ggml_backend_cpu_set_abort_callback(nullptr, nullptr, nullptr);
    lm_ggml_backend_cpu_set_threadpool(nullptr, nullptr);
    lm_ggml_backend_t backend = lm_ggml_backend_cpu_init();
    const int errors_before = log.errors();
    lm_ggml_backend_cpu_set_n_threads(backend, 0);
    lm_ggml_backend_cpu_set_n_threads(backend, -3);
    EXPECT_EQ(log.errors(), errors_before + 2);
    lm_ggml_backend_free(backend);
}

TEST(CpuCompute, TwoBackendsComputeConcurrently) {
    auto worker = [](float seed, std::atomic<int> * failures) {
        lm_ggml_backend_t backend = lm_ggml_backend_cpu_init();
        lm_ggml_backend_cpu_set_n_threads(backend, 2);
        AddMulGraph m;
        if (!m.g.alloc(backend)) {
            failures->fetch_add(1);
            return;
        }
        for (int k = 0; k < 20; k++) {
            m.set_inputs(seed + k);
            if (lm_ggml_backend_graph_compute(backend, m.gf) != LM_GGML_STATUS_SUCCESS) failures->fetch_add(1);
            const std::vector<float> out = get_f32(m.d);
            for (size_t i = 0; i < out.size(); i++) {
                const double ref = ((double) m.va[i] + m.vb[i]) * m.vb[i] + m.vbias[i % AddMulGraph::N0];
                if (std::fabs(out[i] - ref) > 1e-5) {
                    failures->fetch_add(1);
                    break;
                }
            }
        }
        lm_ggml_backend_free(backend);
    };
    std::atomic<int> failures{0};
    std::thread t1(worker, 100.0f, &failures), t2(worker, 200.0f, &failures);
    t1.join();
    t2.join();
    EXPECT_EQ(failures.load(), 0);
}

} // namespace

// A graph changed in place after a successful compute is checked again: a
// source whose data went away or a node whose type no kernel takes fails,
// and the same graph put back computes again.
TEST(CpuCompute, AGraphChangedInPlaceIsCheckedAgain) {
    lm_ggml_init_params p = {4 * 1024 * 1024, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(p);
    ASSERT_NE(ctx, nullptr);
    const int64_t n = 300;
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * b = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * s = lm_ggml_add(ctx, a, b);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, s);
    const std::vector<float> va = ramp(n, 1.0f), vb = ramp(n, 2.0f);
    memcpy(a->data, va.data(), lm_ggml_nbytes(a));
    memcpy(b->data, vb.data(), lm_ggml_nbytes(b));
    for (int n_threads : {1, 2}) {
        ASSERT_EQ(lm_ggml_graph_compute_with_ctx(ctx, gf, n_threads), LM_GGML_STATUS_SUCCESS);
        void * data = b->data;
        b->data = nullptr;
        EXPECT_EQ(lm_ggml_graph_compute_with_ctx(ctx, gf, n_threads), LM_GGML_STATUS_FAILED) << "source without data";
        b->data = data;
        s->type = LM_GGML_TYPE_I32;
        EXPECT_EQ(lm_ggml_graph_compute_with_ctx(ctx, gf, n_threads), LM_GGML_STATUS_FAILED) << "an ADD to I32";
        s->type = LM_GGML_TYPE_F32;
        ASSERT_EQ(lm_ggml_graph_compute_with_ctx(ctx, gf, n_threads), LM_GGML_STATUS_SUCCESS);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(((const float *) s->data)[i], va[(size_t) i] + vb[(size_t) i]);
    }
    lm_ggml_free(ctx);
}

// With several threads the nodes are checked in slices by the pool's threads
// before the walk: a graph with bad nodes in every slice still fails as a
// whole, names its first bad node, and runs none of its nodes.
TEST(CpuCompute, TheFirstBadNodeIsReportedAndNothingRunsAtAnyThreadCount) {
    lm_ggml_init_params p = {4 * 1024 * 1024, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(p);
    ASSERT_NE(ctx, nullptr);
    const int64_t n = 64;
    lm_ggml_tensor * x = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, n);
    std::vector<lm_ggml_tensor *> chain;
    lm_ggml_tensor * cur = x;
    for (int i = 0; i < 40; ++i) {
        cur = lm_ggml_add(ctx, cur, x);
        chain.push_back(cur);
    }
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, cur);
    const std::vector<float> vx = ramp(n, 1.0f);
    memcpy(x->data, vx.data(), lm_ggml_nbytes(x));
    for (int n_threads : {1, 2, 3, 4}) {
        for (lm_ggml_tensor * t : chain) std::fill_n((float *) t->data, n, -7.0f);
        chain[29]->type = LM_GGML_TYPE_I32; // a later slice than node 11 from 2 threads on
        chain[11]->type = LM_GGML_TYPE_I32; // the first bad node
        {
            LogCapture log;
            EXPECT_EQ(lm_ggml_graph_compute_with_ctx(ctx, gf, n_threads), LM_GGML_STATUS_FAILED) << n_threads;
            EXPECT_EQ(log.errors(), 1) << log.text();
            EXPECT_TRUE(log.contains("node 11 ")) << log.text();
        }
        for (lm_ggml_tensor * t : chain)
            ASSERT_EQ(((const float *) t->data)[0], -7.0f) << "a node ran, threads " << n_threads;
        chain[11]->type = LM_GGML_TYPE_F32;
        chain[29]->type = LM_GGML_TYPE_F32;
        ASSERT_EQ(lm_ggml_graph_compute_with_ctx(ctx, gf, n_threads), LM_GGML_STATUS_SUCCESS);
        for (int64_t i = 0; i < n; ++i)
            ASSERT_NEAR(((const float *) cur->data)[i], 41.0 * vx[(size_t) i], 1e-5 * 41.0 * std::fabs(vx[(size_t) i]))
                << i;
    }
    lm_ggml_free(ctx);
}

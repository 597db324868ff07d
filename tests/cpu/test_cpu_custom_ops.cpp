// The CPU backend's threaded user functions (lm_ggml_map_custom1/2/3): the
// function runs on n_tasks threads (LM_GGML_N_TASKS_MAX: all of the backend's,
// never more than it has), sees every ith in [0, nth) exactly once with the
// same nth, and gets its userdata back; nodes before and after it are fenced
// by barriers; op_params hold ggml's {fun, n_tasks, userdata} block.
#include "cpu_test_util.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <string>

// the _f32 family is deprecated in ggml.h but still part of the API
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

using cputest::GraphCtx;
using cputest::LogCapture;

constexpr int kMaxThreads = 16;

// What the calls of one compute saw.
struct Recorder {
    std::atomic<int> calls[kMaxThreads] = {};
    std::atomic<int> out_of_range{0}; // ith < 0 or >= nth, or nth out of bounds
    std::atomic<int> nth_min{INT_MAX};
    std::atomic<int> nth_max{0};

    void record(int ith, int nth) {
        if (nth < 1 || nth > kMaxThreads || ith < 0 || ith >= nth) {
            out_of_range++;
            return;
        }
        calls[ith]++;
        int v = nth_min.load();
        while (nth < v && !nth_min.compare_exchange_weak(v, nth)) {
        }
        v = nth_max.load();
        while (nth > v && !nth_max.compare_exchange_weak(v, nth)) {
        }
    }
};

// Thread ith copies rows ith, ith + nth, ... of a into dst (so a correct
// split also yields a correct dst) and records its call.
void copy_rows(lm_ggml_tensor * dst, const lm_ggml_tensor * a, int ith, int nth) {
    for (int64_t r = ith; r < a->ne[1]; r += nth) {
        std::memcpy((char *) dst->data + r * dst->nb[1], (const char *) a->data + r * a->nb[1],
                    a->ne[0] * sizeof(float));
    }
}

void rec1(lm_ggml_tensor * dst, const lm_ggml_tensor * a, int ith, int nth, void * ud) {
    static_cast<Recorder *>(ud)->record(ith, nth);
    copy_rows(dst, a, ith, nth);
}
void rec2(lm_ggml_tensor * dst, const lm_ggml_tensor * a, const lm_ggml_tensor *, int ith, int nth, void * ud) {
    static_cast<Recorder *>(ud)->record(ith, nth);
    copy_rows(dst, a, ith, nth);
}
void rec3(lm_ggml_tensor * dst, const lm_ggml_tensor * a, const lm_ggml_tensor *, const lm_ggml_tensor *, int ith,
          int nth, void * ud) {
    static_cast<Recorder *>(ud)->record(ith, nth);
    copy_rows(dst, a, ith, nth);
}

lm_ggml_tensor * custom_node(lm_ggml_context * ctx, int arity, lm_ggml_tensor * a, lm_ggml_tensor * b,
                             lm_ggml_tensor * c, int n_tasks, Recorder * rec) {
    switch (arity) {
        case 1: return lm_ggml_map_custom1(ctx, a, rec1, n_tasks, rec);
        case 2: return lm_ggml_map_custom2(ctx, a, b, rec2, n_tasks, rec);
        default: return lm_ggml_map_custom3(ctx, a, b, c, rec3, n_tasks, rec);
    }
}

int expected_nth(int n_tasks, int n_threads) {
    return n_tasks == LM_GGML_N_TASKS_MAX ? n_threads : std::min(n_tasks, n_threads);
}

class CustomOps : public ::testing::Test {
protected:
    void SetUp() override {
        backend = lm_ggml_backend_cpu_init();
        ASSERT_NE(backend, nullptr);
    }
    void TearDown() override { lm_ggml_backend_free(backend); }
    lm_ggml_backend_t backend = nullptr;
};

// Each ith in [0, nth) exactly once, for every arity, with the custom node
// alone (the walk's threads are the node's) and after a node split over all
// threads (the walk has more threads than the custom node wants).
TEST_F(CustomOps, FunctionSeesEachIthOnceOnNTasksThreads) {
    constexpr int64_t kCols = 64, kRows = 64; // 4096 elements: ADD runs on all threads
    for (int n_threads : {1, 2, 4}) {
        lm_ggml_backend_cpu_set_n_threads(backend, n_threads);
        for (int n_tasks : {1, 2, 3, 4, 8, LM_GGML_N_TASKS_MAX}) {
            for (int arity = 1; arity <= 3; ++arity) {
                for (bool after_big : {false, true}) {
                    SCOPED_TRACE("threads " + std::to_string(n_threads) + ", n_tasks " + std::to_string(n_tasks) +
                                 ", custom" + std::to_string(arity) + (after_big ? ", after a threaded node" : ""));
                    GraphCtx g;
                    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, kCols, kRows);
                    lm_ggml_tensor * b = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, kCols, kRows);
                    lm_ggml_tensor * c = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, 3);
                    lm_ggml_tensor * src = after_big ? lm_ggml_add(g.ctx, a, b) : a;
                    Recorder rec;
                    lm_ggml_tensor * out = custom_node(g.ctx, arity, src, b, c, n_tasks, &rec);
                    ASSERT_NE(out, nullptr);
                    lm_ggml_cgraph * graph = lm_ggml_new_graph(g.ctx);
                    lm_ggml_build_forward_expand(graph, out);
                    ASSERT_TRUE(g.alloc(backend));
                    const std::vector<float> va = cputest::ramp(kCols * kRows, 1.0f);
                    const std::vector<float> vb = cputest::ramp(kCols * kRows, 2.0f);
                    cputest::set_f32(a, va);
                    cputest::set_f32(b, vb);
                    cputest::set_f32(c, {1.0f, 2.0f, 3.0f});
                    ASSERT_EQ(lm_ggml_backend_graph_compute(backend, graph), LM_GGML_STATUS_SUCCESS);

                    const int nth = expected_nth(n_tasks, n_threads);
                    EXPECT_EQ(rec.out_of_range.load(), 0);
                    EXPECT_EQ(rec.nth_min.load(), nth);
                    EXPECT_EQ(rec.nth_max.load(), nth);
                    for (int i = 0; i < kMaxThreads; ++i) {
                        EXPECT_EQ(rec.calls[i].load(), i < nth ? 1 : 0) << "ith " << i;
                    }
                    const std::vector<float> got = cputest::get_f32(out);
                    for (size_t i = 0; i < got.size(); ++i) {
                        const float want = after_big ? va[i] + vb[i] : va[i];
                        ASSERT_EQ(got[i], want) << "element " << i;
                    }
                }
            }
        }
    }
}

// lm_ggml_graph_plan takes the custom node's count as its thread need, as
// ggml does; lm_ggml_graph_compute_with_ctx then runs it on that many.
TEST(CustomOpsPlan, PlanAndComputeWithCtxHonourNTasks) {
    for (int n_tasks : {1, 2, 3, LM_GGML_N_TASKS_MAX}) {
        SCOPED_TRACE("n_tasks " + std::to_string(n_tasks));
        lm_ggml_init_params ip = {16 * 1024 * 1024, nullptr, false};
        lm_ggml_context * ctx = lm_ggml_init(ip);
        ASSERT_NE(ctx, nullptr);
        lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 8, 8);
        std::vector<float> va = cputest::ramp(64, 3.0f);
        std::memcpy(a->data, va.data(), sizeof(float) * va.size());
        Recorder rec;
        lm_ggml_tensor * out = lm_ggml_map_custom1(ctx, a, rec1, n_tasks, &rec);
        ASSERT_NE(out, nullptr);
        lm_ggml_cgraph * graph = lm_ggml_new_graph(ctx);
        lm_ggml_build_forward_expand(graph, out);
        const lm_ggml_cplan plan = lm_ggml_graph_plan(graph, 3, nullptr);
        EXPECT_EQ(plan.n_threads, expected_nth(n_tasks, 3));
        ASSERT_EQ(lm_ggml_graph_compute_with_ctx(ctx, graph, 3), LM_GGML_STATUS_SUCCESS);
        const int nth = expected_nth(n_tasks, 3);
        EXPECT_EQ(rec.nth_min.load(), nth);
        EXPECT_EQ(rec.nth_max.load(), nth);
        for (int i = 0; i < kMaxThreads; ++i) {
            EXPECT_EQ(rec.calls[i].load(), i < nth ? 1 : 0) << "ith " << i;
        }
        EXPECT_EQ(std::memcmp(out->data, va.data(), sizeof(float) * va.size()), 0);
        lm_ggml_free(ctx);
    }
}

// Every thread of the custom node reads ALL of its source, which a node
// split over all threads writes; the node after it, also split, reads all
// of the custom node's output. Either missing barrier shows in the result.
struct SumCheck {
    std::atomic<int> incomplete{0}; // a thread saw a source row not yet written
};

void add_row_sums(lm_ggml_tensor * dst, const lm_ggml_tensor * a, int ith, int nth, void * ud) {
    const int64_t n = a->ne[0];
    for (int64_t r = 0; r < a->ne[1]; ++r) {
        const float * x = (const float *) ((const char *) a->data + r * a->nb[1]);
        float s = 0.0f;
        for (int64_t i = 0; i < n; ++i) {
            if (x[i] != 3.0f) {
                static_cast<SumCheck *>(ud)->incomplete++;
            }
            s += x[i];
        }
        if (r % nth == ith) {
            float * y = (float *) ((char *) dst->data + r * dst->nb[1]);
            for (int64_t i = 0; i < n; ++i) {
                y[i] = s;
            }
        }
    }
}

TEST_F(CustomOps, BarriersFenceTheCustomNode) {
    constexpr int64_t kCols = 256, kRows = 256;
    for (int n_threads : {2, 4}) {
        for (int n_tasks : {1, 2, LM_GGML_N_TASKS_MAX}) {
            SCOPED_TRACE("threads " + std::to_string(n_threads) + ", n_tasks " + std::to_string(n_tasks));
            lm_ggml_backend_cpu_set_n_threads(backend, n_threads);
            GraphCtx g;
            lm_ggml_tensor * a = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, kCols, kRows);
            lm_ggml_tensor * b = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, kCols, kRows);
            SumCheck check;
            lm_ggml_tensor * s = lm_ggml_add(g.ctx, a, b); // 3 everywhere
            lm_ggml_tensor * u = lm_ggml_map_custom1(g.ctx, s, add_row_sums, n_tasks, &check);
            lm_ggml_tensor * out = lm_ggml_sub(g.ctx, u, a); // kCols * 3 - 1
            lm_ggml_cgraph * graph = lm_ggml_new_graph(g.ctx);
            lm_ggml_build_forward_expand(graph, out);
            ASSERT_TRUE(g.alloc(backend));
            for (int rep = 0; rep < 5; ++rep) {
                cputest::set_f32(a, std::vector<float>(kCols * kRows, 1.0f));
                cputest::set_f32(b, std::vector<float>(kCols * kRows, 2.0f));
                ASSERT_EQ(lm_ggml_backend_graph_compute(backend, graph), LM_GGML_STATUS_SUCCESS);
                EXPECT_EQ(check.incomplete.load(), 0);
                const std::vector<float> got = cputest::get_f32(out);
                const float want = (float) kCols * 3.0f - 1.0f;
                for (size_t i = 0; i < got.size(); ++i) {
                    ASSERT_EQ(got[i], want) << "element " << i << " (rep " << rep << ")";
                }
            }
        }
    }
}

// A user function may touch memory that is not among its tensors (here: a
// tensor an earlier node writes, read through userdata, and one a later node
// reads, written through userdata). As in ggml, whose threads meet after
// every node, the runtime must not overlap it with the nodes around it.
struct SideChannel {
    const lm_ggml_tensor * in; // the earlier node's result
    lm_ggml_tensor * out;      // read by the later node
    std::atomic<int> incomplete{0};
};

void through_userdata(lm_ggml_tensor * dst, const lm_ggml_tensor *, int ith, int nth, void * ud) {
    auto * side = static_cast<SideChannel *>(ud);
    const int64_t n = lm_ggml_nelements(side->in);
    const float * x = (const float *) side->in->data;
    float * y = (float *) side->out->data;
    for (int64_t i = 0; i < n; ++i) {
        if (x[i] != 3.0f) {
            side->incomplete++;
        }
    }
    for (int64_t i = ith; i < n; i += nth) {
        y[i] = 5.0f;
    }
    if (ith == 0) {
        ((float *) dst->data)[0] = 0.0f;
    }
}

TEST_F(CustomOps, UserFunctionMayTouchMemoryOutsideItsTensors) {
    constexpr int64_t kN = 256 * 256;
    for (int n_threads : {2, 4}) {
        for (int n_tasks : {1, LM_GGML_N_TASKS_MAX}) {
            SCOPED_TRACE("threads " + std::to_string(n_threads) + ", n_tasks " + std::to_string(n_tasks));
            lm_ggml_backend_cpu_set_n_threads(backend, n_threads);
            GraphCtx g;
            lm_ggml_tensor * a = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, kN);
            lm_ggml_tensor * b = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, kN);
            lm_ggml_tensor * w = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, kN);
            lm_ggml_tensor * token = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, 1);
            SideChannel side;
            lm_ggml_tensor * s = lm_ggml_add(g.ctx, a, b); // 3 everywhere
            lm_ggml_tensor * u = lm_ggml_map_custom1(g.ctx, token, through_userdata, n_tasks, &side);
            lm_ggml_tensor * out = lm_ggml_add(g.ctx, w, a); // 6 once the function wrote w
            lm_ggml_cgraph * graph = lm_ggml_new_graph(g.ctx);
            lm_ggml_build_forward_expand(graph, s);
            lm_ggml_build_forward_expand(graph, u);
            lm_ggml_build_forward_expand(graph, out);
            ASSERT_TRUE(g.alloc(backend));
            side.in = s;
            side.out = w;
            for (int rep = 0; rep < 5; ++rep) {
                cputest::set_f32(a, std::vector<float>(kN, 1.0f));
                cputest::set_f32(b, std::vector<float>(kN, 2.0f));
                cputest::set_f32(w, std::vector<float>(kN, 0.0f));
                ASSERT_EQ(lm_ggml_backend_graph_compute(backend, graph), LM_GGML_STATUS_SUCCESS);
                EXPECT_EQ(side.incomplete.load(), 0);
                const std::vector<float> got = cputest::get_f32(out);
                for (size_t i = 0; i < got.size(); ++i) {
                    ASSERT_EQ(got[i], 6.0f) << "element " << i << " (rep " << rep << ")";
                }
            }
        }
    }
}

// ---------------------------------------------------------------- construction
void fun1(lm_ggml_tensor *, const lm_ggml_tensor *, int, int, void *) {}
void fun3(lm_ggml_tensor *, const lm_ggml_tensor *, const lm_ggml_tensor *, const lm_ggml_tensor *, int, int, void *) {}
void fun3_f32(lm_ggml_tensor *, const lm_ggml_tensor *, const lm_ggml_tensor *, const lm_ggml_tensor *) {}
void unary_f32(const int, float *, const float *) {}

struct CustomLayout { // ggml's lm_ggml_map_custom3_op_params
    lm_ggml_custom3_op_t fun;
    int n_tasks;
    void * userdata;
};

TEST(CustomOpsBuild, OpParamsAndSources) {
    GraphCtx g;
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, 4, 3);
    lm_ggml_tensor * b = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, 5);
    lm_ggml_tensor * c = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_I32, 2);
    int token = 0;

    lm_ggml_tensor * r = lm_ggml_map_custom3(g.ctx, a, b, c, fun3, 7, &token);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->op, LM_GGML_OP_MAP_CUSTOM3);
    EXPECT_EQ(r->type, a->type);
    EXPECT_TRUE(lm_ggml_are_same_shape(r, a));
    EXPECT_EQ(r->view_src, nullptr);
    EXPECT_EQ(r->src[0], a);
    EXPECT_EQ(r->src[1], b);
    EXPECT_EQ(r->src[2], c);
    CustomLayout p;
    std::memcpy(&p, r->op_params, sizeof(p));
    EXPECT_EQ(p.fun, &fun3);
    EXPECT_EQ(p.n_tasks, 7);
    EXPECT_EQ(p.userdata, &token);

    lm_ggml_tensor * ri = lm_ggml_map_custom1_inplace(g.ctx, a, fun1, LM_GGML_N_TASKS_MAX, nullptr);
    ASSERT_NE(ri, nullptr);
    EXPECT_EQ(ri->view_src, a);
    std::memcpy(&p, ri->op_params, sizeof(p));
    EXPECT_EQ(p.n_tasks, LM_GGML_N_TASKS_MAX);
    EXPECT_EQ(p.userdata, nullptr);

    lm_ggml_tensor * rf = lm_ggml_map_custom3_f32(g.ctx, a, b, c, fun3_f32);
    ASSERT_NE(rf, nullptr);
    EXPECT_EQ(rf->op, LM_GGML_OP_MAP_CUSTOM3_F32);
    EXPECT_EQ(rf->src[2], c);
    lm_ggml_custom3_op_f32_t f = nullptr;
    std::memcpy(&f, rf->op_params, sizeof(f));
    EXPECT_EQ(f, &fun3_f32);

    lm_ggml_tensor * ru = lm_ggml_map_unary_f32(g.ctx, a, unary_f32);
    ASSERT_NE(ru, nullptr);
    EXPECT_EQ(ru->op, LM_GGML_OP_MAP_UNARY);
    lm_ggml_unary_op_f32_t fu = nullptr;
    std::memcpy(&fu, ru->op_params, sizeof(fu));
    EXPECT_EQ(fu, &unary_f32);
}

TEST(CustomOpsBuild, BadArgumentsAreErrors) {
    GraphCtx g;
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, 4, 3);
    for (int n_tasks : {0, -2, INT_MIN}) {
        LogCapture log;
        EXPECT_EQ(lm_ggml_map_custom1(g.ctx, a, fun1, n_tasks, nullptr), nullptr);
        EXPECT_EQ(log.errors(), 1);
        EXPECT_TRUE(log.contains("n_tasks"));
    }
    {
        LogCapture log;
        EXPECT_EQ(lm_ggml_map_custom1(g.ctx, a, nullptr, 1, nullptr), nullptr);
        EXPECT_EQ(lm_ggml_map_unary_f32(g.ctx, a, nullptr), nullptr);
        EXPECT_EQ(lm_ggml_map_custom3(g.ctx, a, a, nullptr, fun3, 1, nullptr), nullptr);
        EXPECT_EQ(log.errors(), 3);
    }
}

} // namespace

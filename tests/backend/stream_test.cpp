// Backends (streams): identity queries, graph compute and plans, capability
// queries, and the defaults a backend with only the required slots gets.

#include "backend_test_utils.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "mini_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <new>
#include <vector>

using lmtest::BackendLogCapture;

namespace {

struct CtxDeleter {
    void operator()(lm_ggml_context * c) const { lm_ggml_free(c); }
};
using CtxPtr = std::unique_ptr<lm_ggml_context, CtxDeleter>;

// (4, 3) inputs with distinct values; out = (a + b) * a, mm = a^T-product.
struct SmallGraph {
    CtxPtr ctx{lmtest::new_meta_ctx()};
    lm_ggml_tensor * a = nullptr;
    lm_ggml_tensor * b = nullptr;
    lm_ggml_tensor * out = nullptr;
    lm_ggml_cgraph * graph = nullptr;
    lm_ggml_backend_buffer_t buf = nullptr;
    std::vector<float> va, vb;

    SmallGraph(lm_ggml_backend_buffer_type_t buft, bool with_mul_mat) {
        a = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 4, 3);
        b = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 4, 3);
        out = lm_ggml_mul(ctx.get(), lm_ggml_add(ctx.get(), a, b), a);
        if (with_mul_mat) {
            out = lm_ggml_mul_mat(ctx.get(), a, out); // (3, 3): out[m, n] = sum_k a[k, m] * prev[k, n]
        }
        graph = lm_ggml_new_graph(ctx.get());
        lm_ggml_build_forward_expand(graph, out);
        buf = lmtest::place_ctx_tensors(ctx.get(), buft);
        for (int i = 0; i < 12; i++) {
            va.push_back(0.5f * i - 2.0f);
            vb.push_back(1.0f + 0.25f * i);
        }
        lmtest::set_f32(a, va);
        lmtest::set_f32(b, vb);
    }
    ~SmallGraph() { lm_ggml_backend_buffer_free(buf); }

    // double-precision reference of `out`
    std::vector<double> reference(bool with_mul_mat) const {
        std::vector<double> ew(12);
        for (int i = 0; i < 12; i++) {
            ew[i] = ((double) va[i] + vb[i]) * va[i];
        }
        if (!with_mul_mat) {
            return ew;
        }
        std::vector<double> mm(9);
        for (int n = 0; n < 3; n++)
            for (int m = 0; m < 3; m++) {
                double s = 0;
                for (int k = 0; k < 4; k++) s += (double) va[m * 4 + k] * ew[n * 4 + k];
                mm[n * 3 + m] = s;
            }
        return mm;
    }
};

void expect_close(const std::vector<float> & got, const std::vector<double> & want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) {
        EXPECT_NEAR(got[i], want[i], 1e-5 * (1.0 + std::fabs(want[i]))) << "element " << i;
    }
}

} // namespace

TEST(Stream, CpuIdentityAndBufferQueries) {
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    ASSERT_NE(cpu, nullptr);
    EXPECT_STREQ(lm_ggml_backend_name(cpu), "CPU");
    ASSERT_NE(lm_ggml_backend_guid(cpu), nullptr);
    EXPECT_TRUE(lm_ggml_guid_matches(lm_ggml_backend_guid(cpu), lm_ggml_backend_guid(cpu)));
    lm_ggml_backend_dev_t dev = lm_ggml_backend_get_device(cpu);
    ASSERT_NE(dev, nullptr);
    EXPECT_EQ(lm_ggml_backend_get_default_buffer_type(cpu), lm_ggml_backend_dev_buffer_type(dev));
    EXPECT_EQ(lm_ggml_backend_get_alignment(cpu),
              lm_ggml_backend_buft_get_alignment(lm_ggml_backend_dev_buffer_type(dev)));
    EXPECT_EQ(lm_ggml_backend_get_max_size(cpu),
              lm_ggml_backend_buft_get_max_size(lm_ggml_backend_dev_buffer_type(dev)));
    lm_ggml_backend_buffer_t b = lm_ggml_backend_alloc_buffer(cpu, 128);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(lm_ggml_backend_buffer_get_type(b), lm_ggml_backend_get_default_buffer_type(cpu));
    lm_ggml_backend_buffer_free(b);
    lm_ggml_backend_free(cpu);
}

TEST(Stream, MiniGetsDefaultsForEveryOptionalSlot) {
    minibk::Mini mini = minibk::make();
    lm_ggml_backend_t be = lm_ggml_backend_dev_init(mini.dev, nullptr);
    ASSERT_NE(be, nullptr);
    EXPECT_STREQ(lm_ggml_backend_name(be), "MINI0");
    EXPECT_EQ(lm_ggml_backend_get_device(be), mini.dev);
    EXPECT_EQ(lm_ggml_backend_get_default_buffer_type(be), mini.buft);
    EXPECT_EQ(lm_ggml_backend_get_alignment(be), minibk::kAlignment);
    EXPECT_EQ(lm_ggml_backend_get_max_size(be), SIZE_MAX);

    BackendLogCapture log;
    lm_ggml_backend_synchronize(be);                           // no slot: no-op
    EXPECT_FALSE(lm_ggml_backend_offload_op(be, nullptr));     // NULL op: one line
    EXPECT_TRUE(lm_ggml_backend_supports_buft(be, mini.buft)); // default: own buffer type
    EXPECT_FALSE(lm_ggml_backend_supports_buft(be, lm_ggml_backend_cpu_buffer_type()));
    EXPECT_EQ(log.errors(), 1u) << "only offload_op(NULL) complains: " << log.text();

    SmallGraph g(mini.buft, false);
    EXPECT_FALSE(lm_ggml_backend_offload_op(be, g.out)); // no slot: never offload
    EXPECT_TRUE(lm_ggml_backend_supports_op(be, g.out));

    // plans are optional: refused with one line each
    log.clear();
    EXPECT_EQ(lm_ggml_backend_graph_plan_create(be, g.graph), nullptr);
    EXPECT_EQ(log.errors(), 1u) << log.text();
    log.clear();
    int dummy = 0;
    EXPECT_EQ(lm_ggml_backend_graph_plan_compute(be, &dummy), LM_GGML_STATUS_FAILED);
    EXPECT_EQ(log.errors(), 1u) << log.text();
    log.clear();
    lm_ggml_backend_graph_plan_free(be, nullptr); // like free(NULL)
    EXPECT_EQ(log.lines(), 0u) << log.text();

    EXPECT_EQ(lm_ggml_backend_graph_compute(be, g.graph), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(*mini.n_graph_compute, 1);
    expect_close(lmtest::get_f32(g.out), g.reference(false));
    lm_ggml_backend_free(be);
}

TEST(Stream, CpuComputesGraphDirectlyAndThroughAPlan) {
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    ASSERT_NE(cpu, nullptr);
    SmallGraph g(lm_ggml_backend_get_default_buffer_type(cpu), true);
    ASSERT_NE(g.buf, nullptr);
    EXPECT_TRUE(lm_ggml_backend_supports_op(cpu, g.out));
    EXPECT_EQ(lm_ggml_backend_graph_compute(cpu, g.graph), LM_GGML_STATUS_SUCCESS);
    expect_close(lmtest::get_f32(g.out), g.reference(true));

    lmtest::set_f32(g.out, std::vector<float>(9, 0.0f));
    lm_ggml_backend_graph_plan_t plan = lm_ggml_backend_graph_plan_create(cpu, g.graph);
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(lm_ggml_backend_graph_plan_compute(cpu, plan), LM_GGML_STATUS_SUCCESS);
    lm_ggml_backend_graph_plan_free(cpu, plan);
    expect_close(lmtest::get_f32(g.out), g.reference(true));

    EXPECT_EQ(lm_ggml_backend_graph_compute_async(cpu, g.graph), LM_GGML_STATUS_SUCCESS);
    lm_ggml_backend_synchronize(cpu);
    expect_close(lmtest::get_f32(g.out), g.reference(true));
    lm_ggml_backend_free(cpu);
}

TEST(Stream, UnsupportedOpIsReportedNotFaked) {
    minibk::Mini mini = minibk::make();
    lm_ggml_backend_t be = lm_ggml_backend_dev_init(mini.dev, nullptr);
    CtxPtr ctx(lmtest::new_meta_ctx());
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 4, 3);
    lm_ggml_tensor * sm = lm_ggml_soft_max(ctx.get(), a);
    EXPECT_FALSE(lm_ggml_backend_supports_op(be, sm));
    EXPECT_FALSE(lm_ggml_backend_dev_supports_op(mini.dev, sm));
    lm_ggml_backend_free(be);
}

namespace {
lm_ggml_status throwing_compute(lm_ggml_backend_t, lm_ggml_cgraph *) { throw std::bad_alloc(); }
} // namespace

TEST(Stream, ComputeErrorsBecomeStatuses) {
    minibk::Mini mini = minibk::make();
    lm_ggml_backend_t be = lm_ggml_backend_dev_init(mini.dev, nullptr);
    ASSERT_NE(be, nullptr);
    SmallGraph g(mini.buft, false);
    {
        BackendLogCapture log;
        EXPECT_EQ(lm_ggml_backend_graph_compute(be, nullptr), LM_GGML_STATUS_FAILED);
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    {
        BackendLogCapture log;
        EXPECT_EQ(lm_ggml_backend_graph_compute(nullptr, g.graph), LM_GGML_STATUS_FAILED);
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    be->iface.graph_compute = throwing_compute; // an exception must not cross the C ABI
    {
        BackendLogCapture log;
        EXPECT_EQ(lm_ggml_backend_graph_compute(be, g.graph), LM_GGML_STATUS_ALLOC_FAILED);
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    be->iface.graph_compute = nullptr;
    {
        BackendLogCapture log;
        EXPECT_EQ(lm_ggml_backend_graph_compute_async(be, g.graph), LM_GGML_STATUS_FAILED);
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    lm_ggml_backend_free(be);
}

TEST(Stream, NullBackendArgumentsLogOneLine) {
    struct Call {
        const char * what;
        void (*fn)();
    };
    const Call calls[] = {
        {"guid", [] { EXPECT_EQ(lm_ggml_backend_guid(nullptr), nullptr); }},
        {"name", [] { EXPECT_STREQ(lm_ggml_backend_name(nullptr), "NULL"); }},
        {"default_buft", [] { EXPECT_EQ(lm_ggml_backend_get_default_buffer_type(nullptr), nullptr); }},
        {"alloc_buffer", [] { EXPECT_EQ(lm_ggml_backend_alloc_buffer(nullptr, 16), nullptr); }},
        {"alignment", [] { EXPECT_EQ(lm_ggml_backend_get_alignment(nullptr), 0u); }},
        {"max_size", [] { EXPECT_EQ(lm_ggml_backend_get_max_size(nullptr), 0u); }},
        {"synchronize", [] { lm_ggml_backend_synchronize(nullptr); }},
        {"plan_create", [] { EXPECT_EQ(lm_ggml_backend_graph_plan_create(nullptr, nullptr), nullptr); }},
        {"plan_free", [] { lm_ggml_backend_graph_plan_free(nullptr, nullptr); }},
        {"plan_compute",
         [] { EXPECT_EQ(lm_ggml_backend_graph_plan_compute(nullptr, nullptr), LM_GGML_STATUS_FAILED); }},
        {"compute_async",
         [] { EXPECT_EQ(lm_ggml_backend_graph_compute_async(nullptr, nullptr), LM_GGML_STATUS_FAILED); }},
        {"supports_op", [] { EXPECT_FALSE(lm_ggml_backend_supports_op(nullptr, nullptr)); }},
        {"supports_buft", [] { EXPECT_FALSE(lm_ggml_backend_supports_buft(nullptr, nullptr)); }},
        {"offload_op", [] { EXPECT_FALSE(lm_ggml_backend_offload_op(nullptr, nullptr)); }},
        {"get_device", [] { EXPECT_EQ(lm_ggml_backend_get_device(nullptr), nullptr); }},
        {"tensor_copy", [] { lm_ggml_backend_tensor_copy(nullptr, nullptr); }},
        {"tensor_copy_async", [] { lm_ggml_backend_tensor_copy_async(nullptr, nullptr, nullptr, nullptr); }},
    };
    for (const Call & c : calls) {
        BackendLogCapture log;
        c.fn();
        EXPECT_EQ(log.errors(), 1u) << c.what << ": " << log.text();
        EXPECT_EQ(log.lines(), 1u) << c.what << ": " << log.text();
    }
    BackendLogCapture log;
    lm_ggml_backend_free(nullptr); // like free(NULL)
    EXPECT_EQ(log.lines(), 0u);
}

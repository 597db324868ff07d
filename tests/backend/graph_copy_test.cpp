// graph_copy (structure + contents onto another backend's memory) and
// compare_graph_backend (two backends, node by node).

#include "backend_test_utils.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "mini_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using lmtest::BackendLogCapture;

namespace {

struct CtxDeleter {
    void operator()(lm_ggml_context * c) const { lm_ggml_free(c); }
};
using CtxPtr = std::unique_ptr<lm_ggml_context, CtxDeleter>;

// a, b: (6, 2) -> s = a + b -> r = reshape(s, (3, 4)) -> p = r * r', with r'
// = reshape(b, (3, 4)); the reshapes are view nodes.
struct Net {
    CtxPtr ctx{lmtest::new_meta_ctx()};
    lm_ggml_tensor *a, *b, *s, *r, *rb, *p;
    lm_ggml_cgraph * graph;
    lm_ggml_backend_buffer_t buf = nullptr;
    std::vector<float> va, vb;

    explicit Net(lm_ggml_backend_buffer_type_t buft) {
        a = lm_ggml_set_name(lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 6, 2), "a");
        b = lm_ggml_set_name(lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 6, 2), "b");
        s = lm_ggml_set_name(lm_ggml_add(ctx.get(), a, b), "s");
        r = lm_ggml_set_name(lm_ggml_reshape_2d(ctx.get(), s, 3, 4), "r");
        rb = lm_ggml_set_name(lm_ggml_reshape_2d(ctx.get(), b, 3, 4), "rb");
        p = lm_ggml_set_name(lm_ggml_mul(ctx.get(), r, rb), "p");
        graph = lm_ggml_new_graph(ctx.get());
        lm_ggml_build_forward_expand(graph, p);
        buf = lmtest::place_ctx_tensors(ctx.get(), buft);
        for (int i = 0; i < 12; i++) {
            va.push_back(1.5f * i - 4.0f);
            vb.push_back(0.5f + 0.125f * i * i);
        }
        lmtest::set_f32(a, va);
        lmtest::set_f32(b, vb);
    }
    ~Net() { lm_ggml_backend_buffer_free(buf); }

    std::vector<float> ref_s() const {
        std::vector<float> v(12);
        for (int i = 0; i < 12; i++) v[i] = (float) ((double) va[i] + vb[i]);
        return v;
    }
    std::vector<double> ref_p() const {
        std::vector<double> v(12);
        for (int i = 0; i < 12; i++) v[i] = (double) (float) ((double) va[i] + vb[i]) * vb[i];
        return v;
    }
};

lm_ggml_tensor * find_node(lm_ggml_cgraph * g, const char * name) {
    for (int i = 0; i < lm_ggml_graph_n_nodes(g); i++) {
        if (std::string(lm_ggml_graph_node(g, i)->name) == name) return lm_ggml_graph_node(g, i);
    }
    return nullptr;
}

} // namespace

TEST(GraphCopy, CopiesStructureLayoutAndContentsIntoTheDestination) {
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    ASSERT_NE(cpu, nullptr);
    Net net(lm_ggml_backend_get_default_buffer_type(cpu));
    ASSERT_EQ(lm_ggml_backend_graph_compute(cpu, net.graph), LM_GGML_STATUS_SUCCESS);

    minibk::Mini mini = minibk::make({.alloc_pad = 64});
    lm_ggml_backend_t dst = lm_ggml_backend_dev_init(mini.dev, nullptr);
    struct lm_ggml_backend_graph_copy copy = lm_ggml_backend_graph_copy(dst, net.graph);
    ASSERT_NE(copy.graph, nullptr);
    ASSERT_NE(copy.buffer, nullptr);
    EXPECT_NE(copy.ctx_allocated, nullptr);
    EXPECT_NE(copy.ctx_unallocated, nullptr);
    EXPECT_EQ(lm_ggml_backend_buffer_get_type(copy.buffer), mini.buft);
    ASSERT_EQ(lm_ggml_graph_n_nodes(copy.graph), lm_ggml_graph_n_nodes(net.graph));

    for (int i = 0; i < lm_ggml_graph_n_nodes(net.graph); i++) {
        lm_ggml_tensor * o = lm_ggml_graph_node(net.graph, i);
        lm_ggml_tensor * c = lm_ggml_graph_node(copy.graph, i);
        EXPECT_NE(o, c);
        EXPECT_STREQ(c->name, o->name);
        EXPECT_EQ(c->op, o->op);
        EXPECT_EQ(c->type, o->type);
        for (int d = 0; d < 4; d++) {
            EXPECT_EQ(c->ne[d], o->ne[d]) << o->name;
            EXPECT_EQ(c->nb[d], o->nb[d]) << o->name;
        }
        ASSERT_NE(c->buffer, nullptr) << o->name;
        EXPECT_EQ(lm_ggml_backend_buffer_get_type(c->buffer), mini.buft) << o->name;
        EXPECT_EQ(lmtest::get_f32(c), lmtest::get_f32(o)) << o->name; // contents came along
        for (int k = 0; k < 2; k++) {
            if (o->src[k] != nullptr) {
                ASSERT_NE(c->src[k], nullptr);
                EXPECT_STREQ(c->src[k]->name, o->src[k]->name);
                EXPECT_EQ(lmtest::get_f32(c->src[k]), lmtest::get_f32(o->src[k]));
            }
        }
        if (o->view_src != nullptr) { // views alias their copied source
            ASSERT_NE(c->view_src, nullptr);
            EXPECT_EQ(c->data, (char *) c->view_src->data + o->view_offs);
        }
    }

    // the copy computes on its own backend, into its own memory
    lm_ggml_tensor * cp = find_node(copy.graph, "p");
    ASSERT_NE(cp, nullptr);
    lm_ggml_backend_tensor_memset(cp, 0, 0, lm_ggml_nbytes(cp));
    ASSERT_EQ(lm_ggml_backend_graph_compute(dst, copy.graph), LM_GGML_STATUS_SUCCESS);
    const std::vector<float> got = lmtest::get_f32(cp);
    const std::vector<double> want = net.ref_p();
    for (size_t i = 0; i < got.size(); i++) {
        EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << i;
    }
    lm_ggml_backend_graph_copy_free(copy);
    lm_ggml_backend_free(dst);
    lm_ggml_backend_free(cpu);
}

TEST(GraphCopy, SplitsIntoAMultiBufferBeyondMaxSize) {
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    Net net(lm_ggml_backend_get_default_buffer_type(cpu));
    minibk::Mini mini = minibk::make({.max_size = 64}); // each 48-byte tensor needs its own buffer
    lm_ggml_backend_t dst = lm_ggml_backend_dev_init(mini.dev, nullptr);
    struct lm_ggml_backend_graph_copy copy = lm_ggml_backend_graph_copy(dst, net.graph);
    ASSERT_NE(copy.buffer, nullptr);
    EXPECT_TRUE(lm_ggml_backend_buffer_is_multi_buffer(copy.buffer));
    lm_ggml_tensor * ca = lm_ggml_graph_node(copy.graph, 0)->src[0];
    EXPECT_EQ(lmtest::get_f32(ca), net.va);
    lm_ggml_backend_graph_copy_free(copy);
    lm_ggml_backend_free(dst);
    lm_ggml_backend_free(cpu);
}

TEST(GraphCopy, UnallocatedGraphIsRefused) {
    CtxPtr ctx(lmtest::new_meta_ctx());
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 4);
    lm_ggml_tensor * s = lm_ggml_add(ctx.get(), a, a);
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx.get());
    lm_ggml_build_forward_expand(g, s);
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    BackendLogCapture log;
    struct lm_ggml_backend_graph_copy copy = lm_ggml_backend_graph_copy(cpu, g);
    EXPECT_EQ(copy.graph, nullptr);
    EXPECT_EQ(copy.buffer, nullptr);
    EXPECT_EQ(log.errors(), 1u) << log.text();
    lm_ggml_backend_graph_copy_free(copy); // freeing an empty copy is fine
    log.clear();
    copy = lm_ggml_backend_graph_copy(nullptr, g);
    EXPECT_EQ(copy.graph, nullptr);
    EXPECT_EQ(log.errors(), 1u) << log.text();
    lm_ggml_backend_free(cpu);
}

namespace {
struct CompareLog {
    std::vector<std::string> names;
    double max_diff = 0;
    int stop_after = 1000;
};
bool on_node(int, lm_ggml_tensor * t1, lm_ggml_tensor * t2, void * user) {
    auto * log = static_cast<CompareLog *>(user);
    log->names.push_back(t1->name);
    const std::vector<float> x = lmtest::get_f32(t1), y = lmtest::get_f32(t2);
    for (size_t i = 0; i < x.size(); i++) log->max_diff = std::max(log->max_diff, (double) std::fabs(x[i] - y[i]));
    return (int) log->names.size() < log->stop_after;
}
} // namespace

TEST(CompareGraphBackend, VisitsEveryNonViewNodeWithEqualResults) {
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    Net net(lm_ggml_backend_get_default_buffer_type(cpu));
    minibk::Mini mini = minibk::make();
    lm_ggml_backend_t other = lm_ggml_backend_dev_init(mini.dev, nullptr);

    CompareLog log;
    EXPECT_TRUE(lm_ggml_backend_compare_graph_backend(cpu, other, net.graph, on_node, &log));
    EXPECT_EQ(log.names, (std::vector<std::string>{"s", "p"})); // reshapes (views) are skipped
    EXPECT_EQ(log.max_diff, 0.0);
    EXPECT_EQ(lmtest::get_f32(net.s), net.ref_s()); // backend1 computed the original graph

    CompareLog first_only;
    first_only.stop_after = 1;
    EXPECT_TRUE(lm_ggml_backend_compare_graph_backend(cpu, other, net.graph, on_node, &first_only));
    EXPECT_EQ(first_only.names.size(), 1u);

    BackendLogCapture cap;
    EXPECT_FALSE(lm_ggml_backend_compare_graph_backend(cpu, other, net.graph, nullptr, nullptr));
    EXPECT_EQ(cap.errors(), 1u) << cap.text();
    lm_ggml_backend_free(other);
    lm_ggml_backend_free(cpu);
}

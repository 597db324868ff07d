// lm_ggml_build_backward_expand's bookkeeping (ggml 1.4.1's semantics):
// which tensors get gradients, accumulators in ctx_static, the loss seed,
// accumulation and reset, gradients surviving graph_cpy / graph_dup, and bad
// input giving one error line with the graph left as it was.

#include <gtest/gtest.h>

#include "backend_test_utils.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include <cmath>
#include <vector>

namespace {

struct Ctx {
    lm_ggml_context * c;
    explicit Ctx(size_t mb = 16) {
        lm_ggml_init_params ip = {mb << 20, nullptr, false};
        c = lm_ggml_init(ip);
    }
    ~Ctx() { lm_ggml_free(c); }
};

void fill(lm_ggml_tensor * t, std::vector<float> v) {
    ASSERT_EQ((size_t) lm_ggml_nelements(t), v.size());
    std::copy(v.begin(), v.end(), static_cast<float *>(t->data));
}

std::vector<float> values(const lm_ggml_tensor * t) {
    const float * d = static_cast<const float *>(t->data);
    return std::vector<float>(d, d + lm_ggml_nelements(t));
}

bool in_ctx(lm_ggml_context * ctx, const lm_ggml_tensor * t) {
    for (lm_ggml_tensor * x = lm_ggml_get_first_tensor(ctx); x; x = lm_ggml_get_next_tensor(ctx, x)) {
        if (x == t) return true;
    }
    return false;
}

// loss = sum(w * x) + sum(w^2): dL/dw = x + 2 w
struct Model {
    Ctx mem;
    lm_ggml_context * st;
    lm_ggml_tensor *w, *x, *y, *loss;
    lm_ggml_tensor * idx; // an I32 node: never a gradient
    lm_ggml_cgraph *gf = nullptr, *gb = nullptr;

    explicit Model(bool accumulate) {
        lm_ggml_init_params ip = {1 << 20, nullptr, false};
        st = lm_ggml_init(ip);
        w = lm_ggml_new_tensor_1d(mem.c, LM_GGML_TYPE_F32, 3);
        x = lm_ggml_new_tensor_1d(mem.c, LM_GGML_TYPE_F32, 3);
        lm_ggml_set_name(w, "w");
        lm_ggml_set_name(x, "x");
        fill(w, {1.0f, -2.0f, 0.5f});
        fill(x, {3.0f, 4.0f, -1.0f});
        lm_ggml_set_param(mem.c, w);
        y = lm_ggml_mul(mem.c, w, x);
        loss = lm_ggml_add(mem.c, lm_ggml_sum(mem.c, y), lm_ggml_sum(mem.c, lm_ggml_sqr(mem.c, w)));
        lm_ggml_set_loss(loss);
        idx = lm_ggml_argmax(mem.c, lm_ggml_reshape_2d(mem.c, y, 3, 1));
        gf = lm_ggml_new_graph_custom(mem.c, 256, true);
        lm_ggml_build_forward_expand(gf, loss);
        lm_ggml_build_forward_expand(gf, idx);
        gb = lm_ggml_graph_dup(mem.c, gf);
        lm_ggml_build_backward_expand(st, mem.c, gb, accumulate);
    }
    ~Model() { lm_ggml_free(st); }
    void compute() { ASSERT_EQ(lm_ggml_graph_compute_with_ctx(mem.c, gb, 1), LM_GGML_STATUS_SUCCESS); }
};

} // namespace

TEST(Backward, WhichTensorsGetGradients) {
    Model m(false);
    ASSERT_GT(lm_ggml_graph_n_nodes(m.gb), lm_ggml_graph_n_nodes(m.gf));
    EXPECT_NE(lm_ggml_graph_get_grad(m.gb, m.w), nullptr);
    EXPECT_NE(lm_ggml_graph_get_grad(m.gb, m.y), nullptr);
    EXPECT_EQ(lm_ggml_graph_get_grad(m.gb, m.x), nullptr);   // a constant
    EXPECT_EQ(lm_ggml_graph_get_grad(m.gb, m.idx), nullptr); // an I32 node
    // the forward graph itself has no gradients
    EXPECT_EQ(lm_ggml_graph_get_grad(m.gf, m.w), nullptr);
    // without accumulation only the loss has an accumulator, in ctx_static
    EXPECT_EQ(lm_ggml_graph_get_grad_acc(m.gb, m.w), nullptr);
    lm_ggml_tensor * lacc = lm_ggml_graph_get_grad_acc(m.gb, m.loss);
    ASSERT_NE(lacc, nullptr);
    EXPECT_EQ(lacc, lm_ggml_graph_get_grad(m.gb, m.loss));
    EXPECT_TRUE(in_ctx(m.st, lacc));
    EXPECT_STREQ(lm_ggml_get_name(lm_ggml_graph_get_grad(m.gb, m.w)), "grad for w");
    // NULL arguments: no gradient, one error line each
    lmtest::BackendLogCapture log;
    EXPECT_EQ(lm_ggml_graph_get_grad(nullptr, m.w), nullptr);
    EXPECT_EQ(lm_ggml_graph_get_grad_acc(m.gb, nullptr), nullptr);
    EXPECT_EQ(log.errors(), 2u);
}

TEST(Backward, ResetSeedsTheLossAndGradientsAreExact) {
    Model m(false);
    lm_ggml_graph_reset(m.gb);
    EXPECT_EQ(values(lm_ggml_graph_get_grad_acc(m.gb, m.loss))[0], 1.0f);
    m.compute();
    // dL/dw = x + 2w, exact in F32 for these values
    EXPECT_EQ(values(lm_ggml_graph_get_grad(m.gb, m.w)), (std::vector<float>{5.0f, 0.0f, 0.0f}));
    // and again: without accumulators the gradient does not grow
    m.compute();
    EXPECT_EQ(values(lm_ggml_graph_get_grad(m.gb, m.w)), (std::vector<float>{5.0f, 0.0f, 0.0f}));
}

TEST(Backward, AccumulateSumsOverEvaluationsUntilReset) {
    Model m(true);
    lm_ggml_tensor * acc = lm_ggml_graph_get_grad_acc(m.gb, m.w);
    ASSERT_NE(acc, nullptr);
    EXPECT_TRUE(in_ctx(m.st, acc));
    EXPECT_STREQ(lm_ggml_get_name(acc), "grad acc for w");
    lm_ggml_graph_reset(m.gb);
    EXPECT_EQ(values(acc), (std::vector<float>{0.0f, 0.0f, 0.0f}));
    m.compute();
    EXPECT_EQ(values(acc), (std::vector<float>{5.0f, 0.0f, 0.0f}));
    m.compute();
    EXPECT_EQ(values(acc), (std::vector<float>{10.0f, 0.0f, 0.0f}));
    // the final gradient node writes into the accumulator's memory
    EXPECT_EQ(lm_ggml_graph_get_grad(m.gb, m.w)->data, acc->data);
    lm_ggml_graph_reset(m.gb);
    EXPECT_EQ(values(acc), (std::vector<float>{0.0f, 0.0f, 0.0f}));
    m.compute();
    EXPECT_EQ(values(acc), (std::vector<float>{5.0f, 0.0f, 0.0f}));
}

TEST(Backward, GraphCpyAndDupKeepGradients) {
    Model m(true);
    lm_ggml_cgraph * d = lm_ggml_graph_dup(m.mem.c, m.gb);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(lm_ggml_graph_get_grad(d, m.w), lm_ggml_graph_get_grad(m.gb, m.w));
    EXPECT_EQ(lm_ggml_graph_get_grad_acc(d, m.w), lm_ggml_graph_get_grad_acc(m.gb, m.w));
    EXPECT_EQ(lm_ggml_graph_get_grad_acc(d, m.loss), lm_ggml_graph_get_grad_acc(m.gb, m.loss));
    // into a larger graph (other hash slots)
    lm_ggml_cgraph * big = lm_ggml_new_graph_custom(m.mem.c, 4096, true);
    lm_ggml_graph_cpy(m.gb, big);
    EXPECT_EQ(lm_ggml_graph_get_grad(big, m.w), lm_ggml_graph_get_grad(m.gb, m.w));
    EXPECT_EQ(lm_ggml_graph_get_grad(big, m.y), lm_ggml_graph_get_grad(m.gb, m.y));
    // a destination without gradient slots: one error, nodes still copied
    lm_ggml_cgraph * plain = lm_ggml_new_graph_custom(m.mem.c, 256, false);
    lmtest::BackendLogCapture log;
    lm_ggml_graph_cpy(m.gb, plain);
    EXPECT_EQ(log.errors(), 1u);
    EXPECT_EQ(lm_ggml_graph_n_nodes(plain), lm_ggml_graph_n_nodes(m.gb));
    EXPECT_EQ(lm_ggml_graph_get_grad(plain, m.w), nullptr);
}

TEST(Backward, ResetClearsAdamwMoments) {
    Ctx mem;
    lm_ggml_tensor * w = lm_ggml_new_tensor_1d(mem.c, LM_GGML_TYPE_F32, 2);
    lm_ggml_tensor * mo = lm_ggml_new_tensor_1d(mem.c, LM_GGML_TYPE_F32, 2);
    lm_ggml_tensor * v = lm_ggml_new_tensor_1d(mem.c, LM_GGML_TYPE_F32, 2);
    lm_ggml_tensor * p = lm_ggml_new_tensor_1d(mem.c, LM_GGML_TYPE_F32, 7);
    fill(w, {1.0f, 2.0f});
    fill(mo, {3.0f, 4.0f});
    fill(v, {5.0f, 6.0f});
    lm_ggml_set_param(mem.c, w);
    lm_ggml_tensor * loss = lm_ggml_sum(mem.c, lm_ggml_sqr(mem.c, w));
    lm_ggml_set_loss(loss);
    lm_ggml_cgraph * g = lm_ggml_new_graph_custom(mem.c, 64, true);
    lm_ggml_build_forward_expand(g, loss);
    lm_ggml_build_backward_expand(mem.c, mem.c, g, false);
    lm_ggml_build_forward_expand(g, lm_ggml_opt_step_adamw(mem.c, w, lm_ggml_graph_get_grad(g, w), mo, v, p));
    lm_ggml_graph_reset(g);
    EXPECT_EQ(values(mo), (std::vector<float>{0.0f, 0.0f}));
    EXPECT_EQ(values(v), (std::vector<float>{0.0f, 0.0f}));
    EXPECT_EQ(values(w), (std::vector<float>{1.0f, 2.0f})); // parameters untouched
}

TEST(Backward, BadInputLogsOneErrorAndLeavesTheGraph) {
    Ctx mem;
    lm_ggml_tensor * w = lm_ggml_new_tensor_1d(mem.c, LM_GGML_TYPE_F32, 4);
    lm_ggml_tensor * x = lm_ggml_new_tensor_1d(mem.c, LM_GGML_TYPE_F32, 4);
    auto try_build = [&](lm_ggml_cgraph * g, const char * what) {
        const int n = lm_ggml_graph_n_nodes(g);
        lmtest::BackendLogCapture log;
        lm_ggml_build_backward_expand(mem.c, mem.c, g, false);
        EXPECT_EQ(log.errors(), 1u) << what << ": " << log.text();
        EXPECT_EQ(lm_ggml_graph_n_nodes(g), n) << what;
        EXPECT_EQ(lm_ggml_graph_get_grad(g, w), nullptr) << what;
    };
    { // no gradient slots
        lm_ggml_set_param(mem.c, w);
        lm_ggml_tensor * l = lm_ggml_sum(mem.c, lm_ggml_mul(mem.c, w, x));
        lm_ggml_set_loss(l);
        lm_ggml_cgraph * g = lm_ggml_new_graph_custom(mem.c, 64, false);
        lm_ggml_build_forward_expand(g, l);
        try_build(g, "no grads");
    }
    { // no loss
        lm_ggml_tensor * l = lm_ggml_sum(mem.c, lm_ggml_mul(mem.c, w, x));
        lm_ggml_cgraph * g = lm_ggml_new_graph_custom(mem.c, 64, true);
        lm_ggml_build_forward_expand(g, l);
        try_build(g, "no loss");
    }
    { // an op without a rule on the gradient path
        lm_ggml_tensor * l = lm_ggml_sum(mem.c, lm_ggml_tanh(mem.c, w));
        lm_ggml_set_loss(l);
        lm_ggml_cgraph * g = lm_ggml_new_graph_custom(mem.c, 64, true);
        lm_ggml_build_forward_expand(g, l);
        try_build(g, "tanh");
    }
    { // an in-place op on the gradient path
        lm_ggml_tensor * l = lm_ggml_sum(mem.c, lm_ggml_add_inplace(mem.c, lm_ggml_scale(mem.c, w, 2.0f), x));
        lm_ggml_set_loss(l);
        lm_ggml_cgraph * g = lm_ggml_new_graph_custom(mem.c, 64, true);
        lm_ggml_build_forward_expand(g, l);
        try_build(g, "inplace");
    }
    { // no parameter
        Ctx other;
        lm_ggml_tensor * a = lm_ggml_new_tensor_1d(other.c, LM_GGML_TYPE_F32, 4);
        lm_ggml_tensor * l = lm_ggml_sum(other.c, lm_ggml_sqr(other.c, a));
        lm_ggml_set_loss(l);
        lm_ggml_cgraph * g = lm_ggml_new_graph_custom(other.c, 64, true);
        lm_ggml_build_forward_expand(g, l);
        const int n = lm_ggml_graph_n_nodes(g);
        lmtest::BackendLogCapture log;
        lm_ggml_build_backward_expand(other.c, other.c, g, false);
        EXPECT_EQ(log.errors(), 1u);
        EXPECT_EQ(lm_ggml_graph_n_nodes(g), n);
    }
    { // a loss must be an F32 scalar
        lm_ggml_tensor * v = lm_ggml_mul(mem.c, w, x);
        lmtest::BackendLogCapture log;
        lm_ggml_set_loss(v);
        EXPECT_EQ(log.errors(), 1u);
        EXPECT_EQ(v->flags & LM_GGML_TENSOR_FLAG_LOSS, 0);
    }
    { // an unrelated op without a rule is fine when no gradient reaches it
        lm_ggml_tensor * l = lm_ggml_sum(mem.c, lm_ggml_sqr(mem.c, w));
        lm_ggml_tensor * side = lm_ggml_tanh(mem.c, w); // depends on w, but not on the loss's path
        lm_ggml_set_loss(l);
        lm_ggml_cgraph * g = lm_ggml_new_graph_custom(mem.c, 64, true);
        lm_ggml_build_forward_expand(g, l);
        lm_ggml_build_forward_expand(g, side);
        lmtest::BackendLogCapture log;
        lm_ggml_build_backward_expand(mem.c, mem.c, g, false);
        EXPECT_EQ(log.errors(), 0u) << log.text();
        EXPECT_NE(lm_ggml_graph_get_grad(g, w), nullptr);
        EXPECT_EQ(lm_ggml_graph_get_grad(g, side), nullptr);
    }
    { // reset of a graph without gradients
        lm_ggml_cgraph * g = lm_ggml_new_graph_custom(mem.c, 64, false);
        lmtest::BackendLogCapture log;
        lm_ggml_graph_reset(g);
        EXPECT_EQ(log.errors(), 1u);
    }
}

TEST(Backward, OutOfMemoryMidwayRestoresTheGraph) {
    // ctx_compute with room for only a few gradient tensors
    Ctx mem;
    lm_ggml_tensor * w = lm_ggml_new_tensor_2d(mem.c, LM_GGML_TYPE_F32, 4, 4);
    fill(w, std::vector<float>(16, 0.25f));
    lm_ggml_set_param(mem.c, w);
    lm_ggml_tensor * h = w;
    for (int i = 0; i < 8; i++) h = lm_ggml_sin(mem.c, lm_ggml_mul_mat(mem.c, h, w));
    lm_ggml_tensor * loss = lm_ggml_sum(mem.c, h);
    lm_ggml_set_loss(loss);
    lm_ggml_cgraph * g = lm_ggml_new_graph_custom(mem.c, 256, true);
    lm_ggml_build_forward_expand(g, loss);
    const int n = lm_ggml_graph_n_nodes(g);
    lm_ggml_init_params ip = {6 * lm_ggml_tensor_overhead(), nullptr, true};
    lm_ggml_context * small = lm_ggml_init(ip);
    lmtest::BackendLogCapture log;
    lm_ggml_build_backward_expand(mem.c, small, g, false);
    EXPECT_GE(log.errors(), 1u);
    EXPECT_NE(log.text().find("out of memory in ctx_compute"), std::string::npos) << log.text();
    EXPECT_EQ(lm_ggml_graph_n_nodes(g), n);
    EXPECT_EQ(lm_ggml_graph_get_grad(g, w), nullptr);
    EXPECT_EQ(lm_ggml_graph_get_grad_acc(g, loss), nullptr);
    // the forward graph still computes, and a second try with room succeeds
    EXPECT_EQ(lm_ggml_graph_compute_with_ctx(mem.c, g, 1), LM_GGML_STATUS_SUCCESS);
    lm_ggml_build_backward_expand(mem.c, mem.c, g, false);
    EXPECT_NE(lm_ggml_graph_get_grad(g, w), nullptr);
    lm_ggml_free(small);
}

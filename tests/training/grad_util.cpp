#include "grad_util.h"

namespace gradcheck {

double Check::loss_numeric(lm_ggml_cgraph * gf, lm_ggml_tensor * y, const std::vector<double> & r) {
    EXPECT_EQ(lm_ggml_graph_compute_with_ctx(ctx_, gf, 1), LM_GGML_STATUS_SUCCESS);
    const std::vector<double> v = read(y);
    double l = 0.0;
    for (size_t i = 0; i < v.size(); i++) l += v[i] * r[i];
    return l;
}

void Check::run(lm_ggml_tensor * y, double atol, double rtol, float h, const std::vector<lm_ggml_tensor *> & no_grad) {
    ASSERT_NE(y, nullptr);
    ASSERT_FALSE(params_.empty());
    // L = sum(y * R) in the graph (y made contiguous first when it is a view)
    lm_ggml_tensor * yc = lm_ggml_is_contiguous(y) ? y : lm_ggml_cont(ctx_, y);
    lm_ggml_tensor * R = tensor({y->ne[0], y->ne[1], y->ne[2], y->ne[3]});
    lm_ggml_tensor * L = lm_ggml_sum(ctx_, lm_ggml_mul(ctx_, yc, R));
    ASSERT_NE(L, nullptr);
    lm_ggml_set_loss(L);
    const std::vector<double> r = read(R);

    lm_ggml_cgraph * gf = lm_ggml_new_graph_custom(ctx_, 1024, true);
    lm_ggml_build_forward_expand(gf, y);
    lm_ggml_cgraph * gl = lm_ggml_new_graph_custom(ctx_, 1024, true);
    lm_ggml_build_forward_expand(gl, L);
    lm_ggml_cgraph * gb = lm_ggml_graph_dup(ctx_, gl);
    const int n_fwd = lm_ggml_graph_n_nodes(gb);
    lm_ggml_build_backward_expand(ctx_, ctx_, gb, false);
    ASSERT_GT(lm_ggml_graph_n_nodes(gb), n_fwd) << "no backward nodes were added";
    lm_ggml_graph_reset(gb);
    ASSERT_EQ(lm_ggml_graph_compute_with_ctx(ctx_, gb, 1), LM_GGML_STATUS_SUCCESS);

    for (lm_ggml_tensor * p : params_) {
        const bool expect_none = std::find(no_grad.begin(), no_grad.end(), p) != no_grad.end();
        lm_ggml_tensor * g = lm_ggml_graph_get_grad(gb, p);
        if (expect_none) {
            EXPECT_EQ(g, nullptr) << p->name << " should get no gradient";
            continue;
        }
        ASSERT_NE(g, nullptr) << p->name << " got no gradient";
        ASSERT_TRUE(lm_ggml_are_same_shape(g, p)) << p->name;
        const std::vector<double> analytic = read(g);
        float * x = static_cast<float *>(p->data);
        int bad = 0;
        for (int64_t i = 0; i < lm_ggml_nelements(p) && bad < 4; i++) {
            const float x0 = x[i];
            double l[4];
            const float steps[4] = {h, -h, 2 * h, -2 * h};
            for (int k = 0; k < 4; k++) {
                x[i] = x0 + steps[k];
                l[k] = loss_numeric(gf, y, r);
            }
            x[i] = x0;
            const double numeric = (8.0 * (l[0] - l[1]) - (l[2] - l[3])) / (12.0 * (double) h);
            const double a = analytic[(size_t) i];
            if (!(std::fabs(a - numeric) <= atol + rtol * std::fabs(numeric))) {
                ADD_FAILURE() << p->name << "[" << i << "] of " << lm_ggml_op_desc(y) << ": analytic " << a
                              << ", numeric " << numeric;
                bad++;
            }
        }
    }
}

} // namespace gradcheck

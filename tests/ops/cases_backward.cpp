// Training ops: REPEAT_BACK, SILU_BACK, RMS_NORM_BACK, GET_ROWS_BACK,
// SOFT_MAX_BACK, CROSS_ENTROPY_LOSS(_BACK), OPT_STEP_ADAMW here; ROPE_BACK,
// IM2COL_BACK, POOL_2D_BACK in cases_backward_spatial.cpp, FLASH_ATTN_BACK
// in cases_backward_attn.cpp.
//
// Each *_back reference is the gradient of the forward op derived by hand
// (dx = J^T dy), and where cheap it is checked against central differences
// of a double-precision forward reference (backward_fd.h).
//
// Semantics (ggml; the incoming gradient dy is always the first argument):
//   REPEAT_BACK(dy, like): sum of dy over all the tiles repeat(x, dy) made of x.
//   SILU_BACK(dy, x): dy * d/dx [x * sigmoid(x)].
//   RMS_NORM_BACK(dy, x, eps): gradient of x / sqrt(mean(x^2) + eps) per row.
//   GET_ROWS_BACK(dy, ids, table): zeros shaped like the table (F32), row
//     ids[i] += dy row i (ids may repeat).
//   SOFT_MAX_BACK(dy, y, scale): gradient of y = softmax(scale * x + mask...)
//     w.r.t. x, given y.
//   CROSS_ENTROPY_LOSS(a, b): -1/nrows * sum_rows sum_i b_i log softmax(a)_i.
//   CROSS_ENTROPY_LOSS_BACK(g, a, b): (softmax(a) - b) * g / nrows (the
//     gradient when each row of b sums to 1).
//   OPT_STEP_ADAMW(w, g, m, v, p): m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2,
//     w = w (1 - alpha wd) - alpha (b1h m) / (sqrt(b2h v) + eps), in place
//     (the result is a view of w); p = [alpha, b1, b2, eps, wd, b1h, b2h].
#include "backward_fd.h"
#include "op_case.h"
#include "refs.h"

#include <cmath>

namespace opstest {

void add_backward_spatial_cases(CaseList & t1, CaseList & t2); // cases_backward_spatial.cpp
void add_backward_attn_cases(CaseList & t1, CaseList & t2);    // cases_backward_attn.cpp

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// ---------------------------------------------------------------- REPEAT_BACK
HTensor repeat_ref(const HTensor & x, Shape to) {
    return generate(to, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        return x.at(i0 % x.ne[0], i1 % x.ne[1], i2 % x.ne[2], i3 % x.ne[3]);
    });
}

void add_repeat_back_cases(CaseList & t1) {
    struct R {
        Shape from, to;
        bool strided;
    };
    for (R r :
         {R{sh(6, 4, 3, 2), sh(3, 2, 1, 2), false}, R{sh(5, 4, 3, 2), sh(5, 1, 3, 1), false},
          R{sh(7, 5, 3, 2), sh(1, 1, 1, 1), false}, R{sh(8, 6, 2, 1), sh(8, 3, 2, 1), false},
          R{sh(9, 4, 2, 1), sh(3, 2, 1, 1), true}, R{sh(64, 40, 2, 1), sh(32, 20, 1, 1), false}, // split over threads
          // one float per plane (the conv bias's gradient): packed rows are
          // summed as one run (64, 65 floats: whole lanes and a tail); strided
          // rows one by one
          R{sh(8, 8, 16, 3), sh(1, 1, 16, 1), false}, R{sh(13, 5, 2, 2), sh(1, 1, 2, 1), false},
          R{sh(9, 4, 2, 1), sh(1, 1, 2, 1), true}}) {
        OpCase c;
        const std::string name =
            "REPEAT_BACK_f32_" + shape_str(r.from) + "_to_" + shape_str(r.to) + (r.strided ? "_strided" : "");
        c.name = name;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * dy = nullptr;
            if (r.strided) {
                // rows of dy are the first ne0 floats of rows 4 floats longer
                lm_ggml_tensor * big = b.uniform(LM_GGML_TYPE_F32, sh(r.from[0] + 4, r.from[1], r.from[2], r.from[3]));
                dy = lm_ggml_view_4d(b.ctx, big, r.from[0], r.from[1], r.from[2], r.from[3], big->nb[1], big->nb[2],
                                     big->nb[3], 0);
            } else {
                dy = b.uniform(LM_GGML_TYPE_F32, r.from);
            }
            lm_ggml_tensor * like = b.uniform(LM_GGML_TYPE_F32, r.to); // only its shape is used
            return lm_ggml_repeat_back(b.ctx, dy, like);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor dy = r.strided ? strided_view(in[0], r.from,
                                                        sh(1, r.from[0] + 4, (r.from[0] + 4) * r.from[1],
                                                           (r.from[0] + 4) * r.from[1] * r.from[2]),
                                                        0)
                                         : in[0];
            HTensor g(r.to);
            for (int64_t i3 = 0; i3 < dy.ne[3]; ++i3)
                for (int64_t i2 = 0; i2 < dy.ne[2]; ++i2)
                    for (int64_t i1 = 0; i1 < dy.ne[1]; ++i1)
                        for (int64_t i0 = 0; i0 < dy.ne[0]; ++i0)
                            g.at(i0 % r.to[0], i1 % r.to[1], i2 % r.to[2], i3 % r.to[3]) += dy.at(i0, i1, i2, i3);
            fd::expect_gradient(name, g, in[1], [&](const HTensor & x) { return fd::dot(dy, repeat_ref(x, r.from)); });
            return g;
        };
        t1.push_back(c);
    }
}

// ---------------------------------------------------------------- SILU_BACK
void add_silu_back_cases(CaseList & t1) {
    for (Shape s : {sh(17, 3, 2), sh(64, 4), sh(5, 1, 3, 2), sh(128, 20)}) {
        OpCase c;
        const std::string name = "SILU_BACK_f32_" + shape_str(s);
        c.name = name;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * dy = b.uniform(LM_GGML_TYPE_F32, s, -2, 2);
            lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, s, -6, 6);
            return lm_ggml_silu_back(b.ctx, dy, x);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & dy = in[0];
            const HTensor & x = in[1];
            HTensor g(s);
            for (size_t i = 0; i < g.v.size(); ++i) {
                const double sg = sigmoid(x.v[i]);
                g.v[i] = dy.v[i] * (sg + x.v[i] * sg * (1 - sg)); // product rule
            }
            fd::expect_gradient(name, g, x, [&](const HTensor & xx) {
                return fd::dot(dy, map1(xx, [](double v) { return v * sigmoid(v); }));
            });
            return g;
        };
        t1.push_back(c);
    }
}

// ---------------------------------------------------------------- RMS_NORM_BACK
void add_rms_norm_back_cases(CaseList & t1) {
    struct N {
        Shape s;
        float eps;
    };
    for (N n : {N{sh(32, 4, 2), 1e-6f}, N{sh(7, 5), 1e-3f}, N{sh(1, 3, 2), 1e-5f}, N{sh(96, 2, 1, 2), 0.5f},
                N{sh(256, 12), 1e-5f}}) {
        OpCase c;
        const std::string name =
            "RMS_NORM_BACK_f32_" + shape_str(n.s) + "_eps" + std::to_string(static_cast<int>(-std::log10(n.eps)));
        c.name = name;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * dy = b.uniform(LM_GGML_TYPE_F32, n.s, -1, 1);
            lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, n.s, -2, 3);
            return lm_ggml_rms_norm_back(b.ctx, dy, x, n.eps);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & dy = in[0];
            const HTensor & x = in[1];
            const double eps = n.eps;
            const int64_t ne0 = n.s[0];
            HTensor g(n.s);
            // y_i = x_i r, r = (sum x^2 / n + eps)^(-1/2), dr/dx_j = -r^3 x_j / n:
            // dx_j = r dy_j - (r^3 / n) x_j sum_i dy_i x_i
            for (int64_t i3 = 0; i3 < n.s[3]; ++i3)
                for (int64_t i2 = 0; i2 < n.s[2]; ++i2)
                    for (int64_t i1 = 0; i1 < n.s[1]; ++i1) {
                        double sxx = 0, sxg = 0;
                        for (int64_t i0 = 0; i0 < ne0; ++i0) {
                            sxx += x.at(i0, i1, i2, i3) * x.at(i0, i1, i2, i3);
                            sxg += x.at(i0, i1, i2, i3) * dy.at(i0, i1, i2, i3);
                        }
                        const double r = 1.0 / std::sqrt(sxx / ne0 + eps);
                        for (int64_t i0 = 0; i0 < ne0; ++i0)
                            g.at(i0, i1, i2, i3) =
                                r * dy.at(i0, i1, i2, i3) - r * r * r / ne0 * x.at(i0, i1, i2, i3) * sxg;
                    }
            fd::expect_gradient(name, g, x, [&](const HTensor & xx) { return fd::dot(dy, norm_ref(xx, eps, true)); });
            return g;
        };
        t1.push_back(c);
    }
}

// ---------------------------------------------------------------- GET_ROWS_BACK
void add_get_rows_back_cases(CaseList & t1) {
    struct G {
        lm_ggml_type type;
        int64_t ne0, n_ids, n_rows;
    };
    for (G gc : {G{LM_GGML_TYPE_F32, 8, 10, 6}, G{LM_GGML_TYPE_F16, 13, 7, 9}, G{LM_GGML_TYPE_F32, 5, 1, 1},
                 G{LM_GGML_TYPE_F32, 33, 40, 3}, G{LM_GGML_TYPE_F32, 64, 50, 20}}) {
        OpCase c;
        const std::string name = std::string("GET_ROWS_BACK_") + type_str(gc.type) + "_" + std::to_string(gc.ne0) +
                                 "_ids" + std::to_string(gc.n_ids) + "_rows" + std::to_string(gc.n_rows);
        c.name = name;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * dy = b.uniform(gc.type, sh(gc.ne0, gc.n_ids));
            std::vector<double> ids(static_cast<size_t>(gc.n_ids));
            for (double & v : ids) v = static_cast<double>(b.rng().int_in(0, gc.n_rows - 1)); // repeats likely
            lm_ggml_tensor * id = b.values(LM_GGML_TYPE_I32, sh(gc.n_ids), ids);
            lm_ggml_tensor * table = b.uniform(LM_GGML_TYPE_F32, sh(gc.ne0, gc.n_rows)); // only its shape is used
            return lm_ggml_get_rows_back(b.ctx, dy, id, table);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & dy = in[0];
            HTensor g(sh(gc.ne0, gc.n_rows));
            for (int64_t i = 0; i < gc.n_ids; ++i) {
                const int64_t r = static_cast<int64_t>(in[1].v[static_cast<size_t>(i)]);
                for (int64_t j = 0; j < gc.ne0; ++j) g.at(j, r) += dy.at(j, i);
            }
            return g;
        };
        t1.push_back(c);
    }
}

// ---------------------------------------------------------------- SOFT_MAX_BACK
// y comes from a SOFT_MAX node on x in the same graph, so the reference can
// check its gradient against differences of softmax(x).
void add_soft_max_back_cases(CaseList & t1) {
    struct S {
        Shape s;
        float scale;
        float max_bias;
        bool inplace;
    };
    for (S sc :
         {S{sh(16, 5, 2), 1.0f, 0.0f, false}, S{sh(33, 3), 0.5f, 0.0f, false}, S{sh(8, 4, 3), 2.0f, 0.0f, true},
          S{sh(1, 4), 1.0f, 0.0f, false}, S{sh(12, 3, 4), 0.7f, 2.0f, false}, S{sh(128, 20), 1.0f, 0.0f, false}}) {
        OpCase c;
        const std::string name = "SOFT_MAX_BACK_f32_" + shape_str(sc.s) + "_scale" +
                                 std::to_string(static_cast<int>(sc.scale * 10)) + (sc.max_bias > 0 ? "_alibi" : "") +
                                 (sc.inplace ? "_inplace" : "");
        c.name = name;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * dy = b.uniform(LM_GGML_TYPE_F32, sc.s, -1, 1);
            lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sc.s, -3, 3);
            lm_ggml_tensor * y = lm_ggml_soft_max_ext(b.ctx, x, nullptr, sc.scale, 0.0f);
            return sc.inplace ? lm_ggml_soft_max_ext_back_inplace(b.ctx, dy, y, sc.scale, sc.max_bias)
                              : lm_ggml_soft_max_ext_back(b.ctx, dy, y, sc.scale, sc.max_bias);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & dy = in[0];
            const HTensor & x = in[1];
            const HTensor y = soft_max_ref(x, nullptr, sc.scale, 0.0);
            HTensor g(sc.s);
            // dy_j/dx_k = scale * y_j (delta_jk - y_k): dx_k = scale * sum_j dy_j y_j (delta_jk - y_k)
            for (int64_t i3 = 0; i3 < sc.s[3]; ++i3)
                for (int64_t i2 = 0; i2 < sc.s[2]; ++i2)
                    for (int64_t i1 = 0; i1 < sc.s[1]; ++i1)
                        for (int64_t k = 0; k < sc.s[0]; ++k) {
                            double s = 0;
                            for (int64_t j = 0; j < sc.s[0]; ++j)
                                s += dy.at(j, i1, i2, i3) * y.at(j, i1, i2, i3) *
                                     ((j == k ? 1.0 : 0.0) - y.at(k, i1, i2, i3));
                            g.at(k, i1, i2, i3) = sc.scale * s;
                        }
            fd::expect_gradient(
                name, g, x, [&](const HTensor & xx) { return fd::dot(dy, soft_max_ref(xx, nullptr, sc.scale, 0.0)); });
            return g;
        };
        t1.push_back(c);
    }
}

// ---------------------------------------------------------------- CROSS_ENTROPY_LOSS(_BACK)
double cross_entropy(const HTensor & a, const HTensor & b) {
    const int64_t n = a.ne[0], nr = a.n() / n;
    double total = 0;
    for (int64_t r = 0; r < nr; ++r) {
        double mx = -INFINITY;
        for (int64_t i = 0; i < n; ++i) mx = std::fmax(mx, a.v[r * n + i]);
        double z = 0;
        for (int64_t i = 0; i < n; ++i) z += std::exp(a.v[r * n + i] - mx);
        for (int64_t i = 0; i < n; ++i) total += b.v[r * n + i] * (a.v[r * n + i] - mx - std::log(z));
    }
    return -total / nr;
}

// labels: each row a probability distribution (rows sum to 1)
std::vector<double> label_rows(Builder & b, Shape s) {
    std::vector<double> v(static_cast<size_t>(s[0] * s[1] * s[2] * s[3]));
    for (size_t r = 0; r < v.size(); r += static_cast<size_t>(s[0])) {
        double sum = 0;
        for (int64_t i = 0; i < s[0]; ++i) sum += v[r + i] = b.rng().uniform(0.0, 1.0);
        for (int64_t i = 0; i < s[0]; ++i) v[r + i] /= sum;
    }
    return v;
}

void add_cross_entropy_cases(CaseList & t1) {
    for (Shape s : {sh(10, 4), sh(33, 3, 2), sh(5), sh(128, 7), sh(3, 2, 2, 2)}) {
        OpCase c;
        const std::string name = "CROSS_ENTROPY_LOSS_f32_" + shape_str(s);
        c.name = name;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, s, -4, 4);
            lm_ggml_tensor * l = b.values(LM_GGML_TYPE_F32, s, label_rows(b, s));
            return lm_ggml_cross_entropy_loss(b.ctx, a, l);
        };
        c.ref = [=](const Inputs & in) { return HTensor(sh(1), cross_entropy(in[0], in[1])); };
        t1.push_back(c);
    }
    {
        // labels that are not distributions: the loss formula still applies
        OpCase c;
        const std::string name = "CROSS_ENTROPY_LOSS_f32_raw_labels";
        c.name = name;
        c.build = [](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(9, 5), -4, 4);
            lm_ggml_tensor * l = b.uniform(LM_GGML_TYPE_F32, sh(9, 5), 0, 2);
            return lm_ggml_cross_entropy_loss(b.ctx, a, l);
        };
        c.ref = [](const Inputs & in) { return HTensor(sh(1), cross_entropy(in[0], in[1])); };
        t1.push_back(c);
    }
    for (Shape s : {sh(10, 4), sh(33, 3, 2), sh(5), sh(3, 2, 2, 2)}) {
        OpCase c;
        const std::string name = "CROSS_ENTROPY_LOSS_BACK_f32_" + shape_str(s);
        c.name = name;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * g = b.values(LM_GGML_TYPE_F32, sh(1), {b.rng().uniform(0.5, 2.0)});
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, s, -4, 4);
            lm_ggml_tensor * l = b.values(LM_GGML_TYPE_F32, s, label_rows(b, s));
            return lm_ggml_cross_entropy_loss_back(b.ctx, g, a, l);
        };
        c.ref = [=](const Inputs & in) {
            const double g0 = in[0].v[0];
            const HTensor & a = in[1];
            const HTensor & l = in[2];
            const int64_t n = s[0], nr = a.n() / n;
            // d/da_j of -log softmax(a)_i is softmax(a)_j - delta_ij; weighted
            // by l_i and summed: softmax(a)_j * sum_i l_i - l_j
            HTensor grad(s);
            for (int64_t r = 0; r < nr; ++r) {
                double z = 0, lsum = 0;
                for (int64_t i = 0; i < n; ++i) {
                    z += std::exp(a.v[r * n + i]);
                    lsum += l.v[r * n + i];
                }
                for (int64_t j = 0; j < n; ++j)
                    grad.v[r * n + j] = g0 * (std::exp(a.v[r * n + j]) / z * lsum - l.v[r * n + j]) / nr;
            }
            fd::expect_gradient(name, grad, a, [&](const HTensor & aa) { return g0 * cross_entropy(aa, l); });
            // ggml's (softmax(a) - l) g / nr takes sum_i l_i = 1, which holds
            // here up to F32 rounding of the labels (far below the limit)
            return grad;
        };
        t1.push_back(c);
    }
}

// ---------------------------------------------------------------- OPT_STEP_ADAMW
struct AdamW {
    double alpha, beta1, beta2, eps, wd;
    int step; // the bias corrections are 1 / (1 - beta^step)
    std::vector<double> params() const {
        return {alpha, beta1, beta2, eps, wd, 1.0 / (1.0 - std::pow(beta1, step)), 1.0 / (1.0 - std::pow(beta2, step))};
    }
};

// with_moments: the result is (w, m, v) concatenated along dim 3, read after
// the step (m and v are copies of the inputs, updated in place)
void add_adamw_case(CaseList & t1, const std::string & tag, Shape s, AdamW p, bool with_moments) {
    OpCase c;
    c.name = "OPT_STEP_ADAMW_f32_" + tag;
    c.build = [=](Builder & b) {
        lm_ggml_tensor * w = b.uniform(LM_GGML_TYPE_F32, s, -1, 1);
        lm_ggml_set_param(b.ctx, w);
        lm_ggml_tensor * g = b.uniform(LM_GGML_TYPE_F32, s, -2, 2);
        lm_ggml_tensor * m0 = b.uniform(LM_GGML_TYPE_F32, s, -0.5, 0.5);
        lm_ggml_tensor * v0 = b.uniform(LM_GGML_TYPE_F32, s, 0, 0.5);
        lm_ggml_tensor * pp = b.values(LM_GGML_TYPE_F32, sh(7), p.params());
        // copies, so the op's in-place update of m and v does not touch inputs
        lm_ggml_tensor * m = lm_ggml_dup(b.ctx, m0);
        lm_ggml_tensor * v = lm_ggml_dup(b.ctx, v0);
        lm_ggml_tensor * r = lm_ggml_opt_step_adamw(b.ctx, w, g, m, v, pp);
        if (!with_moments) {
            return r;
        }
        return lm_ggml_concat(b.ctx, lm_ggml_concat(b.ctx, r, m, 3), v, 3);
    };
    c.ref = [=](const Inputs & in) {
        const HTensor & w = in[0];
        const HTensor & g = in[1];
        const std::vector<double> & q = in[4].v; // the parameters as F32 values
        const double alpha = q[0], b1 = q[1], b2 = q[2], eps = q[3], wd = q[4], b1h = q[5], b2h = q[6];
        const int64_t n = w.n();
        HTensor r(with_moments ? sh(s[0], s[1], s[2], 3 * s[3]) : s);
        for (int64_t i = 0; i < n; ++i) {
            const double m = b1 * in[2].v[i] + (1 - b1) * g.v[i];
            const double v = b2 * in[3].v[i] + (1 - b2) * g.v[i] * g.v[i];
            r.v[i] = w.v[i] - alpha * wd * w.v[i] - alpha * (b1h * m) / (std::sqrt(b2h * v) + eps);
            if (with_moments) {
                r.v[n + i] = m;
                r.v[2 * n + i] = v;
            }
        }
        return r;
    };
    t1.push_back(c);
}

void add_adamw_cases(CaseList & t1) {
    add_adamw_case(t1, "7x5x3", sh(7, 5, 3), AdamW{0.1, 0.9, 0.999, 1e-8, 0.01, 3}, true);
    add_adamw_case(t1, "64x9_no_decay", sh(64, 9), AdamW{0.01, 0.8, 0.99, 1e-6, 0.0, 1}, true);
    add_adamw_case(t1, "33x2x2x2_result_only", sh(33, 2, 2, 2), AdamW{0.05, 0.9, 0.999, 1e-8, 0.1, 10}, false);
    add_adamw_case(t1, "3000_multi_thread", sh(3000), AdamW{0.02, 0.9, 0.999, 1e-8, 0.05, 4}, true);
}

} // namespace

void add_backward_cases(CaseList & t1, CaseList & t2) {
    add_repeat_back_cases(t1);
    add_silu_back_cases(t1);
    add_rms_norm_back_cases(t1);
    add_get_rows_back_cases(t1);
    add_soft_max_back_cases(t1);
    add_cross_entropy_cases(t1);
    add_adamw_cases(t1);
    add_backward_spatial_cases(t1, t2);
    add_backward_attn_cases(t1, t2);
}

} // namespace opstest

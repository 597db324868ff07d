// FLASH_ATTN_BACK (see cases_backward.cpp for the other training ops).
//
// Semantics: the forward attention is, per query row i of head h, batch b
// (kv head h % Hkv), O = sum_j P_j v[j, :] with P = softmax_j(q_i . k_j / sqrt(D))
// over keys j < M (masked: j <= M - N + i); v is stored transposed (M, D, Hkv, B).
// FLASH_ATTN_BACK(q, k, v, d, masked) returns the gradients of sum(d * O)
// w.r.t. q, k and v in one F32 vector: grad q, grad k, grad v, each
// contiguous in its source's shape, each starting at a multiple of
// LM_GGML_MEM_ALIGN bytes (the gaps are 0).
#include "backward_fd.h"
#include "op_case.h"

#include <cmath>

namespace opstest {
namespace {

struct Attn {
    int64_t D, N, M, H, Hkv, B;
    bool masked;

    Shape q() const { return sh(D, N, H, B); }
    Shape k() const { return sh(D, M, Hkv, B); }
    Shape v() const { return sh(M, D, Hkv, B); }
    int64_t keys(int64_t i) const { return masked ? M - N + i + 1 : M; }
};

// softmax of the scaled scores of query i (head h, batch b) over its keys
std::vector<double> probs(const Attn & a, const HTensor & q, const HTensor & k, int64_t i, int64_t h, int64_t b) {
    std::vector<double> p(static_cast<size_t>(a.keys(i)));
    double mx = -INFINITY, z = 0;
    for (int64_t j = 0; j < a.keys(i); ++j) {
        double s = 0;
        for (int64_t c = 0; c < a.D; ++c) s += q.at(c, i, h, b) * k.at(c, j, h % a.Hkv, b);
        p[j] = s / std::sqrt(static_cast<double>(a.D));
        mx = std::max(mx, p[j]);
    }
    for (double & x : p) z += x = std::exp(x - mx);
    for (double & x : p) x /= z;
    return p;
}

// sum(d * O), the forward attention's output O weighted by d
double loss(const Attn & a, const HTensor & q, const HTensor & k, const HTensor & v, const HTensor & d) {
    double L = 0;
    for (int64_t b = 0; b < a.B; ++b)
        for (int64_t h = 0; h < a.H; ++h)
            for (int64_t i = 0; i < a.N; ++i) {
                const std::vector<double> p = probs(a, q, k, i, h, b);
                for (int64_t c = 0; c < a.D; ++c)
                    for (int64_t j = 0; j < a.keys(i); ++j) L += d.at(c, i, h, b) * p[j] * v.at(j, c, h % a.Hkv, b);
            }
    return L;
}

void add_case(CaseList & t1, const std::string & tag, Attn a) {
    OpCase c;
    const std::string name = "FLASH_ATTN_BACK_f32_" + tag + (a.masked ? "_masked" : "");
    c.name = name;
    c.build = [a](Builder & b) {
        lm_ggml_tensor * q = b.uniform(LM_GGML_TYPE_F32, a.q(), -1, 1);
        lm_ggml_tensor * k = b.uniform(LM_GGML_TYPE_F32, a.k(), -1, 1);
        lm_ggml_tensor * v = b.uniform(LM_GGML_TYPE_F32, a.v(), -1, 1);
        lm_ggml_tensor * d = b.uniform(LM_GGML_TYPE_F32, a.q(), -1, 1);
        return lm_ggml_flash_attn_back(b.ctx, q, k, v, d, a.masked);
    };
    c.ref = [a, name](const Inputs & in) {
        const HTensor &q = in[0], &k = in[1], &v = in[2], &d = in[3];
        HTensor gq(a.q()), gk(a.k()), gv(a.v());
        const double scale = 1.0 / std::sqrt(static_cast<double>(a.D));
        for (int64_t b = 0; b < a.B; ++b)
            for (int64_t h = 0; h < a.H; ++h)
                for (int64_t i = 0; i < a.N; ++i) {
                    const int64_t hk = h % a.Hkv, n = a.keys(i);
                    const std::vector<double> p = probs(a, q, k, i, h, b);
                    // dL/dP_j = d . v_j; through the softmax: dL/ds_j = P_j (dL/dP_j - sum_l P_l dL/dP_l)
                    std::vector<double> dp(static_cast<size_t>(n));
                    double mean = 0;
                    for (int64_t j = 0; j < n; ++j) {
                        for (int64_t c = 0; c < a.D; ++c) dp[j] += d.at(c, i, h, b) * v.at(j, c, hk, b);
                        mean += p[j] * dp[j];
                    }
                    for (int64_t j = 0; j < n; ++j) {
                        const double ds = p[j] * (dp[j] - mean) * scale;
                        for (int64_t c = 0; c < a.D; ++c) {
                            gq.at(c, i, h, b) += ds * k.at(c, j, hk, b);
                            gk.at(c, j, hk, b) += ds * q.at(c, i, h, b);
                            gv.at(j, c, hk, b) += p[j] * d.at(c, i, h, b);
                        }
                    }
                }
        fd::expect_gradient(name + " (q)", gq, q, [&](const HTensor & x) { return loss(a, x, k, v, d); });
        fd::expect_gradient(name + " (k)", gk, k, [&](const HTensor & x) { return loss(a, q, x, v, d); });
        fd::expect_gradient(name + " (v)", gv, v, [&](const HTensor & x) { return loss(a, q, k, x, d); });

        auto padded = [](int64_t n) { return static_cast<int64_t>(LM_GGML_PAD(n * 4, LM_GGML_MEM_ALIGN) / 4); };
        const int64_t offs_k = padded(gq.n()), offs_v = offs_k + padded(gk.n());
        HTensor r(sh(offs_v + padded(gv.n())));
        std::copy(gq.v.begin(), gq.v.end(), r.v.begin());
        std::copy(gk.v.begin(), gk.v.end(), r.v.begin() + offs_k);
        std::copy(gv.v.begin(), gv.v.end(), r.v.begin() + offs_v);
        return r;
    };
    t1.push_back(c);
}

} // namespace

void add_backward_attn_cases(CaseList & t1, CaseList & /*t2*/) {
    for (bool masked : {false, true}) {
        add_case(t1, "D4_N3_M5_H2", Attn{4, 3, 5, 2, 2, 1, masked});
        add_case(t1, "D8_N6_M6_H4_kv2_B2", Attn{8, 6, 6, 4, 2, 2, masked}); // grouped kv heads
        add_case(t1, "D5_N1_M7_H3_kv1", Attn{5, 1, 7, 3, 1, 1, masked});    // odd sizes, one query
    }
}

} // namespace opstest

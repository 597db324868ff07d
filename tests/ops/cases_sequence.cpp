// Sequence-model ops: SSM_CONV, SSM_SCAN (Mamba), RWKV_WKV6, GATED_LINEAR_ATTN.
// Several tokens per sequence, several sequences and heads, random initial
// states, so every case checks the recurrence carries state across tokens
// and keeps sequences and heads apart.
//
// Semantics (ggml):
//   SSM_CONV: sx (d_conv-1+n_t, d_inner, n_s), c (d_conv, d_inner):
//     out[i, t, s] = sum_k sx[t+k, i, s] * c[k, i]                  -> (d_inner, n_t, n_s)
//   SSM_SCAN: per sequence s and channel i, h = s0[:, i, s], for each token t:
//     d = softplus(dt[i, t, s]) (d = dt above 20), h[n] = h[n] exp(d A[n, i]) + B[n, t, s] x[i, t, s] d,
//     y[i, t, s] = sum_n h[n] C[n, t, s].   Result 1-d: y (d_inner, n_t, n_s), then the final h (d_state, d_inner, n_s).
//   RWKV_WKV6: k, v, r, td (S, H, T), tf (S, H), state S*S*H per sequence (T/n_seqs tokens each),
//     state[i][j] of head h at flat seq*S*S*H + h*S*S + i*S + j; per token:
//     out[h*S+j, t] = sum_i r_i (tf_i k_i v_j + st[i][j]),  st[i][j] = st[i][j] td_i + k_i v_j.
//   GATED_LINEAR_ATTN: k, v, q, g (S, H, T), scale:
//     st[i][j] = st[i][j] g_i + k_i v_j,  out[h*S+j, t] = sum_i st[i][j] q_i scale.
//   Both: result (S*H, T + S*n_seqs): T output rows, then the final states (flat, as the input state).
#include "op_case.h"

#include <cmath>

namespace opstest {
namespace {

// ---------------------------------------------------------------- SSM_CONV
struct ConvDims {
    int64_t d_conv, d_inner, n_t, n_s;
    bool transposed; // sx is a transposed view of a (d_inner, L, n_s) tensor
};

void add_ssm_conv_cases(CaseList & t1) {
    for (ConvDims d : {ConvDims{4, 8, 5, 3, false}, ConvDims{4, 37, 1, 2, false}, ConvDims{3, 16, 6, 1, false},
                       ConvDims{4, 10, 3, 2, true}}) {
        const int64_t L = d.d_conv - 1 + d.n_t;
        OpCase c;
        c.name = "SSM_CONV_f32_k" + std::to_string(d.d_conv) + "_" + std::to_string(d.d_inner) + "x" +
                 std::to_string(d.n_t) + "x" + std::to_string(d.n_s) + (d.transposed ? "_transposed" : "");
        c.build = [=](Builder & b) {
            lm_ggml_tensor * sx = d.transposed
                                      ? lm_ggml_transpose(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(d.d_inner, L, d.n_s)))
                                      : b.uniform(LM_GGML_TYPE_F32, sh(L, d.d_inner, d.n_s));
            lm_ggml_tensor * w = b.uniform(LM_GGML_TYPE_F32, sh(d.d_conv, d.d_inner));
            return lm_ggml_ssm_conv(b.ctx, sx, w);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor sx = d.transposed ? transpose(in[0]) : in[0];
            const HTensor & w = in[1];
            HTensor r(sh(d.d_inner, d.n_t, d.n_s));
            for (int64_t s = 0; s < d.n_s; ++s)
                for (int64_t t = 0; t < d.n_t; ++t)
                    for (int64_t i = 0; i < d.d_inner; ++i) {
                        double sum = 0;
                        for (int64_t k = 0; k < d.d_conv; ++k) sum += sx.at(t + k, i, s) * w.at(k, i);
                        r.at(i, t, s) = sum;
                    }
            return r;
        };
        t1.push_back(c);
    }
}

// ---------------------------------------------------------------- SSM_SCAN
struct ScanDims {
    int64_t d_state, d_inner, n_t, n_s;
    double dt_hi; // dt uniform in [-3, dt_hi): above 20 takes softplus's linear branch
    bool bc_view; // B and C are column slices of one (2*d_state, n_t, n_s) tensor, as in Mamba
};

HTensor ssm_scan_ref(const ScanDims & d, const HTensor & s0, const HTensor & x, const HTensor & dt, const HTensor & A,
                     const HTensor & B, const HTensor & C) {
    const int64_t ny = d.d_inner * d.n_t * d.n_s;
    HTensor r(sh(ny + d.d_state * d.d_inner * d.n_s));
    std::vector<double> h(static_cast<size_t>(d.d_state));
    for (int64_t s = 0; s < d.n_s; ++s)
        for (int64_t i = 0; i < d.d_inner; ++i) {
            for (int64_t n = 0; n < d.d_state; ++n) h[n] = s0.at(n, i, s);
            for (int64_t t = 0; t < d.n_t; ++t) {
                const double dv = dt.at(i, t, s);
                const double sp = dv <= 20.0 ? std::log1p(std::exp(dv)) : dv;
                double y = 0;
                for (int64_t n = 0; n < d.d_state; ++n) {
                    h[n] = h[n] * std::exp(sp * A.at(n, i)) + B.at(n, t, s) * x.at(i, t, s) * sp;
                    y += h[n] * C.at(n, t, s);
                }
                r.v[(s * d.n_t + t) * d.d_inner + i] = y;
            }
            for (int64_t n = 0; n < d.d_state; ++n) r.v[ny + (s * d.d_inner + i) * d.d_state + n] = h[n];
        }
    return r;
}

void add_ssm_scan_cases(CaseList & t1) {
    for (ScanDims d :
         {ScanDims{16, 12, 4, 3, 3.0, false}, ScanDims{16, 7, 1, 2, 3.0, false}, ScanDims{8, 9, 5, 2, 24.0, true}}) {
        OpCase c;
        c.name = "SSM_SCAN_f32_" + std::to_string(d.d_state) + "x" + std::to_string(d.d_inner) + "x" +
                 std::to_string(d.n_t) + "x" + std::to_string(d.n_s) + (d.dt_hi > 20 ? "_dt_large" : "") +
                 (d.bc_view ? "_bc_view" : "");
        c.build = [=](Builder & b) {
            lm_ggml_tensor * s = b.uniform(LM_GGML_TYPE_F32, sh(d.d_state, d.d_inner, d.n_s));
            lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(d.d_inner, d.n_t, d.n_s));
            lm_ggml_tensor * dt = b.uniform(LM_GGML_TYPE_F32, sh(d.d_inner, d.n_t, d.n_s), -3.0, d.dt_hi);
            lm_ggml_tensor * A = b.uniform(LM_GGML_TYPE_F32, sh(d.d_state, d.d_inner), -2.0, -0.1); // decays
            lm_ggml_tensor *B = nullptr, *C = nullptr;
            if (d.bc_view) {
                lm_ggml_tensor * bc = b.uniform(LM_GGML_TYPE_F32, sh(2 * d.d_state, d.n_t, d.n_s));
                B = lm_ggml_view_3d(b.ctx, bc, d.d_state, d.n_t, d.n_s, bc->nb[1], bc->nb[2], 0);
                C = lm_ggml_view_3d(b.ctx, bc, d.d_state, d.n_t, d.n_s, bc->nb[1], bc->nb[2],
                                    d.d_state * sizeof(float));
            } else {
                B = b.uniform(LM_GGML_TYPE_F32, sh(d.d_state, d.n_t, d.n_s));
                C = b.uniform(LM_GGML_TYPE_F32, sh(d.d_state, d.n_t, d.n_s));
            }
            return lm_ggml_ssm_scan(b.ctx, s, x, dt, A, B, C);
        };
        c.ref = [=](const Inputs & in) {
            if (!d.bc_view) {
                return ssm_scan_ref(d, in[0], in[1], in[2], in[3], in[4], in[5]);
            }
            const HTensor & bc = in[4];
            const HTensor B = generate(sh(d.d_state, d.n_t, d.n_s),
                                       [&](int64_t n, int64_t t, int64_t s, int64_t) { return bc.at(n, t, s); });
            const HTensor C = generate(sh(d.d_state, d.n_t, d.n_s), [&](int64_t n, int64_t t, int64_t s, int64_t) {
                return bc.at(d.d_state + n, t, s);
            });
            return ssm_scan_ref(d, in[0], in[1], in[2], in[3], B, C);
        };
        t1.push_back(c);
    }
}

// ---------------------------------------------------------------- RWKV_WKV6, GATED_LINEAR_ATTN
struct AttnDims {
    int64_t S, H, per_seq, n_seqs;
    int64_t T() const { return per_seq * n_seqs; }
    std::string tag() const {
        // appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "S" + to_string(...)
        std::string t = "S";
        t += std::to_string(S);
        t += "_H" + std::to_string(H);
        t += "_T" + std::to_string(T());
        t += "_seqs" + std::to_string(n_seqs);
        return t;
    }
};

// One recurrence for both ops. Per head h and key index i at token t,
// decay(t, h, i) scales the old state; out(t, h, i, kv_ij, old_ij) is token
// t's contribution of (i, j) to the output.
template <class Decay, class Out>
HTensor linear_attn_ref(const AttnDims & d, const HTensor & k, const HTensor & v, const HTensor & state,
                        const Decay & decay, const Out & out) {
    const int64_t S = d.S, C = d.S * d.H, T = d.T();
    HTensor r(sh(C, T + S * d.n_seqs));
    std::vector<double> st(static_cast<size_t>(S * S));
    for (int64_t seq = 0; seq < d.n_seqs; ++seq)
        for (int64_t h = 0; h < d.H; ++h) {
            const int64_t base = seq * S * C + h * S * S; // flat offset of this state
            for (int64_t e = 0; e < S * S; ++e) st[e] = state.v[base + e];
            for (int64_t tt = 0; tt < d.per_seq; ++tt) {
                const int64_t t = seq * d.per_seq + tt;
                for (int64_t j = 0; j < S; ++j) {
                    double y = 0;
                    for (int64_t i = 0; i < S; ++i) {
                        y += out(t, h, i, k.at(i, h, t) * v.at(j, h, t), st[i * S + j]);
                    }
                    r.at(h * S + j, t) = y;
                }
                for (int64_t i = 0; i < S; ++i)
                    for (int64_t j = 0; j < S; ++j)
                        st[i * S + j] = st[i * S + j] * decay(t, h, i) + k.at(i, h, t) * v.at(j, h, t);
            }
            for (int64_t e = 0; e < S * S; ++e) r.v[C * T + base + e] = st[e];
        }
    return r;
}

const AttnDims kAttnDims[] = {{8, 3, 3, 2}, {16, 2, 1, 3}, {5, 4, 4, 1}, {64, 2, 2, 2}};

void add_rwkv_wkv6_cases(CaseList & t1) {
    for (AttnDims d : kAttnDims) {
        OpCase c;
        c.name = "RWKV_WKV6_f32_" + d.tag();
        c.build = [=](Builder & b) {
            const Shape tok = sh(d.S, d.H, d.T());
            lm_ggml_tensor * k = b.uniform(LM_GGML_TYPE_F32, tok);
            lm_ggml_tensor * v = b.uniform(LM_GGML_TYPE_F32, tok);
            lm_ggml_tensor * r = b.uniform(LM_GGML_TYPE_F32, tok);
            lm_ggml_tensor * tf = b.uniform(LM_GGML_TYPE_F32, sh(d.S, d.H));
            lm_ggml_tensor * td = b.uniform(LM_GGML_TYPE_F32, tok, 0.3, 1.0); // decays in (0, 1)
            lm_ggml_tensor * st = b.uniform(LM_GGML_TYPE_F32, sh(d.S * d.S * d.H, d.n_seqs));
            return lm_ggml_rwkv_wkv6(b.ctx, k, v, r, tf, td, st);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor &k = in[0], &v = in[1], &r = in[2], &tf = in[3], &td = in[4], &st = in[5];
            return linear_attn_ref(
                d, k, v, st, [&](int64_t t, int64_t h, int64_t i) { return td.at(i, h, t); },
                [&](int64_t t, int64_t h, int64_t i, double kv, double old) {
                    return r.at(i, h, t) * (tf.at(i, h) * kv + old);
                });
        };
        t1.push_back(c);
    }
}

void add_gated_linear_attn_cases(CaseList & t1) {
    for (AttnDims d : kAttnDims) {
        const float scale = 1.0f / std::sqrt(static_cast<float>(d.S));
        OpCase c;
        c.name = "GATED_LINEAR_ATTN_f32_" + d.tag();
        c.build = [=](Builder & b) {
            const Shape tok = sh(d.S, d.H, d.T());
            lm_ggml_tensor * k = b.uniform(LM_GGML_TYPE_F32, tok);
            lm_ggml_tensor * v = b.uniform(LM_GGML_TYPE_F32, tok);
            lm_ggml_tensor * q = b.uniform(LM_GGML_TYPE_F32, tok);
            lm_ggml_tensor * g = b.uniform(LM_GGML_TYPE_F32, tok, 0.3, 1.0); // gates in (0, 1)
            lm_ggml_tensor * st = b.uniform(LM_GGML_TYPE_F32, sh(d.S * d.S * d.H, d.n_seqs));
            return lm_ggml_gated_linear_attn(b.ctx, k, v, q, g, st, scale);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor &k = in[0], &v = in[1], &q = in[2], &g = in[3], &st = in[4];
            return linear_attn_ref(
                d, k, v, st, [&](int64_t t, int64_t h, int64_t i) { return g.at(i, h, t); },
                [&](int64_t t, int64_t h, int64_t i, double kv, double old) {
                    return q.at(i, h, t) * static_cast<double>(scale) * (old * g.at(i, h, t) + kv);
                });
        };
        t1.push_back(c);
    }
}

} // namespace

void add_sequence_cases(CaseList & t1, CaseList & /*t2*/) {
    add_ssm_conv_cases(t1);
    add_ssm_scan_cases(t1);
    add_rwkv_wkv6_cases(t1);
    add_gated_linear_attn_cases(t1);
}

} // namespace opstest

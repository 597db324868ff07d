// The naive reference forward pass: plain loops in double precision over
// the whole sequence, written from the architectures' definitions
// (RMS norm, RoPE, causal softmax attention with grouped KV heads, gated FFN).

#include <cmath>

#include "tiny_model.h"

namespace tiny {

namespace {

using Vec = std::vector<double>;

Vec rms_norm(const Vec & x, const std::vector<float> * w, double eps) {
    double ss = 0.0;
    for (double v : x) {
        ss += v * v;
    }
    const double inv = 1.0 / std::sqrt(ss / double(x.size()) + eps);
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); i++) {
        y[i] = x[i] * inv * (w ? double((*w)[i]) : 1.0);
    }
    return y;
}

// y = W x (+ b) for a ggml matrix of shape (n_in, n_out): row r is output r.
Vec matvec(const std::vector<float> & W, const Vec & x, size_t n_out, const std::vector<float> * b = nullptr) {
    const size_t n_in = x.size();
    Vec y(n_out, 0.0);
    for (size_t r = 0; r < n_out; r++) {
        double acc = 0.0;
        for (size_t c = 0; c < n_in; c++) {
            acc += double(W[r * n_in + c]) * x[c];
        }
        y[r] = acc + (b ? double((*b)[r]) : 0.0);
    }
    return y;
}

// Rotates the first n_rot dims of one head. Normal mode pairs (2i, 2i+1);
// NeoX pairs (i, i + n_rot/2). theta_i = scale * pos * base^(-2i/n_rot).
void rope(double * h, int n_rot, int pos, double base, double scale, bool neox) {
    for (int i = 0; i < n_rot / 2; i++) {
        const double theta = scale * pos * std::pow(base, -2.0 * i / n_rot);
        const double c = std::cos(theta), s = std::sin(theta);
        const int a = neox ? i : 2 * i;
        const int b = neox ? i + n_rot / 2 : 2 * i + 1;
        const double x0 = h[a], x1 = h[b];
        h[a] = x0 * c - x1 * s;
        h[b] = x0 * s + x1 * c;
    }
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }
double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }

} // namespace

std::vector<std::vector<double>> reference_forward(const Spec & s, const Weights & w,
                                                   const std::vector<int32_t> & tokens) {
    const bool gemma = s.arch == "gemma3";
    const bool neox = s.arch != "llama";
    const int T = static_cast<int>(tokens.size());
    const int E = s.n_embd, hd = s.head_dim, H = s.n_head, HKV = s.n_head_kv;
    const int group = H / HKV;

    std::vector<Vec> x(T, Vec(E));
    const auto & emb = w["token_embd.weight"];
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < E; i++) {
            x[t][i] = double(emb[size_t(tokens[t]) * E + i]) * (gemma ? std::sqrt(double(E)) : 1.0);
        }
    }

    for (int il = 0; il < s.n_layer; il++) {
        const std::string p = "blk." + std::to_string(il) + ".";
        auto W = [&](const char * n) -> const std::vector<float> & { return w[p + n]; };
        auto B = [&](const char * n) -> const std::vector<float> * { return w.has(p + n) ? &w[p + n] : nullptr; };
        const bool swa = gemma && s.n_swa > 0 && il % s.swa_pattern < s.swa_pattern - 1;
        double base = s.rope_base;
        double fscale = s.rope_scale_factor != 0.0f ? 1.0 / s.rope_scale_factor : 1.0;
        if (swa) {
            base = s.rope_base_swa;
            fscale = 1.0;
        }

        std::vector<Vec> q(T), k(T), v(T);
        for (int t = 0; t < T; t++) {
            const Vec h = rms_norm(x[t], &W("attn_norm.weight"), s.eps);
            q[t] = matvec(W("attn_q.weight"), h, size_t(H) * hd, B("attn_q.bias"));
            k[t] = matvec(W("attn_k.weight"), h, size_t(HKV) * hd, B("attn_k.bias"));
            v[t] = matvec(W("attn_v.weight"), h, size_t(HKV) * hd, B("attn_v.bias"));
            for (int hh = 0; hh < H; hh++) {
                double * qh = &q[t][size_t(hh) * hd];
                if (gemma) {
                    Vec tmp = rms_norm(Vec(qh, qh + hd), &W("attn_q_norm.weight"), s.eps);
                    std::copy(tmp.begin(), tmp.end(), qh);
                }
                rope(qh, s.n_rot, t, base, fscale, neox);
            }
            for (int hh = 0; hh < HKV; hh++) {
                double * kh = &k[t][size_t(hh) * hd];
                if (gemma) {
                    Vec tmp = rms_norm(Vec(kh, kh + hd), &W("attn_k_norm.weight"), s.eps);
                    std::copy(tmp.begin(), tmp.end(), kh);
                }
                rope(kh, s.n_rot, t, base, fscale, neox);
            }
        }

        const double scale = 1.0 / std::sqrt(double(hd));
        std::vector<Vec> next(T);
        for (int t = 0; t < T; t++) {
            Vec att(size_t(H) * hd, 0.0);
            for (int hh = 0; hh < H; hh++) {
                const int kvh = hh / group;
                Vec score(t + 1, -INFINITY);
                double mx = -INFINITY;
                for (int j = 0; j <= t; j++) {
                    if (swa && t - j >= s.n_swa) {
                        continue;
                    }
                    double d = 0.0;
                    for (int i = 0; i < hd; i++) {
                        d += q[t][size_t(hh) * hd + i] * k[j][size_t(kvh) * hd + i];
                    }
                    score[j] = d * scale;
                    mx = std::max(mx, score[j]);
                }
                double sum = 0.0;
                for (int j = 0; j <= t; j++) {
                    score[j] = std::isinf(score[j]) ? 0.0 : std::exp(score[j] - mx);
                    sum += score[j];
                }
                for (int j = 0; j <= t; j++) {
                    for (int i = 0; i < hd; i++) {
                        att[size_t(hh) * hd + i] += score[j] / sum * v[j][size_t(kvh) * hd + i];
                    }
                }
            }
            Vec o = matvec(W("attn_output.weight"), att, E, B("attn_output.bias"));
            if (gemma) {
                o = rms_norm(o, &W("post_attention_norm.weight"), s.eps);
            }
            Vec sa(E);
            for (int i = 0; i < E; i++) {
                sa[i] = x[t][i] + o[i];
            }
            const Vec h = rms_norm(sa, &W("ffn_norm.weight"), s.eps);
            const Vec g = matvec(W("ffn_gate.weight"), h, s.n_ff);
            const Vec u = matvec(W("ffn_up.weight"), h, s.n_ff);
            Vec act(s.n_ff);
            for (int i = 0; i < s.n_ff; i++) {
                act[i] = (gemma ? gelu_tanh(g[i]) : silu(g[i])) * u[i];
            }
            Vec f = matvec(W("ffn_down.weight"), act, E);
            if (gemma) {
                f = rms_norm(f, &W("post_ffw_norm.weight"), s.eps);
            }
            next[t] = Vec(E);
            for (int i = 0; i < E; i++) {
                next[t][i] = sa[i] + f[i];
            }
        }
        x = std::move(next);
    }

    const auto & out = w.has("output.weight") ? w["output.weight"] : w["token_embd.weight"];
    std::vector<Vec> logits(T);
    for (int t = 0; t < T; t++) {
        const Vec h = rms_norm(x[t], &w["output_norm.weight"], s.eps);
        logits[t] = matvec(out, h, size_t(s.n_vocab));
        if (gemma && s.final_softcap > 0.0f) {
            for (double & l : logits[t]) {
                l = s.final_softcap * std::tanh(l / s.final_softcap);
            }
        }
    }
    return logits;
}

} // namespace tiny

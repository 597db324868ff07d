// ROPE: normal (adjacent pairs) and NeoX (pairs n_dims/2 apart) modes, full
// and partial rotation, frequency factors, linear scaling, YaRN, in place,
// F16, a batch dim, and a strided view (like k inside a fused qkv tensor).
//
// Semantics (ggml): x is (head_dim, n_head, n_tokens, batch), pos[t] an I32
// per token. Pair i < n_dims/2 rotates by theta = p * base^(-2i/n_dims) / ff[i]
// scaled by freq_scale; with YaRN (ext_factor != 0), theta mixes the scaled and
// unscaled angle by ramp(i) * ext_factor with ramp(i) = 1 - clamp((i - lo) /
// max(0.001, hi - lo), 0, 1), [lo, hi] the corr dims, and the rotation is
// scaled by attn_factor * (1 + 0.1 ln(1/freq_scale)). Elements >= n_dims are copied.
#include "op_case.h"

#include <algorithm>
#include <cmath>

namespace opstest {
namespace {

struct RopeParams {
    int n_dims;
    int mode; // 0 or LM_GGML_ROPE_TYPE_NEOX
    int n_ctx_orig = 0;
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;
    float ext_factor = 0.0f;
    float attn_factor = 1.0f;
    float beta_fast = 32.0f;
    float beta_slow = 1.0f;
};

HTensor rope_ref(const HTensor & x, const HTensor & pos, const HTensor * ff, const RopeParams & p) {
    const double pi = 3.14159265358979323846;
    const double base = p.freq_base;
    auto corr_dim = [&](double r) { return p.n_dims * std::log(p.n_ctx_orig / (r * 2 * pi)) / (2 * std::log(base)); };
    const double lo = std::max(0.0, std::floor(corr_dim(p.beta_fast)));
    const double hi = std::min(static_cast<double>(p.n_dims - 1), std::ceil(corr_dim(p.beta_slow)));
    const bool neox = (p.mode & LM_GGML_ROPE_TYPE_NEOX) != 0;

    HTensor r = x; // dims >= n_dims are copied
    for (int64_t i3 = 0; i3 < x.ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < x.ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < x.ne[1]; ++i1) {
                for (int64_t i = 0; i < p.n_dims / 2; ++i) {
                    const double theta_extrap = pos.v[static_cast<size_t>(i2)] * std::pow(base, -2.0 * i / p.n_dims) /
                                                (ff ? ff->v[static_cast<size_t>(i)] : 1.0);
                    const double theta_interp = p.freq_scale * theta_extrap;
                    double theta = theta_interp;
                    double mscale = p.attn_factor;
                    if (p.ext_factor != 0.0f) {
                        const double y = (static_cast<double>(i) - lo) / std::max(0.001, hi - lo);
                        const double ramp_mix = (1.0 - std::min(1.0, std::max(0.0, y))) * p.ext_factor;
                        theta = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
                        mscale *= 1.0 + 0.1 * std::log(1.0 / p.freq_scale);
                    }
                    const double c = std::cos(theta) * mscale, s = std::sin(theta) * mscale;
                    const int64_t j0 = neox ? i : 2 * i;
                    const int64_t j1 = neox ? i + p.n_dims / 2 : 2 * i + 1;
                    const double x0 = x.at(j0, i1, i2, i3), x1 = x.at(j1, i1, i2, i3);
                    r.at(j0, i1, i2, i3) = x0 * c - x1 * s;
                    r.at(j1, i1, i2, i3) = x0 * s + x1 * c;
                }
            }
    return r;
}

struct RopeCase {
    std::string tag;
    lm_ggml_type type;
    Shape ne; // (head_dim, n_head, n_tokens, batch)
    RopeParams p;
    bool freq_factors = false;
    bool inplace = false;
    bool qkv_view = false; // x is the middle third of a fused (3*head_dim*n_head, n_tokens) tensor
    int max_pos = 100;
};

OpCase make_rope_case(const RopeCase & rc) {
    OpCase c;
    c.name = std::string("ROPE_") + type_str(rc.type) + "_" +
             ((rc.p.mode & LM_GGML_ROPE_TYPE_NEOX) ? "neox_" : "norm_") + rc.tag;
    c.max_nmse = kNmseRope;
    c.build = [rc](Builder & b) {
        const Shape ne = rc.ne;
        lm_ggml_tensor * x = nullptr;
        if (rc.qkv_view) {
            lm_ggml_tensor * qkv = b.uniform(rc.type, sh(3 * ne[0] * ne[1], ne[2]));
            const size_t es = lm_ggml_type_size(rc.type);
            x = lm_ggml_view_3d(b.ctx, qkv, ne[0], ne[1], ne[2], ne[0] * es, qkv->nb[1], ne[0] * ne[1] * es);
        } else {
            x = b.uniform(rc.type, ne);
        }
        std::vector<double> pos(static_cast<size_t>(ne[2]));
        for (double & v : pos) v = static_cast<double>(b.rng().int_in(0, rc.max_pos));
        lm_ggml_tensor * p = b.values(LM_GGML_TYPE_I32, sh(ne[2]), pos);
        lm_ggml_tensor * ff = rc.freq_factors ? b.uniform(LM_GGML_TYPE_F32, sh(rc.p.n_dims / 2), 1.0, 4.0) : nullptr;
        const RopeParams & q = rc.p;
        auto * fn = rc.inplace ? lm_ggml_rope_ext_inplace : lm_ggml_rope_ext;
        return fn(b.ctx, x, p, ff, q.n_dims, q.mode, q.n_ctx_orig, q.freq_base, q.freq_scale, q.ext_factor,
                  q.attn_factor, q.beta_fast, q.beta_slow);
    };
    c.ref = [rc](const Inputs & in) {
        HTensor x = in[0];
        if (rc.qkv_view) {
            const Shape ne = rc.ne;
            x = lmtest::strided_view(in[0], ne, sh(1, ne[0], 3 * ne[0] * ne[1], 0), ne[0] * ne[1]);
        }
        return rope_ref(x, in[1], rc.freq_factors ? &in[2] : nullptr, rc.p);
    };
    return c;
}

} // namespace

void add_rope_cases(CaseList & t1, CaseList & /*t2*/) {
    for (int mode : {0, LM_GGML_ROPE_TYPE_NEOX}) {
        RopeParams base{64, mode};
        RopeParams partial{32, mode};
        RopeParams linear{64, mode};
        linear.freq_scale = 0.5f;
        linear.attn_factor = 0.8f;
        RopeParams yarn{64, mode};
        yarn.n_ctx_orig = 512;
        yarn.freq_scale = 0.25f;
        yarn.ext_factor = 1.0f;
        RopeParams yarn_half{64, mode};
        yarn_half.n_ctx_orig = 1024;
        yarn_half.freq_base = 500000.0f;
        yarn_half.freq_scale = 0.125f;
        yarn_half.ext_factor = 0.5f;
        yarn_half.attn_factor = 0.9f;
        RopeParams small{16, mode};

        std::vector<RopeCase> cases = {
            {"64x4x5", LM_GGML_TYPE_F32, sh(64, 4, 5), base},
            {"partial_32_of_48x3x4", LM_GGML_TYPE_F32, sh(48, 3, 4), partial},
            {"freq_factors", LM_GGML_TYPE_F32, sh(64, 2, 6), base, true},
            {"freq_factors_partial", LM_GGML_TYPE_F32, sh(48, 2, 3), partial, true},
            {"linear_scale", LM_GGML_TYPE_F32, sh(64, 3, 4), linear},
            {"yarn", LM_GGML_TYPE_F32, sh(64, 3, 5), yarn, false, false, false, 2000},
            {"yarn_ext_half", LM_GGML_TYPE_F32, sh(64, 2, 4), yarn_half, false, false, false, 3000},
            {"yarn_freq_factors", LM_GGML_TYPE_F32, sh(64, 2, 3), yarn, true},
            {"inplace", LM_GGML_TYPE_F32, sh(64, 2, 3), base, false, true},
            {"batch", LM_GGML_TYPE_F32, sh(32, 2, 3, 2), RopeParams{32, mode}},
            {"odd_heads_tokens", LM_GGML_TYPE_F32, sh(16, 3, 7), small},
            {"qkv_view", LM_GGML_TYPE_F32, sh(32, 2, 4), RopeParams{32, mode}, false, false, true},
            {"64x4x5", LM_GGML_TYPE_F16, sh(64, 4, 5), base},
            {"partial_32_of_48x3x4", LM_GGML_TYPE_F16, sh(48, 3, 4), partial},
            {"yarn", LM_GGML_TYPE_F16, sh(64, 2, 3), yarn, true},
        };
        for (const RopeCase & rc : cases) {
            t1.push_back(make_rope_case(rc));
        }
    }
}

} // namespace opstest

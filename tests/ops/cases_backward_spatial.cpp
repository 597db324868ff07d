// Training ops of the positional and spatial families: ROPE_BACK,
// IM2COL_BACK, POOL_2D_BACK (see cases_backward.cpp for the others).
//
// Semantics (ggml; dy is the gradient of the forward op's result):
//   ROPE_BACK(dy, pos, ff, params...): the gradient of ROPE with the same
//     parameters. ROPE maps each rotated pair (x0, x1) to m R(theta) (x0, x1)
//     (m = attn_factor, YaRN-corrected), so the gradient is m R(theta)^T dy,
//     the rotation by -theta; dims ROPE copies pass the gradient through.
//     Pairs: normal (2k, 2k+1), NeoX and M-RoPE (k, k + n_dims/2), vision
//     (k, k + n_dims) for every k < n_dims (ne0 = 2 n_dims). M-RoPE pair k
//     takes its position from section j of 4 (pos[t + j*n_tokens]) by
//     k mod sum(sections); vision restarts the frequency exponent in each section.
//   IM2COL_BACK(dy, kernel, ne): the adjoint of IM2COL: each input element
//     gets the sum of the columns it was copied into.
//   POOL_2D_BACK(dy, x): AVG adds dy / (k0*k1) to each element of the window
//     inside x (padding counts in the divisor, as in POOL_2D); MAX adds dy to
//     the window's largest element (the first, row by row, on ties).
#include "backward_fd.h"
#include "op_case.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace opstest {
namespace {

// ---------------------------------------------------------------- ROPE_BACK
struct Rope {
    int n_dims;
    int mode;
    int n_ctx_orig = 0;
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;
    float ext_factor = 0.0f;
    float attn_factor = 1.0f;
    float beta_fast = 32.0f;
    float beta_slow = 1.0f;
    int sections[4] = {0, 0, 0, 0}; // M-RoPE / vision
};

bool is_mrope(const Rope & p) { return (p.mode & LM_GGML_ROPE_TYPE_MROPE) != 0; }
bool is_vision(const Rope & p) { return p.mode == LM_GGML_ROPE_TYPE_VISION; }

// Pair k of a row: the two element indices it rotates.
void pair_of(const Rope & p, int64_t k, int64_t * j0, int64_t * j1) {
    if (is_vision(p)) {
        *j0 = k;
        *j1 = k + p.n_dims;
    } else if ((p.mode & LM_GGML_ROPE_TYPE_NEOX) != 0 || is_mrope(p)) {
        *j0 = k;
        *j1 = k + p.n_dims / 2;
    } else {
        *j0 = 2 * k;
        *j1 = 2 * k + 1;
    }
}

int64_t n_pairs(const Rope & p) { return is_vision(p) ? p.n_dims : p.n_dims / 2; }

// m * (cos theta, sin theta) of pair k of token t (n_tok tokens)
void rotation(const Rope & p, const HTensor & pos, const HTensor * ff, int64_t t, int64_t n_tok, int64_t k, double * c,
              double * s) {
    double position = pos.v[static_cast<size_t>(t)];
    int64_t expo = k; // theta = position * base^(-2 expo / n_dims)
    if (is_mrope(p)) {
        const int total = p.sections[0] + p.sections[1] + p.sections[2] + p.sections[3];
        const int sector = static_cast<int>(k % total);
        int j = 0, start = 0;
        while (j < 3 && sector >= start + p.sections[j]) {
            start += p.sections[j];
            ++j;
        }
        position = pos.v[static_cast<size_t>(t + j * n_tok)];
        if (is_vision(p)) {
            expo = sector - start;
        }
    }
    const double pi = 3.14159265358979323846;
    auto corr_dim = [&](double r) {
        return p.n_dims * std::log(p.n_ctx_orig / (r * 2 * pi)) / (2 * std::log(static_cast<double>(p.freq_base)));
    };
    const double theta_extrap = position * std::pow(static_cast<double>(p.freq_base), -2.0 * expo / p.n_dims) /
                                (ff ? ff->v[static_cast<size_t>(k)] : 1.0);
    double theta = p.freq_scale * theta_extrap;
    double mscale = p.attn_factor;
    if (p.ext_factor != 0.0f) {
        const double lo = std::max(0.0, std::floor(corr_dim(p.beta_fast)));
        const double hi = std::min(static_cast<double>(p.n_dims - 1), std::ceil(corr_dim(p.beta_slow)));
        const double ramp = (1.0 - std::min(1.0, std::max(0.0, (k - lo) / std::max(0.001, hi - lo)))) * p.ext_factor;
        theta = theta * (1 - ramp) + theta_extrap * ramp;
        mscale *= 1.0 + 0.1 * std::log(1.0 / p.freq_scale);
    }
    *c = std::cos(theta) * mscale;
    *s = std::sin(theta) * mscale;
}

// inverse: rotate by -theta (the transposed matrix) instead of theta
HTensor rope_apply(const Rope & p, const HTensor & x, const HTensor & pos, const HTensor * ff, bool inverse) {
    HTensor r = x; // unrotated dims pass through
    for (int64_t i3 = 0; i3 < x.ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < x.ne[2]; ++i2)
            for (int64_t k = 0; k < n_pairs(p); ++k) {
                double c, s;
                rotation(p, pos, ff, i2, x.ne[2], k, &c, &s);
                if (inverse) {
                    s = -s;
                }
                int64_t j0, j1;
                pair_of(p, k, &j0, &j1);
                for (int64_t i1 = 0; i1 < x.ne[1]; ++i1) {
                    const double x0 = x.at(j0, i1, i2, i3), x1 = x.at(j1, i1, i2, i3);
                    r.at(j0, i1, i2, i3) = x0 * c - x1 * s;
                    r.at(j1, i1, i2, i3) = x0 * s + x1 * c;
                }
            }
    return r;
}

struct RopeBackCase {
    std::string tag;
    lm_ggml_type type;
    Shape ne; // (head_dim, n_head, n_tokens, batch)
    Rope p;
    bool freq_factors = false;
    int max_pos = 100;
};

OpCase make_rope_back_case(const RopeBackCase & rc) {
    OpCase c;
    const char * mode = is_vision(rc.p)                        ? "vision_"
                        : is_mrope(rc.p)                       ? "mrope_"
                        : (rc.p.mode & LM_GGML_ROPE_TYPE_NEOX) ? "neox_"
                                                               : "norm_";
    const std::string name = std::string("ROPE_BACK_") + type_str(rc.type) + "_" + mode + rc.tag;
    c.name = name;
    c.max_nmse = kNmseRope;
    c.build = [rc](Builder & b) {
        lm_ggml_tensor * dy = b.uniform(rc.type, rc.ne);
        const int64_t n_pos = is_mrope(rc.p) ? 4 * rc.ne[2] : rc.ne[2];
        std::vector<double> pos(static_cast<size_t>(n_pos));
        for (double & v : pos) v = static_cast<double>(b.rng().int_in(0, rc.max_pos));
        lm_ggml_tensor * p = b.values(LM_GGML_TYPE_I32, sh(n_pos), pos);
        lm_ggml_tensor * ff = rc.freq_factors ? b.uniform(LM_GGML_TYPE_F32, sh(rc.p.n_dims / 2), 1.0, 4.0) : nullptr;
        Rope q = rc.p;
        if (is_mrope(q)) {
            return lm_ggml_rope_multi_back(b.ctx, dy, p, ff, q.n_dims, q.sections, q.mode, q.n_ctx_orig, q.freq_base,
                                           q.freq_scale, q.ext_factor, q.attn_factor, q.beta_fast, q.beta_slow);
        }
        return lm_ggml_rope_ext_back(b.ctx, dy, p, ff, q.n_dims, q.mode, q.n_ctx_orig, q.freq_base, q.freq_scale,
                                     q.ext_factor, q.attn_factor, q.beta_fast, q.beta_slow);
    };
    c.ref = [rc, name](const Inputs & in) {
        const HTensor & dy = in[0];
        const HTensor * ff = rc.freq_factors ? &in[2] : nullptr;
        // dx_j0 = c dy0 + s dy1, dx_j1 = -s dy0 + c dy1 (written out, not via rope_apply)
        HTensor g = dy;
        for (int64_t i3 = 0; i3 < dy.ne[3]; ++i3)
            for (int64_t i2 = 0; i2 < dy.ne[2]; ++i2)
                for (int64_t k = 0; k < n_pairs(rc.p); ++k) {
                    double cs, sn;
                    rotation(rc.p, in[1], ff, i2, dy.ne[2], k, &cs, &sn);
                    int64_t j0, j1;
                    pair_of(rc.p, k, &j0, &j1);
                    for (int64_t i1 = 0; i1 < dy.ne[1]; ++i1) {
                        const double d0 = dy.at(j0, i1, i2, i3), d1 = dy.at(j1, i1, i2, i3);
                        g.at(j0, i1, i2, i3) = cs * d0 + sn * d1;
                        g.at(j1, i1, i2, i3) = -sn * d0 + cs * d1;
                    }
                }
        // the forward rotation's gradient, with x at 0 (ROPE is linear)
        fd::expect_gradient(name, g, HTensor(dy.ne),
                            [&](const HTensor & x) { return fd::dot(dy, rope_apply(rc.p, x, in[1], ff, false)); });
        return g;
    };
    return c;
}

void add_rope_back_cases(CaseList & t1, CaseList & t2) {
    for (int mode : {0, LM_GGML_ROPE_TYPE_NEOX}) {
        Rope base{64, mode};
        Rope partial{32, mode};
        Rope linear{64, mode};
        linear.freq_scale = 0.5f;
        linear.attn_factor = 0.8f;
        Rope yarn{64, mode};
        yarn.n_ctx_orig = 512;
        yarn.freq_scale = 0.25f;
        yarn.ext_factor = 1.0f;
        yarn.attn_factor = 0.9f;
        Rope yarn_partial = yarn;
        yarn_partial.n_dims = 32;
        const std::vector<RopeBackCase> cases = {
            {"64x4x5", LM_GGML_TYPE_F32, sh(64, 4, 5), base},
            {"partial_32_of_48x3x4", LM_GGML_TYPE_F32, sh(48, 3, 4), partial},
            {"freq_factors", LM_GGML_TYPE_F32, sh(64, 2, 3), base, true},
            {"linear_scale", LM_GGML_TYPE_F32, sh(64, 3, 4), linear},
            {"yarn", LM_GGML_TYPE_F32, sh(64, 2, 4), yarn, false, 2000},
            {"batch", LM_GGML_TYPE_F32, sh(32, 2, 3, 2), Rope{32, mode}},
            {"odd_heads_tokens", LM_GGML_TYPE_F32, sh(16, 3, 7), Rope{16, mode}},
            {"128x8x4_threads", LM_GGML_TYPE_F32, sh(128, 8, 4), Rope{128, mode}}, // split over threads
            {"64x2x3", LM_GGML_TYPE_F16, sh(64, 2, 3), base},
            {"partial_64_of_128x4x5_threads", LM_GGML_TYPE_F16, sh(128, 4, 5), Rope{64, mode}},
            {"yarn_partial_freq_factors", LM_GGML_TYPE_F16, sh(48, 2, 3), yarn_partial, true},
        };
        for (const RopeBackCase & rc : cases) {
            t1.push_back(make_rope_back_case(rc));
        }
    }
    // M-RoPE and vision: ROPE_BACK runs the ROPE kernel, so these pass once
    // that kernel supports the modes (tier 2 until then)
    Rope mrope{32, LM_GGML_ROPE_TYPE_MROPE};
    mrope.sections[0] = 4;
    mrope.sections[1] = 6;
    mrope.sections[2] = 6;
    Rope vision{16, LM_GGML_ROPE_TYPE_VISION};
    vision.sections[0] = 8;
    vision.sections[1] = 8;
    t2.push_back(make_rope_back_case({"32x2x5", LM_GGML_TYPE_F32, sh(32, 2, 5), mrope}));
    t2.push_back(make_rope_back_case({"partial_32_of_40x2x3", LM_GGML_TYPE_F32, sh(40, 2, 3), mrope, true}));
    t2.push_back(make_rope_back_case({"32x3x4", LM_GGML_TYPE_F32, sh(32, 3, 4), vision}));
}

// ---------------------------------------------------------------- IM2COL_BACK
struct Im2col {
    std::string tag;
    bool is_2d;
    Shape kernel, input; // kernel (KW, KH, IC, OC) or (KW, IC, OC); input (IW, IH, IC, N) or (IW, IC, N)
    int s0, s1, p0, p1, d0, d1;

    int64_t KW() const { return kernel[0]; }
    int64_t KH() const { return is_2d ? kernel[1] : 1; }
    int64_t IC() const { return is_2d ? input[2] : input[1]; }
    int64_t N() const { return is_2d ? input[3] : input[2]; }
    int64_t OW() const { return (input[0] + 2 * p0 - d0 * (KW() - 1) - 1) / s0 + 1; }
    int64_t OH() const { return is_2d ? (input[1] + 2 * p1 - d1 * (KH() - 1) - 1) / s1 + 1 : 1; }
    Shape cols() const { return is_2d ? sh(IC() * KH() * KW(), OW(), OH(), N()) : sh(IC() * KW(), OW(), N()); }
    double & in_at(HTensor & x, int64_t iw, int64_t ih, int64_t c, int64_t n) const {
        return is_2d ? x.at(iw, ih, c, n) : x.at(iw, c, n);
    }
    double & col_at(HTensor & y, int64_t k, int64_t ow, int64_t oh, int64_t n) const {
        return is_2d ? y.at(k, ow, oh, n) : y.at(k, ow, n);
    }
};

// Visits every (column element, input element) pair IM2COL copies.
template <typename F> void for_each_tap(const Im2col & m, F f) {
    const int64_t IW = m.input[0], IH = m.is_2d ? m.input[1] : 1;
    for (int64_t n = 0; n < m.N(); ++n)
        for (int64_t oh = 0; oh < m.OH(); ++oh)
            for (int64_t ow = 0; ow < m.OW(); ++ow)
                for (int64_t c = 0; c < m.IC(); ++c)
                    for (int64_t kh = 0; kh < m.KH(); ++kh)
                        for (int64_t kw = 0; kw < m.KW(); ++kw) {
                            const int64_t iw = ow * m.s0 + kw * m.d0 - m.p0;
                            const int64_t ih = oh * m.s1 + kh * m.d1 - m.p1;
                            if (iw >= 0 && iw < IW && ih >= 0 && ih < IH) {
                                f((c * m.KH() + kh) * m.KW() + kw, ow, oh, n, iw, ih, c);
                            }
                        }
}

void add_im2col_back_cases(CaseList & t1) {
    const Im2col cases[] = {
        {"2d_k3_s1_p1", true, sh(3, 3, 2, 4), sh(7, 6, 2, 1), 1, 1, 1, 1, 1, 1},
        {"2d_k3x2_s2_p0_d2", true, sh(3, 2, 3, 2), sh(11, 8, 3, 2), 2, 2, 0, 0, 2, 1},
        {"2d_k2_s3_gaps", true, sh(2, 2, 2, 1), sh(10, 9, 2, 2), 3, 3, 1, 0, 1, 1},
        {"1d_k3_s1_p1", false, sh(3, 4, 8), sh(16, 4, 2), 1, 0, 1, 0, 1, 0},
        {"1d_k5_s2_p2_d1", false, sh(5, 2, 3), sh(19, 2, 1), 2, 0, 2, 0, 1, 0},
    };
    for (const Im2col & m : cases) {
        OpCase c;
        const std::string name = "IM2COL_BACK_f32_" + m.tag;
        c.name = name;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * dy = b.uniform(LM_GGML_TYPE_F32, m.cols());
            lm_ggml_tensor * kern = b.uniform(LM_GGML_TYPE_F32, m.kernel); // only its shape is used
            int64_t ne[4] = {m.input[0], m.input[1], m.input[2], m.input[3]};
            return lm_ggml_im2col_back(b.ctx, dy, kern, ne, m.s0, m.s1, m.p0, m.p1, m.d0, m.d1, m.is_2d);
        };
        c.ref = [=](const Inputs & in) {
            HTensor dy = in[0];
            HTensor g(m.input);
            for_each_tap(m, [&](int64_t k, int64_t ow, int64_t oh, int64_t n, int64_t iw, int64_t ih, int64_t ch) {
                m.in_at(g, iw, ih, ch, n) += m.col_at(dy, k, ow, oh, n);
            });
            fd::expect_gradient(name, g, HTensor(m.input), [&](const HTensor & x) {
                HTensor xx = x, cols(m.cols());
                for_each_tap(m, [&](int64_t k, int64_t ow, int64_t oh, int64_t n, int64_t iw, int64_t ih, int64_t ch) {
                    m.col_at(cols, k, ow, oh, n) = m.in_at(xx, iw, ih, ch, n);
                });
                return fd::dot(dy, cols);
            });
            return g;
        };
        t1.push_back(c);
    }
}

// ---------------------------------------------------------------- POOL_2D_BACK
struct Pool {
    lm_ggml_op_pool op;
    Shape in;
    int k0, k1, s0, s1, p0, p1;

    int64_t OW() const { return (in[0] + 2 * p0 - k0) / s0 + 1; }
    int64_t OH() const { return (in[1] + 2 * p1 - k1) / s1 + 1; }
};

// POOL_2D of x in double
HTensor pool_ref(const Pool & p, const HTensor & x) {
    HTensor y(sh(p.OW(), p.OH(), p.in[2], p.in[3]));
    for (int64_t i3 = 0; i3 < p.in[3]; ++i3)
        for (int64_t i2 = 0; i2 < p.in[2]; ++i2)
            for (int64_t oy = 0; oy < p.OH(); ++oy)
                for (int64_t ox = 0; ox < p.OW(); ++ox) {
                    double acc = p.op == LM_GGML_OP_POOL_AVG ? 0.0 : -FLT_MAX;
                    for (int64_t ky = 0; ky < p.k1; ++ky)
                        for (int64_t kx = 0; kx < p.k0; ++kx) {
                            const int64_t ix = ox * p.s0 - p.p0 + kx, iy = oy * p.s1 - p.p1 + ky;
                            if (ix < 0 || ix >= p.in[0] || iy < 0 || iy >= p.in[1]) continue;
                            const double v = x.at(ix, iy, i2, i3);
                            acc = p.op == LM_GGML_OP_POOL_AVG ? acc + v : std::max(acc, v);
                        }
                    y.at(ox, oy, i2, i3) = p.op == LM_GGML_OP_POOL_AVG ? acc / (p.k0 * p.k1) : acc;
                }
    return y;
}

void add_pool_2d_back_cases(CaseList & t1) {
    struct P {
        std::string tag;
        Shape in;
        int k0, k1, s0, s1, p0, p1;
    };
    const P geoms[] = {
        {"k2_s2_8x6x3", sh(8, 6, 3), 2, 2, 2, 2, 0, 0},
        {"k3_s2_p1_7x5x3x2", sh(7, 5, 3, 2), 3, 3, 2, 2, 1, 1},
        {"k3_s1_6x6x2", sh(6, 6, 2), 3, 3, 1, 1, 0, 0},
        {"k3x2_s2x1_p1x0_9x5x2", sh(9, 5, 2), 3, 2, 2, 1, 1, 0},
    };
    for (lm_ggml_op_pool op : {LM_GGML_OP_POOL_AVG, LM_GGML_OP_POOL_MAX}) {
        for (const P & g : geoms) {
            const Pool p{op, g.in, g.k0, g.k1, g.s0, g.s1, g.p0, g.p1};
            OpCase c;
            const std::string name =
                std::string("POOL_2D_BACK_") + (op == LM_GGML_OP_POOL_AVG ? "avg_" : "max_") + g.tag;
            c.name = name;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * dy = b.uniform(LM_GGML_TYPE_F32, sh(p.OW(), p.OH(), p.in[2], p.in[3]));
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, p.in, -2, 2);
                return lm_ggml_pool_2d_back(b.ctx, dy, x, p.op, p.k0, p.k1, p.s0, p.s1, (float) p.p0, (float) p.p1);
            };
            c.ref = [=](const Inputs & in) {
                const HTensor & dy = in[0];
                const HTensor & x = in[1];
                HTensor gr(p.in);
                for (int64_t i3 = 0; i3 < p.in[3]; ++i3)
                    for (int64_t i2 = 0; i2 < p.in[2]; ++i2)
                        for (int64_t oy = 0; oy < p.OH(); ++oy)
                            for (int64_t ox = 0; ox < p.OW(); ++ox) {
                                int64_t bx = -1, by = -1;
                                double best = -FLT_MAX;
                                for (int64_t ky = 0; ky < p.k1; ++ky)
                                    for (int64_t kx = 0; kx < p.k0; ++kx) {
                                        const int64_t ix = ox * p.s0 - p.p0 + kx, iy = oy * p.s1 - p.p1 + ky;
                                        if (ix < 0 || ix >= p.in[0] || iy < 0 || iy >= p.in[1]) continue;
                                        if (p.op == LM_GGML_OP_POOL_AVG) {
                                            gr.at(ix, iy, i2, i3) += dy.at(ox, oy, i2, i3) / (p.k0 * p.k1);
                                        } else if (x.at(ix, iy, i2, i3) > best) {
                                            best = x.at(ix, iy, i2, i3);
                                            bx = ix;
                                            by = iy;
                                        }
                                    }
                                if (p.op == LM_GGML_OP_POOL_MAX && bx >= 0)
                                    gr.at(bx, by, i2, i3) += dy.at(ox, oy, i2, i3);
                            }
                // MAX is piecewise linear: a step below the gaps between window values
                const double h = p.op == LM_GGML_OP_POOL_MAX ? 1e-7 : 1e-5;
                fd::expect_gradient(
                    name, gr, x, [&](const HTensor & xx) { return fd::dot(dy, pool_ref(p, xx)); }, h);
                return gr;
            };
            t1.push_back(c);
        }
    }
}

} // namespace

void add_backward_spatial_cases(CaseList & t1, CaseList & t2) {
    add_rope_back_cases(t1, t2);
    add_im2col_back_cases(t1);
    add_pool_2d_back_cases(t1);
}

} // namespace opstest

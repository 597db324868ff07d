// PAD_REFLECT_1D, WIN_PART, WIN_UNPART, GET_REL_POS, ADD_REL_POS, DIAG,
// DIAG_MASK_ZERO, COUNT_EQUAL, multimodal ROPE (rope_multi: M-RoPE and
// vision) and the deprecated rope_custom wrappers.
//
// Semantics (ggml):
//   PAD_REFLECT_1D: out[i] = x[j] with j = i - p0 mirrored at both ends
//     (j < 0 -> -j, j > n-1 -> 2(n-1) - j); the edge element is not repeated.
//   WIN_PART (w): x (C, W, H) -> (C, w, w, npx*npy), npx = ceil(W/w);
//     window py*npx + px holds x[:, px*w + i1, py*w + i2], 0 past the edge.
//   WIN_UNPART (w0, h0, w): out[:, x, y] = win[:, x % w, y % w, (y/w)*npx + x/w].
//   GET_REL_POS (F16 table a (C, 2k-1)): out[:, i1, i2] = a[:, k - 1 - i1 + i2].
//   ADD_REL_POS: a (K*K, QW*QH, B), pw/ph (K, QW, QH, B):
//     out[u*K + v, qw + QW*qh, b] = a[...] + ph[u, qw, qh, b] + pw[v, qw, qh, b].
//   DIAG: x (N, 1, B2, B3) -> (N, N, B2, B3) with x on the diagonal.
//   DIAG_MASK_ZERO(n_past): element (i0, i1) is 0 where i0 > n_past + i1.
//   COUNT_EQUAL: number of positions where two I32 tensors agree (one I64).
//   ROPE multi: positions p_t, p_h, p_w, p_e per token (4*n_tokens I32, all t
//     first); pair k takes the position of its sector k % sum(sections) (t for
//     sector < s0, h below s0+s1, w below s0+s1+s2, e after). M-RoPE rotates
//     NeoX pairs (k, k + n_dims/2), k < n_dims/2, by p * base^(-2k/n_dims);
//     elements from n_dims on are copied. Vision (n_dims == ne0/2) rotates
//     (k, k + n_dims) for k < n_dims, and the exponent restarts at each section:
//     theta = p * base^(-2(sector - section start)/n_dims). Frequency factors
//     divide theta per pair; YaRN as for ROPE (cases_rope.cpp).
#include "op_case.h"

#include <algorithm>
#include <cmath>

namespace opstest {
namespace {

void add_pad_reflect_cases(CaseList & t1) {
    struct P {
        Shape s;
        int p0, p1;
    };
    for (P p : {P{sh(7, 3, 2), 2, 3}, P{sh(5, 2), 4, 0}, P{sh(6, 2, 1, 2), 0, 5}, P{sh(2, 3), 1, 1}}) {
        OpCase c;
        c.name = "PAD_REFLECT_1D_f32_" + shape_str(p.s) + "_p" + std::to_string(p.p0) + "_" + std::to_string(p.p1);
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) {
            return lm_ggml_pad_reflect_1d(b.ctx, b.uniform(LM_GGML_TYPE_F32, p.s), p.p0, p.p1);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & a = in[0];
            const int64_t n = a.ne[0];
            return generate(sh(n + p.p0 + p.p1, a.ne[1], a.ne[2], a.ne[3]),
                            [&](int64_t i, int64_t i1, int64_t i2, int64_t i3) {
                                int64_t j = i - p.p0;
                                if (j < 0) j = -j;
                                if (j > n - 1) j = 2 * (n - 1) - j;
                                return a.at(j, i1, i2, i3);
                            });
        };
        t1.push_back(c);
    }
}

HTensor win_part_ref(const HTensor & a, int w) {
    const int64_t npx = (a.ne[1] + w - 1) / w, npy = (a.ne[2] + w - 1) / w;
    return generate(sh(a.ne[0], w, w, npx * npy), [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        const int64_t x = (i3 % npx) * w + i1, y = (i3 / npx) * w + i2;
        return x < a.ne[1] && y < a.ne[2] ? a.at(i0, x, y) : 0.0;
    });
}

void add_window_cases(CaseList & t1) {
    struct W {
        Shape s;
        int w;
    };
    for (W m : {W{sh(3, 7, 5), 3}, W{sh(4, 6, 6), 3}, W{sh(2, 4, 9), 5}, W{sh(5, 2, 3), 4}}) {
        OpCase c;
        c.name = "WIN_PART_f32_" + shape_str(m.s) + "_w" + std::to_string(m.w);
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) { return lm_ggml_win_part(b.ctx, b.uniform(LM_GGML_TYPE_F32, m.s), m.w); };
        c.ref = [=](const Inputs & in) { return win_part_ref(in[0], m.w); };
        t1.push_back(c);

        // unpart of random windows, and part + unpart giving the input back
        const int64_t npx = (m.s[1] + m.w - 1) / m.w, npy = (m.s[2] + m.w - 1) / m.w;
        OpCase u;
        u.name = "WIN_UNPART_f32_" + shape_str(m.s) + "_w" + std::to_string(m.w);
        u.cmp = Cmp::Exact;
        u.build = [=](Builder & b) {
            lm_ggml_tensor * win = b.uniform(LM_GGML_TYPE_F32, sh(m.s[0], m.w, m.w, npx * npy));
            return lm_ggml_win_unpart(b.ctx, win, (int) m.s[1], (int) m.s[2], m.w);
        };
        u.ref = [=](const Inputs & in) {
            const HTensor & win = in[0];
            return generate(sh(m.s[0], m.s[1], m.s[2]), [&](int64_t i0, int64_t x, int64_t y, int64_t) {
                return win.at(i0, x % m.w, y % m.w, (y / m.w) * npx + x / m.w);
            });
        };
        t1.push_back(u);

        OpCase rt;
        rt.name = "WIN_PART_UNPART_roundtrip_" + shape_str(m.s) + "_w" + std::to_string(m.w);
        rt.cmp = Cmp::Exact;
        rt.build = [=](Builder & b) {
            lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, m.s);
            return lm_ggml_win_unpart(b.ctx, lm_ggml_win_part(b.ctx, x, m.w), (int) m.s[1], (int) m.s[2], m.w);
        };
        rt.ref = [](const Inputs & in) { return in[0]; };
        t1.push_back(rt);
    }
}

void add_rel_pos_cases(CaseList & t1) {
    for (int k : {1, 4, 7}) {
        OpCase c;
        c.name = "GET_REL_POS_f16_c5_k" + std::to_string(k);
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) {
            return lm_ggml_get_rel_pos(b.ctx, b.uniform(LM_GGML_TYPE_F16, sh(5, 2 * k - 1)), k, k);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & a = in[0];
            return generate(sh(5, k, k),
                            [&](int64_t i0, int64_t i1, int64_t i2, int64_t) { return a.at(i0, k - 1 - i1 + i2); });
        };
        t1.push_back(c);
    }
    struct R {
        int64_t K, QW, QH, B;
        bool inplace;
    };
    for (R m : {R{4, 3, 2, 2, false}, R{3, 5, 1, 3, false}, R{5, 2, 3, 1, true}}) {
        OpCase c;
        c.name = "ADD_REL_POS_f32_k" + std::to_string(m.K) + "_q" + std::to_string(m.QW) + "x" + std::to_string(m.QH) +
                 "_b" + std::to_string(m.B) + (m.inplace ? "_inplace" : "");
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(m.K * m.K, m.QW * m.QH, m.B));
            lm_ggml_tensor * pw = b.uniform(LM_GGML_TYPE_F32, sh(m.K, m.QW, m.QH, m.B));
            lm_ggml_tensor * ph = b.uniform(LM_GGML_TYPE_F32, sh(m.K, m.QW, m.QH, m.B));
            return m.inplace ? lm_ggml_add_rel_pos_inplace(b.ctx, a, pw, ph) : lm_ggml_add_rel_pos(b.ctx, a, pw, ph);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & a = in[0];
            const HTensor & pw = in[1];
            const HTensor & ph = in[2];
            return generate(a.ne, [&](int64_t e0, int64_t e1, int64_t e2, int64_t) {
                const int64_t u = e0 / m.K, v = e0 % m.K, qw = e1 % m.QW, qh = e1 / m.QW;
                return a.at(e0, e1, e2) + ph.at(u, qw, qh, e2) + pw.at(v, qw, qh, e2);
            });
        };
        t1.push_back(c);
    }
}

void add_diag_count_cases(CaseList & t1) {
    for (Shape s : {sh(5, 1, 3, 2), sh(1, 1), sh(8)}) {
        OpCase c;
        c.name = "DIAG_f32_" + shape_str(s);
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) { return lm_ggml_diag(b.ctx, b.uniform(LM_GGML_TYPE_F32, s)); };
        c.ref = [=](const Inputs & in) {
            const HTensor & a = in[0];
            return generate(sh(s[0], s[0], s[2], s[3]), [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
                return i0 == i1 ? a.at(i0, 0, i2, i3) : 0.0;
            });
        };
        t1.push_back(c);
    }
    struct M {
        Shape s;
        int n_past;
        bool inplace;
    };
    for (M m :
         {M{sh(6, 5, 2), 1, false}, M{sh(7, 7, 1, 2), 0, true}, M{sh(4, 6, 3), 3, false}, M{sh(5, 3), -1, false}}) {
        OpCase c;
        c.name = "DIAG_MASK_ZERO_f32_" + shape_str(m.s) + "_past" + (m.n_past < 0 ? "m1" : std::to_string(m.n_past)) +
                 (m.inplace ? "_inplace" : "");
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, m.s);
            return m.inplace ? lm_ggml_diag_mask_zero_inplace(b.ctx, a, m.n_past)
                             : lm_ggml_diag_mask_zero(b.ctx, a, m.n_past);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & a = in[0];
            return generate(a.ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
                return i0 > m.n_past + i1 ? 0.0 : a.at(i0, i1, i2, i3);
            });
        };
        t1.push_back(c);
    }
    for (Shape s : {sh(7, 5, 3), sh(4, 3, 2, 2), sh(1), sh(33, 2)}) {
        OpCase c;
        c.name = "COUNT_EQUAL_i32_" + shape_str(s);
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) {
            // a small value range so that about a third of the positions agree
            std::vector<double> va, vb;
            for (int64_t i = 0; i < s[0] * s[1] * s[2] * s[3]; ++i) {
                va.push_back(static_cast<double>(b.rng().int_in(-1, 1)));
                vb.push_back(static_cast<double>(b.rng().int_in(-1, 1)));
            }
            return lm_ggml_count_equal(b.ctx, b.values(LM_GGML_TYPE_I32, s, va), b.values(LM_GGML_TYPE_I32, s, vb));
        };
        c.ref = [](const Inputs & in) {
            HTensor r(sh(1));
            for (size_t i = 0; i < in[0].v.size(); ++i) r.v[0] += in[0].v[i] == in[1].v[i] ? 1.0 : 0.0;
            return r;
        };
        t1.push_back(c);
    }
}

// ---------------------------------------------------------------- rope
struct RP {
    int n_dims;
    int mode;
    int sections[4] = {0, 0, 0, 0};
    int n_ctx_orig = 0;
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;
    float ext_factor = 0.0f;
    float attn_factor = 1.0f;
    float beta_fast = 32.0f;
    float beta_slow = 1.0f;
};

// All modes: 0, NeoX, M-RoPE, vision; pos has 1 (plain) or 4 (multi) entries per token.
HTensor rope_any_ref(const HTensor & x, const HTensor & pos, const HTensor * ff, const RP & p) {
    const double pi = 3.14159265358979323846;
    const bool multi = (p.mode & LM_GGML_ROPE_TYPE_MROPE) != 0;
    const bool vision = p.mode == LM_GGML_ROPE_TYPE_VISION;
    const bool neox = (p.mode & LM_GGML_ROPE_TYPE_NEOX) != 0 || multi;
    auto corr_dim = [&](double r) {
        return p.n_dims * std::log(p.n_ctx_orig / (r * 2 * pi)) / (2 * std::log(static_cast<double>(p.freq_base)));
    };
    const double lo = std::max(0.0, std::floor(corr_dim(p.beta_fast)));
    const double hi = std::min(static_cast<double>(p.n_dims - 1), std::ceil(corr_dim(p.beta_slow)));
    const int64_t n_pairs = vision ? p.n_dims : p.n_dims / 2;
    const int64_t gap = vision ? p.n_dims : p.n_dims / 2;
    const int s0 = p.sections[0], s1 = p.sections[1], s2 = p.sections[2];
    const int sect_dims = s0 + s1 + s2 + p.sections[3];
    const int64_t T = x.ne[2];

    HTensor r = x;
    for (int64_t i3 = 0; i3 < x.ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < T; ++i2)
            for (int64_t i1 = 0; i1 < x.ne[1]; ++i1)
                for (int64_t k = 0; k < n_pairs; ++k) {
                    double position = pos.v[static_cast<size_t>(i2)];
                    int64_t expo = k;
                    if (multi) {
                        const int64_t sector = k % sect_dims;
                        const int which = sector < s0 ? 0 : sector < s0 + s1 ? 1 : sector < s0 + s1 + s2 ? 2 : 3;
                        const int64_t start = which == 0 ? 0 : which == 1 ? s0 : which == 2 ? s0 + s1 : s0 + s1 + s2;
                        position = pos.v[static_cast<size_t>(i2 + which * T)];
                        expo = vision ? sector - start : k;
                    }
                    const double theta_extrap = position *
                                                std::pow(static_cast<double>(p.freq_base), -2.0 * expo / p.n_dims) /
                                                (ff ? ff->v[static_cast<size_t>(k)] : 1.0);
                    const double theta_interp = p.freq_scale * theta_extrap;
                    double theta = theta_interp, mscale = p.attn_factor;
                    if (p.ext_factor != 0.0f) {
                        const double y = (static_cast<double>(k) - lo) / std::max(0.001, hi - lo);
                        const double ramp_mix = (1.0 - std::min(1.0, std::max(0.0, y))) * p.ext_factor;
                        theta = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
                        mscale *= 1.0 + 0.1 * std::log(1.0 / p.freq_scale);
                    }
                    const double c = std::cos(theta) * mscale, s = std::sin(theta) * mscale;
                    const int64_t j0 = neox ? k : 2 * k, j1 = neox ? k + gap : 2 * k + 1;
                    const double x0 = x.at(j0, i1, i2, i3), x1 = x.at(j1, i1, i2, i3);
                    r.at(j0, i1, i2, i3) = x0 * c - x1 * s;
                    r.at(j1, i1, i2, i3) = x0 * s + x1 * c;
                }
    return r;
}

struct RopeMultiCase {
    std::string tag;
    lm_ggml_type type;
    Shape ne;
    RP p;
    bool ff = false;
    int max_pos = 60;
};

void add_rope_multi_cases(CaseList & t1) {
    const int mrope = LM_GGML_ROPE_TYPE_MROPE, vision = LM_GGML_ROPE_TYPE_VISION;
    RP yarn{32, mrope, {4, 6, 6, 0}};
    yarn.n_ctx_orig = 512;
    yarn.freq_scale = 0.25f;
    yarn.ext_factor = 1.0f;
    yarn.attn_factor = 0.9f;
    const std::vector<RopeMultiCase> cases = {
        {"mrope_32x3x5_s4_6_6_0", LM_GGML_TYPE_F32, sh(32, 3, 5), RP{32, mrope, {4, 6, 6, 0}}},
        {"mrope_partial_32_of_40_wrap", LM_GGML_TYPE_F32, sh(40, 2, 4), RP{32, mrope, {3, 2, 3, 0}}},
        {"mrope_four_sections_batch", LM_GGML_TYPE_F32, sh(16, 2, 3, 2), RP{16, mrope, {2, 2, 2, 2}}},
        {"mrope_yarn_freq_factors", LM_GGML_TYPE_F32, sh(32, 2, 3), yarn, true, 1500},
        {"mrope_32x2x3", LM_GGML_TYPE_F16, sh(32, 2, 3), RP{32, mrope, {4, 6, 6, 0}}},
        {"vision_32x2x4_s4_4_0_0", LM_GGML_TYPE_F32, sh(32, 2, 4), RP{16, vision, {4, 4, 0, 0}}},
        {"vision_wrap_s3_2_2_1", LM_GGML_TYPE_F32, sh(32, 3, 3), RP{16, vision, {3, 2, 2, 1}}},
        {"vision_freq_factors", LM_GGML_TYPE_F32, sh(24, 2, 2), RP{12, vision, {3, 3, 0, 0}}, true},
        {"vision_32x2x4", LM_GGML_TYPE_F16, sh(32, 2, 4), RP{16, vision, {4, 4, 0, 0}}},
    };
    for (const RopeMultiCase & rc : cases) {
        OpCase c;
        c.name = std::string("ROPE_MULTI_") + type_str(rc.type) + "_" + rc.tag;
        c.max_nmse = kNmseRope;
        c.build = [rc](Builder & b) {
            lm_ggml_tensor * x = b.uniform(rc.type, rc.ne);
            std::vector<double> pos(static_cast<size_t>(4 * rc.ne[2]));
            for (double & v : pos) v = static_cast<double>(b.rng().int_in(0, rc.max_pos));
            lm_ggml_tensor * p = b.values(LM_GGML_TYPE_I32, sh(4 * rc.ne[2]), pos);
            const int64_t n_ff = rc.p.mode == LM_GGML_ROPE_TYPE_VISION ? rc.p.n_dims : rc.p.n_dims / 2;
            lm_ggml_tensor * ff = rc.ff ? b.uniform(LM_GGML_TYPE_F32, sh(n_ff), 1.0, 4.0) : nullptr;
            RP q = rc.p;
            return lm_ggml_rope_multi(b.ctx, x, p, ff, q.n_dims, q.sections, q.mode, q.n_ctx_orig, q.freq_base,
                                      q.freq_scale, q.ext_factor, q.attn_factor, q.beta_fast, q.beta_slow);
        };
        c.ref = [rc](const Inputs & in) { return rope_any_ref(in[0], in[1], rc.ff ? &in[2] : nullptr, rc.p); };
        t1.push_back(c);
    }

    // the deprecated wrappers: rope_ext without frequency factors
    RP custom_yarn{32, LM_GGML_ROPE_TYPE_NEOX};
    custom_yarn.n_ctx_orig = 256;
    custom_yarn.freq_base = 50000.0f;
    custom_yarn.freq_scale = 0.5f;
    custom_yarn.ext_factor = 0.75f;
    struct Custom {
        std::string tag;
        RP p;
        bool inplace;
    };
    for (const Custom & cu : {Custom{"norm", RP{32, 0}, false}, Custom{"neox_yarn", custom_yarn, false},
                              Custom{"norm_partial_inplace", RP{16, 0}, true}}) {
        OpCase c;
        c.name = "ROPE_CUSTOM_f32_" + cu.tag;
        c.max_nmse = kNmseRope;
        c.build = [cu](Builder & b) {
            lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(32, 3, 4));
            std::vector<double> pos;
            for (int i = 0; i < 4; ++i) pos.push_back(static_cast<double>(b.rng().int_in(0, 700)));
            lm_ggml_tensor * p = b.values(LM_GGML_TYPE_I32, sh(4), pos);
            const RP & q = cu.p;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
            auto * fn = cu.inplace ? lm_ggml_rope_custom_inplace : lm_ggml_rope_custom;
#pragma GCC diagnostic pop
            return fn(b.ctx, x, p, q.n_dims, q.mode, q.n_ctx_orig, q.freq_base, q.freq_scale, q.ext_factor,
                      q.attn_factor, q.beta_fast, q.beta_slow);
        };
        c.ref = [cu](const Inputs & in) { return rope_any_ref(in[0], in[1], nullptr, cu.p); };
        t1.push_back(c);
    }
}

} // namespace

void add_conv_misc_cases(CaseList & t1) {
    add_pad_reflect_cases(t1);
    add_window_cases(t1);
    add_rel_pos_cases(t1);
    add_diag_count_cases(t1);
    add_rope_multi_cases(t1);
}

} // namespace opstest

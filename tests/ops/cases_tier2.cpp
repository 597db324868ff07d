// Tier-2 ops (speech and vision models): GROUP_NORM, IM2COL, POOL_1D,
// POOL_2D, UPSCALE, PAD, ARANGE, TIMESTEP_EMBEDDING, LEAKY_RELU.
// (OUT_PROD is in cases_matmul.cpp.)
//
// Semantics (ggml):
//   GROUP_NORM: channels (dim 2) split into groups of ceil(C/G); each group of
//     each sample (dim 3) is normalised over all its elements like NORM.
//   IM2COL 2D: dst[(c*KH + kh)*KW + kw, ow, oh, n] = src[ow*s0 + kw*d0 - p0, oh*s1 + kh*d1 - p1, c, n], 0 outside.
//   POOL_1D: ggml's CPU supports only stride == kernel and no padding.
//   POOL_2D: window at (o*s - p); AVG divides by k0*k1 even where the window is padded.
//   UPSCALE: nearest neighbour, source index = (int)(i / (float)(ne / ne_src)) in float arithmetic.
//   TIMESTEP_EMBEDDING: half = dim/2, f_j = exp(-ln(max_period) j / half),
//     out[j] = cos(t f_j), out[j + half] = sin(t f_j); odd dim: out[dim] = 0 and
//     out[dim - 1] is left unwritten by ggml (not compared).
#include "op_case.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace opstest {
namespace {

void add_group_norm_cases(CaseList & t2) {
    struct GN {
        Shape s;
        int groups;
        bool inplace;
    };
    for (GN g : {GN{sh(8, 4, 6, 1), 3, false}, GN{sh(5, 3, 7, 2), 3, false}, GN{sh(6, 2, 8, 1), 4, true}}) {
        OpCase c;
        c.name = "GROUP_NORM_f32_" + shape_str(g.s) + "_g" + std::to_string(g.groups) + (g.inplace ? "_inplace" : "");
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, g.s, -2, 3);
            return g.inplace ? lm_ggml_group_norm_inplace(b.ctx, a, g.groups, 1e-6f)
                             : lm_ggml_group_norm(b.ctx, a, g.groups, 1e-6f);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & a = in[0];
            HTensor r(a.ne);
            const int64_t C = a.ne[2], per = (C + g.groups - 1) / g.groups;
            for (int64_t i3 = 0; i3 < a.ne[3]; ++i3) {
                for (int64_t c0 = 0; c0 < C; c0 += per) {
                    const int64_t c1 = std::min(C, c0 + per);
                    double sum = 0, sq = 0, n = 0;
                    for (int64_t ch = c0; ch < c1; ++ch)
                        for (int64_t i1 = 0; i1 < a.ne[1]; ++i1)
                            for (int64_t i0 = 0; i0 < a.ne[0]; ++i0) {
                                sum += a.at(i0, i1, ch, i3);
                                n += 1;
                            }
                    const double mean = sum / n;
                    for (int64_t ch = c0; ch < c1; ++ch)
                        for (int64_t i1 = 0; i1 < a.ne[1]; ++i1)
                            for (int64_t i0 = 0; i0 < a.ne[0]; ++i0) {
                                const double d = a.at(i0, i1, ch, i3) - mean;
                                sq += d * d;
                            }
                    const double scale = 1.0 / std::sqrt(sq / n + static_cast<double>(1e-6f));
                    for (int64_t ch = c0; ch < c1; ++ch)
                        for (int64_t i1 = 0; i1 < a.ne[1]; ++i1)
                            for (int64_t i0 = 0; i0 < a.ne[0]; ++i0)
                                r.at(i0, i1, ch, i3) = (a.at(i0, i1, ch, i3) - mean) * scale;
                }
            }
            return r;
        };
        t2.push_back(c);
    }
}

struct Im2col {
    std::string tag;
    bool is_2d;
    Shape kernel, input; // kernel (KW, KH, IC, OC) or (KW, IC, OC); input (IW, IH, IC, N) or (IW, IC, N)
    int s0, s1, p0, p1, d0, d1;
};

HTensor im2col_ref(const Im2col & m, const HTensor & x) {
    const int64_t KW = m.kernel[0], KH = m.is_2d ? m.kernel[1] : 1;
    const int64_t IW = x.ne[0], IH = m.is_2d ? x.ne[1] : 1;
    const int64_t IC = m.is_2d ? x.ne[2] : x.ne[1], N = m.is_2d ? x.ne[3] : x.ne[2];
    const int64_t OW = (IW + 2 * m.p0 - m.d0 * (KW - 1) - 1) / m.s0 + 1;
    const int64_t OH = m.is_2d ? (IH + 2 * m.p1 - m.d1 * (KH - 1) - 1) / m.s1 + 1 : 1;
    HTensor r(m.is_2d ? sh(IC * KH * KW, OW, OH, N) : sh(IC * KW, OW, N, 1));
    for (int64_t n = 0; n < N; ++n)
        for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow)
                for (int64_t c = 0; c < IC; ++c)
                    for (int64_t kh = 0; kh < KH; ++kh)
                        for (int64_t kw = 0; kw < KW; ++kw) {
                            const int64_t iw = ow * m.s0 + kw * m.d0 - m.p0;
                            const int64_t ih = oh * m.s1 + kh * m.d1 - m.p1;
                            double v = 0;
                            if (iw >= 0 && iw < IW && ih >= 0 && ih < IH) {
                                v = m.is_2d ? x.at(iw, ih, c, n) : x.at(iw, c, n);
                            }
                            const int64_t k = (c * KH + kh) * KW + kw;
                            if (m.is_2d)
                                r.at(k, ow, oh, n) = v;
                            else
                                r.at(k, ow, n) = v;
                        }
    return r;
}

void add_im2col_cases(CaseList & t2) {
    const Im2col cases[] = {
        {"2d_k3_s1_p1", true, sh(3, 3, 2, 4), sh(7, 6, 2, 1), 1, 1, 1, 1, 1, 1},
        {"2d_k3x2_s2_p0_d2", true, sh(3, 2, 3, 2), sh(11, 8, 3, 2), 2, 2, 0, 0, 2, 1},
        {"1d_k3_s1_p1", false, sh(3, 4, 8), sh(16, 4, 2), 1, 0, 1, 0, 1, 0},
        {"1d_k5_s2_p2_d1", false, sh(5, 2, 3), sh(19, 2, 1), 2, 0, 2, 0, 1, 0},
    };
    for (const Im2col & m : cases) {
        for (lm_ggml_type dt : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
            OpCase c;
            c.name = std::string("IM2COL_") + m.tag + "_to_" + type_str(dt);
            c.cmp = Cmp::Exact;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * k = b.uniform(LM_GGML_TYPE_F16, m.kernel); // only its shape matters
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, m.input);
                return lm_ggml_im2col(b.ctx, k, x, m.s0, m.s1, m.p0, m.p1, m.d0, m.d1, m.is_2d, dt);
            };
            c.ref = [=](const Inputs & in) { return im2col_ref(m, in[1]); };
            t2.push_back(c);
        }
    }
}

void add_pool_cases(CaseList & t2) {
    for (lm_ggml_op_pool op : {LM_GGML_OP_POOL_AVG, LM_GGML_OP_POOL_MAX}) {
        const std::string tag = op == LM_GGML_OP_POOL_AVG ? "avg" : "max";
        {
            OpCase c;
            c.name = "POOL_1D_" + tag + "_k3_s3_10x4x2";
            c.build = [=](Builder & b) {
                return lm_ggml_pool_1d(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(10, 4, 2)), op, 3, 3, 0);
            };
            c.ref = [=](const Inputs & in) {
                const HTensor & a = in[0];
                return generate(sh(3, 4, 2), [&](int64_t i0, int64_t i1, int64_t i2, int64_t) {
                    double acc = op == LM_GGML_OP_POOL_AVG ? 0.0 : -DBL_MAX;
                    for (int64_t k = 0; k < 3; ++k) {
                        const double x = a.at(i0 * 3 + k, i1, i2);
                        acc = op == LM_GGML_OP_POOL_AVG ? acc + x : std::max(acc, x);
                    }
                    return op == LM_GGML_OP_POOL_AVG ? acc / 3 : acc;
                });
            };
            t2.push_back(c);
        }
        struct P2 {
            Shape s;
            int k0, k1, s0, s1, p0, p1;
        };
        for (P2 p : {P2{sh(9, 7, 3, 1), 3, 3, 2, 2, 1, 1}, P2{sh(8, 6, 2, 2), 2, 2, 2, 2, 0, 0},
                     P2{sh(10, 5, 2, 1), 3, 2, 1, 2, 1, 0}}) {
            OpCase c;
            c.name = "POOL_2D_" + tag + "_" + shape_str(p.s) + "_k" + std::to_string(p.k0) + std::to_string(p.k1) +
                     "_s" + std::to_string(p.s0) + std::to_string(p.s1) + "_p" + std::to_string(p.p0) +
                     std::to_string(p.p1);
            c.build = [=](Builder & b) {
                return lm_ggml_pool_2d(b.ctx, b.uniform(LM_GGML_TYPE_F32, p.s), op, p.k0, p.k1, p.s0, p.s1,
                                       static_cast<float>(p.p0), static_cast<float>(p.p1));
            };
            c.ref = [=](const Inputs & in) {
                const HTensor & a = in[0];
                const int64_t ow = (a.ne[0] + 2 * p.p0 - p.k0) / p.s0 + 1, oh = (a.ne[1] + 2 * p.p1 - p.k1) / p.s1 + 1;
                return generate(sh(ow, oh, a.ne[2], a.ne[3]), [&](int64_t ox, int64_t oy, int64_t i2, int64_t i3) {
                    double acc = op == LM_GGML_OP_POOL_AVG ? 0.0 : -DBL_MAX;
                    for (int ky = 0; ky < p.k1; ++ky) {
                        for (int kx = 0; kx < p.k0; ++kx) {
                            const int64_t x = ox * p.s0 - p.p0 + kx, y = oy * p.s1 - p.p1 + ky;
                            if (x < 0 || y < 0 || x >= a.ne[0] || y >= a.ne[1]) continue;
                            acc = op == LM_GGML_OP_POOL_AVG ? acc + a.at(x, y, i2, i3)
                                                            : std::max(acc, a.at(x, y, i2, i3));
                        }
                    }
                    return op == LM_GGML_OP_POOL_AVG ? acc / (p.k0 * p.k1) : acc;
                });
            };
            t2.push_back(c);
        }
    }
}

void add_resample_cases(CaseList & t2) {
    struct Up {
        std::string tag;
        Shape from, to;
    };
    for (const Up & u :
         {Up{"x2", sh(5, 3, 2, 1), sh(10, 6, 2, 1)}, Up{"ext_3x2x2_to_7x5x3x2", sh(3, 2, 2, 1), sh(7, 5, 3, 2)}}) {
        OpCase c;
        c.name = "UPSCALE_f32_" + u.tag;
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, u.from);
            return u.tag == "x2"
                       ? lm_ggml_upscale(b.ctx, a, 2)
                       : lm_ggml_upscale_ext(b.ctx, a, (int) u.to[0], (int) u.to[1], (int) u.to[2], (int) u.to[3]);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & a = in[0];
            auto src = [&](int64_t i, int k) {
                const float sf = static_cast<float>(u.to[k]) / static_cast<float>(a.ne[k]);
                return static_cast<int64_t>(static_cast<float>(i) / sf);
            };
            return generate(u.to, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
                return a.at(src(i0, 0), src(i1, 1), src(i2, 2), src(i3, 3));
            });
        };
        t2.push_back(c);
    }
    struct Pd {
        Shape s;
        int p0, p1, p2, p3;
    };
    for (Pd p : {Pd{sh(5, 3, 2, 1), 2, 1, 0, 1}, Pd{sh(7, 1, 1, 1), 3, 0, 0, 0}}) {
        OpCase c;
        c.name = "PAD_f32_" + shape_str(p.s) + "_by_" + std::to_string(p.p0) + std::to_string(p.p1) +
                 std::to_string(p.p2) + std::to_string(p.p3);
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) {
            return lm_ggml_pad(b.ctx, b.uniform(LM_GGML_TYPE_F32, p.s), p.p0, p.p1, p.p2, p.p3);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & a = in[0];
            return generate(sh(a.ne[0] + p.p0, a.ne[1] + p.p1, a.ne[2] + p.p2, a.ne[3] + p.p3),
                            [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
                                const bool inside = i0 < a.ne[0] && i1 < a.ne[1] && i2 < a.ne[2] && i3 < a.ne[3];
                                return inside ? a.at(i0, i1, i2, i3) : 0.0;
                            });
        };
        t2.push_back(c);
    }
}

void add_misc_cases(CaseList & t2) {
    struct Ar {
        float start, stop, step;
    };
    for (Ar a : {Ar{0.0f, 10.0f, 1.0f}, Ar{-3.5f, 4.25f, 0.75f}, Ar{1.0f, 2.0f, 0.1f}}) {
        OpCase c;
        char buf[96];
        std::snprintf(buf, sizeof(buf), "ARANGE_%g_%g_%g", a.start, a.stop, a.step);
        c.name = buf;
        for (char & ch : c.name)
            if (ch == '.' || ch == '-') ch = (ch == '.') ? 'p' : 'm';
        c.build = [=](Builder & b) { return lm_ggml_arange(b.ctx, a.start, a.stop, a.step); };
        c.ref = [=](const Inputs &) {
            const int64_t n = static_cast<int64_t>(std::ceil(static_cast<float>((a.stop - a.start) / a.step)));
            return generate(sh(n), [&](int64_t i, int64_t, int64_t, int64_t) {
                return static_cast<double>(a.start) + static_cast<double>(a.step) * i;
            });
        };
        t2.push_back(c);
    }
    for (int dim : {16, 15}) {
        OpCase c;
        c.name = "TIMESTEP_EMBEDDING_f32_dim" + std::to_string(dim) + "_n5";
        c.build = [=](Builder & b) {
            return lm_ggml_timestep_embedding(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(5), 0, 1000), dim, 10000);
        };
        c.ref = [=](const Inputs & in) {
            const int half = dim / 2;
            HTensor r(sh(dim + (dim % 2), in[0].ne[0]));
            r.dont_care.assign(r.v.size(), 0);
            for (int64_t i = 0; i < in[0].ne[0]; ++i) {
                for (int j = 0; j < half; ++j) {
                    const double f = std::exp(-std::log(10000.0) * j / half);
                    r.at(j, i) = std::cos(in[0].v[i] * f);
                    r.at(j + half, i) = std::sin(in[0].v[i] * f);
                }
                if (dim % 2 != 0) {
                    r.at(dim, i) = 0.0;
                    r.dont_care[r.index(dim - 1, i, 0, 0)] = 1;
                }
            }
            return r;
        };
        t2.push_back(c);
    }
    for (bool inplace : {false, true}) {
        OpCase c;
        c.name = std::string("LEAKY_RELU_f32_33x4x2") + (inplace ? "_inplace" : "");
        c.build = [=](Builder & b) {
            return lm_ggml_leaky_relu(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(33, 4, 2), -3, 3), 0.1f, inplace);
        };
        c.ref = [](const Inputs & in) {
            return map1(in[0], [](double x) { return x > 0 ? x : static_cast<double>(0.1f) * x; });
        };
        t2.push_back(c);
    }
}

} // namespace

void add_tier2_cases(CaseList & /*t1*/, CaseList & t2) {
    add_group_norm_cases(t2);
    add_im2col_cases(t2);
    add_pool_cases(t2);
    add_resample_cases(t2);
    add_misc_cases(t2);
}

} // namespace opstest

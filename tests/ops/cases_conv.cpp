// Convolutions: the conv_1d/2d builders (im2col + mul_mat graphs, depthwise
// and fixed-padding variants) and CONV_TRANSPOSE_1D/2D. The window,
// relative-position, diag, count and multimodal-rope cases are in
// cases_conv_misc.cpp.
//
// Semantics (ggml), x the input, w the kernel, out-of-range input taps are 0:
//   conv_1d: w (K, IC, OC), x (IL, IC, N), OL = (IL + 2p - d(K-1) - 1)/s + 1.
//     im2col (F16) then mul_mat gives M (OL*N, OC) with
//     M[n*OL + ol, oc] = sum_{ic,k} f16(x[ol*s + k*d - p, ic, n]) * w[k, ic, oc],
//     and the result is M reshaped to (OL, OC, N) (element order kept, so
//     batches interleave with channels when N > 1).
//   conv_1d_dw: w (K, 1, C), x (IL, C, 1); out[ol, c] = sum_k f16(x[ol*s + k*d - p, c]) * w[k, 0, c],
//     shape (IL, C, 1), so OL must equal IL.
//   conv_2d: w (KW, KH, IC, OC), x (IW, IH, IC, N); im2col in w's type, so
//     x rounds to F16 only for an F16 kernel; out (OW, OH, OC, N).
//   conv_2d_dw: w (KW, KH, 1, C), x (IW, IH, C, N), im2col F16; out (OW, OH, C, N).
//     (ggml's CPU has no F32-kernel path for it: mul_mat(F32, F16) is unsupported.)
//   conv_transpose_1d: w (K, OC, IC), x (IL, IC); out ((IL-1)*s + K, OC) with
//     out[l*s + k, oc] += sum_ic w[k, oc, ic] * x[l, ic]; an F16 kernel rounds x to F16.
//   conv_transpose_2d_p0: w (KW, KH, OC, IC) F16, x (IW, IH, IC, N) F32, x rounded to F16;
//     out[iw*s + kw, ih*s + kh, oc, n] += sum_ic w[kw, kh, oc, ic] * x[iw, ih, ic, n].
#include "op_case.h"

namespace opstest {

void add_conv_misc_cases(CaseList & t1); // cases_conv_misc.cpp

namespace {

double r16(double v) { return lmtest::round_to_type(LM_GGML_TYPE_F16, v); }

int64_t out_size(int64_t in, int64_t k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

std::string tstr(lm_ggml_type t) { return type_str(t); }

// ---------------------------------------------------------------- conv_1d
struct C1 {
    std::string tag;
    Shape w, x; // (K, IC, OC), (IL, IC, N)
    int s, p, d;
    bool ph; // conv_1d_ph: p = K/2
};

HTensor conv1d_ref(const HTensor & w, const HTensor & x, int s, int p, int d) {
    const int64_t K = w.ne[0], IC = w.ne[1], OC = w.ne[2], IL = x.ne[0], N = x.ne[2];
    const int64_t OL = out_size(IL, K, s, p, d);
    HTensor m(sh(OL * N, OC));
    for (int64_t n = 0; n < N; ++n)
        for (int64_t ol = 0; ol < OL; ++ol)
            for (int64_t oc = 0; oc < OC; ++oc) {
                double acc = 0;
                for (int64_t ic = 0; ic < IC; ++ic)
                    for (int64_t k = 0; k < K; ++k) {
                        const int64_t i = ol * s + k * d - p;
                        if (i >= 0 && i < IL) acc += r16(x.at(i, ic, n)) * w.at(k, ic, oc);
                    }
                m.at(n * OL + ol, oc) = acc;
            }
    return lmtest::reshape(m, sh(OL, OC, N));
}

void add_conv_1d_cases(CaseList & t1) {
    const C1 cases[] = {
        {"k3_s1_p1", sh(3, 4, 5), sh(11, 4, 1), 1, 1, 1, false},
        {"k5_s2_p2_n2", sh(5, 3, 6), sh(17, 3, 2), 2, 2, 1, false},
        {"k3_s1_p2_d2", sh(3, 2, 3), sh(9, 2, 1), 1, 2, 2, false},
        {"k4_s3_p0_n3", sh(4, 3, 2), sh(14, 3, 3), 3, 0, 1, false},
        {"ph_k5_s1", sh(5, 3, 4), sh(10, 3, 1), 1, 2, 1, true},
        {"ph_k3_s2_d2", sh(3, 2, 3), sh(13, 2, 2), 2, 1, 2, true},
    };
    for (const C1 & m : cases) {
        for (lm_ggml_type wt : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
            OpCase c;
            c.name = std::string(m.ph ? "CONV_1D_PH_" : "CONV_1D_") + m.tag + "_w" + tstr(wt);
            c.max_nmse = kNmseLowPrec;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * w = b.uniform(wt, m.w);
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, m.x);
                return m.ph ? lm_ggml_conv_1d_ph(b.ctx, w, x, m.s, m.d) : lm_ggml_conv_1d(b.ctx, w, x, m.s, m.p, m.d);
            };
            c.ref = [=](const Inputs & in) { return conv1d_ref(in[0], in[1], m.s, m.p, m.d); };
            t1.push_back(c);
        }
    }
}

// ---------------------------------------------------------------- conv_1d_dw
struct C1dw {
    std::string tag;
    int64_t K, C, IL;
    int s, p, d;
    bool ph;
};

void add_conv_1d_dw_cases(CaseList & t1) {
    // OL == IL is required: 2p == d*(K-1) with s = 1
    const C1dw cases[] = {
        {"k3_p1", 3, 5, 12, 1, 1, 1, false},
        {"k3_p2_d2", 3, 4, 9, 1, 2, 2, false},
        {"ph_k5", 5, 3, 11, 1, 2, 1, true},
        {"ph_k3_d1", 3, 7, 1, 1, 1, 1, true},
    };
    for (const C1dw & m : cases) {
        for (lm_ggml_type wt : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
            OpCase c;
            c.name = std::string(m.ph ? "CONV_1D_DW_PH_" : "CONV_1D_DW_") + m.tag + "_c" + std::to_string(m.C) + "_w" +
                     tstr(wt);
            c.max_nmse = kNmseLowPrec;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * w = b.uniform(wt, sh(m.K, 1, m.C));
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(m.IL, m.C, 1));
                return m.ph ? lm_ggml_conv_1d_dw_ph(b.ctx, w, x, m.s, m.d)
                            : lm_ggml_conv_1d_dw(b.ctx, w, x, m.s, m.p, m.d);
            };
            c.ref = [=](const Inputs & in) {
                const HTensor & w = in[0];
                const HTensor & x = in[1];
                return generate(sh(m.IL, m.C, 1), [&](int64_t ol, int64_t ch, int64_t, int64_t) {
                    double acc = 0;
                    for (int64_t k = 0; k < m.K; ++k) {
                        const int64_t i = ol * m.s + k * m.d - m.p;
                        if (i >= 0 && i < m.IL) acc += r16(x.at(i, ch)) * w.at(k, 0, ch);
                    }
                    return acc;
                });
            };
            t1.push_back(c);
        }
    }
}

// ---------------------------------------------------------------- conv_2d
enum class V2 { plain, sk_p0, s1_ph };

struct C2 {
    std::string tag;
    Shape w, x; // (KW, KH, IC, OC), (IW, IH, IC, N)
    int s0, s1, p0, p1, d0, d1;
    V2 v;
};

HTensor conv2d_ref(const HTensor & w, const HTensor & x, bool round_x, int s0, int s1, int p0, int p1, int d0, int d1) {
    const int64_t KW = w.ne[0], KH = w.ne[1], IC = w.ne[2], OC = w.ne[3];
    const int64_t IW = x.ne[0], IH = x.ne[1], N = x.ne[3];
    const int64_t OW = out_size(IW, KW, s0, p0, d0), OH = out_size(IH, KH, s1, p1, d1);
    return generate(sh(OW, OH, OC, N), [&](int64_t ow, int64_t oh, int64_t oc, int64_t n) {
        double acc = 0;
        for (int64_t ic = 0; ic < IC; ++ic)
            for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                    const int64_t iw = ow * s0 + kw * d0 - p0, ih = oh * s1 + kh * d1 - p1;
                    if (iw < 0 || iw >= IW || ih < 0 || ih >= IH) continue;
                    const double xv = x.at(iw, ih, ic, n);
                    acc += (round_x ? r16(xv) : xv) * w.at(kw, kh, ic, oc);
                }
        return acc;
    });
}

void add_conv_2d_cases(CaseList & t1) {
    const C2 cases[] = {
        {"k3_s1_p1", sh(3, 3, 2, 4), sh(7, 6, 2, 1), 1, 1, 1, 1, 1, 1, V2::plain},
        {"k3x2_s2x1_p1x0_d1x2_n2", sh(3, 2, 3, 5), sh(9, 8, 3, 2), 2, 1, 1, 0, 1, 2, V2::plain},
        {"k2_s3_p2_d2", sh(2, 2, 1, 3), sh(11, 7, 1, 1), 3, 3, 2, 2, 2, 2, V2::plain},
        {"sk_p0_k2x3", sh(2, 3, 3, 4), sh(9, 10, 3, 2), 0, 0, 0, 0, 1, 1, V2::sk_p0},
        {"s1_ph_k5x3", sh(5, 3, 2, 3), sh(8, 7, 2, 1), 0, 0, 0, 0, 1, 1, V2::s1_ph},
    };
    for (const C2 & m : cases) {
        for (lm_ggml_type wt : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
            OpCase c;
            const char * prefix = m.v == V2::sk_p0   ? "CONV_2D_SK_P0_"
                                  : m.v == V2::s1_ph ? "CONV_2D_S1_PH_"
                                                     : "CONV_2D_";
            c.name = prefix + m.tag + "_w" + tstr(wt);
            c.max_nmse = kNmseLowPrec;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * w = b.uniform(wt, m.w);
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, m.x);
                switch (m.v) {
                    case V2::sk_p0: return lm_ggml_conv_2d_sk_p0(b.ctx, w, x);
                    case V2::s1_ph: return lm_ggml_conv_2d_s1_ph(b.ctx, w, x);
                    default: return lm_ggml_conv_2d(b.ctx, w, x, m.s0, m.s1, m.p0, m.p1, m.d0, m.d1);
                }
            };
            c.ref = [=](const Inputs & in) {
                const int KW = static_cast<int>(m.w[0]), KH = static_cast<int>(m.w[1]);
                const bool half = wt == LM_GGML_TYPE_F16;
                switch (m.v) {
                    case V2::sk_p0: return conv2d_ref(in[0], in[1], half, KW, KH, 0, 0, 1, 1);
                    case V2::s1_ph: return conv2d_ref(in[0], in[1], half, 1, 1, KW / 2, KH / 2, 1, 1);
                    default: return conv2d_ref(in[0], in[1], half, m.s0, m.s1, m.p0, m.p1, m.d0, m.d1);
                }
            };
            t1.push_back(c);
        }
    }
}

// ---------------------------------------------------------------- conv_2d_dw
struct C2dw {
    std::string tag;
    int64_t KW, KH, C;
    Shape x; // (IW, IH, C, N)
    int s0, s1, p0, p1, d0, d1;
};

void add_conv_2d_dw_cases(CaseList & t1) {
    const C2dw cases[] = {
        {"k3_s1_p1", 3, 3, 4, sh(7, 6, 4, 1), 1, 1, 1, 1, 1, 1},
        {"k3x2_s2_p1x0_n2", 3, 2, 3, sh(9, 8, 3, 2), 2, 2, 1, 0, 1, 1},
        {"k2_s1_p2_d2", 2, 2, 5, sh(6, 5, 5, 1), 1, 1, 2, 2, 2, 2},
    };
    for (const C2dw & m : cases) {
        OpCase c;
        c.name = "CONV_2D_DW_" + m.tag + "_c" + std::to_string(m.C) + "_wf16";
        c.max_nmse = kNmseLowPrec;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * w = b.uniform(LM_GGML_TYPE_F16, sh(m.KW, m.KH, 1, m.C));
            lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, m.x);
            return lm_ggml_conv_2d_dw(b.ctx, w, x, m.s0, m.s1, m.p0, m.p1, m.d0, m.d1);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & w = in[0];
            const HTensor & x = in[1];
            const int64_t OW = out_size(x.ne[0], m.KW, m.s0, m.p0, m.d0),
                          OH = out_size(x.ne[1], m.KH, m.s1, m.p1, m.d1);
            return generate(sh(OW, OH, m.C, x.ne[3]), [&](int64_t ow, int64_t oh, int64_t ch, int64_t n) {
                double acc = 0;
                for (int64_t kh = 0; kh < m.KH; ++kh)
                    for (int64_t kw = 0; kw < m.KW; ++kw) {
                        const int64_t iw = ow * m.s0 + kw * m.d0 - m.p0, ih = oh * m.s1 + kh * m.d1 - m.p1;
                        if (iw >= 0 && iw < x.ne[0] && ih >= 0 && ih < x.ne[1])
                            acc += r16(x.at(iw, ih, ch, n)) * w.at(kw, kh, 0, ch);
                    }
                return acc;
            });
        };
        t1.push_back(c);
    }
}

// ---------------------------------------------------------------- transposed
void add_conv_transpose_cases(CaseList & t1) {
    struct T1 {
        Shape w, x;
        int s;
    }; // (K, OC, IC), (IL, IC)
    for (T1 m : {T1{sh(3, 4, 5), sh(7, 5), 1}, T1{sh(4, 3, 6), sh(9, 6), 2}, T1{sh(2, 5, 1), sh(6, 1), 3},
                 T1{sh(5, 2, 17), sh(4, 17), 4}}) {
        for (lm_ggml_type wt : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
            OpCase c;
            c.name = "CONV_TRANSPOSE_1D_" + shape_str(m.w) + "_x" + shape_str(m.x) + "_s" + std::to_string(m.s) + "_w" +
                     tstr(wt);
            c.build = [=](Builder & b) {
                lm_ggml_tensor * w = b.uniform(wt, m.w);
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, m.x);
                return lm_ggml_conv_transpose_1d(b.ctx, w, x, m.s, 0, 1);
            };
            c.ref = [=](const Inputs & in) {
                const HTensor & w = in[0];
                const HTensor & x = in[1];
                const int64_t K = w.ne[0], OC = w.ne[1], IC = w.ne[2], IL = x.ne[0];
                HTensor r(sh((IL - 1) * m.s + K, OC));
                for (int64_t oc = 0; oc < OC; ++oc)
                    for (int64_t l = 0; l < IL; ++l)
                        for (int64_t k = 0; k < K; ++k)
                            for (int64_t ic = 0; ic < IC; ++ic) {
                                const double xv = wt == LM_GGML_TYPE_F16 ? r16(x.at(l, ic)) : x.at(l, ic);
                                r.at(l * m.s + k, oc) += w.at(k, oc, ic) * xv;
                            }
                return r;
            };
            t1.push_back(c);
        }
    }
    struct T2 {
        Shape w, x;
        int s;
    }; // (KW, KH, OC, IC), (IW, IH, IC, N)
    for (T2 m : {T2{sh(3, 3, 4, 2), sh(5, 4, 2, 1), 1}, T2{sh(2, 2, 3, 5), sh(4, 3, 5, 2), 2},
                 T2{sh(3, 2, 2, 3), sh(3, 5, 3, 1), 3}, T2{sh(1, 1, 2, 20), sh(2, 3, 20, 1), 2}}) {
        OpCase c;
        c.name =
            "CONV_TRANSPOSE_2D_P0_" + shape_str(m.w) + "_x" + shape_str(m.x) + "_s" + std::to_string(m.s) + "_wf16";
        c.build = [=](Builder & b) {
            lm_ggml_tensor * w = b.uniform(LM_GGML_TYPE_F16, m.w);
            lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, m.x);
            return lm_ggml_conv_transpose_2d_p0(b.ctx, w, x, m.s);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor & w = in[0];
            const HTensor & x = in[1];
            const int64_t KW = w.ne[0], KH = w.ne[1], OC = w.ne[2], IC = w.ne[3];
            const int64_t IW = x.ne[0], IH = x.ne[1], N = x.ne[3];
            HTensor r(sh((IW - 1) * m.s + KW, (IH - 1) * m.s + KH, OC, N));
            for (int64_t n = 0; n < N; ++n)
                for (int64_t oc = 0; oc < OC; ++oc)
                    for (int64_t ih = 0; ih < IH; ++ih)
                        for (int64_t iw = 0; iw < IW; ++iw)
                            for (int64_t kh = 0; kh < KH; ++kh)
                                for (int64_t kw = 0; kw < KW; ++kw)
                                    for (int64_t ic = 0; ic < IC; ++ic) {
                                        r.at(iw * m.s + kw, ih * m.s + kh, oc, n) +=
                                            w.at(kw, kh, oc, ic) * r16(x.at(iw, ih, ic, n));
                                    }
            return r;
        };
        t1.push_back(c);
    }
}

} // namespace

void add_conv_cases(CaseList & t1, CaseList & /*t2*/) {
    add_conv_1d_cases(t1);
    add_conv_1d_dw_cases(t1);
    add_conv_2d_cases(t1);
    add_conv_2d_dw_cases(t1);
    add_conv_transpose_cases(t1);
    add_conv_misc_cases(t1);
}

} // namespace opstest

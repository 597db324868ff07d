// NORM, RMS_NORM, DIAG_MASK_INF and SOFT_MAX (mask F32/F16 with -inf
// entries, scale, ALiBi slopes for power-of-two and other head counts).
//
// Semantics (ggml):
//   NORM:     y = (x - mean) / sqrt(var + eps) per row (var: mean of squares of x - mean)
//   RMS_NORM: y = x / sqrt(mean(x^2) + eps) per row
//   DIAG_MASK_INF: element (i, j, ...) becomes -inf when i > n_past + j
//   SOFT_MAX: row r of matrix (h, i3): softmax(x*scale + slope_h * mask[:, r]);
//     with n = 2^floor(log2(n_head)), m0 = 2^(-max_bias/n), m1 = 2^(-max_bias/2/n):
//     slope_h = m0^(h+1) for h < n, else m1^(2(h-n)+1); slope = 1 without max_bias.
#include "op_case.h"
#include "refs.h"

#include <cmath>
#include <limits>

namespace opstest {
namespace {

void add_norm_table(CaseList & t1) {
    for (bool rms : {false, true}) {
        const std::string op = rms ? "RMS_NORM" : "NORM";
        struct N {
            Shape s;
            float eps;
        };
        for (N c0 : {N{sh(64, 5, 3, 1), 1e-5f}, N{sh(33, 4, 1, 2), 1e-6f}, N{sh(4096, 2, 1, 1), 1e-5f},
                     N{sh(1, 3, 1, 1), 1e-5f}}) {
            OpCase c;
            c.name = op + "_f32_" + shape_str(c0.s);
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, c0.s, -2, 3);
                return rms ? lm_ggml_rms_norm(b.ctx, a, c0.eps) : lm_ggml_norm(b.ctx, a, c0.eps);
            };
            c.ref = [=](const Inputs & in) { return norm_ref(in[0], c0.eps, rms); };
            t1.push_back(c);
        }
        {
            OpCase c;
            c.name = op + "_f32_inplace";
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(48, 3, 2), -2, 3);
                return rms ? lm_ggml_rms_norm_inplace(b.ctx, a, 1e-5f) : lm_ggml_norm_inplace(b.ctx, a, 1e-5f);
            };
            c.ref = [=](const Inputs & in) { return norm_ref(in[0], 1e-5f, rms); };
            t1.push_back(c);
        }
        {
            OpCase c;
            c.name = op + "_f32_permuted";
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a =
                    lm_ggml_permute(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(40, 3, 5), -2, 3), 0, 2, 1, 3);
                return rms ? lm_ggml_rms_norm(b.ctx, a, 1e-5f) : lm_ggml_norm(b.ctx, a, 1e-5f);
            };
            c.ref = [=](const Inputs & in) { return norm_ref(permute(in[0], 0, 2, 1, 3), 1e-5f, rms); };
            t1.push_back(c);
        }
        {
            // large offset and tiny spread: cancellation in the variance
            OpCase c;
            c.name = op + "_f32_offset_rows";
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(128, 4), 9.5, 10.5);
                return rms ? lm_ggml_rms_norm(b.ctx, a, 1e-6f) : lm_ggml_norm(b.ctx, a, 1e-6f);
            };
            c.ref = [=](const Inputs & in) { return norm_ref(in[0], 1e-6f, rms); };
            t1.push_back(c);
        }
    }
}

void add_diag_mask_cases(CaseList & t1) {
    for (int n_past : {0, 4}) {
        for (bool inplace : {false, true}) {
            OpCase c;
            c.name = "DIAG_MASK_INF_f32_10x6x3_past" + std::to_string(n_past) + (inplace ? "_inplace" : "");
            c.cmp = Cmp::Exact;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(10, 6, 3));
                return inplace ? lm_ggml_diag_mask_inf_inplace(b.ctx, a, n_past)
                               : lm_ggml_diag_mask_inf(b.ctx, a, n_past);
            };
            c.ref = [=](const Inputs & in) {
                return generate(in[0].ne, [&](int64_t i, int64_t j, int64_t k, int64_t l) {
                    return i > n_past + j ? -std::numeric_limits<double>::infinity() : in[0].at(i, j, k, l);
                });
            };
            t1.push_back(c);
        }
    }
}

// mask (ne0, rows): random values, -inf above a causal diagonal (never a whole row)
lm_ggml_tensor * attn_mask(Builder & b, lm_ggml_type t, int64_t ne0, int64_t rows, int64_t n_past) {
    std::vector<double> v(static_cast<size_t>(ne0 * rows));
    for (int64_t j = 0; j < rows; ++j) {
        for (int64_t i = 0; i < ne0; ++i) {
            v[j * ne0 + i] = i > n_past + j ? -INFINITY : b.rng().uniform(-1, 1);
        }
    }
    return b.values(t, sh(ne0, rows), v);
}

void add_soft_max_cases(CaseList & t1) {
    for (Shape s : {sh(10, 5, 4, 3), sh(67, 3, 1, 1), sh(1, 4, 1, 1)}) {
        OpCase c;
        c.name = "SOFT_MAX_f32_" + shape_str(s);
        c.build = [=](Builder & b) { return lm_ggml_soft_max(b.ctx, b.uniform(LM_GGML_TYPE_F32, s, -4, 4)); };
        c.ref = [](const Inputs & in) { return soft_max_ref(in[0], nullptr, 1.0, 0.0); };
        t1.push_back(c);
    }
    {
        OpCase c;
        c.name = "SOFT_MAX_f32_inplace";
        c.build = [](Builder & b) {
            return lm_ggml_soft_max_inplace(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(33, 4, 2), -4, 4));
        };
        c.ref = [](const Inputs & in) { return soft_max_ref(in[0], nullptr, 1.0, 0.0); };
        t1.push_back(c);
    }
    struct SM {
        const char * tag;
        Shape s;
        int64_t mask_rows;
        float scale, max_bias;
    };
    const SM table[] = {
        {"scale", sh(16, 7, 3, 1), 7, 0.3f, 0.0f},
        {"padded_mask", sh(16, 7, 3, 2), 32, 0.125f, 0.0f}, // mask rows padded past ne1
        {"alibi_4_heads", sh(12, 5, 4, 1), 5, 1.0f, 8.0f},
        {"alibi_6_heads", sh(12, 5, 6, 2), 8, 0.5f, 8.0f}, // slopes from both m0 and m1
        {"alibi_3_heads", sh(9, 3, 3, 1), 3, 1.0f, 4.0f},
    };
    for (const SM & m : table) {
        for (lm_ggml_type mt : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
            OpCase c;
            c.name = std::string("SOFT_MAX_ext_f32_mask_") + type_str(mt) + "_" + m.tag;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, m.s, -4, 4);
                lm_ggml_tensor * mask = attn_mask(b, mt, m.s[0], m.mask_rows, m.s[0] - m.s[1]);
                return lm_ggml_soft_max_ext(b.ctx, a, mask, m.scale, m.max_bias);
            };
            c.ref = [=](const Inputs & in) { return soft_max_ref(in[0], &in[1], m.scale, m.max_bias); };
            t1.push_back(c);
        }
    }
}

} // namespace

void add_norm_cases(CaseList & t1, CaseList & /*t2*/) {
    add_norm_table(t1);
    add_diag_mask_cases(t1);
    add_soft_max_cases(t1);
}

} // namespace opstest

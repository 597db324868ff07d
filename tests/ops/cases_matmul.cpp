// MUL_MAT (F32, F16, BF16 and quantized weights; gemv and gemm sizes;
// batched and broadcast dims 2/3; permuted, row-strided and transposed
// activations), MUL_MAT_ID (mixture of experts) and, tier 2, OUT_PROD.
//
// Semantics (ggml): dst[i, j, i2, i3] = sum_k a[k, i, i2 / (ne12/ne02), i3 / (ne13/ne03)] * b[k, j, i2, i3]
// with a the weights [K, M, ...] and b the activations [K, N, ...].
#include "op_case.h"
#include "refs.h"

namespace opstest {
namespace {

struct MM {
    const char * tag;
    int64_t m, n;
    Shape batch_a, batch_b; // only [2] and [3] are used
};

const MM kShapes[] = {
    {"gemv", 16, 1, sh(1), sh(1)},
    {"odd", 17, 7, sh(1), sh(1)},
    {"gemm", 32, 33, sh(1), sh(1)},
    {"batched", 9, 5, sh(1, 1, 3, 2), sh(1, 1, 3, 2)},
    {"bcast", 9, 5, sh(1, 1, 2, 1), sh(1, 1, 6, 3)},
};

lm_ggml_tensor * weights(Builder & b, lm_ggml_type t, Shape ne) {
    return lmtest::is_plain_type(t) ? b.uniform(t, ne) : b.quantized(t, ne);
}

int64_t k_for(lm_ggml_type t) {
    if (t == LM_GGML_TYPE_Q4_K || t == LM_GGML_TYPE_Q6_K) return 256;
    if (!lmtest::is_plain_type(t)) return 64;
    return 33; // odd: exercises the vector tails
}

void add_mul_mat_table(CaseList & t1) {
    const lm_ggml_type types[] = {LM_GGML_TYPE_F32,  LM_GGML_TYPE_F16,  LM_GGML_TYPE_BF16, LM_GGML_TYPE_Q4_0,
                                  LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q8_0,
                                  LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q6_K};
    for (lm_ggml_type t : types) {
        const int64_t K = k_for(t);
        for (const MM & s : kShapes) {
            OpCase c;
            c.name = std::string("MUL_MAT_") + type_str(t) + "_f32_" + s.tag + "_m" + std::to_string(s.m) + "_n" +
                     std::to_string(s.n) + "_k" + std::to_string(K);
            c.max_nmse = t == LM_GGML_TYPE_F32 ? kNmseF32 : kNmseLowPrec;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = weights(b, t, sh(K, s.m, s.batch_a[2], s.batch_a[3]));
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(K, s.n, s.batch_b[2], s.batch_b[3]));
                return lm_ggml_mul_mat(b.ctx, a, x);
            };
            c.ref = [](const Inputs & in) { return mul_mat_ref(in[0], in[1]); };
            t1.push_back(c);
        }
    }
    // larger products: tiling/blocking paths of optimized kernels
    struct Big {
        lm_ggml_type t;
        int64_t m, n, k;
    };
    for (Big g : {Big{LM_GGML_TYPE_F32, 64, 64, 128}, Big{LM_GGML_TYPE_F16, 64, 48, 160},
                  Big{LM_GGML_TYPE_Q4_1, 64, 20, 576}, Big{LM_GGML_TYPE_Q8_0, 48, 9, 256}}) {
        OpCase c;
        c.name = std::string("MUL_MAT_") + type_str(g.t) + "_f32_large_m" + std::to_string(g.m) + "_n" +
                 std::to_string(g.n) + "_k" + std::to_string(g.k);
        c.max_nmse = g.t == LM_GGML_TYPE_F32 ? kNmseF32 : kNmseLowPrec;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = weights(b, g.t, sh(g.k, g.m)); // leaves in order: a, then x
            lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(g.k, g.n));
            return lm_ggml_mul_mat(b.ctx, a, x);
        };
        c.ref = [](const Inputs & in) { return mul_mat_ref(in[0], in[1]); };
        t1.push_back(c);
    }
}

void add_mul_mat_layouts(CaseList & t1) {
    for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
        const double lim = t == LM_GGML_TYPE_F32 ? kNmseF32 : kNmseLowPrec;
        const std::string ty = type_str(t);
        {
            // activations stored (K, heads, N) and viewed as (K, N, heads), like q in attention
            OpCase c;
            c.name = "MUL_MAT_" + ty + "_f32_src1_permuted";
            c.max_nmse = lim;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(t, sh(32, 6, 3));
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(32, 3, 5));
                return lm_ggml_mul_mat(b.ctx, a, lm_ggml_permute(b.ctx, x, 0, 2, 1, 3));
            };
            c.ref = [](const Inputs & in) { return mul_mat_ref(in[0], permute(in[1], 0, 2, 1, 3)); };
            t1.push_back(c);
        }
        {
            // weights viewed from a cache laid out (K, heads, M), like k in attention
            OpCase c;
            c.name = "MUL_MAT_" + ty + "_f32_src0_permuted";
            c.max_nmse = lim;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(t, sh(32, 2, 7));
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(32, 4, 6));
                return lm_ggml_mul_mat(b.ctx, lm_ggml_permute(b.ctx, a, 0, 2, 1, 3), x); // a as (32, 7, 2), bcast 3x
            };
            c.ref = [](const Inputs & in) { return mul_mat_ref(permute(in[0], 0, 2, 1, 3), in[1]); };
            t1.push_back(c);
        }
        {
            // activation rows 40 floats apart, only the first 33 used
            OpCase c;
            c.name = "MUL_MAT_" + ty + "_f32_src1_strided_rows";
            c.max_nmse = lim;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(t, sh(33, 10));
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(40, 6));
                return lm_ggml_mul_mat(b.ctx, a, lm_ggml_view_2d(b.ctx, x, 33, 6, x->nb[1], 0));
            };
            c.ref = [](const Inputs & in) {
                return mul_mat_ref(in[0], lmtest::strided_view(in[1], sh(33, 6), sh(1, 40, 0, 0), 0));
            };
            t1.push_back(c);
        }
        {
            // dim 0 of the activations strided: ggml's CPU requires contiguous rows, so not required
            OpCase c;
            c.name = "MUL_MAT_" + ty + "_f32_src1_transposed";
            c.max_nmse = lim;
            c.cpu_required = false;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(t, sh(24, 8));
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(5, 24));
                return lm_ggml_mul_mat(b.ctx, a, lm_ggml_transpose(b.ctx, x));
            };
            c.ref = [](const Inputs & in) { return mul_mat_ref(in[0], transpose(in[1])); };
            t1.push_back(c);
        }
    }
    {
        // F16 activations with F16 weights (src1 already in the weights' dot type)
        OpCase c;
        c.name = "MUL_MAT_f16_f16_m12_n7_k40";
        c.max_nmse = kNmseLowPrec;
        c.build = [](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F16, sh(40, 12));
            lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F16, sh(40, 7));
            return lm_ggml_mul_mat(b.ctx, a, x);
        };
        c.ref = [](const Inputs & in) { return mul_mat_ref(in[0], in[1]); };
        t1.push_back(c);
    }
}

// as (K, M, n_expert), b (K, n_used or 1, n_tokens), ids (n_used, n_tokens)
// dst[i, e, t] = sum_k as[k, i, ids[e, t]] * b[k, e % ne1(b), t]
HTensor mul_mat_id_ref(const HTensor & as, const HTensor & b, const HTensor & ids) {
    const int64_t K = as.ne[0];
    return generate(sh(as.ne[1], ids.ne[0], b.ne[2]), [&](int64_t i, int64_t e, int64_t t, int64_t) {
        const int64_t ex = static_cast<int64_t>(ids.at(e, t));
        double s = 0;
        for (int64_t k = 0; k < K; ++k) {
            s += as.at(k, i, ex) * b.at(k, e % b.ne[1], t);
        }
        return s;
    });
}

void add_mul_mat_id_cases(CaseList & t1) {
    for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q8_0}) {
        for (bool bcast : {false, true}) {
            const int64_t K = lmtest::is_plain_type(t) ? 33 : 64, M = 10, n_exp = 4, n_used = 2, n_tok = 5;
            OpCase c;
            c.name = std::string("MUL_MAT_ID_") + type_str(t) + "_f32_" + (bcast ? "bcast_" : "") + "e4_u2_t5";
            c.max_nmse = t == LM_GGML_TYPE_F32 ? kNmseF32 : kNmseLowPrec;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * as = weights(b, t, sh(K, M, n_exp));
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(K, bcast ? 1 : n_used, n_tok));
                // distinct experts per token, like a top-k selection
                std::vector<double> ids;
                for (int64_t tok = 0; tok < n_tok; ++tok) {
                    const int64_t first = b.rng().int_in(0, n_exp - 1);
                    const int64_t step = b.rng().int_in(1, n_exp - 1);
                    for (int64_t e = 0; e < n_used; ++e) {
                        ids.push_back(static_cast<double>((first + e * step) % n_exp));
                    }
                }
                return lm_ggml_mul_mat_id(b.ctx, as, x, b.values(LM_GGML_TYPE_I32, sh(n_used, n_tok), ids));
            };
            c.ref = [](const Inputs & in) { return mul_mat_id_ref(in[0], in[1], in[2]); };
            t1.push_back(c);
        }
    }
}

// dst[i0, i1, i2, i3] = sum_k a[i0, k, i2 / (ne2/ne02), i3 / (ne3/ne03)] * b[i1, k, i2, i3]
HTensor out_prod_ref(const HTensor & a, const HTensor & b) {
    const int64_t r2 = b.ne[2] / a.ne[2], r3 = b.ne[3] / a.ne[3];
    return generate(sh(a.ne[0], b.ne[0], b.ne[2], b.ne[3]), [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        double s = 0;
        for (int64_t k = 0; k < a.ne[1]; ++k) {
            s += a.at(i0, k, i2 / r2, i3 / r3) * b.at(i1, k, i2, i3);
        }
        return s;
    });
}

void add_out_prod_cases(CaseList & t2) {
    struct OP {
        const char * tag;
        Shape a, b;
    };
    for (OP o : {OP{"9x13_by_7x13", sh(9, 13), sh(7, 13)}, OP{"bcast", sh(6, 5, 2, 1), sh(4, 5, 4, 2)}}) {
        OpCase c;
        c.name = std::string("OUT_PROD_f32_") + o.tag;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, o.a);
            lm_ggml_tensor * y = b.uniform(LM_GGML_TYPE_F32, o.b);
            return lm_ggml_out_prod(b.ctx, a, y);
        };
        c.ref = [](const Inputs & in) { return out_prod_ref(in[0], in[1]); };
        t2.push_back(c);
    }
    // The Gemm path (8 or more dst columns, F32 a; la_out_prod.cpp): partial
    // panels (ne00 not a multiple of 32), odd K, a broadcast over dims 2 and
    // 3, b a transposed view (k contiguous: packed without a gather), a with
    // padded rows (a view), and K long against ne00 (a conv kernel's gradient).
    struct G {
        const char * tag;
        Shape a, b;
        bool bt, a_view;
    };
    for (G o : {G{"gemm_40x33_by_19x33", sh(40, 33), sh(19, 33), false, false},
                G{"gemm_bcast", sh(35, 9, 2, 1), sh(12, 9, 4, 2), false, false},
                G{"gemm_b_transposed", sh(17, 70), sh(24, 70), true, false},
                G{"gemm_a_view", sh(37, 21), sh(8, 21), false, true},
                G{"gemm_long_k", sh(9, 600), sh(16, 600), true, false}}) {
        OpCase c;
        c.name = std::string("OUT_PROD_f32_") + o.tag;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = nullptr;
            if (o.a_view) { // rows of a are the first ne00 floats of rows 13 floats longer
                lm_ggml_tensor * big = b.uniform(LM_GGML_TYPE_F32, sh(o.a[0] + 13, o.a[1]));
                a = lm_ggml_view_2d(b.ctx, big, o.a[0], o.a[1], big->nb[1], 0);
            } else {
                a = b.uniform(LM_GGML_TYPE_F32, o.a);
            }
            lm_ggml_tensor * y = o.bt ? lm_ggml_transpose(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(o.b[1], o.b[0])))
                                      : b.uniform(LM_GGML_TYPE_F32, o.b);
            return lm_ggml_out_prod(b.ctx, a, y);
        };
        c.ref = [=](const Inputs & in) {
            const HTensor a = o.a_view ? lmtest::strided_view(in[0], o.a, sh(1, o.a[0] + 13, 0, 0), 0) : in[0];
            const HTensor y = o.bt ? lmtest::strided_view(in[1], o.b, sh(o.b[1], 1, 0, 0), 0) : in[1];
            return out_prod_ref(a, y);
        };
        t2.push_back(c);
    }
}

} // namespace

void add_matmul_cases(CaseList & t1, CaseList & t2) {
    add_mul_mat_table(t1);
    add_mul_mat_layouts(t1);
    add_mul_mat_id_cases(t1);
    add_out_prod_cases(t2);
}

} // namespace opstest

// Multi-op graphs shaped like a transformer layer's pieces, so a device is
// also checked on dependent nodes, intermediate results and (on the CPU)
// thread hand-over between nodes: a SwiGLU feed-forward block with RMS norm
// and residual, and attention without FLASH_ATTN_EXT (permuted K, KQ,
// masked scaled softmax, V transposed by CONT, KQV permuted back).
#include "op_case.h"
#include "refs.h"

#include <cmath>

namespace opstest {
namespace {

HTensor mul_elementwise(const HTensor & a, const HTensor & b) { // b repeated over a
    return generate(a.ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        return a.at(i0, i1, i2, i3) * b.at(i0 % b.ne[0], i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]);
    });
}

OpCase ffn_case(lm_ggml_type wtype, int64_t n_embd, int64_t n_ff, int64_t n_tok) {
    OpCase c;
    c.name = std::string("GRAPH_swiglu_ffn_") + type_str(wtype) + "_e" + std::to_string(n_embd) + "_ff" +
             std::to_string(n_ff) + "_t" + std::to_string(n_tok);
    c.max_nmse = wtype == LM_GGML_TYPE_F32 ? kNmseF32 : kNmseLowPrec;
    c.build = [=](Builder & b) {
        lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(n_embd, n_tok));
        lm_ggml_tensor * g = b.uniform(LM_GGML_TYPE_F32, sh(n_embd), 0.5, 1.5);
        lm_ggml_tensor * w1 = b.uniform(wtype, sh(n_embd, n_ff), -0.2, 0.2);
        lm_ggml_tensor * w3 = b.uniform(wtype, sh(n_embd, n_ff), -0.2, 0.2);
        lm_ggml_tensor * w2 = b.uniform(wtype, sh(n_ff, n_embd), -0.2, 0.2);
        lm_ggml_context * ctx = b.ctx;
        lm_ggml_tensor * h = lm_ggml_mul(ctx, lm_ggml_rms_norm(ctx, x, 1e-5f), g);
        lm_ggml_tensor * gate = lm_ggml_silu(ctx, lm_ggml_mul_mat(ctx, w1, h));
        lm_ggml_tensor * up = lm_ggml_mul_mat(ctx, w3, h);
        lm_ggml_tensor * o = lm_ggml_mul_mat(ctx, w2, lm_ggml_mul(ctx, gate, up));
        return lm_ggml_add(ctx, o, x);
    };
    c.ref = [](const Inputs & in) {
        const HTensor h = mul_elementwise(norm_ref(in[0], 1e-5f, true), in[1]);
        const HTensor gate = map1(mul_mat_ref(in[2], h), [](double v) { return v / (1.0 + std::exp(-v)); });
        const HTensor act = mul_elementwise(gate, mul_mat_ref(in[3], h));
        HTensor o = mul_mat_ref(in[4], act);
        for (size_t i = 0; i < o.v.size(); ++i) o.v[i] += in[0].v[i];
        return o;
    };
    return c;
}

OpCase attention_case(lm_ggml_type kvtype, int64_t D, int64_t H, int64_t T) {
    OpCase c;
    c.name = std::string("GRAPH_attention_kq_softmax_kqv_") + type_str(kvtype) + "_d" + std::to_string(D) + "_h" +
             std::to_string(H) + "_t" + std::to_string(T);
    c.max_nmse = kvtype == LM_GGML_TYPE_F32 ? kNmseF32 : kNmseLowPrec;
    c.build = [=](Builder & b) {
        lm_ggml_tensor * q = b.uniform(LM_GGML_TYPE_F32, sh(D, H, T));
        lm_ggml_tensor * k = b.uniform(kvtype, sh(D, H, T));
        lm_ggml_tensor * v = b.uniform(kvtype, sh(D, H, T));
        std::vector<double> mv(static_cast<size_t>(T * T));
        for (int64_t j = 0; j < T; ++j)
            for (int64_t i = 0; i < T; ++i) mv[j * T + i] = i > j ? -INFINITY : 0.0;
        lm_ggml_tensor * mask = b.values(LM_GGML_TYPE_F32, sh(T, T), mv);
        lm_ggml_context * ctx = b.ctx;
        lm_ggml_tensor * Q = lm_ggml_permute(ctx, q, 0, 2, 1, 3); // (D, T, H)
        lm_ggml_tensor * K = lm_ggml_permute(ctx, k, 0, 2, 1, 3); // (D, T, H)
        lm_ggml_tensor * kq = lm_ggml_mul_mat(ctx, K, Q);         // (T_kv, T_q, H)
        kq = lm_ggml_soft_max_ext(ctx, kq, mask, 1.0f / std::sqrt(static_cast<float>(D)), 0.0f);
        lm_ggml_tensor * vt = lm_ggml_cont(ctx, lm_ggml_permute(ctx, v, 1, 2, 0, 3)); // (T_kv, D, H)
        lm_ggml_tensor * kqv = lm_ggml_mul_mat(ctx, vt, kq);                          // (D, T_q, H)
        return lm_ggml_cont(ctx, lm_ggml_permute(ctx, kqv, 0, 2, 1, 3));              // (D, H, T_q)
    };
    c.ref = [=](const Inputs & in) {
        const HTensor kq = soft_max_ref(mul_mat_ref(permute(in[1], 0, 2, 1, 3), permute(in[0], 0, 2, 1, 3)), &in[3],
                                        1.0f / std::sqrt(static_cast<float>(D)), 0.0);
        const HTensor kqv = mul_mat_ref(permute(in[2], 1, 2, 0, 3), kq);
        return permute(kqv, 0, 2, 1, 3);
    };
    return c;
}

} // namespace

void add_graph_cases(CaseList & t1, CaseList & /*t2*/) {
    t1.push_back(ffn_case(LM_GGML_TYPE_F32, 64, 96, 5));
    t1.push_back(ffn_case(LM_GGML_TYPE_F16, 64, 160, 7));
    t1.push_back(attention_case(LM_GGML_TYPE_F32, 32, 4, 6));
    t1.push_back(attention_case(LM_GGML_TYPE_F16, 64, 3, 9));
}

} // namespace opstest

// FLASH_ATTN_EXT with F16 K/V: decode and prefill shapes, grouped-query
// heads, odd KV lengths, causal F16 masks padded to LM_GGML_KQ_MASK_PAD rows,
// ALiBi, logit softcap, a batch dim and KV-cache-like strided K/V views.
//
// Semantics (ggml): q (D, n_q, H, B) F32, k/v (D, n_kv, H_kv, B_kv), mask
// (n_kv, >= pad(n_q, 32)) shared by heads and batch. For query row iq of head h:
// s_j = scale * q.k_j, or softcap * tanh(scale * q.k_j / softcap) when softcap != 0,
// plus slope_h * mask[j, iq]; out = softmax(s) . v. The result is laid out
// (D, H, n_q, B) (already permuted). K/V heads are shared by H / H_kv query heads.
#include "op_case.h"
#include "refs.h"

#include <cmath>

namespace opstest {
namespace {

HTensor flash_attn_ref(const HTensor & q, const HTensor & k, const HTensor & v, const HTensor * mask, double scale,
                       double max_bias, double softcap) {
    const int64_t D = q.ne[0], n_q = q.ne[1], H = q.ne[2], B = q.ne[3], n_kv = k.ne[1];
    const int64_t rk2 = H / k.ne[2], rk3 = B / k.ne[3], rv2 = H / v.ne[2], rv3 = B / v.ne[3];
    HTensor r(sh(D, H, n_q, B));
    std::vector<double> s(static_cast<size_t>(n_kv));
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t iq = 0; iq < n_q; ++iq) {
                const double slope = alibi_slope(h, H, max_bias);
                double mx = -INFINITY;
                for (int64_t j = 0; j < n_kv; ++j) {
                    double dot = 0;
                    for (int64_t d = 0; d < D; ++d) dot += q.at(d, iq, h, b) * k.at(d, j, h / rk2, b / rk3);
                    double x = softcap != 0 ? softcap * std::tanh(dot * scale / softcap) : dot * scale;
                    if (mask) x += slope * mask->at(j, iq);
                    s[j] = x;
                    mx = std::fmax(mx, x);
                }
                double sum = 0;
                for (int64_t j = 0; j < n_kv; ++j) {
                    s[j] = std::exp(s[j] - mx);
                    sum += s[j];
                }
                for (int64_t d = 0; d < D; ++d) {
                    double acc = 0;
                    for (int64_t j = 0; j < n_kv; ++j) acc += s[j] * v.at(d, j, h / rv2, b / rv3);
                    r.at(d, h, iq, b) = acc / sum;
                }
            }
    return r;
}

struct FA {
    std::string tag;
    int64_t D, n_q, n_kv, H, H_kv, B;
    bool mask;
    float max_bias, softcap;
    bool kv_cache_view = false; // K/V are views of (D*H_kv, n_kv + 9) caches
};

OpCase make_fa_case(const FA & f) {
    OpCase c;
    c.name = "FLASH_ATTN_EXT_f32_f16_" + f.tag;
    c.max_nmse = kNmseFlashAttn;
    c.build = [f](Builder & b) {
        lm_ggml_tensor * q = b.uniform(LM_GGML_TYPE_F32, sh(f.D, f.n_q, f.H, f.B));
        lm_ggml_tensor * k = nullptr;
        lm_ggml_tensor * v = nullptr;
        if (f.kv_cache_view) {
            const int64_t cache = f.n_kv + 9;
            lm_ggml_tensor * kc = b.uniform(LM_GGML_TYPE_F16, sh(f.D * f.H_kv, cache));
            lm_ggml_tensor * vc = b.uniform(LM_GGML_TYPE_F16, sh(f.D * f.H_kv, cache));
            k = lm_ggml_view_3d(b.ctx, kc, f.D, f.n_kv, f.H_kv, kc->nb[1], f.D * 2, 0);
            v = lm_ggml_view_3d(b.ctx, vc, f.D, f.n_kv, f.H_kv, vc->nb[1], f.D * 2, 0);
        } else {
            k = b.uniform(LM_GGML_TYPE_F16, sh(f.D, f.n_kv, f.H_kv, 1));
            v = b.uniform(LM_GGML_TYPE_F16, sh(f.D, f.n_kv, f.H_kv, 1));
        }
        lm_ggml_tensor * m = nullptr;
        if (f.mask) {
            const int64_t rows = LM_GGML_PAD(f.n_q, LM_GGML_KQ_MASK_PAD);
            std::vector<double> mv(static_cast<size_t>(f.n_kv * rows));
            const int64_t past = f.n_kv - f.n_q;
            for (int64_t j = 0; j < rows; ++j) {
                for (int64_t i = 0; i < f.n_kv; ++i) {
                    const bool masked = j < f.n_q && i > past + j;
                    mv[j * f.n_kv + i] =
                        masked ? -INFINITY
                               : (f.max_bias > 0 ? -1.0 * std::abs(past + j - i) : b.rng().uniform(-0.5, 0.5));
                }
            }
            m = b.values(LM_GGML_TYPE_F16, sh(f.n_kv, rows), mv);
        }
        return lm_ggml_flash_attn_ext(b.ctx, q, k, v, m, 1.0f / std::sqrt(static_cast<float>(f.D)), f.max_bias,
                                      f.softcap);
    };
    c.ref = [f](const Inputs & in) {
        HTensor k = in[1], v = in[2];
        if (f.kv_cache_view) {
            const Shape ne = sh(f.D, f.n_kv, f.H_kv);
            const Shape st = sh(1, f.D * f.H_kv, f.D, 0);
            k = lmtest::strided_view(in[1], ne, st, 0);
            v = lmtest::strided_view(in[2], ne, st, 0);
        }
        const double scale = 1.0f / std::sqrt(static_cast<float>(f.D));
        return flash_attn_ref(in[0], k, v, f.mask ? &in[3] : nullptr, scale, f.max_bias, f.softcap);
    };
    return c;
}

} // namespace

void add_attention_cases(CaseList & t1, CaseList & /*t2*/) {
    const FA cases[] = {
        {"decode_d64_kv32_h4", 64, 1, 32, 4, 4, 1, true, 0.0f, 0.0f},
        {"prefill_d64_q7_kv65_gqa4to2", 64, 7, 65, 4, 2, 1, true, 0.0f, 0.0f},
        {"nomask_d128_q4_kv48_h2", 128, 4, 48, 2, 2, 1, false, 0.0f, 0.0f},
        {"softcap30_d64_q5_kv40_h2", 64, 5, 40, 2, 2, 1, true, 0.0f, 30.0f},
        {"alibi_d64_q3_kv24_h4", 64, 3, 24, 4, 4, 1, true, 8.0f, 0.0f},
        {"alibi_d32_q3_kv24_h6_gqa", 32, 3, 24, 6, 3, 1, true, 8.0f, 0.0f},
        {"batch2_d64_q3_kv20_h2", 64, 3, 20, 2, 2, 2, true, 0.0f, 0.0f},
        {"d80_q2_kv33_h3", 80, 2, 33, 3, 1, 1, true, 0.0f, 0.0f},
        {"kv_cache_view_d64_q4_kv40_gqa4to2", 64, 4, 40, 4, 2, 1, true, 0.0f, 0.0f, true},
        // prompts: 16 or more query vectors per KV head (the CPU's tiled path)
        {"prompt_d64_q20_kv150_gqa9to3", 64, 20, 150, 9, 3, 1, true, 0.0f, 0.0f, true},
        {"prompt_d256_q13_kv40_gqa4to1", 256, 13, 40, 4, 1, 1, true, 0.0f, 0.0f},
        {"prompt_softcap30_d32_q17_kv45_h2", 32, 17, 45, 2, 2, 1, true, 0.0f, 30.0f},
    };
    for (const FA & f : cases) {
        t1.push_back(make_fa_case(f));
    }
}

} // namespace opstest

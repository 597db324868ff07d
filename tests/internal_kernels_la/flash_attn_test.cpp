// FLASH_ATTN_EXT against plain softmax attention in double: grouped-query
// heads, F16/F32 K and V, padded F16 mask with -inf, ALiBi, logit softcap,
// KV-cache style permuted views, one query (generation) and several.
#include "cpu/arch/kernels.h"
#include "cpu/kernels/la_flash_attn_rows.h"
#include "cpu/kernels/la_ops.h"
#include "la_test_util.h"

#include <cstdio>
#include <cstring>

using latest::get;

namespace {

struct FaCase {
    int64_t D, n_q, n_head, n_kv, n_head_kv, n_batch, n_batch_kv;
    lm_ggml_type tk, tv;
    bool mask;
    float max_bias, softcap;
    bool permuted_kv;   // k, v viewed out of a (D, n_head_kv, n_kv) cache
    int64_t window = 0; // > 0: each query also sees only its last `window` keys (sliding window)
};

std::string name_of(const FaCase & c) {
    char buf[200];
    snprintf(buf, sizeof(buf), "D%lld q%lld h%lld/%lld kv%lld %s/%s%s bias %g cap %g%s", (long long) c.D,
             (long long) c.n_q, (long long) c.n_head, (long long) c.n_head_kv, (long long) c.n_kv,
             lm_ggml_type_name(c.tk), lm_ggml_type_name(c.tv), c.mask ? " mask" : "", c.max_bias, c.softcap,
             c.permuted_kv ? " permuted" : "");
    if (c.window > 0) {
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " window %lld", (long long) c.window);
    }
    return buf;
}

double alibi_slope(double max_bias, int64_t n_head, int64_t h) {
    if (max_bias <= 0) {
        return 1.0;
    }
    int64_t n_log2 = 1;
    while (n_log2 * 2 <= n_head) {
        n_log2 *= 2;
    }
    const double m0 = std::pow(2.0, -max_bias / n_log2);
    const double m1 = std::pow(2.0, -max_bias / 2.0 / n_log2);
    return h < n_log2 ? std::pow(m0, h + 1) : std::pow(m1, 2 * (h - n_log2) + 1);
}

lm_ggml_tensor * kv_tensor(lm_ggml_context * ctx, const FaCase & c, lm_ggml_type t, lmtest::Rng & rng) {
    if (!c.permuted_kv) {
        lm_ggml_tensor * x = lm_ggml_new_tensor_4d(ctx, t, c.D, c.n_kv, c.n_head_kv, c.n_batch_kv);
        latest::fill(x, rng);
        return x;
    }
    lm_ggml_tensor * cache = lm_ggml_new_tensor_4d(ctx, t, c.D, c.n_head_kv, c.n_kv, c.n_batch_kv);
    latest::fill(cache, rng);
    return lm_ggml_permute(ctx, cache, 0, 2, 1, 3); // (D, n_kv, n_head_kv, n_batch_kv)
}

// decode_k: force K through the decode path (to_float + dot_f32, q kept F32)
void fa_case(const FaCase & c, bool decode_k = false) {
    const std::string what = name_of(c);
    latest::Context ctx;
    lmtest::Rng rng(lmtest::seed_from_name(what));
    lm_ggml_tensor * q = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, c.D, c.n_q, c.n_head, c.n_batch);
    latest::fill(q, rng);
    lm_ggml_tensor * k = kv_tensor(ctx, c, c.tk, rng);
    lm_ggml_tensor * v = kv_tensor(ctx, c, c.tv, rng);
    lm_ggml_tensor * mask = nullptr;
    if (c.mask) {
        mask = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, c.n_kv, LM_GGML_PAD(c.n_q, LM_GGML_KQ_MASK_PAD));
        for (int64_t j = 0; j < mask->ne[1]; ++j) {
            for (int64_t i = 0; i < c.n_kv; ++i) {
                // causal over the last n_q keys, small biases elsewhere (exact in F16)
                const int64_t pos = c.n_kv - c.n_q + j;
                const bool hidden = i > pos || (c.window > 0 && pos - i >= c.window);
                const float v = hidden ? -INFINITY : (float) (rng.int_in(-4, 4) / 4.0);
                ((lm_ggml_fp16_t *) mask->data)[j * c.n_kv + i] = lm_ggml_fp32_to_fp16(v);
            }
        }
    }
    const float scale = 1.0f / std::sqrt((float) c.D);
    lm_ggml_tensor * dst = lm_ggml_flash_attn_ext(ctx, q, k, v, mask, scale, c.max_bias, c.softcap);
    ASSERT_NE(dst, nullptr);
    ASSERT_TRUE(latest::supported(dst)) << what;

    const int64_t rk2 = c.n_head / c.n_head_kv, rk3 = c.n_batch / c.n_batch_kv;
    const latest::Ref ref = latest::make_ref(dst, [&](int64_t d, int64_t h, int64_t iq, int64_t b) {
        const double slope = alibi_slope(c.max_bias, c.n_head, h);
        std::vector<double> s((size_t) c.n_kv);
        double mx = -INFINITY;
        for (int64_t j = 0; j < c.n_kv; ++j) {
            double dot = 0;
            for (int64_t e = 0; e < c.D; ++e) {
                dot += get(q, e, iq, h, b) * get(k, e, j, h / rk2, b / rk3);
            }
            double x = dot * scale;
            if (c.softcap != 0.0f) {
                x = c.softcap * std::tanh(x / c.softcap);
            }
            s[(size_t) j] = x + (mask ? slope * get(mask, j, iq) : 0.0);
            mx = std::max(mx, s[(size_t) j]);
        }
        double sum = 0, out = 0;
        for (int64_t j = 0; j < c.n_kv; ++j) {
            const double p = std::exp(s[(size_t) j] - mx);
            sum += p;
            out += p * get(v, d, j, h / rk2, b / rk3);
        }
        return out / sum;
    });
    const bool all_f32 = c.tk == LM_GGML_TYPE_F32 && c.tv == LM_GGML_TYPE_F32;
    latest::Kernel kernel;
    if (decode_k) {
        lmggml::cpu::la::Plan plan{};
        plan.to_float = lmggml::cpu::la::decoder_of(c.tk);
        plan.vec_dot_type = LM_GGML_TYPE_F32;
        plan.ok = true;
        kernel.forward = [plan](const lm_cpu_params * p, lm_ggml_tensor * d) {
            lmggml::cpu::la::flash_attn_ext_forward_with(p, d, plan);
        };
        kernel.work_size = [plan](const lm_ggml_tensor * d, int n) {
            return lmggml::cpu::la::flash_attn_ext_work_size_with(d, n, plan);
        };
    }
    latest::check(dst, ref, all_f32 || decode_k ? 1e-7 : 5e-4, what + (decode_k ? " decoded K" : ""), {}, kernel);
}

} // namespace

TEST(LaFlashAttn, AgainstSoftmaxAttention) {
    const lm_ggml_type H = LM_GGML_TYPE_F16, F = LM_GGML_TYPE_F32;
    const FaCase cases[] = {
        {64, 7, 4, 19, 2, 1, 1, H, H, true, 0.0f, 0.0f, false},  // GQA, causal mask
        {40, 1, 2, 33, 2, 1, 1, F, F, false, 0.0f, 0.0f, false}, // generation, no mask
        {32, 5, 6, 12, 3, 1, 1, H, H, true, 4.0f, 0.0f, false},  // ALiBi, n_head not a power of two
        {32, 3, 2, 9, 1, 1, 1, H, H, true, 0.0f, 30.0f, false},  // logit softcap
        {16, 4, 4, 10, 4, 2, 1, H, F, true, 0.0f, 0.0f, false},  // mixed K/V types, batch broadcast
        {48, 6, 4, 21, 2, 1, 1, H, H, true, 0.0f, 0.0f, true},   // KV-cache views
        {24, 2, 3, 17, 3, 1, 1, F, F, true, 0.0f, 0.0f, true},
        // F16 path: keys in several 256-key tiles (the running max and sum
        // carried across them), early queries with whole tiles masked
        {32, 60, 2, 300, 1, 1, 1, H, H, true, 0.0f, 0.0f, false},
        {64, 2, 9, 600, 3, 1, 1, H, H, true, 0.0f, 0.0f, true},
    };
    for (const FaCase & c : cases) {
        fa_case(c);
    }
}

// The F16 path over long caches: key counts around the vector and block
// widths and past 4096 (split into segments at generation), grouped-query
// ratios 1-8, head sizes 16-128 (40 and 72: not a multiple of the AVX2
// accumulate's 16 columns), KV-cache views.
TEST(LaFlashAttn, LongCaches) {
    const lm_ggml_type H = LM_GGML_TYPE_F16;
    for (int64_t n_kv : {1, 31, 32, 33, 257}) {
        fa_case({64, 1, 9, n_kv, 3, 1, 1, H, H, true, 0.0f, 0.0f, true}); // SmolLM2's generation
    }
    fa_case({16, 1, 3, 4099, 1, 1, 1, H, H, true, 0.0f, 0.0f, true}); // small heads: the reference is O(D^2 n_kv)
    const FaCase cases[] = {
        {64, 9, 3, 300, 1, 1, 1, H, H, true, 0.0f, 0.0f, true},   // a prompt's rows over several tiles
        {128, 3, 2, 130, 2, 1, 1, H, H, true, 0.0f, 0.0f, false}, // g 1, head size 128
        {40, 5, 8, 33, 2, 1, 1, H, H, true, 0.0f, 0.0f, true},    // g 4
        {72, 3, 8, 97, 1, 1, 1, H, H, true, 0.0f, 0.0f, false},   // g 8
        {32, 7, 5, 64, 1, 2, 1, H, H, true, 0.0f, 0.0f, true},    // g 5, batch broadcast
        {16, 2, 6, 4097, 2, 1, 1, H, H, true, 0.0f, 0.0f, true},  // two rows over a long cache
        // generation split by row, every KV head at once: ALiBi and softcap
        // per query head, a batch over one cache, heads one after another
        {64, 1, 9, 700, 3, 1, 1, H, H, true, 4.0f, 0.0f, true},
        {64, 1, 6, 600, 3, 1, 1, H, H, true, 0.0f, 30.0f, true},
        {32, 1, 4, 700, 2, 2, 1, H, H, true, 0.0f, 0.0f, false},
    };
    for (const FaCase & c : cases) {
        fa_case(c);
    }
}

// Gemma 3's sliding window over a long cache: rows whose first visible key
// lies tiles past the start (whole hidden tiles skipped, the rest as before),
// a prompt and generation split into segments, most of them hidden.
TEST(LaFlashAttn, SlidingWindow) {
    const lm_ggml_type H = LM_GGML_TYPE_F16;
    fa_case({32, 6, 4, 1100, 1, 1, 1, H, H, true, 0.0f, 0.0f, false, 300});
    fa_case({16, 1, 3, 4099, 1, 1, 1, H, H, true, 0.0f, 0.0f, true, 512});
    fa_case({16, 3, 2, 700, 2, 1, 1, H, H, true, 0.0f, 30.0f, true, 256}); // softcap, window of one tile
}

// The mask scans that find a row's visible span (four F16 values at a time)
// against one-at-a-time loops: hidden runs of every length at every offset,
// visible keys between them, both mask types.
TEST(LaFlashAttn, MaskSpanScans) {
    namespace fa = lmggml::cpu::la::fa;
    constexpr int64_t n = 23;
    lm_ggml_tensor m16{}, m32{};
    m16.type = LM_GGML_TYPE_F16;
    m32.type = LM_GGML_TYPE_F32;
    for (int64_t lo = 0; lo <= n; ++lo) {
        for (int64_t hi = lo; hi <= n; ++hi) {
            for (int64_t hole = -1; hole < n; hole += 5) { // a visible key inside [lo, hi) too, or none
                uint16_t h[n];
                float f[n];
                for (int64_t j = 0; j < n; ++j) {
                    const bool hidden = (j < lo || j >= hi) && j != hole;
                    h[j] = hidden ? 0xFC00 : lm_ggml_fp32_to_fp16(0.0f);
                    f[j] = hidden ? -INFINITY : 0.0f;
                }
                int64_t last = n;
                while (last > 0 && f[last - 1] == -INFINITY) --last;
                for (int64_t from = 0; from <= n; from += 3) {
                    int64_t first = from;
                    while (first < last && f[first] == -INFINITY) ++first;
                    for (const lm_ggml_tensor * m : {&m16, &m32}) {
                        const char * row = m == &m16 ? (const char *) h : (const char *) f;
                        ASSERT_EQ(fa::visible_keys(m, row, n), last) << lo << " " << hi << " " << hole;
                        ASSERT_EQ(fa::first_visible_key(m, row, from, last), std::max(first, std::min(from, last)))
                            << lo << " " << hi << " " << hole << " from " << from;
                    }
                }
            }
        }
    }
}

// The prompt path (la_flash_attn_tiled.cpp): blocks of query rows against
// 128-key tiles on the Gemm, where the level has an F32/F16 Gemm. Blocks
// that end mid-prompt, tiles and Gemm panels cut short, head sizes not a
// multiple of the 32-column panel, rows whose keys start tiles late.
TEST(LaFlashAttn, PromptBlocksOnTheGemm) {
    const lm_ggml_type H = LM_GGML_TYPE_F16;
    const bool gemm = lmggml::cpu::arch::kernels().gemm[LM_GGML_TYPE_F32] != nullptr &&
                      lmggml::cpu::arch::kernels().gemm[LM_GGML_TYPE_F16] != nullptr;
    const FaCase cases[] = {
        {64, 20, 9, 140, 3, 1, 1, H, H, true, 0.0f, 0.0f, true},       // SmolLM2: 16 + 4 rows, 2 tiles
        {256, 13, 4, 70, 1, 1, 1, H, H, true, 0.0f, 0.0f, false},      // Gemma 3: head size 256, 12 + 1 rows
        {80, 17, 2, 129, 2, 1, 1, H, H, true, 0.0f, 0.0f, true},       // g 1, 80 = 2 panels + 16 columns
        {32, 40, 4, 420, 1, 1, 1, H, H, true, 0.0f, 0.0f, false, 150}, // sliding window: tiles skipped per block
        {48, 18, 4, 90, 2, 1, 1, H, H, true, 4.0f, 0.0f, false},       // ALiBi
        {40, 24, 2, 77, 1, 2, 1, H, H, true, 0.0f, 30.0f, true},       // softcap, batch broadcast
        {16, 33, 1, 40, 1, 1, 1, H, H, false, 0.0f, 0.0f, false},      // no mask
    };
    for (const FaCase & c : cases) {
        latest::Context ctx;
        lm_ggml_tensor * q = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, c.D, c.n_q, c.n_head, c.n_batch);
        lm_ggml_tensor * k = lm_ggml_new_tensor_4d(ctx, H, c.D, c.n_kv, c.n_head_kv, c.n_batch_kv);
        lm_ggml_tensor * dst = lm_ggml_flash_attn_ext(ctx, q, k, k, nullptr, 1.0f, 0.0f, 0.0f);
        EXPECT_EQ(lmggml::cpu::la::flash_attn_tiled_path(dst), gemm) << name_of(c);
        fa_case(c);
    }
}

TEST(LaFlashAttn, DecodedKeys) {
    const lm_ggml_type H = LM_GGML_TYPE_F16, F = LM_GGML_TYPE_F32;
    fa_case({32, 5, 4, 13, 2, 1, 1, H, F, true, 0.0f, 0.0f, false}, true);
    fa_case({16, 3, 2, 11, 2, 1, 1, LM_GGML_TYPE_BF16, F, true, 0.0f, 0.0f, true}, true);
}

TEST(LaFlashAttn, RefusesWhatItDoesNotImplement) {
    latest::Context ctx;
    lm_ggml_tensor * q = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 16, 2, 2);
    lm_ggml_tensor * k = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F16, 16, 8, 2);
    lm_ggml_tensor * v = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F16, 16, 8, 2);
    lm_ggml_tensor * dst = lm_ggml_flash_attn_ext(ctx, q, k, v, nullptr, 0.25f, 0.0f, 0.0f);
    EXPECT_TRUE(latest::supported(dst));
    dst->src[1] = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_I32, 16, 8, 2); // no dot, no decoder
    EXPECT_FALSE(latest::supported(dst));
    dst->src[1] = k;
    dst->src[0] = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F16, 16, 2, 2); // q must be F32
    EXPECT_FALSE(latest::supported(dst));
}

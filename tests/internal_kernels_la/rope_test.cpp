// ROPE (normal and NeoX, F32 and F16, partial rotation, freq factors, YaRN)
// against a double-precision reference that computes each angle directly as
// pos * base^(-2k/n_dims) / ff[k] (the kernel, like ggml, multiplies up in float).
#include "la_test_util.h"

#include <numbers>

using latest::get;

namespace {

constexpr double kRopeLimit = 1e-4;

struct RopeCase {
    lm_ggml_type type;
    int mode;
    int64_t ne0, n_head, n_tok, ne3;
    int n_dims;
    bool freq_factors;
    bool yarn;
    bool strided; // x is a view with gaps between rows
};

std::string name_of(const RopeCase & c) {
    return std::string(lm_ggml_type_name(c.type)) + (c.mode ? " neox" : " normal") + " ne0 " + std::to_string(c.ne0) +
           " n_dims " + std::to_string(c.n_dims) + (c.freq_factors ? " ff" : "") + (c.yarn ? " yarn" : "") +
           (c.strided ? " strided" : "");
}

struct YarnParams {
    int n_ctx_orig = 0;
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;
    float ext_factor = 0.0f;
    float attn_factor = 1.0f;
    float beta_fast = 32.0f;
    float beta_slow = 1.0f;
};

latest::Ref rope_ref(const lm_ggml_tensor * x, const lm_ggml_tensor * pos, const lm_ggml_tensor * ff,
                     const lm_ggml_tensor * dst, int n_dims, bool neox, const YarnParams & y) {
    auto corr = [&](double n_rot) {
        return n_dims * std::log(y.n_ctx_orig / (n_rot * 2 * std::numbers::pi)) / (2 * std::log((double) y.freq_base));
    };
    const double low = std::max(0.0, std::floor(corr(y.beta_fast)));
    const double high = std::min((double) n_dims - 1, std::ceil(corr(y.beta_slow)));

    return latest::make_ref(dst, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        if (i0 >= n_dims) {
            return get(x, i0, i1, i2, i3);
        }
        const int64_t half = n_dims / 2;
        const int64_t k = neox ? (i0 % half) : i0 / 2;
        const bool lead = neox ? i0 < half : i0 % 2 == 0; // first element of its pair
        const int64_t j0 = neox ? k : 2 * k;
        const int64_t j1 = neox ? k + half : 2 * k + 1;

        const double p = get(pos, i2);
        const double extrap = p * std::pow((double) y.freq_base, -2.0 * k / n_dims) / (ff ? get(ff, k) : 1.0);
        const double interp = y.freq_scale * extrap;
        double theta = interp;
        double mscale = y.attn_factor;
        if (y.ext_factor != 0.0f) {
            const double t = (k - low) / std::max(0.001, high - low);
            const double ramp = (1 - std::min(1.0, std::max(0.0, t))) * y.ext_factor;
            theta = interp * (1 - ramp) + extrap * ramp;
            mscale *= 1 + 0.1 * std::log(1.0 / y.freq_scale);
        }
        const double c = std::cos(theta) * mscale, s = std::sin(theta) * mscale;
        const double x0 = get(x, j0, i1, i2, i3), x1 = get(x, j1, i1, i2, i3);
        return lead ? x0 * c - x1 * s : x0 * s + x1 * c;
    });
}

void rope_case(const RopeCase & c) {
    latest::Context ctx;
    lmtest::Rng rng(lmtest::seed_from_name(name_of(c)));
    lm_ggml_tensor * x;
    if (c.strided) {
        lm_ggml_tensor * full = lm_ggml_new_tensor_4d(ctx, c.type, c.ne0 + 5, c.n_head * 2, c.n_tok, c.ne3);
        latest::fill(full, rng);
        x = lm_ggml_view_4d(ctx, full, c.ne0, c.n_head, c.n_tok, c.ne3, 2 * full->nb[1], full->nb[2], full->nb[3],
                            full->nb[0]);
    } else {
        x = lm_ggml_new_tensor_4d(ctx, c.type, c.ne0, c.n_head, c.n_tok, c.ne3);
        latest::fill(x, rng);
    }
    lm_ggml_tensor * pos = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, c.n_tok);
    for (int64_t i = 0; i < c.n_tok; ++i) {
        ((int32_t *) pos->data)[i] = (int32_t) rng.int_in(0, 100);
    }
    lm_ggml_tensor * ff = nullptr;
    if (c.freq_factors) {
        ff = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, c.n_dims / 2);
        latest::fill(ff, rng, 1.0, 8.0);
    }
    YarnParams y;
    if (c.yarn) {
        y.n_ctx_orig = 128;
        y.freq_scale = 0.25f;
        y.ext_factor = 1.0f;
        y.attn_factor = 0.9f;
        y.freq_base = 5000.0f;
    }
    lm_ggml_tensor * dst = lm_ggml_rope_ext(ctx, x, pos, ff, c.n_dims, c.mode, y.n_ctx_orig, y.freq_base, y.freq_scale,
                                            y.ext_factor, y.attn_factor, y.beta_fast, y.beta_slow);
    ASSERT_NE(dst, nullptr);
    latest::check(dst, rope_ref(x, pos, ff, dst, c.n_dims, c.mode != 0, y), kRopeLimit, name_of(c));
}

} // namespace

TEST(LaRope, ModesTypesAndScaling) {
    const int N = LM_GGML_ROPE_TYPE_NEOX;
    const RopeCase cases[] = {
        {LM_GGML_TYPE_F32, 0, 64, 3, 5, 1, 64, false, false, false},
        {LM_GGML_TYPE_F32, N, 64, 3, 5, 1, 64, false, false, false},
        {LM_GGML_TYPE_F32, 0, 40, 2, 7, 2, 24, true, false, false}, // partial rotation, freq factors, ne3 > 1
        {LM_GGML_TYPE_F32, N, 40, 2, 7, 1, 24, true, false, false},
        {LM_GGML_TYPE_F32, 0, 32, 4, 6, 1, 32, false, true, false}, // YaRN
        {LM_GGML_TYPE_F32, N, 34, 4, 6, 1, 30, true, true, false},
        {LM_GGML_TYPE_F16, 0, 18, 3, 4, 1, 18, false, false, false},
        {LM_GGML_TYPE_F16, N, 26, 3, 4, 1, 20, true, true, false},
        {LM_GGML_TYPE_F32, N, 16, 3, 4, 1, 16, false, false, true}, // rows of a fused projection
        {LM_GGML_TYPE_F16, 0, 16, 3, 4, 1, 8, false, false, true},
    };
    for (const RopeCase & c : cases) {
        rope_case(c);
    }
}

TEST(LaRope, InPlace) {
    latest::Context ctx;
    lmtest::Rng rng(61);
    lm_ggml_tensor * x = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 24, 3, 5);
    lm_ggml_tensor * pos = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 5);
    latest::fill(x, rng);
    for (int i = 0; i < 5; ++i) {
        ((int32_t *) pos->data)[i] = 3 * i + 1;
    }
    std::vector<uint8_t> saved((const uint8_t *) x->data, (const uint8_t *) x->data + lm_ggml_nbytes(x));
    const latest::Ref ref = rope_ref(x, pos, nullptr, x, 24, true, YarnParams{});
    lm_ggml_tensor * ip = lm_ggml_rope_ext_inplace(ctx, x, pos, nullptr, 24, LM_GGML_ROPE_TYPE_NEOX, 0, 10000.0f, 1.0f,
                                                   0.0f, 1.0f, 32.0f, 1.0f);
    ASSERT_EQ(ip->data, x->data);
    latest::check(ip, ref, kRopeLimit, "in place", [&] { memcpy(x->data, saved.data(), saved.size()); });
}

// The multimodal modes (computed and checked in tests/ops, cases_conv_misc.cpp)
// need sections, 4 positions per token and, for vision, n_dims == ne0/2.
TEST(LaRope, RefusesIncompleteMultimodalParams) {
    latest::Context ctx;
    lm_ggml_tensor * x = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 16, 2, 3);
    lm_ggml_tensor * pos = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 3);
    lm_ggml_tensor * dst = lm_ggml_rope_ext(ctx, x, pos, nullptr, 16, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    EXPECT_TRUE(latest::supported(dst));
    lm_ggml_set_op_params_i32(dst, 2, LM_GGML_ROPE_TYPE_MROPE); // no sections, one position per token
    EXPECT_FALSE(latest::supported(dst));
    lm_ggml_set_op_params_i32(dst, 11, 4);
    EXPECT_FALSE(latest::supported(dst)); // still one position per token
    dst->src[1] = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 12);
    EXPECT_TRUE(latest::supported(dst));
    lm_ggml_set_op_params_i32(dst, 2, LM_GGML_ROPE_TYPE_VISION); // n_dims 16 != ne0/2
    EXPECT_FALSE(latest::supported(dst));
    lm_ggml_set_op_params_i32(dst, 1, 8);
    EXPECT_TRUE(latest::supported(dst));
}

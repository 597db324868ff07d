// NORM, RMS_NORM, DIAG_MASK_INF/ZERO and SOFT_MAX (mask F32/F16, scale,
// ALiBi) against double-precision references, contiguous, strided and in place.
#include "la_test_util.h"

using latest::get;

namespace {

constexpr double kLimit = 1e-7;

latest::Ref norm_ref(const lm_ggml_tensor * x, const lm_ggml_tensor * dst, double eps, bool rms) {
    // row statistics, recomputed when the row changes (i0 runs fastest)
    int64_t row[3] = {-1, -1, -1};
    double mean = 0, inv_sd = 0;
    return latest::make_ref(dst, [&, rms](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        if (row[0] != i1 || row[1] != i2 || row[2] != i3) {
            const int64_t n = x->ne[0];
            double sum = 0, var = 0;
            for (int64_t i = 0; i < n; ++i) {
                sum += get(x, i, i1, i2, i3);
            }
            mean = rms ? 0.0 : sum / n;
            for (int64_t i = 0; i < n; ++i) {
                const double d = get(x, i, i1, i2, i3) - mean;
                var += d * d;
            }
            inv_sd = 1.0 / std::sqrt(var / n + eps);
            row[0] = i1, row[1] = i2, row[2] = i3;
        }
        return (get(x, i0, i1, i2, i3) - mean) * inv_sd;
    });
}

} // namespace

TEST(LaNorm, NormAndRmsNorm) {
    for (bool rms : {false, true}) {
        for (int64_t ne0 : {1, 33, 64, 4097}) {
            latest::Context ctx;
            lmtest::Rng rng(ne0 + rms);
            lm_ggml_tensor * x = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, ne0, 5, 2, 3);
            latest::fill(x, rng, -2.0, 3.0);
            const float eps = 1e-5f;
            lm_ggml_tensor * dst = rms ? lm_ggml_rms_norm(ctx, x, eps) : lm_ggml_norm(ctx, x, eps);
            latest::check(dst, norm_ref(x, dst, eps, rms), kLimit,
                          (rms ? "rms ne0 " : "norm ne0 ") + std::to_string(ne0));
        }
    }
}

// One row (generation): RMS_NORM's threads each scale a piece of it; in
// place it stays on one thread.
TEST(LaNorm, SingleRow) {
    for (bool rms : {false, true}) {
        for (int64_t ne0 : {64, 65, 576, 1000}) {
            latest::Context ctx;
            lmtest::Rng rng(ne0 + 7 * rms);
            lm_ggml_tensor * x = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, ne0);
            latest::fill(x, rng, -2.0, 3.0);
            lm_ggml_tensor * dst = rms ? lm_ggml_rms_norm(ctx, x, 1e-5f) : lm_ggml_norm(ctx, x, 1e-5f);
            latest::check(dst, norm_ref(x, dst, 1e-5, rms), kLimit, "single row ne0 " + std::to_string(ne0));
        }
    }
}

TEST(LaNorm, StridedRowsAndInPlace) {
    for (bool rms : {false, true}) {
        latest::Context ctx;
        lmtest::Rng rng(31);
        // every other row of a wider tensor
        lm_ggml_tensor * full = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 40, 12);
        latest::fill(full, rng);
        lm_ggml_tensor * x = lm_ggml_view_2d(ctx, full, 37, 6, 2 * full->nb[1], 4);
        lm_ggml_tensor * dst = rms ? lm_ggml_rms_norm(ctx, x, 1e-6f) : lm_ggml_norm(ctx, x, 1e-6f);
        latest::check(dst, norm_ref(x, dst, 1e-6, rms), kLimit, "strided");

        // in place: dst aliases x, so x is restored before every run
        lm_ggml_tensor * y = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 19, 4, 3);
        latest::fill(y, rng);
        std::vector<uint8_t> saved((const uint8_t *) y->data, (const uint8_t *) y->data + lm_ggml_nbytes(y));
        const latest::Ref ref = norm_ref(y, y, 1e-5, rms);
        lm_ggml_tensor * ip = rms ? lm_ggml_rms_norm_inplace(ctx, y, 1e-5f) : lm_ggml_norm_inplace(ctx, y, 1e-5f);
        ASSERT_EQ(ip->data, y->data);
        latest::check(ip, ref, kLimit, "in place", [&] { memcpy(y->data, saved.data(), saved.size()); });
    }
}

TEST(LaDiagMask, InfAndZeroCopyAndInPlace) {
    for (int n_past : {0, 2, 9}) {
        latest::Context ctx;
        lmtest::Rng rng(41 + n_past);
        lm_ggml_tensor * x = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 7, 5, 3);
        latest::fill(x, rng);
        const auto ref_of = [&](double value) {
            return latest::make_ref(x, [&, value](int64_t i, int64_t j, int64_t i2, int64_t i3) {
                return i > n_past + j ? value : get(x, i, j, i2, i3);
            });
        };
        lm_ggml_tensor * inf = lm_ggml_diag_mask_inf(ctx, x, n_past);
        latest::check(inf, ref_of(-INFINITY), 0.0, "inf, n_past " + std::to_string(n_past));

        // DIAG_MASK_ZERO has no public constructor: same layout, other op
        lm_ggml_tensor * zero = lm_ggml_diag_mask_inf(ctx, x, n_past);
        zero->op = LM_GGML_OP_DIAG_MASK_ZERO;
        latest::check(zero, ref_of(0.0), 0.0, "zero, n_past " + std::to_string(n_past));

        const latest::Ref ref = ref_of(-INFINITY);
        std::vector<uint8_t> saved((const uint8_t *) x->data, (const uint8_t *) x->data + lm_ggml_nbytes(x));
        lm_ggml_tensor * ip = lm_ggml_diag_mask_inf_inplace(ctx, x, n_past);
        latest::check(ip, ref, 0.0, "in place", [&] { memcpy(x->data, saved.data(), saved.size()); });
    }
}

// ---------------------------------------------------------------- SOFT_MAX
namespace {

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

latest::Ref soft_max_ref(const lm_ggml_tensor * x, const lm_ggml_tensor * mask, const lm_ggml_tensor * dst,
                         double scale, double max_bias) {
    return latest::make_ref(dst, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        const double slope = alibi_slope(max_bias, x->ne[2], i2);
        auto logit = [&](int64_t i) { return get(x, i, i1, i2, i3) * scale + (mask ? slope * get(mask, i, i1) : 0.0); };
        double mx = -INFINITY;
        for (int64_t i = 0; i < x->ne[0]; ++i) {
            mx = std::max(mx, logit(i));
        }
        double sum = 0;
        for (int64_t i = 0; i < x->ne[0]; ++i) {
            sum += std::exp(logit(i) - mx);
        }
        return std::exp(logit(i0) - mx) / sum;
    });
}

} // namespace

TEST(LaSoftMax, MaskScaleAndAlibi) {
    struct Case {
        lm_ggml_type mask_type; // LM_GGML_TYPE_COUNT: no mask
        int64_t ne0, ne1, n_head;
        float scale, max_bias;
    };
    const Case cases[] = {
        {LM_GGML_TYPE_COUNT, 17, 6, 4, 1.0f, 0.0f}, {LM_GGML_TYPE_COUNT, 64, 3, 2, 0.125f, 0.0f},
        {LM_GGML_TYPE_F32, 17, 6, 4, 0.3f, 0.0f},   {LM_GGML_TYPE_F16, 33, 5, 3, 0.7f, 0.0f},
        {LM_GGML_TYPE_F32, 16, 4, 4, 1.0f, 8.0f}, // ALiBi, n_head a power of two
        {LM_GGML_TYPE_F16, 9, 7, 6, 0.5f, 8.0f},  // ALiBi, n_head not a power of two
        {LM_GGML_TYPE_F32, 1, 3, 2, 1.0f, 0.0f},
    };
    for (const Case & c : cases) {
        const std::string what = "ne0 " + std::to_string(c.ne0) + " heads " + std::to_string(c.n_head) + " max_bias " +
                                 std::to_string(c.max_bias) +
                                 (c.mask_type == LM_GGML_TYPE_COUNT ? " no mask" : lm_ggml_type_name(c.mask_type));
        latest::Context ctx;
        lmtest::Rng rng(lmtest::seed_from_name(what));
        lm_ggml_tensor * x = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, c.ne0, c.ne1, c.n_head, 2);
        latest::fill(x, rng, -4.0, 4.0);
        lm_ggml_tensor * mask = nullptr;
        if (c.mask_type != LM_GGML_TYPE_COUNT) {
            // more rows than x has (padded), a causal pattern of -inf plus small biases
            mask = lm_ggml_new_tensor_2d(ctx, c.mask_type, c.ne0, c.ne1 + 3);
            for (int64_t j = 0; j < mask->ne[1]; ++j) {
                for (int64_t i = 0; i < c.ne0; ++i) {
                    const float v = i > j + c.ne0 / 2 ? -INFINITY : (float) (rng.int_in(-8, 8) / 8.0);
                    if (c.mask_type == LM_GGML_TYPE_F32) {
                        ((float *) mask->data)[j * c.ne0 + i] = v;
                    } else {
                        ((lm_ggml_fp16_t *) mask->data)[j * c.ne0 + i] = lm_ggml_fp32_to_fp16(v); // exact values
                    }
                }
            }
        }
        lm_ggml_tensor * dst = lm_ggml_soft_max_ext(ctx, x, mask, c.scale, c.max_bias);
        ASSERT_NE(dst, nullptr);
        latest::check(dst, soft_max_ref(x, mask, dst, c.scale, c.max_bias), kLimit, what);
    }
}

TEST(LaSoftMax, InPlace) {
    latest::Context ctx;
    lmtest::Rng rng(51);
    lm_ggml_tensor * x = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 23, 4, 2);
    latest::fill(x, rng, -3.0, 3.0);
    std::vector<uint8_t> saved((const uint8_t *) x->data, (const uint8_t *) x->data + lm_ggml_nbytes(x));
    const latest::Ref ref = soft_max_ref(x, nullptr, x, 1.0, 0.0);
    lm_ggml_tensor * ip = lm_ggml_soft_max_inplace(ctx, x);
    ASSERT_EQ(ip->data, x->data);
    latest::check(ip, ref, kLimit, "in place", [&] { memcpy(x->data, saved.data(), saved.size()); });
}

TEST(LaSoftMax, RefusesPerHeadMasks) {
    latest::Context ctx;
    lm_ggml_tensor * x = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 8, 4, 2);
    lm_ggml_tensor * mask = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 8, 4);
    lm_ggml_tensor * dst = lm_ggml_soft_max_ext(ctx, x, mask, 1.0f, 0.0f);
    EXPECT_TRUE(latest::supported(dst));
    dst->src[1] = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 8, 4, 2); // not broadcast the way the kernel reads it
    EXPECT_FALSE(latest::supported(dst));
    dst->src[1] = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_I32, 8, 4);
    EXPECT_FALSE(latest::supported(dst));
}

// The float primitives under every la_ kernel: fp16/bf16 widening and the
// row dot products, against test-side decoders and double sums.
#include "cpu/kernels/la_common.h"
#include "cpu/kernels/la_vec_dot.h"
#include "la_test_util.h"

using namespace lmggml::cpu::la;

TEST(LaPrimitives, Fp16WideningIsExactForAllBitPatterns) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const double want = latest::f16_decode((uint16_t) h);
        const float got = fp16_to_f32((lm_ggml_fp16_t) h);
        if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got)) << "bits " << h;
        } else {
            ASSERT_EQ((double) got, want) << "bits " << h;
            ASSERT_EQ(std::signbit(got), std::signbit(want)) << "bits " << h;
        }
    }
}

TEST(LaPrimitives, Bf16Widening) {
    for (uint32_t b = 0; b < 65536; b += 7) {
        const double want = latest::bf16_decode((uint16_t) b);
        const float got = bf16_to_f32((uint16_t) b);
        if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got));
        } else {
            ASSERT_EQ((double) got, want);
        }
    }
}

TEST(LaPrimitives, SplitCoversEveryItemOnce) {
    for (int64_t n : {0, 1, 5, 16, 17}) {
        for (int nth : {1, 2, 3, 8}) {
            int64_t next = 0;
            for (int ith = 0; ith < nth; ++ith) {
                const Range r = split(n, ith, nth);
                ASSERT_LE(r.begin, r.end);
                if (r.begin < r.end) {
                    ASSERT_EQ(r.begin, next);
                    next = r.end;
                }
            }
            ASSERT_EQ(next, n) << "n " << n << " nth " << nth;
        }
    }
}

// Lengths around the 16-lane body and its tail.
TEST(LaPrimitives, DotProductsMatchDoubleSums) {
    lmtest::Rng rng(7);
    for (int n : {0, 1, 15, 16, 17, 31, 33, 100, 257}) {
        std::vector<float> x(n), y(n);
        std::vector<uint16_t> xh(n), yh(n), xb(n), yb(n);
        double want32 = 0, want16 = 0, wantb = 0, norm = 0;
        for (int i = 0; i < n; ++i) {
            x[i] = (float) rng.uniform(-1, 1);
            y[i] = (float) rng.uniform(-1, 1);
            xh[i] = latest::random_f16(rng);
            yh[i] = latest::random_f16(rng);
            uint32_t bx, by;
            memcpy(&bx, &x[i], 4);
            memcpy(&by, &y[i], 4);
            xb[i] = (uint16_t) (bx >> 16);
            yb[i] = (uint16_t) (by >> 16);
            want32 += (double) x[i] * y[i];
            want16 += latest::f16_decode(xh[i]) * latest::f16_decode(yh[i]);
            wantb += latest::bf16_decode(xb[i]) * latest::bf16_decode(yb[i]);
            norm += std::fabs((double) x[i] * y[i]) + 4.0;
        }
        const double tol = 1e-6 * (norm + 1);
        EXPECT_NEAR(dot_f32(n, x.data(), y.data()), want32, tol) << n;
        EXPECT_NEAR(dot_f16(n, xh.data(), yh.data()), want16, tol) << n;
        EXPECT_NEAR(dot_bf16(n, xb.data(), yb.data()), wantb, tol) << n;

        // the same through the type table, as MUL_MAT calls them
        float s = -1;
        lm_cpu_get_vec_dot_traits(LM_GGML_TYPE_F16)->vec_dot(n, &s, 0, xh.data(), 0, yh.data(), 0, 1);
        EXPECT_NEAR(s, want16, tol) << n;
    }
}

TEST(LaPrimitives, PlansFollowTheTypeTraits) {
    EXPECT_EQ(plan_for(LM_GGML_TYPE_F16).vec_dot_type, LM_GGML_TYPE_F16);
    EXPECT_EQ(plan_for(LM_GGML_TYPE_BF16).vec_dot_type, LM_GGML_TYPE_BF16);
    EXPECT_EQ(plan_for(LM_GGML_TYPE_F32).vec_dot_type, LM_GGML_TYPE_F32);
    EXPECT_TRUE(plan_for(LM_GGML_TYPE_F32).ok);
    EXPECT_FALSE(plan_for(LM_GGML_TYPE_I32).ok); // no dot, no to_float
    EXPECT_FALSE(plan_for(LM_GGML_TYPE_COUNT).ok);
    // a block type without a fast dot falls back to decoding rows, if it can
    const lm_ggml_type_traits * q = lm_ggml_get_type_traits(LM_GGML_TYPE_Q8_0);
    const Plan p = plan_for(LM_GGML_TYPE_Q8_0);
    EXPECT_EQ(p.ok,
              q != nullptr && (q->to_float != nullptr || lm_cpu_get_vec_dot_traits(LM_GGML_TYPE_Q8_0) != nullptr));
}

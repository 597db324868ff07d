// Vector math (arch/kernels.h VecMath): every level, the scalar twin included,
// against double-precision exp, on lengths around the vector width, with
// inputs at the edges of float's exp range, -inf, and rows that end at an
// unreadable page (masked tails must not read past n).
#include "cpu/arch/ref.h"
#include "simd_test_util.h"

#include <limits>

namespace {

using namespace simdtest;

// n inputs in [lo, hi] with a few special values mixed in
std::vector<float> inputs(int64_t n, double lo, double hi, uint64_t seed) {
    lmtest::Rng rng(seed);
    std::vector<float> x((size_t) n);
    for (float & v : x) v = (float) rng.uniform(lo, hi);
    if (n > 3) {
        x[1] = 0.0f;
        x[(size_t) n - 2] = (float) lo;
    }
    return x;
}

// around 8 (AVX2) and 16 (AVX-512) floats per vector, and their multiples
const int64_t kLengths[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 48, 63, 64, 65, 100, 513};

TEST(SimdMath, ExpSumMatchesDoubleExp) {
    for (const arch::KernelSet * lv : all_levels()) {
        for (int64_t n : kLengths) {
            std::vector<float> x = inputs(n, -110.0, 10.0, (uint64_t) n);
            if (n > 5) x[3] = -std::numeric_limits<float>::infinity();
            const float shift = 1.5f;
            GuardedBytes in((size_t) n * sizeof(float)), out((size_t) n * sizeof(float));
            std::memcpy(in.data(), x.data(), (size_t) n * sizeof(float));
            auto * y = reinterpret_cast<float *>(out.data());
            const float sum = lv->math.exp_sum(n, reinterpret_cast<const float *>(in.data()), shift, y);
            double want_sum = 0.0;
            for (int64_t i = 0; i < n; ++i) {
                // the kernel's contract: x - shift rounded to float, then exp
                const double want = std::exp((double) (x[(size_t) i] - shift));
                want_sum += want;
                // a few ulp; results below float's normal range are allowed to flush to 0
                EXPECT_NEAR(y[i], want, want * 4e-7 + 1.2e-38) << lv->name << " n " << n << " x " << x[(size_t) i];
            }
            EXPECT_NEAR(sum, want_sum, want_sum * 1e-6) << lv->name << " n " << n;
        }
    }
}

TEST(SimdMath, ExpSumInPlaceAndAtTheTopOfTheRange) {
    for (const arch::KernelSet * lv : all_levels()) {
        // 88.7: exp(x) is finite but 2^round(x / ln2) = 2^128 is not
        std::vector<float> x = {88.0f, 80.0f, -87.0f, 0.5f, -0.5f, 1e-8f, -1e-8f, 40.0f, 44.3f,
                                20.0f, 3.0f,  7.0f,   0.0f, 1.0f,  2.0f,  4.0f,   8.0f,  88.7f};
        std::vector<float> y = x;
        lv->math.exp_sum((int64_t) y.size(), y.data(), 0.0f, y.data());
        for (size_t i = 0; i < x.size(); ++i) {
            const double want = std::exp((double) x[i]);
            EXPECT_NEAR(y[i], want, want * 4e-7) << lv->name << " x " << x[i];
        }
    }
}

TEST(SimdMath, SiluMatchesDouble) {
    for (const arch::KernelSet * lv : all_levels()) {
        for (int64_t n : kLengths) {
            const std::vector<float> x = inputs(n, -30.0, 30.0, 100 + (uint64_t) n);
            GuardedBytes in((size_t) n * sizeof(float)), out((size_t) n * sizeof(float));
            std::memcpy(in.data(), x.data(), (size_t) n * sizeof(float));
            auto * y = reinterpret_cast<float *>(out.data());
            lv->math.silu(n, reinterpret_cast<const float *>(in.data()), y);
            for (int64_t i = 0; i < n; ++i) {
                const double v = x[(size_t) i], want = v / (1.0 + std::exp(-v));
                EXPECT_NEAR(y[i], want, std::fabs(want) * 6e-7 + 1e-30) << lv->name << " n " << n << " x " << v;
            }
        }
        // in place over a vector and a tail: the same as out of place
        {
            std::vector<float> a = inputs(19, -30.0, 30.0, 7), b(a.size());
            lv->math.silu((int64_t) a.size(), a.data(), b.data());
            lv->math.silu((int64_t) a.size(), a.data(), a.data());
            for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << lv->name << " i " << i;
        }
        // in place, with the extremes: large negative inputs give -0 or a tiny negative, large positive x
        std::vector<float> z = {-100.0f, -88.0f, 88.0f, 100.0f};
        lv->math.silu((int64_t) z.size(), z.data(), z.data());
        EXPECT_NEAR(z[0], 0.0f, 1e-30f);
        EXPECT_NEAR(z[1], -88.0 * std::exp(-88.0), 1e-36);
        EXPECT_FLOAT_EQ(z[2], 88.0f);
        EXPECT_FLOAT_EQ(z[3], 100.0f);
    }
}

// ggml's tanh approximation, in its sigmoid form: x / (1 + exp(-2u)) equals
// x (1 + tanh(u)) / 2 without the cancellation of 1 + tanh(u) for negative x
double gelu_ref(double x) {
    const double u = 0.79788456080286535587989211986876 * x * (1.0 + 0.044715 * x * x);
    return x / (1.0 + std::exp(-2.0 * u));
}

TEST(SimdMath, GeluMatchesDouble) {
    for (const arch::KernelSet * lv : all_levels()) {
        // the scalar twin goes through 1 + tanh(u), which cancels for negative x:
        // there the error is absolute (a few float ulp of x); levels without a
        // vector GELU (ARM's) inherit the twin
        const bool scalar = lv->math.gelu == scalar_level().math.gelu;
        for (int64_t n : kLengths) {
            const std::vector<float> x = inputs(n, -12.0, 12.0, 400 + (uint64_t) n);
            GuardedBytes in((size_t) n * sizeof(float)), out((size_t) n * sizeof(float));
            std::memcpy(in.data(), x.data(), (size_t) n * sizeof(float));
            auto * y = reinterpret_cast<float *>(out.data());
            lv->math.gelu(n, reinterpret_cast<const float *>(in.data()), y);
            for (int64_t i = 0; i < n; ++i) {
                const double v = x[(size_t) i], want = gelu_ref(v);
                // exp's error grows with its argument |2u| (relative error of u times |2u|)
                const double u2 = std::fabs(1.5957691216057308 * v * (1.0 + 0.044715 * v * v));
                const double tol = std::fabs(want) * (1e-6 + u2 * 3e-7) + (scalar ? std::fabs(v) * 3e-7 : 1e-37);
                EXPECT_NEAR(y[i], want, tol) << lv->name << " n " << n << " x " << v;
            }
        }
        // in place over a vector and a tail: the same as out of place
        {
            std::vector<float> a = inputs(19, -6.0, 6.0, 9), b(a.size());
            lv->math.gelu((int64_t) a.size(), a.data(), b.data());
            lv->math.gelu((int64_t) a.size(), a.data(), a.data());
            for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << lv->name << " i " << i;
        }
        // the extremes: large negative inputs give (-)0 or a tiny negative, large positive x itself
        std::vector<float> z = {-1000.0f, -30.0f, 30.0f, 1000.0f, 1e30f, -1e30f, 0.0f, -20000.0f};
        lv->math.gelu((int64_t) z.size(), z.data(), z.data());
        EXPECT_NEAR(z[0], 0.0f, 1e-30f) << lv->name;
        EXPECT_NEAR(z[1], 0.0f, 1e-30f) << lv->name;
        EXPECT_FLOAT_EQ(z[2], 30.0f) << lv->name;
        EXPECT_FLOAT_EQ(z[3], 1000.0f) << lv->name;
        EXPECT_FLOAT_EQ(z[4], 1e30f) << lv->name;
        EXPECT_NEAR(z[5], 0.0f, 1e-30f) << lv->name;
        EXPECT_EQ(z[6], 0.0f) << lv->name;
        EXPECT_NEAR(z[7], 0.0f, 1e-30f) << lv->name;
        std::vector<float> nan = {std::numeric_limits<float>::quiet_NaN()};
        lv->math.gelu(1, nan.data(), nan.data());
        EXPECT_TRUE(std::isnan(nan[0])) << lv->name;
        lv->math.gelu(0, nullptr, nullptr); // n == 0 touches nothing
    }
}

TEST(SimdMath, ScaleMaskMaxAndScaleMatchDouble) {
    for (const arch::KernelSet * lv : all_levels()) {
        for (int64_t n : kLengths) {
            const std::vector<float> x = inputs(n, -8.0, 8.0, 200 + (uint64_t) n);
            std::vector<float> m32 = inputs(n, -2.0, 2.0, 300 + (uint64_t) n);
            m32[(size_t) n - 1] = -std::numeric_limits<float>::infinity(); // a causal mask's -inf
            std::vector<uint16_t> m16((size_t) n);
            for (size_t i = 0; i < m16.size(); ++i) m16[i] = lm_ggml_fp32_to_fp16(m32[i]);
            for (int mode = 0; mode < 3; ++mode) { // no mask, F32, F16
                GuardedBytes in((size_t) n * sizeof(float)), out((size_t) n * sizeof(float));
                std::memcpy(in.data(), x.data(), (size_t) n * sizeof(float));
                auto * y = reinterpret_cast<float *>(out.data());
                const float scale = 0.125f, slope = 0.75f;
                const float max = lv->math.scale_mask_max(n, reinterpret_cast<const float *>(in.data()), scale,
                                                          mode == 1 ? m32.data() : nullptr,
                                                          mode == 2 ? m16.data() : nullptr, slope, y);
                double want_max = -INFINITY;
                for (int64_t i = 0; i < n; ++i) {
                    double m = mode == 1 ? m32[(size_t) i] : mode == 2 ? lm_ggml_fp16_to_fp32(m16[(size_t) i]) : 0.0;
                    const double want = (double) x[(size_t) i] * scale + slope * m;
                    want_max = std::max(want_max, want);
                    if (std::isinf(want))
                        EXPECT_EQ(y[i], (float) want) << lv->name;
                    else
                        EXPECT_NEAR(y[i], want, 1e-6 * (1 + std::fabs(want)))
                            << lv->name << " n " << n << " mode " << mode;
                }
                if (std::isinf(want_max)) {
                    EXPECT_EQ(max, (float) want_max) << lv->name; // n == 1 with the masked element
                } else {
                    EXPECT_NEAR(max, want_max, 1e-6 * (1 + std::fabs(want_max))) << lv->name << " n " << n;
                }
                lv->math.scale(n, y, 2.0f);
                for (int64_t i = 0; i < n; ++i) {
                    double m = mode == 1 ? m32[(size_t) i] : mode == 2 ? lm_ggml_fp16_to_fp32(m16[(size_t) i]) : 0.0;
                    const double want = 2.0 * ((double) x[(size_t) i] * scale + slope * m);
                    if (!std::isinf(want)) {
                        EXPECT_NEAR(y[i], want, 2e-6 * (1 + std::fabs(want))) << lv->name;
                    }
                }
            }
        }
        EXPECT_EQ(lv->math.scale_mask_max(0, nullptr, 1.0f, nullptr, nullptr, 1.0f, nullptr),
                  -std::numeric_limits<float>::infinity());
        // n == 0 touches nothing
        EXPECT_EQ(lv->math.exp_sum(0, nullptr, 0.0f, nullptr), 0.0f) << lv->name;
        lv->math.silu(0, nullptr, nullptr);
        lv->math.scale(0, nullptr, 2.0f);
    }
}

} // namespace

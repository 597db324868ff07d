// dequantize(quantize(x)) per type: sizes around the block size, NMSE bounds
// against the input, per-value error bounds derived from the format, and the
// sizes quantize_chunk must refuse.
#include "quant/quants.h"
#include "quant_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

struct Case {
    lm_ggml_type type;
    double max_nmse; // bound on sum (x - x')^2 / sum x^2 for quant_test_util's input
};

// Bounds sit 1.5x above the largest error measured on quant_test_util's input
// without outliers (bits per value: q8 8.5, q6_K 6.6, q5 5.5-6, q4 4.5-5, q3_K 3.4,
// q2_K 2.6); as a cross-check, q4_0's step amax/8 with amax ~2.5 sigma predicts
// NMSE (0.31)^2/12 = 0.008, what is measured.
const Case kCases[] = {
    {LM_GGML_TYPE_Q4_0, 1.25e-2}, {LM_GGML_TYPE_Q4_1, 1.22e-2}, {LM_GGML_TYPE_Q5_0, 2.8e-3},
    {LM_GGML_TYPE_Q5_1, 2.5e-3},  {LM_GGML_TYPE_Q8_0, 4.3e-5},  {LM_GGML_TYPE_Q8_1, 4.3e-5},
    {LM_GGML_TYPE_Q2_K, 1.4e-1},  {LM_GGML_TYPE_Q3_K, 3.3e-2},  {LM_GGML_TYPE_Q4_K, 8.0e-3},
    {LM_GGML_TYPE_Q5_K, 2.1e-3},  {LM_GGML_TYPE_Q6_K, 4.5e-4},  {LM_GGML_TYPE_Q8_K, 6.7e-5},
};

class QuantRoundTrip : public ::testing::TestWithParam<Case> {};

std::vector<float> roundtrip(lm_ggml_type type, const std::vector<float> & x, int64_t nrows, int64_t n_per_row) {
    const size_t row = lm_ggml_row_size(type, n_per_row);
    std::vector<uint8_t> q(row * nrows + 64, 0xEE); // 64 sentinel bytes after the last row
    EXPECT_EQ(lm_ggml_quantize_chunk(type, x.data(), q.data(), 0, nrows, n_per_row, nullptr), row * nrows);
    for (size_t i = row * nrows; i < q.size(); ++i) EXPECT_EQ(q[i], 0xEE) << "write past the end";
    std::vector<float> y(x.size(), NAN);
    lm_ggml_get_type_traits(type)->to_float(q.data(), y.data(), nrows * n_per_row);
    return y;
}

TEST_P(QuantRoundTrip, ErrorWithinBoundAtSizesAroundTheBlock) {
    const Case & c = GetParam();
    const int64_t blck = lm_ggml_blck_size(c.type);
    ASSERT_NE(lm_ggml_get_type_traits(c.type)->to_float, nullptr);
    for (int64_t nblocks : {1, 2, 3, 8}) {
        for (int64_t nrows : {1, 3}) {
            const int64_t n_per_row = nblocks * blck;
            // shift the seed so the zero groups of make_input land in different places
            std::vector<float> x = qtest::make_input((size_t) (n_per_row * nrows), 100 + (uint32_t) nblocks, false);
            // single-block sizes may be entirely zero groups; make sure there is signal
            for (size_t i = 0; i < x.size(); i += 5) x[i] += 0.25f;
            const std::vector<float> y = roundtrip(c.type, x, nrows, n_per_row);
            EXPECT_LT(qtest::nmse(y.data(), x.data(), x.size()), c.max_nmse)
                << lm_ggml_type_name(c.type) << " blocks " << nblocks << " rows " << nrows;
        }
    }
}

TEST_P(QuantRoundTrip, RefusesRowsThatAreNotWholeBlocks) {
    const Case & c = GetParam();
    const int64_t blck = lm_ggml_blck_size(c.type);
    std::vector<float> x((size_t) (3 * blck), 1.0f);
    std::vector<uint8_t> q(lm_ggml_row_size(c.type, 3 * blck) + 64, 0);
    for (int64_t n_per_row : {blck - 1, blck + 1, 2 * blck + 16}) {
        EXPECT_EQ(lm_ggml_quantize_chunk(c.type, x.data(), q.data(), 0, 1, n_per_row, nullptr), 0u)
            << lm_ggml_type_name(c.type) << " n_per_row " << n_per_row;
    }
}

TEST_P(QuantRoundTrip, ConstantBlocksAreNearlyExact) {
    // a block of one repeated value: every format represents it within fp16 precision, as
    // long as the K-quants' super-block scale (about value/4096 for q6_K) stays a normal fp16
    const Case & c = GetParam();
    const int64_t blck = lm_ggml_blck_size(c.type);
    for (float v : {0.75f, -3.0f, 0.3f}) {
        std::vector<float> x((size_t) blck, v);
        const std::vector<float> y = roundtrip(c.type, x, 1, blck);
        for (int64_t i = 0; i < blck; ++i) {
            EXPECT_NEAR(y[i], v, std::fabs(v) * 4e-3) << lm_ggml_type_name(c.type) << " value " << v << " at " << i;
        }
    }
}

std::string name(const ::testing::TestParamInfo<Case> & info) { return lm_ggml_type_name(info.param.type); }

INSTANTIATE_TEST_SUITE_P(AllBlockTypes, QuantRoundTrip, ::testing::ValuesIn(kCases), name);

// Q8_0 per value: |x - q*d16| <= |x/d - q|*d + |q|*|d - d16| <= d/2 + 127*d*2^-11 < 0.57 d, d = amax/127.
TEST(QuantRoundTripBounds, Q8_0PerValueError) {
    const std::vector<float> x = qtest::make_input(32 * 64, 9);
    const std::vector<float> y = roundtrip(LM_GGML_TYPE_Q8_0, x, 1, (int64_t) x.size());
    for (size_t b = 0; b < x.size() / 32; ++b) {
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[32 * b + j]));
        const double d = amax / 127.0;
        for (int j = 0; j < 32; ++j) ASSERT_LE(std::fabs(x[32 * b + j] - y[32 * b + j]), 0.57 * d + 1e-30) << b;
    }
}

// Q4_0 per value: levels -8..7 times d = max/-8; only the side opposite the extreme can clip
// (by one level), so |x - x'| <= |d| + 8 |d - d16| <= |d| (1 + 2^-8).
TEST(QuantRoundTripBounds, Q4_0PerValueError) {
    const std::vector<float> x = qtest::make_input(32 * 64, 11);
    const std::vector<float> y = roundtrip(LM_GGML_TYPE_Q4_0, x, 1, (int64_t) x.size());
    for (size_t b = 0; b < x.size() / 32; ++b) {
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[32 * b + j]));
        const double d = amax / 8.0;
        for (int j = 0; j < 32; ++j)
            ASSERT_LE(std::fabs(x[32 * b + j] - y[32 * b + j]), d * (1 + 1.0 / 256) + 1e-30) << b;
    }
}

} // namespace

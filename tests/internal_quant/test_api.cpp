// Public entry points: quantize_chunk's row offsets, bad arguments (logged,
// 0 / false, never an abort), validate_row_data, requires_imatrix, traits.
#include "quant/quants.h"
#include "quant_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace {

// Captures error lines while alive.
struct LogCapture {
    std::vector<std::string> errors;
    static void cb(lm_ggml_log_level level, const char * text, void * ud) {
        if (level == LM_GGML_LOG_LEVEL_ERROR) static_cast<LogCapture *>(ud)->errors.emplace_back(text);
    }
    LogCapture() { lm_ggml_log_set(cb, this); }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
    bool mentions(const char * s) const {
        for (const auto & e : errors) {
            if (e.find(s) != std::string::npos) return true;
        }
        return false;
    }
};

const lm_ggml_type kBlockTypes[] = {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                                    LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q8_1, LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K,
                                    LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_Q8_K};

TEST(QuantApi, ChunkWithStartWritesOnlyItsRows) {
    const int64_t n_per_row = 512, nrows = 6;
    const std::vector<float> x = qtest::make_input((size_t) (n_per_row * nrows), 3);
    const std::vector<float> w = qtest::make_weights((size_t) n_per_row, 4);
    for (lm_ggml_type t : kBlockTypes) {
        for (const float * imatrix : {(const float *) nullptr, w.data()}) {
            const size_t row = lm_ggml_row_size(t, n_per_row);
            std::vector<uint8_t> whole(row * nrows), parts(row * nrows, 0xCD);
            ASSERT_EQ(lm_ggml_quantize_chunk(t, x.data(), whole.data(), 0, nrows, n_per_row, imatrix), row * nrows);
            // rows 2..4 only: rows 0, 1 and 5 keep the sentinel
            ASSERT_EQ(lm_ggml_quantize_chunk(t, x.data(), parts.data(), 2 * n_per_row, 3, n_per_row, imatrix), row * 3);
            for (size_t i = 0; i < row * 2; ++i) ASSERT_EQ(parts[i], 0xCD) << lm_ggml_type_name(t);
            for (size_t i = row * 5; i < row * 6; ++i) ASSERT_EQ(parts[i], 0xCD) << lm_ggml_type_name(t);
            EXPECT_EQ(std::memcmp(parts.data() + 2 * row, whole.data() + 2 * row, 3 * row), 0) << lm_ggml_type_name(t);
            // and the remaining rows complete it
            lm_ggml_quantize_chunk(t, x.data(), parts.data(), 0, 2, n_per_row, imatrix);
            lm_ggml_quantize_chunk(t, x.data(), parts.data(), 5 * n_per_row, 1, n_per_row, imatrix);
            EXPECT_EQ(parts, whole) << lm_ggml_type_name(t);
        }
    }
}

TEST(QuantApi, ChunkFloatTypes) {
    const std::vector<float> x = {1.0f, -2.5f, 65504.0f, 1e-8f, 3.0f, 0.1f};
    std::vector<float> f32(6, 0.0f);
    EXPECT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_F32, x.data(), f32.data(), 3, 1, 3, nullptr), 12u);
    EXPECT_EQ(f32[0], 0.0f); // before start: untouched
    EXPECT_EQ(f32[3], 1e-8f);
    std::vector<uint16_t> f16(6, 0);
    EXPECT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_F16, x.data(), f16.data(), 0, 2, 3, nullptr), 12u);
    EXPECT_EQ(f16[0], 0x3C00); // 1.0
    EXPECT_EQ(f16[1], 0xC100); // -2.5 = -1.25 * 2^1
    EXPECT_EQ(f16[2], 0x7BFF); // largest finite fp16
    EXPECT_EQ(f16[3], 0x0000); // 1e-8 is below half the smallest subnormal (2^-25)
}

TEST(QuantApi, BadArgumentsReturnZeroAndLog) {
    std::vector<float> x(1024, 1.0f);
    std::vector<uint8_t> q(4096);
    {
        LogCapture log;
        EXPECT_EQ(lm_ggml_quantize_chunk((lm_ggml_type) 100, x.data(), q.data(), 0, 1, 32, nullptr), 0u);
        EXPECT_EQ(lm_ggml_quantize_chunk((lm_ggml_type) -1, x.data(), q.data(), 0, 1, 32, nullptr), 0u);
        EXPECT_EQ(log.errors.size(), 2u);
        EXPECT_TRUE(log.mentions("invalid type"));
    }
    {
        LogCapture log; // removed type numbers and formats not implemented here
        EXPECT_EQ(lm_ggml_quantize_chunk((lm_ggml_type) 4, x.data(), q.data(), 0, 1, 32, nullptr), 0u);
        EXPECT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_I16, x.data(), q.data(), 0, 1, 32, nullptr), 0u);
        EXPECT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_I32, x.data(), q.data(), 0, 1, 32, nullptr), 0u);
        EXPECT_EQ(log.errors.size(), 3u);
        EXPECT_TRUE(log.mentions("not supported"));
    }
    {
        LogCapture log;
        EXPECT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_Q4_K, x.data(), q.data(), 0, 1, 255, nullptr), 0u);
        EXPECT_TRUE(log.mentions("n_per_row"));
        EXPECT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_Q4_0, x.data(), q.data(), 16, 1, 32, nullptr), 0u);
        EXPECT_TRUE(log.mentions("start"));
        EXPECT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_Q4_0, x.data(), q.data(), 0, -1, 32, nullptr), 0u);
        EXPECT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_Q4_0, x.data(), q.data(), 0, 1, 0, nullptr), 0u);
        EXPECT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_Q4_0, nullptr, q.data(), 0, 1, 32, nullptr), 0u);
        EXPECT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_Q4_0, x.data(), nullptr, 0, 1, 32, nullptr), 0u);
        EXPECT_EQ(log.errors.size(), 6u);
        for (const auto & e : log.errors) EXPECT_EQ(e.rfind("lm_ggml_quantize_chunk: ", 0), 0u) << e;
    }
    // zero rows is valid and writes nothing
    EXPECT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_Q4_0, x.data(), q.data(), 0, 0, 32, nullptr), 0u);
}

TEST(QuantApi, RequiresImatrixAndInitFree) {
    EXPECT_TRUE(lm_ggml_quantize_requires_imatrix(LM_GGML_TYPE_IQ2_XXS));
    EXPECT_TRUE(lm_ggml_quantize_requires_imatrix(LM_GGML_TYPE_IQ2_XS));
    EXPECT_TRUE(lm_ggml_quantize_requires_imatrix(LM_GGML_TYPE_IQ1_S));
    for (lm_ggml_type t : kBlockTypes) EXPECT_FALSE(lm_ggml_quantize_requires_imatrix(t));
    lm_ggml_quantize_init(LM_GGML_TYPE_Q4_K); // no tables to build: must be harmless, repeatedly
    lm_ggml_quantize_init(LM_GGML_TYPE_Q4_K);
    lm_ggml_quantize_free();
    lm_ggml_quantize_free();
    LogCapture log;
    std::vector<float> x(256, 1.0f);
    std::vector<uint8_t> q(1024);
    EXPECT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_IQ2_XXS, x.data(), q.data(), 0, 1, 256, nullptr), 0u);
    EXPECT_EQ(log.errors.size(), 1u);
}

TEST(QuantApi, TraitsHaveConversionsForEveryBlockType) {
    for (lm_ggml_type t : kBlockTypes) {
        const lm_ggml_type_traits * tr = lm_ggml_get_type_traits(t);
        ASSERT_NE(tr, nullptr);
        EXPECT_TRUE(tr->is_quantized) << lm_ggml_type_name(t);
        EXPECT_NE(tr->to_float, nullptr) << lm_ggml_type_name(t);
        EXPECT_NE(tr->from_float_ref, nullptr) << lm_ggml_type_name(t);
        const lm_quant_type_fns * f = lm_quant_get_fns(t);
        ASSERT_NE(f, nullptr);
        EXPECT_EQ(f->blck_size, tr->blck_size) << lm_ggml_type_name(t);
        EXPECT_EQ(f->type_size, tr->type_size) << lm_ggml_type_name(t);
    }
    EXPECT_EQ(lm_quant_get_fns(LM_GGML_TYPE_F32), nullptr);
    EXPECT_EQ(lm_quant_get_fns(LM_GGML_TYPE_I32), nullptr);
}

// ---------------------------------------------------------------- validate_row_data
std::vector<uint8_t> quantized(lm_ggml_type t, int64_t nblocks) {
    const int64_t n = nblocks * lm_ggml_blck_size(t);
    const std::vector<float> x = qtest::make_input((size_t) n, 5);
    std::vector<uint8_t> q(lm_ggml_row_size(t, n));
    lm_ggml_quantize_chunk(t, x.data(), q.data(), 0, 1, n, nullptr);
    return q;
}

void put_u16(std::vector<uint8_t> & b, size_t at, uint16_t v) {
    b[at] = (uint8_t) v;
    b[at + 1] = (uint8_t) (v >> 8);
}

TEST(QuantValidate, AcceptsGoodData) {
    for (lm_ggml_type t : kBlockTypes) {
        const auto q = quantized(t, 3);
        EXPECT_TRUE(lm_ggml_validate_row_data(t, q.data(), q.size())) << lm_ggml_type_name(t);
    }
    const std::vector<float> f = {1.0f, -0.0f, 3e38f};
    EXPECT_TRUE(lm_ggml_validate_row_data(LM_GGML_TYPE_F32, f.data(), sizeof(float) * f.size()));
    const int32_t ints[] = {-1, 0x7fc00000}; // integers are never NaN, even with NaN's bits
    EXPECT_TRUE(lm_ggml_validate_row_data(LM_GGML_TYPE_I32, ints, sizeof(ints)));
    EXPECT_TRUE(lm_ggml_validate_row_data(LM_GGML_TYPE_Q4_0, nullptr, 0));
}

TEST(QuantValidate, CatchesNanAndInfScales) {
    struct Field {
        lm_ggml_type type;
        size_t offset; // of an fp16 scale inside the block
    };
    // the scale fields, by the block layouts of ggml-common.h
    const Field fields[] = {
        {LM_GGML_TYPE_Q4_0, 0},  {LM_GGML_TYPE_Q4_1, 0},   {LM_GGML_TYPE_Q4_1, 2}, {LM_GGML_TYPE_Q5_0, 0},
        {LM_GGML_TYPE_Q5_1, 2},  {LM_GGML_TYPE_Q8_0, 0},   {LM_GGML_TYPE_Q8_1, 2}, {LM_GGML_TYPE_Q2_K, 80},
        {LM_GGML_TYPE_Q2_K, 82}, {LM_GGML_TYPE_Q3_K, 108}, {LM_GGML_TYPE_Q4_K, 0}, {LM_GGML_TYPE_Q4_K, 2},
        {LM_GGML_TYPE_Q5_K, 2},  {LM_GGML_TYPE_Q6_K, 208},
    };
    for (const Field & f : fields) {
        for (uint16_t bad : {(uint16_t) 0x7e00, (uint16_t) 0xfc00, (uint16_t) 0x7c01}) { // NaN, -Inf, sNaN
            auto q = quantized(f.type, 3);
            put_u16(q, lm_ggml_type_size(f.type) * 2 + f.offset, bad); // in the last block
            LogCapture log;
            EXPECT_FALSE(lm_ggml_validate_row_data(f.type, q.data(), q.size()))
                << lm_ggml_type_name(f.type) << " offset " << f.offset << " value " << bad;
            EXPECT_EQ(log.errors.size(), 1u);
            EXPECT_TRUE(log.mentions("block 2")) << (log.errors.empty() ? "" : log.errors[0]);
        }
    }
    // q8_K keeps an f32 scale first
    auto q = quantized(LM_GGML_TYPE_Q8_K, 2);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(q.data() + 292, &nan, 4);
    LogCapture log;
    EXPECT_FALSE(lm_ggml_validate_row_data(LM_GGML_TYPE_Q8_K, q.data(), q.size()));
}

TEST(QuantValidate, CatchesNanAndInfValues) {
    LogCapture log;
    std::vector<float> f(37, 1.0f);
    f[36] = std::numeric_limits<float>::infinity();
    EXPECT_FALSE(lm_ggml_validate_row_data(LM_GGML_TYPE_F32, f.data(), f.size() * 4));
    f[36] = 0.0f;
    f[5] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_FALSE(lm_ggml_validate_row_data(LM_GGML_TYPE_F32, f.data(), f.size() * 4));
    const uint16_t h[] = {0x3c00, 0x7c00};
    EXPECT_FALSE(lm_ggml_validate_row_data(LM_GGML_TYPE_F16, h, sizeof(h)));
    const uint16_t bf[] = {0x3f80, 0x7f81};
    EXPECT_FALSE(lm_ggml_validate_row_data(LM_GGML_TYPE_BF16, bf, sizeof(bf)));
    const uint16_t bf_ok[] = {0x3f80, 0xff7f}; // -max finite
    EXPECT_TRUE(lm_ggml_validate_row_data(LM_GGML_TYPE_BF16, bf_ok, sizeof(bf_ok)));
    const double d[] = {1.0, -std::numeric_limits<double>::infinity()};
    EXPECT_FALSE(lm_ggml_validate_row_data(LM_GGML_TYPE_F64, d, sizeof(d)));
    EXPECT_EQ(log.errors.size(), 5u);
}

TEST(QuantValidate, BadArguments) {
    LogCapture log;
    const auto q = quantized(LM_GGML_TYPE_Q4_0, 2);
    EXPECT_FALSE(lm_ggml_validate_row_data(LM_GGML_TYPE_Q4_0, q.data(), q.size() - 1)); // not whole blocks
    EXPECT_FALSE(lm_ggml_validate_row_data((lm_ggml_type) 77, q.data(), q.size()));
    EXPECT_FALSE(lm_ggml_validate_row_data((lm_ggml_type) 5, q.data(), q.size())); // removed Q4_3
    EXPECT_FALSE(lm_ggml_validate_row_data(LM_GGML_TYPE_Q4_0, nullptr, 18));
    EXPECT_EQ(log.errors.size(), 4u);
}

} // namespace

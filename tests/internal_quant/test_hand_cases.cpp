// Exact bytes for small blocks whose encoding is derived by hand in the
// comments (scale 1.0 is fp16 0x3C00, stored little endian as 00 3c).
#include "quant/quants.h"
#include "quant_test_util.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

std::vector<uint8_t> quantize(lm_ggml_type type, const std::vector<float> & x) {
    std::vector<uint8_t> out(lm_ggml_row_size(type, (int64_t) x.size()), 0xAA);
    const size_t n = lm_ggml_quantize_chunk(type, x.data(), out.data(), 0, 1, (int64_t) x.size(), nullptr);
    EXPECT_EQ(n, out.size());
    return out;
}

std::vector<uint8_t> bytes(std::initializer_list<int> v) {
    std::vector<uint8_t> b;
    for (int x : v) b.push_back((uint8_t) x);
    return b;
}

TEST(QuantHand, Q8_0RoundsHalfAwayFromZero) {
    // amax 127 -> d = 127/127 = 1 (fp16 0x3C00); q = roundf(x / 1)
    std::vector<float> x(32, 0.0f);
    const float v[] = {127.0f, -127.0f, 2.5f, -2.5f, 0.49f, -0.5f, 1.5f, 100.4f};
    for (int i = 0; i < 8; ++i) x[i] = v[i];
    std::vector<uint8_t> want = bytes({0x00, 0x3c, 0x7f, 0x81, 0x03, 0xfd, 0x00, 0xff, 0x02, 0x64});
    want.resize(34, 0x00);
    EXPECT_EQ(quantize(LM_GGML_TYPE_Q8_0, x), want);
}

TEST(QuantHand, Q8_1StoresScaledSum) {
    // same levels as above: sum = 127 - 127 + 3 - 3 + 0 - 1 + 2 + 100 = 101, s = 101 * 1.0
    // 101 in fp16: 1.578125 * 2^6 -> exponent 21 (0x5400), mantissa 0.578125*1024 = 592 (0x250): 0x5650
    std::vector<float> x(32, 0.0f);
    const float v[] = {127.0f, -127.0f, 2.5f, -2.5f, 0.49f, -0.5f, 1.5f, 100.4f};
    for (int i = 0; i < 8; ++i) x[i] = v[i];
    std::vector<uint8_t> want = bytes({0x00, 0x3c, 0x50, 0x56, 0x7f, 0x81, 0x03, 0xfd, 0x00, 0xff, 0x02, 0x64});
    want.resize(36, 0x00);
    EXPECT_EQ(quantize(LM_GGML_TYPE_Q8_1, x), want);
}

TEST(QuantHand, Q4_0NegativeExtreme) {
    // the value of largest magnitude is -8, so d = -8 / -8 = 1 and q = min(15, trunc(x + 8.5));
    // value j in the low nibble of byte j, value j+16 (all 0 -> q 8) in the high nibble
    std::vector<float> x(32, 0.0f);
    const float v[] = {-8.0f, 7.0f, 0.0f, 0.4f, 0.5f, -0.5f, 3.2f, 7.4f};
    for (int i = 0; i < 8; ++i) x[i] = v[i];
    // q: 0, 15, 8, 8, 9, 8, 11, 15, then 8s
    std::vector<uint8_t> want = bytes({0x00, 0x3c, 0x80, 0x8f, 0x88, 0x88, 0x89, 0x88, 0x8b, 0x8f});
    want.resize(18, 0x88);
    EXPECT_EQ(quantize(LM_GGML_TYPE_Q4_0, x), want);
}

TEST(QuantHand, Q4_0PositiveExtremeFlipsScaleSign) {
    // the extreme is +8: d = 8 / -8 = -1 (fp16 0xBC00), q = trunc(-x + 8.5)
    std::vector<float> x(32, 0.0f);
    x[0] = 8.0f;  // q 0  (dequantizes to (0 - 8) * -1 = 8)
    x[1] = -7.0f; // q 15
    x[16] = 2.0f; // q trunc(6.5) = 6, high nibble of byte 0
    std::vector<uint8_t> want = bytes({0x00, 0xbc, 0x60, 0x8f});
    want.resize(18, 0x88);
    EXPECT_EQ(quantize(LM_GGML_TYPE_Q4_0, x), want);
}

TEST(QuantHand, Q4_1UsesMinAndRange) {
    // values 0..15 twice: min 0, d = 15/15 = 1, q = trunc(x + 0.5) = x; byte j = j | j << 4
    std::vector<float> x(32);
    for (int j = 0; j < 32; ++j) x[j] = (float) (j % 16);
    std::vector<uint8_t> want = bytes({0x00, 0x3c, 0x00, 0x00});
    for (int j = 0; j < 16; ++j) want.push_back((uint8_t) (j | (j << 4)));
    EXPECT_EQ(quantize(LM_GGML_TYPE_Q4_1, x), want);
}

TEST(QuantHand, Q5_0SplitsTheFifthBit) {
    // x_j = j - 16: the first value (-16) is the extreme, d = -16 / -16 = 1, q_j = trunc(j + 0.5) = j;
    // values 16..31 have the 5th bit: qh = 0xFFFF0000 (little endian 00 00 ff ff); qs[j] = j | j << 4
    std::vector<float> x(32);
    for (int j = 0; j < 32; ++j) x[j] = (float) (j - 16);
    std::vector<uint8_t> want = bytes({0x00, 0x3c, 0x00, 0x00, 0xff, 0xff});
    for (int j = 0; j < 16; ++j) want.push_back((uint8_t) (j | (j << 4)));
    EXPECT_EQ(quantize(LM_GGML_TYPE_Q5_0, x), want);
}

TEST(QuantHand, Q5_1FullRange) {
    // values 0..31: min 0, d = 31/31 = 1, q_j = j; m = 0
    std::vector<float> x(32);
    for (int j = 0; j < 32; ++j) x[j] = (float) j;
    std::vector<uint8_t> want = bytes({0x00, 0x3c, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff});
    for (int j = 0; j < 16; ++j) want.push_back((uint8_t) (j | (j << 4)));
    EXPECT_EQ(quantize(LM_GGML_TYPE_Q5_1, x), want);
}

TEST(QuantHand, ZeroBlocksAreAllZeroBytes) {
    // every format maps an all-zero block to all-zero bytes (scale 0, levels at their zero point
    // packed as 0 only where the zero point is level 0: q4_1/q5_1/K-quants; q4_0/q5_0 store 8/16)
    for (lm_ggml_type t :
         {LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K,
          LM_GGML_TYPE_Q8_K, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K}) {
        const int64_t n = lm_ggml_blck_size(t);
        const std::vector<float> x((size_t) n, 0.0f);
        const std::vector<uint8_t> q = quantize(t, x);
        EXPECT_EQ(q, std::vector<uint8_t>(q.size(), 0)) << lm_ggml_type_name(t);
    }
    // q4_0: d = max / -8 = 0 / -8 = -0 (fp16 0x8000, as ggml and the gguf package write it),
    // every level 8 -> nibbles 0x88
    std::vector<uint8_t> want(18, 0x88);
    want[0] = 0x00;
    want[1] = 0x80;
    EXPECT_EQ(quantize(LM_GGML_TYPE_Q4_0, std::vector<float>(32, 0.0f)), want);
    // q5_0: d = -0 as well; level 16 -> low nibbles 0, every 5th bit set
    std::vector<uint8_t> want5(22, 0x00);
    want5[1] = 0x80;
    for (int i = 2; i < 6; ++i) want5[i] = 0xff;
    EXPECT_EQ(quantize(LM_GGML_TYPE_Q5_0, std::vector<float>(32, 0.0f)), want5);
}

TEST(QuantHand, Bf16RoundsToNearestEven) {
    // 1 + 2^-8 is halfway between bf16 1.0 (0x3F80) and 1 + 2^-7 (0x3F81): ties to even -> 0x3F80;
    // 1 + 3*2^-8 is halfway between 0x3F81 and 0x3F82 -> 0x3F82
    const std::vector<float> x = {1.0f + 1.0f / 256, 1.0f + 3.0f / 256, -2.0f, 0.0f};
    EXPECT_EQ(quantize(LM_GGML_TYPE_BF16, x), bytes({0x80, 0x3f, 0x82, 0x3f, 0x00, 0xc0, 0x00, 0x00}));
}

} // namespace

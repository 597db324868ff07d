// Type traits and fp16/bf16 conversions against independent references.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "ggml.h"

namespace {

TEST(Types, TraitsMatchTheGgufFormat) {
    struct Row {
        lm_ggml_type t;
        const char * name;
        int64_t blck;
        size_t size;
        bool q;
    };
    const Row rows[] = {
        {LM_GGML_TYPE_F32, "f32", 1, 4, false},      {LM_GGML_TYPE_F16, "f16", 1, 2, false},
        {LM_GGML_TYPE_Q4_0, "q4_0", 32, 18, true},   {LM_GGML_TYPE_Q4_1, "q4_1", 32, 20, true},
        {LM_GGML_TYPE_Q5_0, "q5_0", 32, 22, true},   {LM_GGML_TYPE_Q5_1, "q5_1", 32, 24, true},
        {LM_GGML_TYPE_Q8_0, "q8_0", 32, 34, true},   {LM_GGML_TYPE_Q8_1, "q8_1", 32, 36, true},
        {LM_GGML_TYPE_Q2_K, "q2_K", 256, 84, true},  {LM_GGML_TYPE_Q3_K, "q3_K", 256, 110, true},
        {LM_GGML_TYPE_Q4_K, "q4_K", 256, 144, true}, {LM_GGML_TYPE_Q5_K, "q5_K", 256, 176, true},
        {LM_GGML_TYPE_Q6_K, "q6_K", 256, 210, true}, {LM_GGML_TYPE_Q8_K, "q8_K", 256, 292, true},
        {LM_GGML_TYPE_I8, "i8", 1, 1, false},        {LM_GGML_TYPE_I16, "i16", 1, 2, false},
        {LM_GGML_TYPE_I32, "i32", 1, 4, false},      {LM_GGML_TYPE_BF16, "bf16", 1, 2, false},
    };
    for (const Row & r : rows) {
        SCOPED_TRACE(r.name);
        EXPECT_EQ(lm_ggml_blck_size(r.t), r.blck);
        EXPECT_EQ(lm_ggml_type_size(r.t), r.size);
        EXPECT_STREQ(lm_ggml_type_name(r.t), r.name);
        EXPECT_EQ(lm_ggml_is_quantized(r.t), r.q);
        const lm_ggml_type_traits * tr = lm_ggml_get_type_traits(r.t);
        ASSERT_NE(tr, nullptr);
        EXPECT_EQ(tr->blck_size, r.blck);
        EXPECT_EQ(tr->type_size, r.size);
    }
    EXPECT_EQ(lm_ggml_blck_size((lm_ggml_type) 4), 0);
    EXPECT_STREQ(lm_ggml_type_name((lm_ggml_type) 99), "NONE");
}

TEST(Types, OpNamesFollowTheEnum) {
    EXPECT_STREQ(lm_ggml_op_name(LM_GGML_OP_MUL_MAT), "MUL_MAT");
    EXPECT_STREQ(lm_ggml_op_name(LM_GGML_OP_FLASH_ATTN_EXT), "FLASH_ATTN_EXT");
    EXPECT_STREQ(lm_ggml_op_name(LM_GGML_OP_OPT_STEP_ADAMW), "OPT_STEP_ADAMW");
    EXPECT_STREQ(lm_ggml_unary_op_name(LM_GGML_UNARY_OP_EXP), "EXP");
    EXPECT_EQ((int) LM_GGML_OP_MUL_MAT, 26);
    EXPECT_EQ((int) LM_GGML_OP_UNARY, 71);
}

// fp16 reference: decode by the IEEE-754 binary16 definition in double.
double half_to_double(uint16_t h) {
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0)
        v = std::ldexp((double) m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = std::ldexp(1.0 + m / 1024.0, e - 15);
    return s ? -v : v;
}

TEST(Types, Fp16DecodesEveryBitPattern) {
    for (uint32_t h = 0; h < 65536; h++) {
        const double ref = half_to_double((uint16_t) h);
        const float got = lm_ggml_fp16_to_fp32((lm_ggml_fp16_t) h);
        if (std::isnan(ref)) {
            EXPECT_TRUE(std::isnan(got)) << h;
        } else {
            ASSERT_EQ((double) got, ref) << h;
        }
    }
}

TEST(Types, Fp16EncodesToTheNearestEven) {
    // every half value round-trips, and midpoints go to the even neighbour
    for (uint32_t h = 0; h < 0x7c00; h++) {
        const float f = lm_ggml_fp16_to_fp32((lm_ggml_fp16_t) h);
        ASSERT_EQ(lm_ggml_fp32_to_fp16(f), h) << h;
        ASSERT_EQ(lm_ggml_fp32_to_fp16(-f), h | 0x8000u) << h;
        if (h + 1 < 0x7c00) {
            const double mid = (half_to_double((uint16_t) h) + half_to_double((uint16_t) (h + 1))) / 2;
            const uint16_t even = (h & 1) ? (uint16_t) (h + 1) : (uint16_t) h;
            ASSERT_EQ(lm_ggml_fp32_to_fp16((float) mid), even) << h;
        }
    }
    EXPECT_EQ(lm_ggml_fp32_to_fp16(65520.0f), 0x7c00); // rounds to infinity
    EXPECT_EQ(lm_ggml_fp32_to_fp16(65519.0f), 0x7bff);
    EXPECT_EQ(lm_ggml_fp32_to_fp16(1e-10f), 0);
    EXPECT_TRUE(std::isnan(lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16(NAN))));
}

TEST(Types, Bf16RoundsToNearestEven) {
    auto bits = [](float f) {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        return u;
    };
    auto from = [](uint32_t u) {
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    };
    EXPECT_EQ(lm_ggml_fp32_to_bf16(1.0f).bits, 0x3f80);
    EXPECT_EQ(lm_ggml_fp32_to_bf16(from(0x3f808000)).bits, 0x3f80); // tie -> even
    EXPECT_EQ(lm_ggml_fp32_to_bf16(from(0x3f818000)).bits, 0x3f82); // tie -> even (up)
    EXPECT_EQ(lm_ggml_fp32_to_bf16(from(0x3f808001)).bits, 0x3f81);
    EXPECT_EQ(bits(lm_ggml_bf16_to_fp32(lm_ggml_bf16_t{0xc0a0})), 0xc0a00000u);
    EXPECT_TRUE(std::isnan(lm_ggml_bf16_to_fp32(lm_ggml_fp32_to_bf16(NAN))));
    float row[3] = {1.5f, -2.25f, 3.0f};
    lm_ggml_bf16_t out[3];
    float back[3];
    lm_ggml_fp32_to_bf16_row(row, out, 3);
    lm_ggml_bf16_to_fp32_row(out, back, 3);
    for (int i = 0; i < 3; i++) EXPECT_EQ(back[i], row[i]);
}

} // namespace

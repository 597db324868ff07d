// Checks of the conformance machinery itself: half-precision encoders,
// dequantizers, the comparison and the guard regions must be able to fail.
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "lmtest_compare.h"
#include "lmtest_fp.h"
#include "lmtest_guard.h"
#include "lmtest_quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace {

TEST(OpHelpers, F16EncodingRoundsToNearestEven) {
    EXPECT_EQ(lmtest::f16_bits(1.0), 0x3C00);
    EXPECT_EQ(lmtest::f16_bits(-2.0), 0xC000);
    EXPECT_EQ(lmtest::f16_bits(65504.0), 0x7BFF);
    EXPECT_EQ(lmtest::f16_bits(65520.0), 0x7C00);                    // halfway to 2^16 rounds to inf
    EXPECT_EQ(lmtest::f16_bits(std::ldexp(1.0, -24)), 0x0001);       // smallest subnormal
    EXPECT_EQ(lmtest::f16_bits(std::ldexp(1.0, -25)), 0x0000);       // tie to even (zero)
    EXPECT_EQ(lmtest::f16_bits(1.0 + std::ldexp(1.0, -11)), 0x3C00); // tie to even
    EXPECT_EQ(lmtest::f16_bits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
    EXPECT_EQ(lmtest::f16_bits(std::ldexp(1.0, -14) * (1 - std::ldexp(1.0, -12))), 0x0400); // rounds up to min normal
    EXPECT_TRUE(std::isnan(lmtest::f16_value(lmtest::f16_bits(NAN))));
    EXPECT_EQ(lmtest::f16_value(0x3555), 0.333251953125);
    EXPECT_EQ(lmtest::f16_value(0x8001), -std::ldexp(1.0, -24));
}

TEST(OpHelpers, BF16EncodingRoundsToNearestEven) {
    EXPECT_EQ(lmtest::bf16_bits(1.0), 0x3F80);
    EXPECT_EQ(lmtest::bf16_bits(1.0 + std::ldexp(1.0, -8)), 0x3F80); // tie to even
    EXPECT_EQ(lmtest::bf16_bits(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);
    EXPECT_EQ(lmtest::bf16_bits(-3.0e38 * 10), 0xFF80); // -inf
    EXPECT_EQ(lmtest::bf16_value(0x4049), 3.140625);
}

TEST(OpHelpers, Q4_0DequantizesNibblesLowFirst) {
    uint8_t block[18] = {};
    const uint16_t d = lmtest::f16_bits(0.5);
    std::memcpy(block, &d, 2);
    block[2] = 0x9F; // element 0: 0xF - 8 = 7, element 16: 0x9 - 8 = 1
    double y[32];
    lmtest::quant_dequantize(LM_GGML_TYPE_Q4_0, block, 32, y);
    EXPECT_EQ(y[0], 3.5);
    EXPECT_EQ(y[16], 0.5);
    EXPECT_EQ(y[1], -4.0); // nibble 0 -> -8 * 0.5
}

TEST(OpHelpers, CompareDetectsErrors) {
    lmtest::HTensor e(lmtest::Shape{4, 1, 1, 1});
    e.v = {1, 2, 3, -INFINITY};
    lmtest::HTensor a = e;
    EXPECT_TRUE(lmtest::compare_nmse(e, a, 1e-7).ok);
    EXPECT_TRUE(lmtest::compare_exact(e, a).ok);
    a.v[1] = 2.01; // NMSE 1e-4 / 14
    EXPECT_FALSE(lmtest::compare_nmse(e, a, 1e-7).ok);
    EXPECT_FALSE(lmtest::compare_exact(e, a).ok);
    a = e;
    a.v[3] = 0; // a finite value where -inf is expected
    EXPECT_FALSE(lmtest::compare_nmse(e, a, 1.0).ok);
    a = e;
    a.v[0] = NAN;
    EXPECT_FALSE(lmtest::compare_nmse(e, a, 1.0).ok);
    e.dont_care = {1, 0, 0, 0};
    EXPECT_TRUE(lmtest::compare_nmse(e, a, 1e-7).ok);
}

TEST(OpHelpers, GuardsDetectWritesNextToATensor) {
    lm_ggml_init_params ip = {};
    ip.mem_size = lm_ggml_tensor_overhead() * 8;
    ip.no_alloc = true;
    lm_ggml_context * ctx = lm_ggml_init(ip);
    ASSERT_NE(ctx, nullptr);
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 10);
    lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 3, 3);
    lm_ggml_set_name(a, "a");
    lm_ggml_set_name(b, "b");
    std::string err;
    auto gb = lmtest::GuardedBuffer::place(ctx, lm_ggml_backend_cpu_buffer_type(), &err);
    ASSERT_TRUE(gb) << err;
    EXPECT_EQ(gb->guard_count(), 3u);
    std::vector<float> data(10, 1.0f);
    lm_ggml_backend_tensor_set(a, data.data(), 0, 40);
    EXPECT_TRUE(gb->damaged_guards().empty());

    // one float past the end of a, written through a second tensor over the same memory
    lm_ggml_context * ctx2 = lm_ggml_init(ip);
    lm_ggml_tensor * over = lm_ggml_new_tensor_1d(ctx2, LM_GGML_TYPE_F32, 11);
    lm_ggml_backend_tensor_alloc(gb->buffer(), over, a->data);
    std::vector<float> more(11, 2.0f);
    lm_ggml_backend_tensor_set(over, more.data(), 0, 44);
    const auto damaged = gb->damaged_guards();
    ASSERT_EQ(damaged.size(), 1u);
    EXPECT_NE(damaged[0].find("'a'"), std::string::npos) << damaged[0];
    gb->write_guards();
    EXPECT_TRUE(gb->damaged_guards().empty());
    lm_ggml_free(ctx2);
    gb.reset();
    lm_ggml_free(ctx);
}

} // namespace

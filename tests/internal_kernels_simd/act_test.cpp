// Activation conversions: the scalar twins round as ggml's x86 code (hand
// cases), and every vector level writes exactly the twin's bytes.
#include "cpu/arch/ref.h"
#include "quant/quants.h"
#include "simd_test_util.h"

namespace {

using namespace simdtest;
namespace ref = lmggml::cpu::arch::ref;

float f16(lm_half h) { return lm_ggml_fp16_to_fp32(h); }

TEST(SimdActivation, TwinRoundsHalfToEvenWith127OverAmax) {
    // amax 127: x * 127 / amax = x exactly, so the halves are exact ties
    std::vector<float> x(32, 0.0f);
    const float vals[] = {127.0f, 2.5f, 3.5f, -2.5f, -3.5f, 0.5f, 1.5f, -0.5f, 126.5f};
    const int want[] = {127, 2, 4, -2, -4, 0, 2, 0, 126};
    std::copy(std::begin(vals), std::end(vals), x.begin());
    lm_block_q8_1 b;
    ref::quantize_row_q8_1(x.data(), &b, 32);
    int sum = 0;
    for (int j = 0; j < 9; ++j) {
        EXPECT_EQ(b.qs[j], want[j]) << "value " << vals[j];
        sum += want[j];
    }
    for (int j = 9; j < 32; ++j) EXPECT_EQ(b.qs[j], 0);
    EXPECT_EQ(f16(b.d), 1.0f);
    EXPECT_EQ(f16(b.s), (float) sum);

    // amax 254: 127 / amax = 0.5 exactly; 5 -> 2.5 -> 2 (the reference quantizer of
    // src/quant, half away from zero, gives 3)
    std::fill(x.begin(), x.end(), 0.0f);
    x[0] = -254.0f;
    x[1] = 5.0f;
    x[2] = -7.0f;
    lm_block_q8_0 c;
    ref::quantize_row_q8_0(x.data(), &c, 32);
    EXPECT_EQ(c.qs[0], -127);
    EXPECT_EQ(c.qs[1], 2);
    EXPECT_EQ(c.qs[2], -4);
    EXPECT_EQ(f16(c.d), lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16(2.0f)));

    // an all-zero block: d = 0, levels 0
    std::fill(x.begin(), x.end(), 0.0f);
    ref::quantize_row_q8_0(x.data(), &c, 32);
    EXPECT_EQ(f16(c.d), 0.0f);
    for (int8_t q : c.qs) EXPECT_EQ(q, 0);
}

// Every level's converter for `type` gives the scalar level's bytes.
void expect_same_bytes(lm_ggml_type type, int64_t k, uint64_t seed) {
    const std::vector<float> x = activations((size_t) k, seed);
    const size_t rs = lm_ggml_row_size(type, k);
    std::vector<uint8_t> want(rs, 0xEE);
    scalar_level().from_float[type](x.data(), want.data(), k);
    for (const arch::KernelSet * lv : vector_levels()) {
        std::vector<uint8_t> got(rs, 0xEE);
        lv->from_float[type](x.data(), got.data(), k);
        EXPECT_EQ(got, want) << lv->name << " " << lm_ggml_type_name(type) << " k " << k;
    }
}

TEST(SimdActivation, LevelsMatchTwinBytes) {
    if (vector_levels().empty()) GTEST_SKIP() << "no vector level on this CPU";
    for (int64_t k : {32, 64, 96, 160, 256, 1024, 4096}) {
        expect_same_bytes(LM_GGML_TYPE_Q8_0, k, 1000 + k);
        expect_same_bytes(LM_GGML_TYPE_Q8_1, k, 2000 + k);
    }
    for (int64_t k : {256, 512, 2048}) expect_same_bytes(LM_GGML_TYPE_Q8_K, k, 3000 + k);
    for (int64_t k : {1, 7, 8, 9, 15, 16, 17, 33, 100}) expect_same_bytes(LM_GGML_TYPE_F16, k, 4000 + k);
}

TEST(SimdActivation, Q8KMatchesReferenceIncludingTiesOfTheMaximum) {
    // q8_K follows src/quant's reference exactly: the first value of largest
    // magnitude (here -2 before +2) sets the sign of the scale
    std::vector<float> x(512);
    lmtest::Rng rng(77);
    for (float & v : x) v = (float) rng.uniform(-1.0, 1.0);
    x[10] = -2.0f;
    x[20] = 2.0f;
    std::fill(x.begin() + 256, x.end(), 0.0f); // second block all zero
    lm_block_q8_K want[2], got[2];
    lm_quant_quantize_row_q8_K_ref(x.data(), want, 512);
    EXPECT_EQ(want[0].d, 1.0f / 63.5f); // iscale = -127 / -2
    EXPECT_EQ(want[0].qs[10], -127);
    EXPECT_EQ(want[0].qs[20], 127);
    for (const arch::KernelSet * lv : vector_levels()) {
        std::memset(got, 0xEE, sizeof(got));
        lv->from_float[LM_GGML_TYPE_Q8_K](x.data(), got, 512);
        EXPECT_EQ(std::memcmp(got, want, sizeof(got)), 0) << lv->name;
    }
}

} // namespace

// ggml-format row dots of every vector level against the scalar twin (and
// the twin against a double dot of the decoded rows), at lengths around the
// vector width and the block size. Weight rows end at an unreadable page.
#include "simd_test_util.h"

namespace {

using namespace simdtest;

lm_ggml_type vec_dot_type_of(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_F32: return LM_GGML_TYPE_F32;
        case LM_GGML_TYPE_F16: return LM_GGML_TYPE_F16;
        case LM_GGML_TYPE_BF16: return LM_GGML_TYPE_BF16;
        case LM_GGML_TYPE_Q4_1:
        case LM_GGML_TYPE_Q5_1: return LM_GGML_TYPE_Q8_1;
        case LM_GGML_TYPE_Q4_0:
        case LM_GGML_TYPE_Q5_0:
        case LM_GGML_TYPE_Q8_0: return LM_GGML_TYPE_Q8_0;
        default: return LM_GGML_TYPE_Q8_K;
    }
}

// The activation row in vec_dot_type (through the scalar converter) and decoded to double.
struct ActRow {
    std::vector<uint8_t> bytes;
    std::vector<double> decoded;
};

ActRow make_act(lm_ggml_type vt, int64_t n, uint64_t seed) {
    const std::vector<float> x = activations((size_t) n, seed);
    ActRow a;
    a.bytes.resize(lm_ggml_row_size(vt, n));
    std::vector<float> dec((size_t) n);
    if (vt == LM_GGML_TYPE_F32) {
        std::memcpy(a.bytes.data(), x.data(), a.bytes.size());
        dec = x;
    } else {
        scalar_level().from_float[vt](x.data(), a.bytes.data(), n);
        lm_ggml_get_type_traits(vt)->to_float(a.bytes.data(), dec.data(), n);
    }
    a.decoded.assign(dec.begin(), dec.end());
    return a;
}

void check_type(lm_ggml_type t, const std::vector<int64_t> & lengths) {
    const lm_ggml_type vt = vec_dot_type_of(t);
    for (int64_t n : lengths) {
        SCOPED_TRACE(std::string(lm_ggml_type_name(t)) + " n " + std::to_string(n));
        const WeightRows w = make_weights(t, n, 3, 0, lmtest::seed_from_name(lm_ggml_type_name(t)) + n);
        const ActRow a = make_act(vt, n, 99 + n);
        for (int64_t r = 0; r < w.m; ++r) {
            double exact = 0, mag = 0;
            for (int64_t i = 0; i < n; ++i) {
                exact += w.decoded[r][i] * a.decoded[i];
                mag += std::fabs(w.decoded[r][i] * a.decoded[i]);
            }
            // q8_1's s = F16(d * sum q) stands in for the exact block sum in the minimum term
            double slack = 0;
            if (vt == LM_GGML_TYPE_Q8_1) {
                for (int64_t b = 0; b < n / 32; ++b) {
                    double bs = 0;
                    for (int i = 0; i < 32; ++i) bs += std::fabs(a.decoded[b * 32 + i]);
                    slack += 8.0 * bs / 1024.0; // |m| <= 8 for these weights, relative F16 step 2^-10
                }
            }
            float twin = NAN;
            scalar_level().vec_dot[t]((int) n, &twin, 0, w.row(r), 0, a.bytes.data(), 0, 1);
            EXPECT_NEAR(twin, exact, 1e-5 * mag + slack + 1e-30) << "scalar twin, row " << r;
            for (const arch::KernelSet * lv : vector_levels()) {
                float got = NAN;
                lv->vec_dot[t]((int) n, &got, 0, w.row(r), 0, a.bytes.data(), 0, 1);
                EXPECT_NEAR(got, twin, 1e-5 * mag + 1e-30) << lv->name << " row " << r;
            }
        }
    }
}

TEST(SimdVecDot, Floats) {
    if (vector_levels().empty()) GTEST_SKIP() << "no vector level on this CPU";
    const std::vector<int64_t> n = {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 576, 1000};
    check_type(LM_GGML_TYPE_F32, n);
    check_type(LM_GGML_TYPE_F16, n);
    check_type(LM_GGML_TYPE_BF16, n);
}

TEST(SimdVecDot, BlockTypes) {
    if (vector_levels().empty()) GTEST_SKIP() << "no vector level on this CPU";
    const std::vector<int64_t> n = {32, 64, 96, 128, 160, 224, 256, 288, 576, 1536};
    for (lm_ggml_type t :
         {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q8_0}) {
        check_type(t, n);
    }
}

TEST(SimdVecDot, KQuants) {
    if (vector_levels().empty()) GTEST_SKIP() << "no vector level on this CPU";
    for (lm_ggml_type t :
         {LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K}) {
        check_type(t, {256, 512, 768, 2048});
    }
}

} // namespace

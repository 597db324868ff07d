// CPU dot products of quantized weight rows with quantized activations:
// (1) the integer kernel equals the double dot of both dequantized rows up to
// float accumulation error; (2) against the exact F32 activations the results
// stay within SPEC's 5e-4 NMSE for quantized MUL_MAT.
#include "cpu/kernels/la_vec_dot.h"
#include "cpu/kernels/q_dot.h"
#include "quant/quants.h"
#include "quant_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace {

const lm_ggml_type kWeightTypes[] = {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                                     LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K,
                                     LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K};

class QuantDot : public ::testing::TestWithParam<lm_ggml_type> {};

TEST_P(QuantDot, PairsAsGgml) {
    const lm_ggml_type t = GetParam();
    const lm_cpu_qtype_ops * ops = lm_cpu_get_qtype_ops(t);
    ASSERT_NE(ops, nullptr);
    const lm_ggml_type want = (t == LM_GGML_TYPE_Q4_1 || t == LM_GGML_TYPE_Q5_1) ? LM_GGML_TYPE_Q8_1
                              : (t == LM_GGML_TYPE_Q4_0 || t == LM_GGML_TYPE_Q5_0 || t == LM_GGML_TYPE_Q8_0)
                                  ? LM_GGML_TYPE_Q8_0
                                  : LM_GGML_TYPE_Q8_K;
    EXPECT_EQ(ops->vec_dot_type, want);
    const lm_cpu_vec_dot_traits * tr = lm_cpu_get_vec_dot_traits(t); // the la_ kernels' lookup
    ASSERT_NE(tr, nullptr);
    EXPECT_EQ(tr->vec_dot_type, want);
    EXPECT_NE(tr->from_float, nullptr);
}

TEST_P(QuantDot, MatchesDequantizedDotAndF32Reference) {
    const lm_ggml_type t = GetParam();
    const lm_cpu_qtype_ops * ops = lm_cpu_get_qtype_ops(t);
    const lm_cpu_qtype_ops * act = lm_cpu_get_qtype_ops(ops->vec_dot_type);
    ASSERT_NE(act, nullptr);
    const lm_cpu_vec_dot_traits * tr = lm_cpu_get_vec_dot_traits(t);

    for (int n : {256, 1024}) {
        const int nx = 12, ny = 5;
        // weights with outliers (they stress the weight formats), activations without (one
        // outlier per 37 values makes q8_K's single scale per 256 the dominant error)
        const std::vector<float> x = qtest::make_input((size_t) (n * nx), 21 + n);
        std::vector<float> y = qtest::make_input((size_t) (n * ny), 77 + n, false);
        for (float & v : y) v *= 0.5f; // different scale than the weights

        const size_t rx = lm_ggml_row_size(t, n), ry = lm_ggml_row_size(ops->vec_dot_type, n);
        std::vector<uint8_t> qx(rx * nx), qy(ry * ny);
        for (int i = 0; i < nx; ++i) ops->from_float(x.data() + i * n, qx.data() + i * rx, n);
        for (int j = 0; j < ny; ++j) act->from_float(y.data() + j * n, qy.data() + j * ry, n);

        std::vector<float> dx((size_t) n), dy((size_t) n), got, want;
        for (int i = 0; i < nx; ++i) {
            ops->to_float(qx.data() + i * rx, dx.data(), n);
            for (int j = 0; j < ny; ++j) {
                act->to_float(qy.data() + j * ry, dy.data(), n);
                float s = NAN, s2 = NAN;
                ops->vec_dot(n, &s, qx.data() + i * rx, qy.data() + j * ry);
                tr->vec_dot(n, &s2, 0, qx.data() + i * rx, 0, qy.data() + j * ry, 0, 1);
                EXPECT_EQ(s, s2);
                // (1) both operands dequantized, exact double dot: only float rounding may differ,
                // plus, against q8_1, the fp16 rounding of s = d * sum(q) that the min term uses
                double tol = 0;
                for (int k = 0; k < n; ++k) tol += 2e-6 * std::fabs((double) dx[k] * dy[k]);
                if (ops->vec_dot_type == LM_GGML_TYPE_Q8_1) {
                    for (int b = 0; b < n / 32; ++b) {
                        const auto * xb = qx.data() + i * rx + b * lm_ggml_type_size(t);
                        const auto * yb = reinterpret_cast<const lm_block_q8_1 *>(qy.data() + j * ry) + b;
                        uint16_t m;
                        std::memcpy(&m, xb + 2, 2); // q4_1 / q5_1: d, then m
                        tol += std::fabs(lm_ggml_fp16_to_fp32(m) * lm_ggml_fp16_to_fp32(yb->s)) / 1024;
                    }
                }
                EXPECT_NEAR(s, qtest::dot_double(dx.data(), dy.data(), (size_t) n), tol + 1e-30)
                    << lm_ggml_type_name(t) << " n " << n << " row " << i << " col " << j;
                got.push_back(s);
                want.push_back((float) qtest::dot_double(dx.data(), y.data() + j * n, (size_t) n));
            }
        }
        // (2) weights dequantized, activations exact
        EXPECT_LT(qtest::nmse(got.data(), want.data(), got.size()), 5e-4) << lm_ggml_type_name(t) << " n " << n;
    }
}

std::string name(const ::testing::TestParamInfo<lm_ggml_type> & info) { return lm_ggml_type_name(info.param); }

INSTANTIATE_TEST_SUITE_P(WeightTypes, QuantDot, ::testing::ValuesIn(kWeightTypes), name);

TEST(QuantDotTable, ActivationOnlyTypes) {
    for (lm_ggml_type t : {LM_GGML_TYPE_Q8_1, LM_GGML_TYPE_Q8_K}) {
        const lm_cpu_qtype_ops * ops = lm_cpu_get_qtype_ops(t);
        ASSERT_NE(ops, nullptr);
        EXPECT_EQ(ops->vec_dot, nullptr);
        EXPECT_NE(ops->from_float, nullptr);
        EXPECT_NE(ops->to_float, nullptr);
        EXPECT_EQ(lm_cpu_get_quant_vec_dot_traits(t), nullptr);
    }
    EXPECT_EQ(lm_cpu_get_qtype_ops(LM_GGML_TYPE_F32), nullptr);
    EXPECT_EQ(lm_cpu_get_qtype_ops(LM_GGML_TYPE_I32), nullptr);
}

} // namespace

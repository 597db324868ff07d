// Quantized weights through the CPU graph runtime: MUL_MAT (the la_ kernels
// take their dot products from q_dot.h) against dequantized weights times the
// exact F32 activations in double, NMSE < 5e-4 (SPEC section 4); GET_ROWS and
// CPY (q_convert.h, routed by lm_cpu_register_quant_ops) as a model uses them.
#include "ggml-cpu.h"
#include "quant/quants.h"
#include "quant_test_util.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

class QuantMulMatGraph : public ::testing::TestWithParam<lm_ggml_type> {};

TEST_P(QuantMulMatGraph, MatchesDoubleReference) {
    const lm_ggml_type t = GetParam();
    const int64_t K = 512, M = 7, N = 5; // weights (K, M), activations (K, N), result (M, N)
    lm_ggml_init_params p = {32 * 1024 * 1024, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(p);
    ASSERT_NE(ctx, nullptr);

    lm_ggml_tensor * w = lm_ggml_new_tensor_2d(ctx, t, K, M);
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, K, N);
    const std::vector<float> wf = qtest::make_input((size_t) (K * M), 61);
    const std::vector<float> af = qtest::make_input((size_t) (K * N), 62, false);
    ASSERT_EQ(lm_ggml_quantize_chunk(t, wf.data(), w->data, 0, M, K, nullptr), lm_ggml_nbytes(w));
    std::memcpy(a->data, af.data(), lm_ggml_nbytes(a));

    lm_ggml_tensor * out = lm_ggml_mul_mat(ctx, w, a);
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, out);
    for (int n_threads : {1, 3}) {
        std::memset(out->data, 0, lm_ggml_nbytes(out));
        ASSERT_EQ(lm_ggml_graph_compute_with_ctx(ctx, g, n_threads), LM_GGML_STATUS_SUCCESS);

        std::vector<float> wd((size_t) (K * M));
        lm_ggml_get_type_traits(t)->to_float(w->data, wd.data(), K * M);
        std::vector<float> want, got;
        for (int64_t n = 0; n < N; ++n) {
            for (int64_t m = 0; m < M; ++m) {
                want.push_back((float) qtest::dot_double(wd.data() + m * K, af.data() + n * K, (size_t) K));
                got.push_back(((const float *) out->data)[n * M + m]);
            }
        }
        EXPECT_LT(qtest::nmse(got.data(), want.data(), got.size()), 5e-4)
            << lm_ggml_type_name(t) << " threads " << n_threads;
    }
    lm_ggml_free(ctx);
}

std::string name(const ::testing::TestParamInfo<lm_ggml_type> & info) { return lm_ggml_type_name(info.param); }

INSTANTIATE_TEST_SUITE_P(WeightTypes, QuantMulMatGraph,
                         ::testing::Values(LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                                           LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K,
                                           LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K),
                         name);

// Token embeddings: GET_ROWS from a block-type table, then CPY of the rows
// into a q8_0 buffer (as a KV cache would), in one graph.
TEST(QuantGraph, GetRowsThenCpyToBlocks) {
    const int64_t K = 256, V = 9;
    lm_ggml_init_params p = {16 * 1024 * 1024, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(p);
    ASSERT_NE(ctx, nullptr);
    lm_ggml_tensor * emb = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_Q4_1, K, V);
    const std::vector<float> ef = qtest::make_input((size_t) (K * V), 71);
    ASSERT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_Q4_1, ef.data(), emb->data, 0, V, K, nullptr), lm_ggml_nbytes(emb));
    lm_ggml_tensor * ids = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 4);
    const int32_t id[4] = {8, 0, 3, 3};
    std::memcpy(ids->data, id, sizeof(id));
    lm_ggml_tensor * rows = lm_ggml_get_rows(ctx, emb, ids); // (K, 4) F32
    lm_ggml_tensor * cache = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_Q8_0, K, 4);
    lm_ggml_tensor * stored = lm_ggml_cpy(ctx, rows, cache);
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, stored);
    ASSERT_EQ(lm_ggml_graph_compute_with_ctx(ctx, g, 2), LM_GGML_STATUS_SUCCESS);

    // reference: dequantize the table, pick the rows, quantize them to q8_0
    std::vector<float> all((size_t) (K * V)), picked;
    lm_ggml_get_type_traits(LM_GGML_TYPE_Q4_1)->to_float(emb->data, all.data(), K * V);
    for (int32_t r : id) picked.insert(picked.end(), all.begin() + r * K, all.begin() + (r + 1) * K);
    EXPECT_EQ(std::memcmp(rows->data, picked.data(), picked.size() * sizeof(float)), 0);
    std::vector<uint8_t> want(lm_ggml_nbytes(cache));
    lm_ggml_quantize_chunk(LM_GGML_TYPE_Q8_0, picked.data(), want.data(), 0, 4, K, nullptr);
    EXPECT_EQ(std::memcmp(cache->data, want.data(), want.size()), 0);
    lm_ggml_free(ctx);
}

} // namespace

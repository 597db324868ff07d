// Bad input at the op entry points: NULL tensors, a full context, and graph
// building in a no_alloc context (headers only, data comes from a backend).
#include "ops_test_util.h"

using namespace ops_test;

TEST_F(OpsTest, NullTensorsReturnNullAndLog) {
    LogCapture log;
    lm_ggml_tensor * a = f32(4, 4);
    EXPECT_EQ(lm_ggml_add(ctx, a, nullptr), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_add: b"));
    EXPECT_EQ(lm_ggml_mul_mat(ctx, nullptr, a), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_mul_mat: a"));
    EXPECT_EQ(lm_ggml_mul_mat_id(ctx, a, a, nullptr), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_mul_mat_id: ids"));
    EXPECT_EQ(lm_ggml_silu(ctx, nullptr), nullptr);
    EXPECT_EQ(lm_ggml_rms_norm(ctx, nullptr, 1e-5f), nullptr);
    EXPECT_EQ(lm_ggml_view_2d(ctx, nullptr, 2, 2, 8, 0), nullptr);
    EXPECT_EQ(lm_ggml_reshape_2d(ctx, nullptr, 2, 8), nullptr);
    EXPECT_EQ(lm_ggml_permute(ctx, nullptr, 0, 2, 1, 3), nullptr);
    EXPECT_EQ(lm_ggml_transpose(ctx, nullptr), nullptr);
    EXPECT_EQ(lm_ggml_cpy(ctx, a, nullptr), nullptr);
    EXPECT_EQ(lm_ggml_cont(ctx, nullptr), nullptr);
    EXPECT_EQ(lm_ggml_get_rows(ctx, nullptr, a), nullptr);
    EXPECT_EQ(lm_ggml_soft_max_ext(ctx, nullptr, nullptr, 1, 0), nullptr);
    EXPECT_EQ(lm_ggml_rope_ext(ctx, a, nullptr, nullptr, 4, 0, 0, 1e4f, 1, 0, 1, 0, 0), nullptr);
    EXPECT_EQ(lm_ggml_flash_attn_ext(ctx, a, a, nullptr, nullptr, 1, 0, 0), nullptr);
    EXPECT_EQ(lm_ggml_top_k(ctx, nullptr, 1), nullptr);
    EXPECT_EQ(lm_ggml_im2col(ctx, nullptr, a, 1, 1, 0, 0, 1, 1, true, LM_GGML_TYPE_F32), nullptr);
    EXPECT_EQ(lm_ggml_timestep_embedding(ctx, nullptr, 4, 100), nullptr);
    EXPECT_EQ(lm_ggml_add(nullptr, a, a), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_add: ctx"));
    EXPECT_EQ(lm_ggml_arange(nullptr, 0, 4, 1), nullptr);
    EXPECT_GE(log.lines.size(), 20u);

    // setters/getters on NULL log and do nothing
    lm_ggml_mul_mat_set_prec(nullptr, LM_GGML_PREC_F32);
    lm_ggml_flash_attn_ext_set_prec(nullptr, LM_GGML_PREC_F32);
    EXPECT_EQ(lm_ggml_flash_attn_ext_get_prec(nullptr), LM_GGML_PREC_DEFAULT);
    lm_ggml_rope_yarn_corr_dims(64, 4096, 1e4f, 32, 1, nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_rope_yarn_corr_dims"));
}

TEST(OpsContext, FullContextReturnsNullAndFailurePropagates) {
    // headers only, so the arena holds a known handful of tensors
    lm_ggml_init_params p = {4 * lm_ggml_tensor_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    ASSERT_NE(ctx, nullptr);
    LogCapture log;
    std::vector<lm_ggml_tensor *> made;
    for (int i = 0; i < 64; ++i) {
        lm_ggml_tensor * t = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 8, 8);
        if (t == nullptr) break;
        made.push_back(t);
    }
    ASSERT_GE(made.size(), 2u);
    ASSERT_LT(made.size(), 64u);
    lm_ggml_tensor * a = made[0];
    lm_ggml_tensor * b = made[1];
    log.lines.clear();

    // every kind of result creation fails cleanly: fresh, view, reshape, permute
    EXPECT_EQ(lm_ggml_add(ctx, a, b), nullptr);
    EXPECT_EQ(lm_ggml_add_inplace(ctx, a, b), nullptr);
    EXPECT_EQ(lm_ggml_mul_mat(ctx, a, b), nullptr);
    EXPECT_EQ(lm_ggml_view_1d(ctx, a, 4, 0), nullptr);
    EXPECT_EQ(lm_ggml_reshape_1d(ctx, a, 64), nullptr);
    EXPECT_EQ(lm_ggml_permute(ctx, a, 1, 0, 2, 3), nullptr);
    EXPECT_EQ(lm_ggml_transpose(ctx, a), nullptr);
    EXPECT_EQ(lm_ggml_cpy(ctx, a, b), nullptr);
    EXPECT_EQ(lm_ggml_cast(ctx, a, LM_GGML_TYPE_F16), nullptr);
    EXPECT_EQ(lm_ggml_cont(ctx, a), nullptr);
    EXPECT_EQ(lm_ggml_rms_norm(ctx, a, 1e-6f), nullptr);
    EXPECT_EQ(lm_ggml_gelu(ctx, a), nullptr);
    EXPECT_EQ(lm_ggml_soft_max(ctx, a), nullptr);
    EXPECT_EQ(lm_ggml_clamp(ctx, a, 0, 1), nullptr);
    EXPECT_EQ(lm_ggml_top_k(ctx, a, 2), nullptr);
    EXPECT_EQ(lm_ggml_arange(ctx, 0, 4, 1), nullptr);
    EXPECT_FALSE(log.lines.empty());

    // a NULL from a failed op flows into the next op as a NULL, not a crash
    EXPECT_EQ(lm_ggml_scale(ctx, lm_ggml_mul(ctx, a, b), 2.0f), nullptr);
    lm_ggml_free(ctx);
}

TEST(OpsContext, NoAllocContextBuildsHeadersOnly) {
    lm_ggml_init_params p = {64 * lm_ggml_tensor_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    ASSERT_NE(ctx, nullptr);
    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 64, 8);
    lm_ggml_tensor * w = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_Q4_0, 64, 32);
    ASSERT_NE(x, nullptr);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(x->data, nullptr);

    lm_ggml_tensor * h = lm_ggml_mul_mat(ctx, w, x);
    expect_node(h, LM_GGML_OP_MUL_MAT, LM_GGML_TYPE_F32, {32, 8, 1, 1}, {w, x});
    EXPECT_EQ(h->data, nullptr);

    lm_ggml_tensor * hv = lm_ggml_view_2d(ctx, h, 16, 8, h->nb[1], 16 * sizeof(float));
    ASSERT_NE(hv, nullptr);
    EXPECT_EQ(hv->view_src, h);
    EXPECT_EQ(hv->view_offs, 16 * sizeof(float));
    EXPECT_EQ(hv->data, nullptr);

    lm_ggml_tensor * n = lm_ggml_rms_norm_inplace(ctx, hv, 1e-6f);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->view_src, h);
    EXPECT_EQ(n->view_offs, 16 * sizeof(float));

    lm_ggml_tensor * hr = lm_ggml_reshape_3d(ctx, h, 8, 4, 8);
    lm_ggml_tensor * hp = lm_ggml_permute(ctx, hr, 0, 2, 1, 3);
    expect_node(hp, LM_GGML_OP_PERMUTE, LM_GGML_TYPE_F32, {8, 8, 4, 1}, {hr});
    EXPECT_EQ(hp->view_src, h);
    lm_ggml_free(ctx);
}

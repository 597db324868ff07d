// IM2COL, POOL_1D, POOL_2D, UPSCALE, PAD, TIMESTEP_EMBEDDING, ARANGE.
#include "ops_test_util.h"

using namespace ops_test;

TEST_F(OpsTest, Im2Col2D) {
    lm_ggml_tensor * kernel = t4(LM_GGML_TYPE_F16, 3, 3, 4, 16); // (KW, KH, IC, OC)
    lm_ggml_tensor * img = f32(10, 8, 4, 2);                     // (IW, IH, IC, N)
    // OW = (10 + 2 - 2 - 1)/1 + 1 = 10, OH = (8 + 2 - 2 - 1)/1 + 1 = 8
    lm_ggml_tensor * r = lm_ggml_im2col(ctx, kernel, img, 1, 1, 1, 1, 1, 1, true, LM_GGML_TYPE_F16);
    expect_node(r, LM_GGML_OP_IM2COL, LM_GGML_TYPE_F16, {36, 10, 8, 2}, {kernel, img});
    expect_params(r, {1, 1, 1, 1, 1, 1, 1});
    expect_fresh(r);

    // stride 2, dilation 2, no padding: OW = (10 - 4 - 1)/2 + 1 = 3, OH = (8 - 2 - 1)/3 + 1 = 2
    lm_ggml_tensor * r2 = lm_ggml_im2col(ctx, kernel, img, 2, 3, 0, 0, 2, 1, true, LM_GGML_TYPE_F32);
    expect_node(r2, LM_GGML_OP_IM2COL, LM_GGML_TYPE_F32, {36, 3, 2, 2}, {kernel, img});
    expect_params(r2, {2, 3, 0, 0, 2, 1, 1});
}

TEST_F(OpsTest, Im2Col1D) {
    lm_ggml_tensor * kernel = t4(LM_GGML_TYPE_F16, 3, 80, 384); // (K, IC, OC), whisper conv1
    lm_ggml_tensor * mel = f32(3000, 80, 1);                    // (IL, IC, N)
    // OL = (3000 + 2 - 2 - 1)/2 + 1 = 1500
    lm_ggml_tensor * r = lm_ggml_im2col(ctx, kernel, mel, 2, 0, 1, 0, 1, 0, false, LM_GGML_TYPE_F16);
    expect_node(r, LM_GGML_OP_IM2COL, LM_GGML_TYPE_F16, {240, 1500, 1, 1}, {kernel, mel});
    expect_params(r, {2, 0, 1, 0, 1, 0, 0});
    expect_fresh(r);
}

TEST_F(OpsTest, Pool1D) {
    lm_ggml_tensor * a = t4(LM_GGML_TYPE_F16, 10, 3, 2);
    lm_ggml_tensor * r = lm_ggml_pool_1d(ctx, a, LM_GGML_OP_POOL_AVG, 2, 2, 0); // (10 - 2)/2 + 1 = 5
    expect_node(r, LM_GGML_OP_POOL_1D, LM_GGML_TYPE_F32, {5, 3, 2, 1}, {a});
    expect_params(r, {1, 2, 2, 0});
    expect_fresh(r);
    lm_ggml_tensor * r2 = lm_ggml_pool_1d(ctx, a, LM_GGML_OP_POOL_MAX, 3, 2, 1); // (10 + 2 - 3)/2 + 1 = 5.5 -> 5
    expect_node(r2, LM_GGML_OP_POOL_1D, LM_GGML_TYPE_F32, {5, 3, 2, 1}, {a});
    expect_params(r2, {0, 3, 2, 1});
}

TEST_F(OpsTest, Pool2DStoresTruncatedPadding) {
    lm_ggml_tensor * a = f32(9, 7, 3);
    // out0 = (9 + 3 - 3)/2 + 1 = 5.5 -> 5; out1 = (7 + 1.4 - 2)/1 + 1 = 7.4 -> 7
    lm_ggml_tensor * r = lm_ggml_pool_2d(ctx, a, LM_GGML_OP_POOL_MAX, 3, 2, 2, 1, 1.5f, 0.7f);
    expect_node(r, LM_GGML_OP_POOL_2D, LM_GGML_TYPE_F32, {5, 7, 3, 1}, {a});
    expect_params(r, {0, 3, 2, 2, 1, 1, 0});
    expect_fresh(r);
}

TEST_F(OpsTest, PoolRejectsUnknownKind) {
    LogCapture log;
    lm_ggml_tensor * a = f32(8, 8);
    EXPECT_EQ(lm_ggml_pool_1d(ctx, a, LM_GGML_OP_POOL_COUNT, 2, 2, 0), nullptr);
    EXPECT_EQ(lm_ggml_pool_2d(ctx, a, (lm_ggml_op_pool) 9, 2, 2, 2, 2, 0, 0), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_pool_1d"));
    EXPECT_TRUE(log.any_contains("lm_ggml_pool_2d"));
}

TEST_F(OpsTest, UpscaleAndPad) {
    lm_ggml_tensor * a = t4(LM_GGML_TYPE_F16, 4, 3, 2, 1);
    lm_ggml_tensor * u = lm_ggml_upscale(ctx, a, 3);
    expect_node(u, LM_GGML_OP_UPSCALE, LM_GGML_TYPE_F16, {12, 9, 2, 1}, {a});
    expect_params(u, {});
    expect_fresh(u);

    lm_ggml_tensor * ue = lm_ggml_upscale_ext(ctx, a, 5, 7, 3, 2);
    expect_node(ue, LM_GGML_OP_UPSCALE, LM_GGML_TYPE_F16, {5, 7, 3, 2}, {a});
    expect_params(ue, {});

    lm_ggml_tensor * p = lm_ggml_pad(ctx, a, 1, 2, 3, 4);
    expect_node(p, LM_GGML_OP_PAD, LM_GGML_TYPE_F16, {5, 5, 5, 5}, {a});
    expect_params(p, {});
    expect_fresh(p);
}

TEST_F(OpsTest, TimestepEmbedding) {
    lm_ggml_tensor * t = f32(6);
    lm_ggml_tensor * r = lm_ggml_timestep_embedding(ctx, t, 7, 10000); // odd dim rounds up
    expect_node(r, LM_GGML_OP_TIMESTEP_EMBEDDING, LM_GGML_TYPE_F32, {8, 6, 1, 1}, {t});
    expect_params(r, {7, 10000});
    expect_fresh(r);
    lm_ggml_tensor * r2 = lm_ggml_timestep_embedding(ctx, t, 320, 100);
    expect_node(r2, LM_GGML_OP_TIMESTEP_EMBEDDING, LM_GGML_TYPE_F32, {320, 6, 1, 1}, {t});
    expect_params(r2, {320, 100});
}

TEST_F(OpsTest, Arange) {
    lm_ggml_tensor * r = lm_ggml_arange(ctx, 0.0f, 10.0f, 3.0f); // 0 3 6 9
    expect_node(r, LM_GGML_OP_ARANGE, LM_GGML_TYPE_F32, {4, 1, 1, 1}, {});
    expect_params(r, {fbits(0.0f), fbits(10.0f), fbits(3.0f)});
    expect_fresh(r);
    lm_ggml_tensor * r2 = lm_ggml_arange(ctx, 0.5f, 2.0f, 0.5f); // 0.5 1 1.5
    expect_node(r2, LM_GGML_OP_ARANGE, LM_GGML_TYPE_F32, {3, 1, 1, 1}, {});
}

using OpsDeathTest = OpsTest;

TEST_F(OpsDeathTest, ConvAsserts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    lm_ggml_tensor * kernel = f32(3, 3, 4, 16);
    EXPECT_DEATH(lm_ggml_im2col(ctx, kernel, f32(10, 8, 5, 1), 1, 1, 0, 0, 1, 1, true, LM_GGML_TYPE_F32),
                 "LM_GGML_ASSERT"); // channel mismatch
    EXPECT_DEATH(lm_ggml_im2col(ctx, kernel, f32(2, 8, 4, 1), 1, 1, 0, 0, 1, 1, true, LM_GGML_TYPE_F32),
                 "LM_GGML_ASSERT"); // input narrower than the kernel
    EXPECT_DEATH(lm_ggml_upscale_ext(ctx, f32(4, 4), 3, 4, 1, 1), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_arange(ctx, 5.0f, 1.0f, 1.0f), "LM_GGML_ASSERT");
}

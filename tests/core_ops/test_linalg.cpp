// MUL_MAT, MUL_MAT_ID, OUT_PROD and the precision setters.
#include "ops_test_util.h"

using namespace ops_test;

TEST_F(OpsTest, MulMatShapeAndBroadcast) {
    lm_ggml_tensor * w = t4(LM_GGML_TYPE_Q8_0, 64, 10, 2, 1); // (K, M, A2, A3)
    lm_ggml_tensor * x = t4(LM_GGML_TYPE_F16, 64, 7, 6, 3);   // (K, N, B2, B3)
    lm_ggml_tensor * r = lm_ggml_mul_mat(ctx, w, x);
    expect_node(r, LM_GGML_OP_MUL_MAT, LM_GGML_TYPE_F32, {10, 7, 6, 3}, {w, x});
    expect_params(r, {});
    expect_fresh(r);

    lm_ggml_mul_mat_set_prec(r, LM_GGML_PREC_F32);
    expect_params(r, {1});
    lm_ggml_mul_mat_set_prec(r, LM_GGML_PREC_DEFAULT);
    expect_params(r, {0});
}

TEST_F(OpsTest, MulMatAcceptsPermutedB) {
    lm_ggml_tensor * w = f32(16, 4);
    lm_ggml_tensor * x = f32(16, 3, 5);
    lm_ggml_tensor * xp = lm_ggml_permute(ctx, x, 0, 2, 1, 3); // (16, 5, 3)
    lm_ggml_tensor * r = lm_ggml_mul_mat(ctx, w, xp);
    expect_node(r, LM_GGML_OP_MUL_MAT, LM_GGML_TYPE_F32, {4, 5, 3, 1}, {w, xp});
}

TEST_F(OpsTest, MulMatId) {
    lm_ggml_tensor * as = t4(LM_GGML_TYPE_Q4_0, 32, 12, 8); // 8 experts of (32 -> 12)
    lm_ggml_tensor * b = f32(32, 1, 5);                     // one row per token, broadcast over experts
    lm_ggml_tensor * ids = t4(LM_GGML_TYPE_I32, 2, 5);      // 2 experts per token
    lm_ggml_tensor * r = lm_ggml_mul_mat_id(ctx, as, b, ids);
    expect_node(r, LM_GGML_OP_MUL_MAT_ID, LM_GGML_TYPE_F32, {12, 2, 5, 1}, {as, b, ids});
    expect_params(r, {});
    expect_fresh(r);

    lm_ggml_tensor * b2 = f32(32, 2, 5); // one row per (expert slot, token)
    lm_ggml_tensor * r2 = lm_ggml_mul_mat_id(ctx, as, b2, ids);
    expect_node(r2, LM_GGML_OP_MUL_MAT_ID, LM_GGML_TYPE_F32, {12, 2, 5, 1}, {as, b2, ids});
}

TEST_F(OpsTest, OutProd) {
    lm_ggml_tensor * a = f32(6, 9, 2, 1);
    lm_ggml_tensor * b = f32(4, 9, 4, 3);
    lm_ggml_tensor * r = lm_ggml_out_prod(ctx, a, b);
    expect_node(r, LM_GGML_OP_OUT_PROD, LM_GGML_TYPE_F32, {6, 4, 4, 3}, {a, b});
    expect_params(r, {});
    expect_fresh(r);
}

using OpsDeathTest = OpsTest;

TEST_F(OpsDeathTest, MulMatShapeMismatchAsserts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    lm_ggml_tensor * w = f32(16, 4);
    lm_ggml_tensor * x = f32(15, 3);
    EXPECT_DEATH(lm_ggml_mul_mat(ctx, w, x), "LM_GGML_ASSERT");
    lm_ggml_tensor * w3 = f32(16, 4, 3);
    lm_ggml_tensor * x4 = f32(16, 2, 4); // 4 % 3 != 0
    EXPECT_DEATH(lm_ggml_mul_mat(ctx, w3, x4), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_mul_mat(ctx, lm_ggml_transpose(ctx, f32(4, 16)), f32(16, 3)), "LM_GGML_ASSERT");
    // precision can only be set on the op it belongs to
    EXPECT_DEATH(lm_ggml_mul_mat_set_prec(f32(2), LM_GGML_PREC_F32), "LM_GGML_ASSERT");
}

TEST_F(OpsDeathTest, MulMatIdAsserts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    lm_ggml_tensor * as = f32(32, 12, 8);
    lm_ggml_tensor * b = f32(32, 1, 5);
    EXPECT_DEATH(lm_ggml_mul_mat_id(ctx, as, b, f32(2, 5)), "LM_GGML_ASSERT");                  // ids not I32
    EXPECT_DEATH(lm_ggml_mul_mat_id(ctx, as, b, t4(LM_GGML_TYPE_I32, 2, 4)), "LM_GGML_ASSERT"); // token count
    EXPECT_DEATH(lm_ggml_mul_mat_id(ctx, as, f32(32, 3, 5), t4(LM_GGML_TYPE_I32, 2, 5)), "LM_GGML_ASSERT");
}

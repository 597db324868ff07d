// DIAG_MASK_INF, SOFT_MAX, ROPE, rope_yarn_corr_dims, CLAMP, ARGSORT, top_k,
// FLASH_ATTN_EXT.
#include "ops_test_util.h"

#include <cmath>

using namespace ops_test;

TEST_F(OpsTest, DiagMaskInf) {
    lm_ggml_tensor * a = f32(8, 8, 4);
    lm_ggml_tensor * r = lm_ggml_diag_mask_inf(ctx, a, 3);
    expect_node(r, LM_GGML_OP_DIAG_MASK_INF, LM_GGML_TYPE_F32, {8, 8, 4, 1}, {a});
    expect_params(r, {3});
    expect_fresh(r);
    lm_ggml_tensor * ri = lm_ggml_diag_mask_inf_inplace(ctx, a, 0);
    expect_params(ri, {0});
    expect_inplace_view_of(ri, a);
}

TEST_F(OpsTest, SoftMax) {
    lm_ggml_tensor * kq = f32(40, 5, 8); // (n_kv, n_q, n_head)
    lm_ggml_tensor * r = lm_ggml_soft_max(ctx, kq);
    expect_node(r, LM_GGML_OP_SOFT_MAX, LM_GGML_TYPE_F32, {40, 5, 8, 1}, {kq});
    expect_params(r, {fbits(1.0f), fbits(0.0f)});
    expect_fresh(r);

    lm_ggml_tensor * ri = lm_ggml_soft_max_inplace(ctx, kq);
    expect_params(ri, {fbits(1.0f), fbits(0.0f)});
    expect_inplace_view_of(ri, kq);

    lm_ggml_tensor * mask = t4(LM_GGML_TYPE_F16, 40, 32); // rows padded past n_q
    lm_ggml_tensor * re = lm_ggml_soft_max_ext(ctx, kq, mask, 0.125f, 8.0f);
    expect_node(re, LM_GGML_OP_SOFT_MAX, LM_GGML_TYPE_F32, {40, 5, 8, 1}, {kq, mask});
    expect_params(re, {fbits(0.125f), fbits(8.0f)});
    expect_fresh(re);

    lm_ggml_tensor * rn = lm_ggml_soft_max_ext(ctx, kq, nullptr, 0.5f, 0.0f); // mask is optional
    expect_node(rn, LM_GGML_OP_SOFT_MAX, LM_GGML_TYPE_F32, {40, 5, 8, 1}, {kq});
    expect_params(rn, {fbits(0.5f), fbits(0.0f)});
}

TEST_F(OpsTest, RopeExtLayout) {
    lm_ggml_tensor * x = f32(64, 8, 5); // (head_dim, n_head, n_tokens)
    lm_ggml_tensor * pos = t4(LM_GGML_TYPE_I32, 5);
    lm_ggml_tensor * ff = f32(32); // freq factors, n_dims/2
    lm_ggml_tensor * r =
        lm_ggml_rope_ext(ctx, x, pos, ff, 64, LM_GGML_ROPE_TYPE_NEOX, 4096, 500000.0f, 0.25f, 1.0f, 0.9f, 32.0f, 1.0f);
    expect_node(r, LM_GGML_OP_ROPE, LM_GGML_TYPE_F32, {64, 8, 5, 1}, {x, pos, ff});
    expect_params(r, {0, 64, 2, 0, 4096, fbits(500000.0f), fbits(0.25f), fbits(1.0f), fbits(0.9f), fbits(32.0f),
                      fbits(1.0f), 0, 0, 0, 0});
    expect_fresh(r);

    lm_ggml_tensor * ri =
        lm_ggml_rope_ext_inplace(ctx, x, pos, nullptr, 32, 0, 2048, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    expect_node(ri, LM_GGML_OP_ROPE, LM_GGML_TYPE_F32, {64, 8, 5, 1}, {x, pos});
    expect_params(
        ri, {0, 32, 0, 0, 2048, fbits(10000.0f), fbits(1.0f), fbits(0.0f), fbits(1.0f), fbits(32.0f), fbits(1.0f)});
    expect_inplace_view_of(ri, x);
}

TEST_F(OpsTest, RopePlainUsesDefaults) {
    lm_ggml_tensor * x = t4(LM_GGML_TYPE_F16, 16, 2, 3);
    lm_ggml_tensor * pos = t4(LM_GGML_TYPE_I32, 3);
    const std::vector<int32_t> want = {0,           16,          0,           0,           0,          fbits(10000.0f),
                                       fbits(1.0f), fbits(0.0f), fbits(1.0f), fbits(0.0f), fbits(0.0f)};
    lm_ggml_tensor * r = lm_ggml_rope(ctx, x, pos, 16, 0);
    expect_node(r, LM_GGML_OP_ROPE, LM_GGML_TYPE_F16, {16, 2, 3, 1}, {x, pos});
    expect_params(r, want);
    expect_fresh(r);
    lm_ggml_tensor * ri = lm_ggml_rope_inplace(ctx, x, pos, 16, 0);
    expect_params(ri, want);
    expect_inplace_view_of(ri, x);
}

TEST(OpsYarn, CorrDimsMatchFormula) {
    // corr_dim(r) = n_dims * ln(n_ctx_orig / (2 pi r)) / (2 ln base), evaluated here in double
    auto corr = [](double n_dims, double n_ctx, double r, double base) {
        return n_dims * std::log(n_ctx / (r * 2.0 * M_PI)) / (2.0 * std::log(base));
    };
    float dims[2] = {-1, -1};
    lm_ggml_rope_yarn_corr_dims(128, 4096, 10000.0f, 32.0f, 1.0f, dims);
    EXPECT_EQ(dims[0], (float) std::floor(corr(128, 4096, 32, 10000))); // 20
    EXPECT_EQ(dims[1], (float) std::ceil(corr(128, 4096, 1, 10000)));   // 46
    EXPECT_EQ(dims[0], 20.0f);
    EXPECT_EQ(dims[1], 46.0f);

    // clamped into [0, n_dims - 1]
    lm_ggml_rope_yarn_corr_dims(64, 128, 10000.0f, 1000.0f, 1e-20f, dims); // raw: about -8 and 170
    EXPECT_EQ(dims[0], 0.0f);
    EXPECT_EQ(dims[1], 63.0f);
}

TEST_F(OpsTest, ClampIsAlwaysInPlace) {
    lm_ggml_tensor * a = f32(5, 5);
    lm_ggml_tensor * r = lm_ggml_clamp(ctx, a, -1.5f, 2.0f);
    expect_node(r, LM_GGML_OP_CLAMP, LM_GGML_TYPE_F32, {5, 5, 1, 1}, {a});
    expect_params(r, {fbits(-1.5f), fbits(2.0f)});
    expect_inplace_view_of(r, a);
}

TEST_F(OpsTest, ArgsortAndTopK) {
    lm_ggml_tensor * a = f32(10, 4, 2);
    lm_ggml_tensor * asc = lm_ggml_argsort(ctx, a, LM_GGML_SORT_ORDER_ASC);
    expect_node(asc, LM_GGML_OP_ARGSORT, LM_GGML_TYPE_I32, {10, 4, 2, 1}, {a});
    expect_params(asc, {0});
    expect_fresh(asc);
    lm_ggml_tensor * desc = lm_ggml_argsort(ctx, a, LM_GGML_SORT_ORDER_DESC);
    expect_params(desc, {1});

    lm_ggml_tensor * top = lm_ggml_top_k(ctx, a, 3);
    ASSERT_NE(top, nullptr);
    lm_ggml_tensor * sorted = top->src[0];
    ASSERT_NE(sorted, nullptr);
    expect_node(sorted, LM_GGML_OP_ARGSORT, LM_GGML_TYPE_I32, {10, 4, 2, 1}, {a});
    expect_params(sorted, {1});
    expect_node(top, LM_GGML_OP_VIEW, LM_GGML_TYPE_I32, {3, 4, 2, 1}, {sorted});
    EXPECT_EQ(nb_of(top), (std::array<size_t, 4>{4, 40, 160, 320}));
    EXPECT_EQ(top->view_src, sorted);
    EXPECT_EQ(top->view_offs, 0u);
    expect_params(top, {}); // offset 0

    LogCapture log;
    EXPECT_EQ(lm_ggml_argsort(ctx, a, (lm_ggml_sort_order) 7), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_argsort"));
}

TEST_F(OpsTest, FlashAttnExt) {
    lm_ggml_tensor * q = f32(128, 7, 32);                   // (D, n_q, n_head)
    lm_ggml_tensor * k = t4(LM_GGML_TYPE_F16, 128, 256, 8); // (D, n_kv, n_head_kv)
    lm_ggml_tensor * v = t4(LM_GGML_TYPE_F16, 128, 256, 8);
    lm_ggml_tensor * mask = t4(LM_GGML_TYPE_F16, 256, 32); // n_q padded to 32
    lm_ggml_tensor * r = lm_ggml_flash_attn_ext(ctx, q, k, v, mask, 0.088f, 0.0f, 30.0f);
    expect_node(r, LM_GGML_OP_FLASH_ATTN_EXT, LM_GGML_TYPE_F32, {128, 32, 7, 1}, {q, k, v, mask});
    expect_params(r, {fbits(0.088f), fbits(0.0f), fbits(30.0f)});
    expect_fresh(r);

    EXPECT_EQ(lm_ggml_flash_attn_ext_get_prec(r), LM_GGML_PREC_DEFAULT);
    lm_ggml_flash_attn_ext_set_prec(r, LM_GGML_PREC_F32);
    expect_params(r, {fbits(0.088f), fbits(0.0f), fbits(30.0f), 1});
    EXPECT_EQ(lm_ggml_flash_attn_ext_get_prec(r), LM_GGML_PREC_F32);

    lm_ggml_tensor * nomask = lm_ggml_flash_attn_ext(ctx, q, k, v, nullptr, 1.0f, 0.0f, 0.0f);
    expect_node(nomask, LM_GGML_OP_FLASH_ATTN_EXT, LM_GGML_TYPE_F32, {128, 32, 7, 1}, {q, k, v});
}

using OpsDeathTest = OpsTest;

TEST_F(OpsDeathTest, AttentionAsserts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    lm_ggml_tensor * kq = f32(40, 5, 8);
    EXPECT_DEATH(lm_ggml_soft_max_ext(ctx, kq, nullptr, 1.0f, 8.0f), "LM_GGML_ASSERT");    // ALiBi needs a mask
    EXPECT_DEATH(lm_ggml_soft_max_ext(ctx, kq, f32(40, 4), 1.0f, 0.0f), "LM_GGML_ASSERT"); // too few mask rows
    EXPECT_DEATH(lm_ggml_soft_max_ext(ctx, kq, t4(LM_GGML_TYPE_I32, 40, 8), 1.0f, 0.0f), "LM_GGML_ASSERT");

    lm_ggml_tensor * x = f32(64, 8, 5);
    EXPECT_DEATH(lm_ggml_rope(ctx, x, t4(LM_GGML_TYPE_I32, 4), 64, 0), "LM_GGML_ASSERT"); // one position per token
    EXPECT_DEATH(lm_ggml_rope(ctx, x, f32(5), 64, 0), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_rope(ctx, x, t4(LM_GGML_TYPE_I32, 5), 64, 1), "LM_GGML_ASSERT"); // odd modes are gone
    EXPECT_DEATH(lm_ggml_rope_ext(ctx, x, t4(LM_GGML_TYPE_I32, 5), f32(16), 64, 0, 0, 1e4f, 1, 0, 1, 0, 0),
                 "LM_GGML_ASSERT"); // too few freq factors

    lm_ggml_tensor * q = f32(128, 7, 32);
    lm_ggml_tensor * k = f32(128, 256, 8);
    EXPECT_DEATH(lm_ggml_flash_attn_ext(ctx, q, k, k, f32(256, 7), 1, 0, 0), "LM_GGML_ASSERT"); // mask not padded
    EXPECT_DEATH(lm_ggml_flash_attn_ext(ctx, q, f32(64, 256, 8), k, nullptr, 1, 0, 0), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_flash_attn_ext(ctx, q, k, k, nullptr, 1, 8.0f, 0), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_flash_attn_ext_set_prec(q, LM_GGML_PREC_F32), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_top_k(ctx, f32(3, 2), 4), "LM_GGML_ASSERT");
}

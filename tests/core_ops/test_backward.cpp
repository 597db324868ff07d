// Graph construction of the training ops (ggml 1.4.1's layouts: result
// type/shape, src slots, op_params, views) and bad input giving NULL with
// one log line.
#include "ops_test_util.h"

using namespace ops_test;

TEST_F(OpsTest, RepeatBackSiluBackRmsNormBack) {
    lm_ggml_tensor * dy = f32(6, 4, 3, 2);
    lm_ggml_tensor * x = f32(3, 2, 1, 2);
    lm_ggml_tensor * r = lm_ggml_repeat_back(ctx, dy, x);
    expect_node(r, LM_GGML_OP_REPEAT_BACK, LM_GGML_TYPE_F32, Ne{3, 2, 1, 2}, {dy}); // x is only a shape
    expect_fresh(r);
    expect_params(r, {});

    lm_ggml_tensor * g = f32(7, 5);
    lm_ggml_tensor * a = f32(7, 5);
    lm_ggml_tensor * s = lm_ggml_silu_back(ctx, g, a);
    expect_node(s, LM_GGML_OP_SILU_BACK, LM_GGML_TYPE_F32, Ne{7, 5, 1, 1}, {g, a});
    expect_fresh(s);

    lm_ggml_tensor * n = lm_ggml_rms_norm_back(ctx, g, a, 1e-5f);
    expect_node(n, LM_GGML_OP_RMS_NORM_BACK, LM_GGML_TYPE_F32, Ne{7, 5, 1, 1}, {g, a});
    expect_params(n, {fbits(1e-5f)});
}

TEST_F(OpsTest, GetRowsBackIsF32AndDropsTheTable) {
    lm_ggml_tensor * dy = t4(LM_GGML_TYPE_F16, 8, 10);
    lm_ggml_tensor * ids = t4(LM_GGML_TYPE_I32, 10);
    lm_ggml_tensor * table = t4(LM_GGML_TYPE_F16, 8, 6);
    lm_ggml_tensor * r = lm_ggml_get_rows_back(ctx, dy, ids, table);
    expect_node(r, LM_GGML_OP_GET_ROWS_BACK, LM_GGML_TYPE_F32, Ne{8, 6, 1, 1}, {dy, ids});
    expect_fresh(r);
}

TEST_F(OpsTest, SoftMaxBackAndInplace) {
    lm_ggml_tensor * dy = f32(16, 5, 2);
    lm_ggml_tensor * y = f32(16, 5, 2);
    lm_ggml_tensor * r = lm_ggml_soft_max_ext_back(ctx, dy, y, 0.5f, 0.0f);
    expect_node(r, LM_GGML_OP_SOFT_MAX_BACK, LM_GGML_TYPE_F32, Ne{16, 5, 2, 1}, {dy, y});
    expect_fresh(r);
    expect_params(r, {fbits(0.5f), fbits(0.0f)});
    lm_ggml_tensor * ri = lm_ggml_soft_max_ext_back_inplace(ctx, dy, y, 2.0f, 1.0f);
    expect_node(ri, LM_GGML_OP_SOFT_MAX_BACK, LM_GGML_TYPE_F32, Ne{16, 5, 2, 1}, {dy, y});
    expect_inplace_view_of(ri, dy);
    expect_params(ri, {fbits(2.0f), fbits(1.0f)});
}

TEST_F(OpsTest, RopeBackIsRopesTensorWithOpRopeBack) {
    lm_ggml_tensor * dy = f32(64, 4, 5);
    lm_ggml_tensor * pos = t4(LM_GGML_TYPE_I32, 5);
    lm_ggml_tensor * ff = f32(32);
    lm_ggml_tensor * r = lm_ggml_rope_ext_back(ctx, dy, pos, ff, 64, LM_GGML_ROPE_TYPE_NEOX, 512, 10000.0f, 0.25f, 1.0f,
                                               0.9f, 32.0f, 1.0f);
    expect_node(r, LM_GGML_OP_ROPE_BACK, LM_GGML_TYPE_F32, Ne{64, 4, 5, 1}, {dy, pos, ff});
    expect_fresh(r);
    expect_params(r, {0, 64, LM_GGML_ROPE_TYPE_NEOX, 0, 512, fbits(10000.0f), fbits(0.25f), fbits(1.0f), fbits(0.9f),
                      fbits(32.0f), fbits(1.0f)});

    lm_ggml_tensor * pos4 = t4(LM_GGML_TYPE_I32, 20);
    int sections[4] = {4, 6, 6, 0};
    lm_ggml_tensor * m = lm_ggml_rope_multi_back(ctx, dy, pos4, nullptr, 32, sections, LM_GGML_ROPE_TYPE_MROPE, 0,
                                                 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    expect_node(m, LM_GGML_OP_ROPE_BACK, LM_GGML_TYPE_F32, Ne{64, 4, 5, 1}, {dy, pos4});
    expect_params(m, {0, 32, LM_GGML_ROPE_TYPE_MROPE, 0, 0, fbits(10000.0f), fbits(1.0f), fbits(0.0f), fbits(1.0f),
                      fbits(32.0f), fbits(1.0f), 4, 6, 6, 0});
}

TEST_F(OpsTest, Im2colBackAndPool2dBack) {
    lm_ggml_tensor * dy = f32(18, 7, 6, 1);
    lm_ggml_tensor * kern = f32(3, 3, 2, 4);
    int64_t ne[4] = {7, 6, 2, 1};
    lm_ggml_tensor * r = lm_ggml_im2col_back(ctx, dy, kern, ne, 1, 2, 1, 0, 1, 3, true);
    expect_node(r, LM_GGML_OP_IM2COL_BACK, LM_GGML_TYPE_F32, Ne{7, 6, 2, 1}, {dy, kern});
    expect_fresh(r);
    expect_params(r, {1, 2, 1, 0, 1, 3, 1});

    lm_ggml_tensor * g = f32(4, 3, 3);
    lm_ggml_tensor * xf = f32(8, 6, 3);
    lm_ggml_tensor * p = lm_ggml_pool_2d_back(ctx, g, xf, LM_GGML_OP_POOL_AVG, 3, 2, 2, 2, 1.7f, 0.0f);
    expect_node(p, LM_GGML_OP_POOL_2D_BACK, LM_GGML_TYPE_F32, Ne{8, 6, 3, 1}, {g, xf});
    expect_params(p, {LM_GGML_OP_POOL_AVG, 3, 2, 2, 2, 1, 0}); // paddings truncated
}

TEST_F(OpsTest, CrossEntropyLossAndBack) {
    lm_ggml_tensor * a = f32(10, 4);
    lm_ggml_tensor * b = f32(10, 4);
    lm_ggml_tensor * l = lm_ggml_cross_entropy_loss(ctx, a, b);
    expect_node(l, LM_GGML_OP_CROSS_ENTROPY_LOSS, LM_GGML_TYPE_F32, Ne{1, 1, 1, 1}, {a, b});
    lm_ggml_tensor * g = f32(1);
    lm_ggml_tensor * lb = lm_ggml_cross_entropy_loss_back(ctx, g, a, b);
    expect_node(lb, LM_GGML_OP_CROSS_ENTROPY_LOSS_BACK, LM_GGML_TYPE_F32, Ne{10, 4, 1, 1}, {g, a, b});
    expect_fresh(lb);
}

TEST_F(OpsTest, OptStepAdamwIsAViewOfTheParameter) {
    lm_ggml_tensor * w = f32(7, 5, 3);
    lm_ggml_set_param(ctx, w);
    lm_ggml_tensor * g = f32(7, 5, 3);
    lm_ggml_tensor * m = f32(7, 5, 3);
    lm_ggml_tensor * v = f32(7, 5, 3);
    lm_ggml_tensor * p = f32(7);
    lm_ggml_tensor * r = lm_ggml_opt_step_adamw(ctx, w, g, m, v, p);
    expect_node(r, LM_GGML_OP_OPT_STEP_ADAMW, LM_GGML_TYPE_F32, Ne{7, 5, 3, 1}, {w, g, m, v, p});
    expect_inplace_view_of(r, w);
    expect_params(r, {});
}

TEST_F(OpsTest, FlashAttnBackPacksThreeGradients) {
    lm_ggml_tensor * q = f32(5, 3, 4, 2); // (D, N, H, B)
    lm_ggml_tensor * k = f32(5, 7, 2, 2); // (D, M, Hkv, B)
    lm_ggml_tensor * v = f32(7, 5, 2, 2); // (M, D, Hkv, B)
    lm_ggml_tensor * d = f32(5, 3, 4, 2);
    lm_ggml_tensor * r = lm_ggml_flash_attn_back(ctx, q, k, v, d, true);
    // 120, 140, 140 floats, each padded to LM_GGML_MEM_ALIGN bytes
    const int64_t pad = LM_GGML_MEM_ALIGN / 4;
    const int64_t n = (120 + pad - 1) / pad * pad + (140 + pad - 1) / pad * pad + (140 + pad - 1) / pad * pad;
    expect_node(r, LM_GGML_OP_FLASH_ATTN_BACK, LM_GGML_TYPE_F32, Ne{n, 1, 1, 1}, {q, k, v, d});
    expect_params(r, {1});
}

TEST_F(OpsTest, BackwardOpsRejectBadInputWithOneLogLine) {
    LogCapture log;
    lm_ggml_tensor * a = f32(6, 4);
    lm_ggml_tensor * b = f32(4, 4);
    EXPECT_EQ(lm_ggml_repeat_back(ctx, a, b), nullptr); // 6 is not a multiple of 4
    EXPECT_EQ(lm_ggml_get_rows_back(ctx, f32(4, 3, 2), t4(LM_GGML_TYPE_I32, 3), f32(4, 5)), nullptr);
    EXPECT_EQ(lm_ggml_get_rows_back(ctx, f32(4, 3), f32(3), f32(4, 5)), nullptr); // ids not I32
    EXPECT_EQ(lm_ggml_cross_entropy_loss(ctx, a, b), nullptr);
    EXPECT_EQ(lm_ggml_cross_entropy_loss_back(ctx, f32(2), a, a), nullptr);
    EXPECT_EQ(lm_ggml_pool_2d_back(ctx, a, a, (lm_ggml_op_pool) 7, 2, 2, 2, 2, 0, 0), nullptr);
    EXPECT_EQ(lm_ggml_im2col_back(ctx, a, b, nullptr, 1, 1, 0, 0, 1, 1, true), nullptr);
    lm_ggml_tensor * w = f32(6, 4); // not a parameter
    EXPECT_EQ(lm_ggml_opt_step_adamw(ctx, w, a, a, a, f32(7)), nullptr);
    lm_ggml_set_param(ctx, w);
    EXPECT_EQ(lm_ggml_opt_step_adamw(ctx, w, a, a, a, f32(6)), nullptr);
    EXPECT_EQ(lm_ggml_flash_attn_back(ctx, f32(5, 3), f32(4, 7), f32(7, 5), f32(5, 3), false), nullptr); // D differs
    EXPECT_EQ(lm_ggml_silu_back(ctx, nullptr, a), nullptr);
    EXPECT_EQ(log.lines.size(), 11u);
    EXPECT_TRUE(log.any_contains("lm_ggml_opt_step_adamw"));
    EXPECT_TRUE(log.any_contains("lm_ggml_flash_attn_back"));
}

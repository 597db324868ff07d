// Graph construction of the conv builders (conv_1d/2d and variants: the
// im2col + mul_mat graphs ggml builds), CONV_TRANSPOSE_1D/2D,
// PAD_REFLECT_1D, WIN_PART/UNPART, GET_REL_POS, ADD_REL_POS, DIAG,
// DIAG_MASK_ZERO, COUNT_EQUAL, rope_multi and rope_custom; and bad input
// giving NULL with one log line.
#include "ops_test_util.h"

using namespace ops_test;

namespace {

// Walks down src[0] through view ops (reshape/permute/cont's source chain is not followed).
const lm_ggml_tensor * skip_reshapes(const lm_ggml_tensor * t) {
    while (t != nullptr && t->op == LM_GGML_OP_RESHAPE) {
        t = t->src[0];
    }
    return t;
}

} // namespace

TEST_F(OpsTest, Conv1DBuildsIm2colMulMat) {
    lm_ggml_tensor * w = t4(LM_GGML_TYPE_F16, 3, 4, 6); // (K, IC, OC)
    lm_ggml_tensor * x = f32(20, 4, 2);                 // (IL, IC, N)
    // OL = (20 + 2 - 2 - 1)/2 + 1 = 10
    lm_ggml_tensor * r = lm_ggml_conv_1d(ctx, w, x, 2, 1, 1);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->op, LM_GGML_OP_RESHAPE);
    EXPECT_EQ(r->type, LM_GGML_TYPE_F32);
    EXPECT_EQ(ne_of(r), (Ne{10, 6, 2, 1}));
    const lm_ggml_tensor * mm = r->src[0];
    ASSERT_NE(mm, nullptr);
    EXPECT_EQ(mm->op, LM_GGML_OP_MUL_MAT);
    EXPECT_EQ(ne_of(mm), (Ne{20, 6, 1, 1})); // (OL*N, OC)
    const lm_ggml_tensor * col = skip_reshapes(mm->src[0]);
    ASSERT_NE(col, nullptr);
    EXPECT_EQ(col->op, LM_GGML_OP_IM2COL);
    EXPECT_EQ(col->type, LM_GGML_TYPE_F16);
    EXPECT_EQ(ne_of(col), (Ne{12, 10, 2, 1}));
    expect_params(col, {2, 0, 1, 0, 1, 0, 0});
    EXPECT_EQ(skip_reshapes(mm->src[1]), w);

    // _ph: padding K/2
    lm_ggml_tensor * ph = lm_ggml_conv_1d_ph(ctx, w, x, 1, 1);
    ASSERT_NE(ph, nullptr);
    EXPECT_EQ(ne_of(ph), (Ne{20, 6, 2, 1}));
    expect_params(skip_reshapes(ph->src[0]->src[0]), {1, 0, 1, 0, 1, 0, 0});
}

TEST_F(OpsTest, Conv1DDepthwise) {
    lm_ggml_tensor * w = f32(5, 1, 3); // (K, 1, C)
    lm_ggml_tensor * x = f32(16, 3);   // (IL, C, 1)
    lm_ggml_tensor * r = lm_ggml_conv_1d_dw_ph(ctx, w, x, 1, 1);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->op, LM_GGML_OP_RESHAPE);
    EXPECT_EQ(ne_of(r), (Ne{16, 3, 1, 1}));
    const lm_ggml_tensor * mm = r->src[0];
    EXPECT_EQ(mm->op, LM_GGML_OP_MUL_MAT);
    EXPECT_EQ(mm->src[1], w);
    EXPECT_EQ(mm->src[0]->op, LM_GGML_OP_IM2COL);
    EXPECT_EQ(mm->src[0]->type, LM_GGML_TYPE_F16);
    expect_params(mm->src[0], {1, 0, 2, 0, 1, 0, 0});

    // the result keeps the input length, so other lengths are refused
    LogCapture log;
    EXPECT_EQ(lm_ggml_conv_1d_dw(ctx, w, x, 2, 2, 1), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_conv_1d_dw"));
}

TEST_F(OpsTest, Conv2DBuildsPermutedResult) {
    lm_ggml_tensor * w = t4(LM_GGML_TYPE_F16, 3, 3, 4, 8); // (KW, KH, IC, OC)
    lm_ggml_tensor * x = f32(10, 9, 4, 2);                 // (IW, IH, IC, N)
    // OW = (10 + 2 - 2 - 1)/1 + 1 = 10, OH = (9 + 0 - 2 - 1)/2 + 1 = 4
    lm_ggml_tensor * r = lm_ggml_conv_2d(ctx, w, x, 1, 2, 1, 0, 1, 1);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->op, LM_GGML_OP_CONT);
    EXPECT_EQ(r->type, LM_GGML_TYPE_F32);
    EXPECT_EQ(ne_of(r), (Ne{10, 4, 8, 2}));
    expect_fresh(r);
    const lm_ggml_tensor * perm = r->src[0];
    ASSERT_EQ(perm->op, LM_GGML_OP_PERMUTE);
    const lm_ggml_tensor * mm = skip_reshapes(perm->src[0]);
    ASSERT_EQ(mm->op, LM_GGML_OP_MUL_MAT);
    EXPECT_EQ(ne_of(mm), (Ne{80, 8, 1, 1}));
    const lm_ggml_tensor * col = skip_reshapes(mm->src[0]);
    EXPECT_EQ(col->op, LM_GGML_OP_IM2COL);
    EXPECT_EQ(col->type, LM_GGML_TYPE_F16); // the kernel's type
    expect_params(col, {1, 2, 1, 0, 1, 1, 1});

    lm_ggml_tensor * sk = lm_ggml_conv_2d_sk_p0(ctx, w, x); // stride 3x3: (10-3)/3+1 = 3, (9-3)/3+1 = 3
    ASSERT_NE(sk, nullptr);
    EXPECT_EQ(ne_of(sk), (Ne{3, 3, 8, 2}));
    lm_ggml_tensor * s1 = lm_ggml_conv_2d_s1_ph(ctx, w, x);
    ASSERT_NE(s1, nullptr);
    EXPECT_EQ(ne_of(s1), (Ne{10, 9, 8, 2}));
}

TEST_F(OpsTest, Conv2DDepthwise) {
    lm_ggml_tensor * w = t4(LM_GGML_TYPE_F16, 3, 3, 1, 5); // (KW, KH, 1, C)
    lm_ggml_tensor * x = f32(8, 7, 5, 2);
    lm_ggml_tensor * r = lm_ggml_conv_2d_dw(ctx, w, x, 2, 2, 1, 1, 1, 1); // (8+2-3)/2+1 = 4, (7+2-3)/2+1 = 4
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->op, LM_GGML_OP_RESHAPE);
    EXPECT_EQ(ne_of(r), (Ne{4, 4, 5, 2}));
    const lm_ggml_tensor * mm = r->src[0];
    ASSERT_EQ(mm->op, LM_GGML_OP_MUL_MAT);
    EXPECT_EQ(ne_of(mm), (Ne{1, 16, 5, 2}));
    const lm_ggml_tensor * col = skip_reshapes(mm->src[1]);
    EXPECT_EQ(col->op, LM_GGML_OP_IM2COL);
    EXPECT_EQ(ne_of(col), (Ne{9, 4, 4, 10}));
}

TEST_F(OpsTest, ConvTranspose) {
    lm_ggml_tensor * w1 = t4(LM_GGML_TYPE_F16, 4, 6, 3);                   // (K, OC, IC)
    lm_ggml_tensor * x1 = f32(9, 3);                                       // (IL, IC)
    lm_ggml_tensor * r1 = lm_ggml_conv_transpose_1d(ctx, w1, x1, 2, 0, 1); // (9-1)*2 + 4 = 20
    expect_node(r1, LM_GGML_OP_CONV_TRANSPOSE_1D, LM_GGML_TYPE_F32, {20, 6, 1, 1}, {w1, x1});
    expect_params(r1, {2, 0, 1});
    expect_fresh(r1);

    lm_ggml_tensor * w2 = t4(LM_GGML_TYPE_F16, 2, 3, 4, 5); // (KW, KH, OC, IC)
    lm_ggml_tensor * x2 = f32(6, 7, 5, 2);
    lm_ggml_tensor * r2 = lm_ggml_conv_transpose_2d_p0(ctx, w2, x2, 3); // 5*3+2 = 17, 6*3+3 = 21
    expect_node(r2, LM_GGML_OP_CONV_TRANSPOSE_2D, LM_GGML_TYPE_F32, {17, 21, 4, 2}, {w2, x2});
    expect_params(r2, {3});

    LogCapture log;
    EXPECT_EQ(lm_ggml_conv_transpose_1d(ctx, w1, x1, 2, 1, 1), nullptr);        // padding
    EXPECT_EQ(lm_ggml_conv_transpose_1d(ctx, w1, f32(9, 4), 2, 0, 1), nullptr); // channels
    EXPECT_EQ(lm_ggml_conv_transpose_2d_p0(ctx, w2, f32(6, 7, 4), 1), nullptr);
    EXPECT_EQ(lm_ggml_conv_transpose_2d_p0(ctx, w2, x2, 0), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_conv_transpose_1d"));
    EXPECT_TRUE(log.any_contains("lm_ggml_conv_transpose_2d_p0"));
}

TEST_F(OpsTest, ConvRejectsBadInput) {
    LogCapture log;
    lm_ggml_tensor * w1 = f32(3, 4, 6);
    EXPECT_EQ(lm_ggml_conv_1d(ctx, w1, f32(20, 5), 1, 0, 1), nullptr); // channels
    EXPECT_EQ(lm_ggml_conv_1d(ctx, w1, f32(2, 4), 1, 0, 1), nullptr);  // too short
    EXPECT_EQ(lm_ggml_conv_1d(ctx, w1, f32(20, 4), 0, 0, 1), nullptr); // stride 0
    EXPECT_EQ(lm_ggml_conv_1d(ctx, nullptr, f32(20, 4), 1, 0, 1), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_conv_1d"));
    lm_ggml_tensor * w2 = f32(3, 3, 2, 4);
    EXPECT_EQ(lm_ggml_conv_2d(ctx, w2, f32(8, 8, 3), 1, 1, 0, 0, 1, 1), nullptr);
    EXPECT_EQ(lm_ggml_conv_2d(ctx, w2, f32(8, 2, 2), 1, 1, 0, 0, 1, 1), nullptr);
    EXPECT_EQ(lm_ggml_conv_2d(ctx, lm_ggml_transpose(ctx, w2), f32(8, 8, 2), 1, 1, 0, 0, 1, 1), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_conv_2d"));
    EXPECT_EQ(lm_ggml_conv_2d_dw(ctx, f32(3, 3, 1, 4), f32(8, 8, 6), 1, 1, 1, 1, 1, 1), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_conv_2d_dw"));
}

TEST_F(OpsTest, PadReflect1D) {
    lm_ggml_tensor * a = f32(6, 3, 2);
    lm_ggml_tensor * r = lm_ggml_pad_reflect_1d(ctx, a, 2, 5);
    expect_node(r, LM_GGML_OP_PAD_REFLECT_1D, LM_GGML_TYPE_F32, {13, 3, 2, 1}, {a});
    expect_params(r, {2, 5});
    expect_fresh(r);

    LogCapture log;
    EXPECT_EQ(lm_ggml_pad_reflect_1d(ctx, a, 6, 0), nullptr); // not shorter than the row
    EXPECT_EQ(lm_ggml_pad_reflect_1d(ctx, a, -1, 0), nullptr);
    EXPECT_EQ(lm_ggml_pad_reflect_1d(ctx, t4(LM_GGML_TYPE_F16, 6), 1, 1), nullptr);
    EXPECT_EQ(lm_ggml_pad_reflect_1d(ctx, lm_ggml_transpose(ctx, f32(6, 6)), 1, 1), nullptr);
    EXPECT_EQ(log.lines.size(), 4u);
    EXPECT_TRUE(log.any_contains("lm_ggml_pad_reflect_1d"));
}

TEST_F(OpsTest, WindowPartition) {
    lm_ggml_tensor * a = f32(8, 14, 10); // (C, W, H)
    // w 4: W pads to 16 (npx 4), H to 12 (npy 3)
    lm_ggml_tensor * p = lm_ggml_win_part(ctx, a, 4);
    expect_node(p, LM_GGML_OP_WIN_PART, LM_GGML_TYPE_F32, {8, 4, 4, 12}, {a});
    expect_params(p, {4, 3, 4});
    lm_ggml_tensor * u = lm_ggml_win_unpart(ctx, p, 14, 10, 4);
    expect_node(u, LM_GGML_OP_WIN_UNPART, LM_GGML_TYPE_F32, {8, 14, 10, 1}, {p});
    expect_params(u, {4});
    EXPECT_EQ(lm_ggml_n_dims(u), 3);

    LogCapture log;
    EXPECT_EQ(lm_ggml_win_part(ctx, f32(8, 14, 10, 2), 4), nullptr);
    EXPECT_EQ(lm_ggml_win_part(ctx, a, 0), nullptr);
    EXPECT_EQ(lm_ggml_win_part(ctx, t4(LM_GGML_TYPE_F16, 8, 14, 10), 4), nullptr);
    EXPECT_EQ(lm_ggml_win_unpart(ctx, p, 20, 10, 4), nullptr); // more windows than p has
    EXPECT_TRUE(log.any_contains("lm_ggml_win_part"));
    EXPECT_TRUE(log.any_contains("lm_ggml_win_unpart"));
}

TEST_F(OpsTest, RelativePositions) {
    lm_ggml_tensor * tab = t4(LM_GGML_TYPE_F16, 16, 27);
    lm_ggml_tensor * g = lm_ggml_get_rel_pos(ctx, tab, 14, 14);
    expect_node(g, LM_GGML_OP_GET_REL_POS, LM_GGML_TYPE_F16, {16, 14, 14, 1}, {tab});
    expect_params(g, {});

    lm_ggml_tensor * a = f32(49, 35, 3); // (K*K, QW*QH, B) with K 7, QW 5, QH 7
    lm_ggml_tensor * pw = f32(7, 5, 7, 3);
    lm_ggml_tensor * ph = f32(7, 5, 7, 3);
    lm_ggml_tensor * r = lm_ggml_add_rel_pos(ctx, a, pw, ph);
    expect_node(r, LM_GGML_OP_ADD_REL_POS, LM_GGML_TYPE_F32, {49, 35, 3, 1}, {a, pw, ph});
    expect_params(r, {0});
    expect_fresh(r);
    lm_ggml_tensor * ri = lm_ggml_add_rel_pos_inplace(ctx, a, pw, ph);
    expect_node(ri, LM_GGML_OP_ADD_REL_POS, LM_GGML_TYPE_F32, {49, 35, 3, 1}, {a, pw, ph});
    expect_params(ri, {1});
    expect_inplace_view_of(ri, a);

    LogCapture log;
    EXPECT_EQ(lm_ggml_get_rel_pos(ctx, tab, 14, 13), nullptr);
    EXPECT_EQ(lm_ggml_get_rel_pos(ctx, tab, 13, 13), nullptr);
    EXPECT_EQ(lm_ggml_add_rel_pos(ctx, a, pw, f32(7, 5, 7, 2)), nullptr);
    EXPECT_EQ(lm_ggml_add_rel_pos(ctx, f32(48, 35, 3), pw, ph), nullptr);
    EXPECT_EQ(lm_ggml_add_rel_pos(ctx, a, t4(LM_GGML_TYPE_F16, 7, 5, 7, 3), ph), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_get_rel_pos"));
    EXPECT_TRUE(log.any_contains("lm_ggml_add_rel_pos"));
}

TEST_F(OpsTest, DiagMaskZeroAndCountEqual) {
    lm_ggml_tensor * v = f32(5, 1, 3);
    lm_ggml_tensor * d = lm_ggml_diag(ctx, v);
    expect_node(d, LM_GGML_OP_DIAG, LM_GGML_TYPE_F32, {5, 5, 3, 1}, {v});
    expect_fresh(d);

    lm_ggml_tensor * a = f32(6, 6, 2);
    lm_ggml_tensor * m = lm_ggml_diag_mask_zero(ctx, a, 3);
    expect_node(m, LM_GGML_OP_DIAG_MASK_ZERO, LM_GGML_TYPE_F32, {6, 6, 2, 1}, {a});
    expect_params(m, {3});
    expect_fresh(m);
    lm_ggml_tensor * mi = lm_ggml_diag_mask_zero_inplace(ctx, a, 2);
    expect_node(mi, LM_GGML_OP_DIAG_MASK_ZERO, LM_GGML_TYPE_F32, {6, 6, 2, 1}, {a});
    expect_params(mi, {2});
    expect_inplace_view_of(mi, a);

    lm_ggml_tensor * x = t4(LM_GGML_TYPE_I32, 7, 3);
    lm_ggml_tensor * y = t4(LM_GGML_TYPE_I32, 7, 3);
    lm_ggml_tensor * c = lm_ggml_count_equal(ctx, x, y);
    expect_node(c, LM_GGML_OP_COUNT_EQUAL, LM_GGML_TYPE_I64, {1, 1, 1, 1}, {x, y});

    LogCapture log;
    EXPECT_EQ(lm_ggml_diag(ctx, a), nullptr);
    EXPECT_EQ(lm_ggml_count_equal(ctx, x, t4(LM_GGML_TYPE_I32, 3, 7)), nullptr);
    EXPECT_EQ(lm_ggml_diag_mask_zero(ctx, nullptr, 0), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_diag"));
    EXPECT_TRUE(log.any_contains("lm_ggml_count_equal"));
    EXPECT_TRUE(log.any_contains("lm_ggml_diag_mask_zero"));
}

TEST_F(OpsTest, RopeMultiStoresSections) {
    lm_ggml_tensor * a = f32(32, 4, 6);
    lm_ggml_tensor * pos = t4(LM_GGML_TYPE_I32, 24);
    lm_ggml_tensor * ff = f32(16);
    int sections[4] = {4, 6, 6, 0};
    lm_ggml_tensor * r = lm_ggml_rope_multi(ctx, a, pos, ff, 32, sections, LM_GGML_ROPE_TYPE_MROPE, 4096, 1e6f, 0.5f,
                                            1.0f, 0.9f, 32.0f, 1.0f);
    expect_node(r, LM_GGML_OP_ROPE, LM_GGML_TYPE_F32, {32, 4, 6, 1}, {a, pos, ff});
    expect_params(r, {0, 32, LM_GGML_ROPE_TYPE_MROPE, 0, 4096, fbits(1e6f), fbits(0.5f), fbits(1.0f), fbits(0.9f),
                      fbits(32.0f), fbits(1.0f), 4, 6, 6, 0});
    expect_fresh(r);

    LogCapture log;
    EXPECT_EQ(lm_ggml_rope_multi(ctx, a, t4(LM_GGML_TYPE_I32, 6), nullptr, 32, sections, 8, 0, 1e4f, 1, 0, 1, 0, 0),
              nullptr); // one position per token
    EXPECT_EQ(lm_ggml_rope_multi(ctx, a, pos, nullptr, 32, nullptr, 8, 0, 1e4f, 1, 0, 1, 0, 0), nullptr);
    EXPECT_EQ(lm_ggml_rope_multi(ctx, a, pos, f32(8), 32, sections, 8, 0, 1e4f, 1, 0, 1, 0, 0), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_rope_multi"));
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_F(OpsTest, RopeCustomIsRopeExtWithoutFactors) {
    lm_ggml_tensor * a = f32(16, 2, 5);
    lm_ggml_tensor * pos = t4(LM_GGML_TYPE_I32, 5);
    lm_ggml_tensor * r =
        lm_ggml_rope_custom(ctx, a, pos, 16, LM_GGML_ROPE_TYPE_NEOX, 2048, 5e5f, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f);
    expect_node(r, LM_GGML_OP_ROPE, LM_GGML_TYPE_F32, {16, 2, 5, 1}, {a, pos});
    expect_params(r, {0, 16, LM_GGML_ROPE_TYPE_NEOX, 0, 2048, fbits(5e5f), fbits(0.25f), fbits(1.0f), fbits(1.0f),
                      fbits(32.0f), fbits(1.0f)});
    expect_fresh(r);
    lm_ggml_tensor * ri = lm_ggml_rope_custom_inplace(ctx, a, pos, 8, 0, 0, 1e4f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    expect_node(ri, LM_GGML_OP_ROPE, LM_GGML_TYPE_F32, {16, 2, 5, 1}, {a, pos});
    expect_inplace_view_of(ri, a);
}
#pragma GCC diagnostic pop

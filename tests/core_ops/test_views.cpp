// RESHAPE, VIEW, PERMUTE, TRANSPOSE: views share memory with their source.
#include "ops_test_util.h"

using namespace ops_test;

TEST_F(OpsTest, ReshapeVariants) {
    lm_ggml_tensor * a = f32(12, 10, 1, 1, "w");
    struct {
        lm_ggml_tensor * r;
        Ne ne;
    } cases[] = {
        {lm_ggml_reshape_1d(ctx, a, 120), {120, 1, 1, 1}},     {lm_ggml_reshape_2d(ctx, a, 30, 4), {30, 4, 1, 1}},
        {lm_ggml_reshape_3d(ctx, a, 2, 6, 10), {2, 6, 10, 1}}, {lm_ggml_reshape_4d(ctx, a, 2, 3, 4, 5), {2, 3, 4, 5}},
        {lm_ggml_reshape(ctx, a, f32(5, 4, 6)), {5, 4, 6, 1}},
    };
    for (const auto & c : cases) {
        expect_node(c.r, LM_GGML_OP_RESHAPE, LM_GGML_TYPE_F32, c.ne, {a});
        expect_params(c.r, {});
        EXPECT_EQ(c.r->view_src, a);
        EXPECT_EQ(c.r->view_offs, 0u);
        EXPECT_EQ(c.r->data, a->data);
        EXPECT_EQ(nb_of(c.r), packed_nb(4, 1, c.ne));
        EXPECT_STREQ(c.r->name, "w (reshaped)");
    }
}

TEST_F(OpsTest, ReshapeOfAViewKeepsItsOffset) {
    lm_ggml_tensor * base = f32(8, 6);
    lm_ggml_tensor * rows = lm_ggml_view_2d(ctx, base, 8, 2, base->nb[1], 3 * base->nb[1]); // rows 3..4
    lm_ggml_tensor * r = lm_ggml_reshape_1d(ctx, rows, 16);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->view_src, base);
    EXPECT_EQ(r->view_offs, 3 * 8 * sizeof(float));
    EXPECT_EQ(r->data, (char *) base->data + 3 * 8 * sizeof(float));
    EXPECT_EQ(r->src[0], rows);
}

TEST_F(OpsTest, ReshapeQuantizedStrides) {
    lm_ggml_tensor * q = t4(LM_GGML_TYPE_Q4_0, 64, 6); // 2 blocks of 18 bytes per row
    lm_ggml_tensor * r = lm_ggml_reshape_2d(ctx, q, 128, 3);
    expect_node(r, LM_GGML_OP_RESHAPE, LM_GGML_TYPE_Q4_0, {128, 3, 1, 1}, {q});
    EXPECT_EQ(nb_of(r), (std::array<size_t, 4>{18, 72, 216, 216}));
}

TEST_F(OpsTest, Views) {
    lm_ggml_tensor * a = f32(16, 8, 4, 1, "kv");
    const size_t off = 3 * sizeof(float);

    lm_ggml_tensor * v1 = lm_ggml_view_1d(ctx, a, 20, off);
    expect_node(v1, LM_GGML_OP_VIEW, LM_GGML_TYPE_F32, {20, 1, 1, 1}, {a});
    EXPECT_EQ(nb_of(v1), (std::array<size_t, 4>{4, 80, 80, 80}));

    lm_ggml_tensor * v2 = lm_ggml_view_2d(ctx, a, 5, 6, 64, off);
    expect_node(v2, LM_GGML_OP_VIEW, LM_GGML_TYPE_F32, {5, 6, 1, 1}, {a});
    EXPECT_EQ(nb_of(v2), (std::array<size_t, 4>{4, 64, 384, 384}));

    lm_ggml_tensor * v3 = lm_ggml_view_3d(ctx, a, 4, 3, 2, 64, 512, off);
    expect_node(v3, LM_GGML_OP_VIEW, LM_GGML_TYPE_F32, {4, 3, 2, 1}, {a});
    EXPECT_EQ(nb_of(v3), (std::array<size_t, 4>{4, 64, 512, 1024}));

    lm_ggml_tensor * v4 = lm_ggml_view_4d(ctx, a, 2, 2, 2, 2, 128, 512, 1024, off);
    expect_node(v4, LM_GGML_OP_VIEW, LM_GGML_TYPE_F32, {2, 2, 2, 2}, {a});
    EXPECT_EQ(nb_of(v4), (std::array<size_t, 4>{4, 128, 512, 1024}));

    for (lm_ggml_tensor * v : {v1, v2, v3, v4}) {
        // the offset is stored as a size_t in the first two words
        size_t stored = 0;
        std::memcpy(&stored, v->op_params, sizeof(stored));
        EXPECT_EQ(stored, off);
        for (size_t i = sizeof(size_t) / 4; i < LM_GGML_MAX_OP_PARAMS / 4; ++i) EXPECT_EQ(v->op_params[i], 0);
        EXPECT_EQ(v->view_src, a);
        EXPECT_EQ(v->view_offs, off);
        EXPECT_EQ(v->data, (char *) a->data + off);
        EXPECT_STREQ(v->name, "kv (view)");
    }
}

TEST_F(OpsTest, ViewOfViewResolvesToBase) {
    lm_ggml_tensor * a = f32(100);
    lm_ggml_tensor * v = lm_ggml_view_1d(ctx, a, 50, 40);
    lm_ggml_tensor * vv = lm_ggml_view_1d(ctx, v, 10, 8);
    ASSERT_NE(vv, nullptr);
    EXPECT_EQ(vv->src[0], v);
    EXPECT_EQ(vv->view_src, a);
    EXPECT_EQ(vv->view_offs, 48u);
    EXPECT_EQ(vv->data, (char *) a->data + 48);
    size_t stored = 0;
    std::memcpy(&stored, vv->op_params, sizeof(stored));
    EXPECT_EQ(stored, 8u); // op_params keep the offset relative to src0
}

TEST_F(OpsTest, ViewOutOfBoundsIsRefused) {
    LogCapture log;
    lm_ggml_tensor * a = f32(16, 4); // 256 bytes
    EXPECT_EQ(lm_ggml_view_1d(ctx, a, 16, 200), nullptr);
    // packed size fits (2*4*4 = 32 bytes) but the strided extent
    // 4*4 + 244 = 260 does not
    EXPECT_EQ(lm_ggml_view_2d(ctx, a, 4, 2, 244, 0), nullptr);
    EXPECT_FALSE(log.lines.empty());
    // a strided view ending exactly at the last byte is accepted
    EXPECT_NE(lm_ggml_view_2d(ctx, a, 4, 2, 240, 0), nullptr);   // 16 + 240 = 256
    EXPECT_NE(lm_ggml_view_2d(ctx, a, 4, 2, 128, 112), nullptr); // 112 + 16 + 128 = 256
}

TEST_F(OpsTest, PermuteMovesNeAndNb) {
    lm_ggml_tensor * a = f32(2, 3, 4, 5, "q");
    const std::array<size_t, 4> anb = nb_of(a); // 4, 8, 24, 96
    lm_ggml_tensor * p = lm_ggml_permute(ctx, a, 0, 2, 1, 3);
    expect_node(p, LM_GGML_OP_PERMUTE, LM_GGML_TYPE_F32, {2, 4, 3, 5}, {a});
    EXPECT_EQ(nb_of(p), (std::array<size_t, 4>{anb[0], anb[2], anb[1], anb[3]}));
    expect_params(p, {0, 2, 1, 3});
    EXPECT_EQ(p->view_src, a);
    EXPECT_EQ(p->data, a->data);
    EXPECT_STREQ(p->name, "q (permuted)");

    // source dim i goes to position axis_i: (1, 2, 3, 0) -> result ne = (5, 2, 3, 4)
    lm_ggml_tensor * p2 = lm_ggml_permute(ctx, a, 1, 2, 3, 0);
    expect_node(p2, LM_GGML_OP_PERMUTE, LM_GGML_TYPE_F32, {5, 2, 3, 4}, {a});
    EXPECT_EQ(nb_of(p2), (std::array<size_t, 4>{96, 4, 8, 24}));
    expect_params(p2, {1, 2, 3, 0});
}

TEST_F(OpsTest, Transpose) {
    lm_ggml_tensor * a = f32(7, 3, 2, 1, "m");
    lm_ggml_tensor * t = lm_ggml_transpose(ctx, a);
    expect_node(t, LM_GGML_OP_TRANSPOSE, LM_GGML_TYPE_F32, {3, 7, 2, 1}, {a});
    EXPECT_EQ(nb_of(t), (std::array<size_t, 4>{28, 4, 84, 168}));
    expect_params(t, {});
    EXPECT_EQ(t->view_src, a);
    EXPECT_EQ(t->data, a->data);
    EXPECT_STREQ(t->name, "m (transposed)");
    EXPECT_TRUE(lm_ggml_is_transposed(t));
}

using OpsDeathTest = OpsTest;

TEST_F(OpsDeathTest, ViewOpsAssert) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    lm_ggml_tensor * a = f32(6, 4);
    EXPECT_DEATH(lm_ggml_reshape_2d(ctx, a, 5, 5), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_reshape_1d(ctx, lm_ggml_transpose(ctx, a), 24), "LM_GGML_ASSERT"); // not contiguous
    EXPECT_DEATH(lm_ggml_permute(ctx, a, 0, 1, 1, 3), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_permute(ctx, a, 0, 1, 2, 4), "LM_GGML_ASSERT");
}

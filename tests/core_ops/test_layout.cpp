// SCALE, SET, CPY, cast, CONT, GET_ROWS.
#include "ops_test_util.h"

using namespace ops_test;

TEST_F(OpsTest, Scale) {
    lm_ggml_tensor * a = f32(9, 4);
    lm_ggml_tensor * r = lm_ggml_scale(ctx, a, 0.125f);
    expect_node(r, LM_GGML_OP_SCALE, LM_GGML_TYPE_F32, {9, 4, 1, 1}, {a});
    expect_params(r, {fbits(0.125f)});
    expect_fresh(r);
    lm_ggml_tensor * ri = lm_ggml_scale_inplace(ctx, a, -3.0f);
    expect_params(ri, {fbits(-3.0f)});
    expect_inplace_view_of(ri, a);
}

TEST_F(OpsTest, SetFamily) {
    lm_ggml_tensor * a = f32(10, 6, 2); // nb = 4, 40, 240, 480
    lm_ggml_tensor * b = f32(3, 2);
    struct {
        lm_ggml_tensor * r;
        std::vector<int32_t> params;
        bool inplace;
    } cases[] = {
        {lm_ggml_set(ctx, a, b, 80, 160, 320, 8), {80, 160, 320, 8, 0}, false},
        {lm_ggml_set_inplace(ctx, a, b, 80, 160, 320, 8), {80, 160, 320, 8, 1}, true},
        {lm_ggml_set_1d(ctx, a, b, 20), {40, 240, 480, 20, 0}, false},
        {lm_ggml_set_1d_inplace(ctx, a, b, 20), {40, 240, 480, 20, 1}, true},
        {lm_ggml_set_2d(ctx, a, b, 120, 4), {120, 240, 480, 4, 0}, false},
        {lm_ggml_set_2d_inplace(ctx, a, b, 120, 4), {120, 240, 480, 4, 1}, true},
    };
    for (const auto & c : cases) {
        expect_node(c.r, LM_GGML_OP_SET, LM_GGML_TYPE_F32, {10, 6, 2, 1}, {a, b});
        expect_params(c.r, c.params);
        if (c.inplace) {
            expect_inplace_view_of(c.r, a);
        } else {
            expect_fresh(c.r);
        }
    }
}

TEST_F(OpsTest, CpyIsAViewOfTheDestination) {
    lm_ggml_tensor * src = f32(4, 6, 1, 1, "k");
    lm_ggml_tensor * cache = t4(LM_GGML_TYPE_F16, 64, 1, 1, 1, "k_cache");
    lm_ggml_tensor * dst = lm_ggml_view_1d(ctx, cache, 24, 16 * 2);
    lm_ggml_tensor * r = lm_ggml_cpy(ctx, src, dst);
    expect_node(r, LM_GGML_OP_CPY, LM_GGML_TYPE_F16, {24, 1, 1, 1}, {src, dst});
    expect_params(r, {});
    EXPECT_EQ(r->view_src, cache);
    EXPECT_EQ(r->view_offs, 32u);
    EXPECT_EQ(r->data, dst->data);
    EXPECT_EQ(nb_of(r), nb_of(dst));
    EXPECT_STREQ(r->name, "k_cache (view) (copy of k)");

    lm_ggml_tensor * unnamed = f32(24);
    lm_ggml_tensor * r2 = lm_ggml_cpy(ctx, src, unnamed);
    EXPECT_STREQ(r2->name, "k (copy)");
}

TEST_F(OpsTest, CastPointsSrc1AtItself) {
    lm_ggml_tensor * a = f32(8, 3, 1, 1, "x");
    lm_ggml_tensor * r = lm_ggml_cast(ctx, a, LM_GGML_TYPE_F16);
    expect_node(r, LM_GGML_OP_CPY, LM_GGML_TYPE_F16, {8, 3, 1, 1}, {a, r});
    expect_params(r, {});
    expect_fresh(r);
    EXPECT_STREQ(r->name, "x (copy)");
}

TEST_F(OpsTest, ContVariants) {
    lm_ggml_tensor * a = f32(4, 6, 1, 1, "t");
    lm_ggml_tensor * at = lm_ggml_transpose(ctx, a); // (6, 4), non-contiguous
    lm_ggml_tensor * c = lm_ggml_cont(ctx, at);
    expect_node(c, LM_GGML_OP_CONT, LM_GGML_TYPE_F32, {6, 4, 1, 1}, {at});
    expect_fresh(c);
    EXPECT_STREQ(c->name, "t (transposed) (cont)");

    struct {
        lm_ggml_tensor * r;
        Ne ne;
    } cases[] = {
        {lm_ggml_cont_1d(ctx, at, 24), {24, 1, 1, 1}},
        {lm_ggml_cont_2d(ctx, at, 3, 8), {3, 8, 1, 1}},
        {lm_ggml_cont_3d(ctx, at, 2, 3, 4), {2, 3, 4, 1}},
        {lm_ggml_cont_4d(ctx, at, 1, 2, 3, 4), {1, 2, 3, 4}},
    };
    for (const auto & k : cases) {
        expect_node(k.r, LM_GGML_OP_CONT, LM_GGML_TYPE_F32, k.ne, {at});
        expect_params(k.r, {});
        expect_fresh(k.r);
        EXPECT_STREQ(k.r->name, "t (transposed) (cont)");
    }
}

TEST_F(OpsTest, GetRows) {
    lm_ggml_tensor * table = t4(LM_GGML_TYPE_Q4_0, 64, 100); // (n_embd, n_vocab)
    lm_ggml_tensor * ids = t4(LM_GGML_TYPE_I32, 7);
    lm_ggml_tensor * r = lm_ggml_get_rows(ctx, table, ids);
    expect_node(r, LM_GGML_OP_GET_ROWS, LM_GGML_TYPE_F32, {64, 7, 1, 1}, {table, ids});
    expect_params(r, {});
    expect_fresh(r);

    // batched: table (8, 10, 3), ids (5, 3, 2)
    lm_ggml_tensor * t3 = t4(LM_GGML_TYPE_F16, 8, 10, 3);
    lm_ggml_tensor * i3 = t4(LM_GGML_TYPE_I32, 5, 3, 2);
    expect_node(lm_ggml_get_rows(ctx, t3, i3), LM_GGML_OP_GET_ROWS, LM_GGML_TYPE_F32, {8, 5, 3, 2}, {t3, i3});

    // an I32 table stays I32
    lm_ggml_tensor * ti = t4(LM_GGML_TYPE_I32, 4, 9);
    expect_node(lm_ggml_get_rows(ctx, ti, ids), LM_GGML_OP_GET_ROWS, LM_GGML_TYPE_I32, {4, 7, 1, 1}, {ti, ids});
}

using OpsDeathTest = OpsTest;

TEST_F(OpsDeathTest, LayoutAsserts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    lm_ggml_tensor * a = f32(4, 4);
    EXPECT_DEATH(lm_ggml_cpy(ctx, a, f32(15)), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_cont_2d(ctx, a, 3, 5), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_get_rows(ctx, a, f32(2)), "LM_GGML_ASSERT"); // ids must be I32
    EXPECT_DEATH(lm_ggml_set_1d(ctx, a, f32(17), 0), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_scale(ctx, lm_ggml_transpose(ctx, a), 2.0f), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_concat(ctx, a, f32(4, 3), 0), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_concat(ctx, a, a, 4), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_repeat(ctx, f32(3), a), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_add(ctx, a, f32(3)), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_acc(ctx, a, t4(LM_GGML_TYPE_F16, 2), 16, 64, 64, 0), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_add1(ctx, a, f32(2)), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_argmax(ctx, f32(4, 4, 2)), "LM_GGML_ASSERT");
    EXPECT_DEATH(lm_ggml_add_cast(ctx, a, f32(4), LM_GGML_TYPE_F16), "LM_GGML_ASSERT"); // F32 a not allowed
}

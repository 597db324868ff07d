// DUP, ADD, ADD1, ACC, SUB, MUL, DIV, SQR, SQRT, LOG, SIN, COS, SUM,
// SUM_ROWS, MEAN, ARGMAX, REPEAT, CONCAT.
#include "ops_test_util.h"

using namespace ops_test;

namespace {

using BinFn = lm_ggml_tensor * (*) (lm_ggml_context *, lm_ggml_tensor *, lm_ggml_tensor *);
using UnFn = lm_ggml_tensor * (*) (lm_ggml_context *, lm_ggml_tensor *);

struct BinCase {
    const char * name;
    BinFn fn;
    lm_ggml_op op;
    bool inplace;
};

const BinCase kBinary[] = {
    {"add", lm_ggml_add, LM_GGML_OP_ADD, false}, {"add_inplace", lm_ggml_add_inplace, LM_GGML_OP_ADD, true},
    {"sub", lm_ggml_sub, LM_GGML_OP_SUB, false}, {"sub_inplace", lm_ggml_sub_inplace, LM_GGML_OP_SUB, true},
    {"mul", lm_ggml_mul, LM_GGML_OP_MUL, false}, {"mul_inplace", lm_ggml_mul_inplace, LM_GGML_OP_MUL, true},
    {"div", lm_ggml_div, LM_GGML_OP_DIV, false}, {"div_inplace", lm_ggml_div_inplace, LM_GGML_OP_DIV, true},
};

struct UnCase {
    const char * name;
    UnFn fn;
    lm_ggml_op op;
    bool inplace;
};

const UnCase kUnary[] = {
    {"dup", lm_ggml_dup, LM_GGML_OP_DUP, false},    {"dup_inplace", lm_ggml_dup_inplace, LM_GGML_OP_DUP, true},
    {"sqr", lm_ggml_sqr, LM_GGML_OP_SQR, false},    {"sqr_inplace", lm_ggml_sqr_inplace, LM_GGML_OP_SQR, true},
    {"sqrt", lm_ggml_sqrt, LM_GGML_OP_SQRT, false}, {"sqrt_inplace", lm_ggml_sqrt_inplace, LM_GGML_OP_SQRT, true},
    {"log", lm_ggml_log, LM_GGML_OP_LOG, false},    {"log_inplace", lm_ggml_log_inplace, LM_GGML_OP_LOG, true},
    {"sin", lm_ggml_sin, LM_GGML_OP_SIN, false},    {"sin_inplace", lm_ggml_sin_inplace, LM_GGML_OP_SIN, true},
    {"cos", lm_ggml_cos, LM_GGML_OP_COS, false},    {"cos_inplace", lm_ggml_cos_inplace, LM_GGML_OP_COS, true},
};

} // namespace

TEST_F(OpsTest, BinaryBroadcastOps) {
    for (const BinCase & c : kBinary) {
        SCOPED_TRACE(c.name);
        lm_ggml_tensor * a = f32(8, 3, 2, 2, "a");
        lm_ggml_tensor * b = f32(8, 1, 2, 1, "b"); // repeats along dims 1 and 3
        lm_ggml_tensor * r = c.fn(ctx, a, b);
        expect_node(r, c.op, LM_GGML_TYPE_F32, {8, 3, 2, 2}, {a, b});
        expect_params(r, {});
        if (c.inplace) {
            expect_inplace_view_of(r, a);
            EXPECT_STREQ(r->name, "a (view)");
        } else {
            expect_fresh(r);
            EXPECT_NE(r->data, a->data);
        }
    }
}

TEST_F(OpsTest, BinaryKeepsTypeOfA) {
    lm_ggml_tensor * a = t4(LM_GGML_TYPE_F16, 4, 2);
    lm_ggml_tensor * b = f32(4);
    lm_ggml_tensor * r = lm_ggml_add(ctx, a, b);
    expect_node(r, LM_GGML_OP_ADD, LM_GGML_TYPE_F16, {4, 2, 1, 1}, {a, b});
}

TEST_F(OpsTest, InplaceOfAViewAliasesTheBase) {
    lm_ggml_tensor * base = f32(16, 4, 1, 1, "base");
    lm_ggml_tensor * row = lm_ggml_view_1d(ctx, base, 16, 2 * 16 * sizeof(float)); // row 2
    lm_ggml_tensor * r = lm_ggml_mul_inplace(ctx, row, f32(16));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->view_src, base);
    EXPECT_EQ(r->view_offs, 2 * 16 * sizeof(float));
    EXPECT_EQ(r->data, (char *) base->data + 2 * 16 * sizeof(float));
}

TEST_F(OpsTest, SameShapeUnaryMathOps) {
    for (const UnCase & c : kUnary) {
        SCOPED_TRACE(c.name);
        lm_ggml_tensor * a = f32(5, 4, 3, 1, "x");
        lm_ggml_tensor * r = c.fn(ctx, a);
        expect_node(r, c.op, LM_GGML_TYPE_F32, {5, 4, 3, 1}, {a});
        expect_params(r, {});
        if (c.inplace) {
            expect_inplace_view_of(r, a);
        } else {
            expect_fresh(r);
        }
    }
}

TEST_F(OpsTest, AddCast) {
    lm_ggml_tensor * a = t4(LM_GGML_TYPE_Q4_0, 64, 3, 2);
    lm_ggml_tensor * b = f32(64, 3, 1);
    lm_ggml_tensor * r = lm_ggml_add_cast(ctx, a, b, LM_GGML_TYPE_F32);
    expect_node(r, LM_GGML_OP_ADD, LM_GGML_TYPE_F32, {64, 3, 2, 1}, {a, b});
    expect_fresh(r);
    // F16 and BF16 inputs are accepted too
    lm_ggml_tensor * h = t4(LM_GGML_TYPE_BF16, 8, 2);
    lm_ggml_tensor * hb = f32(8, 2);
    lm_ggml_tensor * r2 = lm_ggml_add_cast(ctx, h, hb, LM_GGML_TYPE_F16);
    expect_node(r2, LM_GGML_OP_ADD, LM_GGML_TYPE_F16, {8, 2, 1, 1}, {h, hb});
}

TEST_F(OpsTest, Add1) {
    lm_ggml_tensor * a = f32(6, 2);
    lm_ggml_tensor * s = f32(1);
    lm_ggml_tensor * r = lm_ggml_add1(ctx, a, s);
    expect_node(r, LM_GGML_OP_ADD1, LM_GGML_TYPE_F32, {6, 2, 1, 1}, {a, s});
    expect_fresh(r);
    lm_ggml_tensor * ri = lm_ggml_add1_inplace(ctx, a, s);
    expect_node(ri, LM_GGML_OP_ADD1, LM_GGML_TYPE_F32, {6, 2, 1, 1}, {a, s});
    expect_inplace_view_of(ri, a);
}

TEST_F(OpsTest, Acc) {
    lm_ggml_tensor * a = f32(10, 4, 3);
    lm_ggml_tensor * b = f32(5, 2);
    const size_t nb1 = 40, nb2 = 160, nb3 = 480, off = 12;
    lm_ggml_tensor * r = lm_ggml_acc(ctx, a, b, nb1, nb2, nb3, off);
    expect_node(r, LM_GGML_OP_ACC, LM_GGML_TYPE_F32, {10, 4, 3, 1}, {a, b});
    expect_params(r, {40, 160, 480, 12, 0});
    expect_fresh(r);
    lm_ggml_tensor * ri = lm_ggml_acc_inplace(ctx, a, b, nb1, nb2, nb3, off);
    expect_params(ri, {40, 160, 480, 12, 1});
    expect_inplace_view_of(ri, a);
}

TEST_F(OpsTest, Reductions) {
    lm_ggml_tensor * a = t4(LM_GGML_TYPE_F16, 7, 5, 3, 2);

    lm_ggml_tensor * s = lm_ggml_sum(ctx, a);
    expect_node(s, LM_GGML_OP_SUM, LM_GGML_TYPE_F16, {1, 1, 1, 1}, {a});
    expect_fresh(s);

    lm_ggml_tensor * sr = lm_ggml_sum_rows(ctx, a);
    expect_node(sr, LM_GGML_OP_SUM_ROWS, LM_GGML_TYPE_F16, {1, 5, 3, 2}, {a});
    expect_fresh(sr);

    lm_ggml_tensor * m = lm_ggml_mean(ctx, a); // always F32
    expect_node(m, LM_GGML_OP_MEAN, LM_GGML_TYPE_F32, {1, 5, 3, 2}, {a});
    expect_fresh(m);

    lm_ggml_tensor * mat = f32(100, 9);
    lm_ggml_tensor * am = lm_ggml_argmax(ctx, mat);
    expect_node(am, LM_GGML_OP_ARGMAX, LM_GGML_TYPE_I32, {9, 1, 1, 1}, {mat});
    expect_fresh(am);
    for (lm_ggml_tensor * t : {s, sr, m, am}) expect_params(t, {});
}

TEST_F(OpsTest, Repeat) {
    lm_ggml_tensor * a = t4(LM_GGML_TYPE_F16, 4, 1, 3);
    lm_ggml_tensor * shape = f32(8, 5, 3, 2);
    lm_ggml_tensor * r = lm_ggml_repeat(ctx, a, shape);
    // b only gives the shape: it is not a source
    expect_node(r, LM_GGML_OP_REPEAT, LM_GGML_TYPE_F16, {8, 5, 3, 2}, {a});
    expect_params(r, {});
    expect_fresh(r);
}

TEST_F(OpsTest, Concat) {
    for (int dim = 0; dim < 4; ++dim) {
        SCOPED_TRACE(dim);
        Ne na = {2, 3, 4, 5}, nb = na;
        nb[dim] = 7;
        lm_ggml_tensor * a = f32(na[0], na[1], na[2], na[3]);
        lm_ggml_tensor * b = f32(nb[0], nb[1], nb[2], nb[3]);
        lm_ggml_tensor * r = lm_ggml_concat(ctx, a, b, dim);
        Ne want = na;
        want[dim] += 7;
        expect_node(r, LM_GGML_OP_CONCAT, LM_GGML_TYPE_F32, want, {a, b});
        expect_params(r, {dim});
        expect_fresh(r);
    }
}

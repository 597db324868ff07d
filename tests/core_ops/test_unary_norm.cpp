// UNARY activations, LEAKY_RELU, NORM, RMS_NORM, GROUP_NORM.
#include "ops_test_util.h"

using namespace ops_test;

namespace {

using UnFn = lm_ggml_tensor * (*) (lm_ggml_context *, lm_ggml_tensor *);

struct ActCase {
    const char * name;
    UnFn fn;
    UnFn fn_inplace; // NULL where ggml has none
    int32_t id;      // enum lm_ggml_unary_op value, written out as ggml numbers it
};

const ActCase kActs[] = {
    {"abs", lm_ggml_abs, lm_ggml_abs_inplace, 0},
    {"sgn", lm_ggml_sgn, lm_ggml_sgn_inplace, 1},
    {"neg", lm_ggml_neg, lm_ggml_neg_inplace, 2},
    {"step", lm_ggml_step, lm_ggml_step_inplace, 3},
    {"tanh", lm_ggml_tanh, lm_ggml_tanh_inplace, 4},
    {"elu", lm_ggml_elu, lm_ggml_elu_inplace, 5},
    {"relu", lm_ggml_relu, lm_ggml_relu_inplace, 6},
    {"sigmoid", lm_ggml_sigmoid, lm_ggml_sigmoid_inplace, 7},
    {"gelu", lm_ggml_gelu, lm_ggml_gelu_inplace, 8},
    {"gelu_quick", lm_ggml_gelu_quick, lm_ggml_gelu_quick_inplace, 9},
    {"silu", lm_ggml_silu, lm_ggml_silu_inplace, 10},
    {"hardswish", lm_ggml_hardswish, nullptr, 11},
    {"hardsigmoid", lm_ggml_hardsigmoid, nullptr, 12},
    {"exp", lm_ggml_exp, lm_ggml_exp_inplace, 13},
};

} // namespace

TEST_F(OpsTest, UnaryActivations) {
    for (const ActCase & c : kActs) {
        SCOPED_TRACE(c.name);
        lm_ggml_tensor * a = f32(6, 5, 2, 1, "h");
        lm_ggml_tensor * r = c.fn(ctx, a);
        expect_node(r, LM_GGML_OP_UNARY, LM_GGML_TYPE_F32, {6, 5, 2, 1}, {a});
        expect_params(r, {c.id});
        expect_fresh(r);
        EXPECT_EQ(lm_ggml_get_unary_op(r), (lm_ggml_unary_op) c.id);

        lm_ggml_tensor * rg = lm_ggml_unary(ctx, a, (lm_ggml_unary_op) c.id);
        expect_node(rg, LM_GGML_OP_UNARY, LM_GGML_TYPE_F32, {6, 5, 2, 1}, {a});
        expect_params(rg, {c.id});

        lm_ggml_tensor * ru = lm_ggml_unary_inplace(ctx, a, (lm_ggml_unary_op) c.id);
        expect_params(ru, {c.id});
        expect_inplace_view_of(ru, a);

        if (c.fn_inplace) {
            lm_ggml_tensor * ri = c.fn_inplace(ctx, a);
            expect_node(ri, LM_GGML_OP_UNARY, LM_GGML_TYPE_F32, {6, 5, 2, 1}, {a});
            expect_params(ri, {c.id});
            expect_inplace_view_of(ri, a);
        }
    }
}

TEST_F(OpsTest, UnaryAcceptsRowStridedInput) {
    // rows of a wider matrix: elements packed, rows strided (contiguous_1)
    lm_ggml_tensor * m = f32(10, 4);
    lm_ggml_tensor * v = lm_ggml_view_2d(ctx, m, 6, 4, m->nb[1], 0);
    lm_ggml_tensor * r = lm_ggml_silu(ctx, v);
    expect_node(r, LM_GGML_OP_UNARY, LM_GGML_TYPE_F32, {6, 4, 1, 1}, {v});
    expect_fresh(r);
}

TEST_F(OpsTest, UnaryRejectsUnknownActivation) {
    LogCapture log;
    lm_ggml_tensor * a = f32(4);
    EXPECT_EQ(lm_ggml_unary(ctx, a, LM_GGML_UNARY_OP_COUNT), nullptr);
    EXPECT_EQ(lm_ggml_unary(ctx, a, (lm_ggml_unary_op) -1), nullptr);
    EXPECT_TRUE(log.any_contains("lm_ggml_unary"));
}

TEST_F(OpsTest, LeakyRelu) {
    lm_ggml_tensor * a = f32(8, 2);
    lm_ggml_tensor * r = lm_ggml_leaky_relu(ctx, a, 0.125f, false);
    expect_node(r, LM_GGML_OP_LEAKY_RELU, LM_GGML_TYPE_F32, {8, 2, 1, 1}, {a});
    expect_params(r, {fbits(0.125f)});
    expect_fresh(r);
    lm_ggml_tensor * ri = lm_ggml_leaky_relu(ctx, a, -0.5f, true);
    expect_params(ri, {fbits(-0.5f)});
    expect_inplace_view_of(ri, a);
}

TEST_F(OpsTest, Norms) {
    lm_ggml_tensor * a = f32(32, 3, 2);
    struct {
        lm_ggml_tensor * (*fn)(lm_ggml_context *, lm_ggml_tensor *, float);
        lm_ggml_op op;
        bool inplace;
    } cases[] = {
        {lm_ggml_norm, LM_GGML_OP_NORM, false},
        {lm_ggml_norm_inplace, LM_GGML_OP_NORM, true},
        {lm_ggml_rms_norm, LM_GGML_OP_RMS_NORM, false},
        {lm_ggml_rms_norm_inplace, LM_GGML_OP_RMS_NORM, true},
    };
    for (const auto & c : cases) {
        SCOPED_TRACE(lm_ggml_op_name(c.op));
        lm_ggml_tensor * r = c.fn(ctx, a, 1e-5f);
        expect_node(r, c.op, LM_GGML_TYPE_F32, {32, 3, 2, 1}, {a});
        expect_params(r, {fbits(1e-5f)});
        if (c.inplace) {
            expect_inplace_view_of(r, a);
        } else {
            expect_fresh(r);
        }
    }
}

TEST_F(OpsTest, GroupNorm) {
    lm_ggml_tensor * a = f32(8, 8, 32, 1);
    lm_ggml_tensor * r = lm_ggml_group_norm(ctx, a, 4, 1e-6f);
    expect_node(r, LM_GGML_OP_GROUP_NORM, LM_GGML_TYPE_F32, {8, 8, 32, 1}, {a});
    expect_params(r, {4, fbits(1e-6f)});
    expect_fresh(r);
    lm_ggml_tensor * ri = lm_ggml_group_norm_inplace(ctx, a, 16, 0.25f);
    expect_params(ri, {16, fbits(0.25f)});
    expect_inplace_view_of(ri, a);
}

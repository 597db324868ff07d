// Graph construction of the sequence-model ops (SSM_CONV, SSM_SCAN,
// RWKV_WKV6, GATED_LINEAR_ATTN) and of the user-function ops' inplace and
// plain variants (MAP_UNARY ... MAP_CUSTOM3): type, shape, sources,
// op_params, fresh tensor or view; NULL arguments give NULL with one log line.
#include "ops_test_util.h"

// the _f32 family is deprecated in ggml.h but still part of the API
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

using namespace ops_test;

TEST_F(OpsTest, SsmConvShape) {
    lm_ggml_tensor * sx = f32(3 + 5, 12, 2); // d_conv - 1 + n_t, d_inner, n_s
    lm_ggml_tensor * c = f32(4, 12);         // d_conv, d_inner
    lm_ggml_tensor * r = lm_ggml_ssm_conv(ctx, sx, c);
    expect_node(r, LM_GGML_OP_SSM_CONV, LM_GGML_TYPE_F32, {12, 5, 2, 1}, {sx, c});
    expect_fresh(r);
    expect_params(r, {});
}

TEST_F(OpsTest, SsmScanConcatenatesOutputAndStates) {
    const int64_t d_state = 16, d_inner = 6, n_t = 3, n_s = 2;
    lm_ggml_tensor * s = f32(d_state, d_inner, n_s);
    lm_ggml_tensor * x = f32(d_inner, n_t, n_s);
    lm_ggml_tensor * dt = f32(d_inner, n_t, n_s);
    lm_ggml_tensor * A = f32(d_state, d_inner);
    lm_ggml_tensor * B = f32(d_state, n_t, n_s);
    lm_ggml_tensor * C = f32(d_state, n_t, n_s);
    lm_ggml_tensor * r = lm_ggml_ssm_scan(ctx, s, x, dt, A, B, C);
    expect_node(r, LM_GGML_OP_SSM_SCAN, LM_GGML_TYPE_F32, {d_inner * n_t * n_s + d_state * d_inner * n_s, 1, 1, 1},
                {s, x, dt, A, B, C});
    expect_fresh(r);
    expect_params(r, {});
}

TEST_F(OpsTest, RwkvWkv6AndGlaShapes) {
    const int64_t S = 8, H = 3, T = 6, n_seqs = 2;
    lm_ggml_tensor * k = f32(S, H, T);
    lm_ggml_tensor * v = f32(S, H, T);
    lm_ggml_tensor * r = f32(S, H, T);
    lm_ggml_tensor * tf = f32(S, H);
    lm_ggml_tensor * td = f32(S, H, T);
    lm_ggml_tensor * st = f32(S * S * H, n_seqs);
    lm_ggml_tensor * w = lm_ggml_rwkv_wkv6(ctx, k, v, r, tf, td, st);
    expect_node(w, LM_GGML_OP_RWKV_WKV6, LM_GGML_TYPE_F32, {S * H, T + S * n_seqs, 1, 1}, {k, v, r, tf, td, st});
    expect_fresh(w);
    expect_params(w, {});

    lm_ggml_tensor * g = lm_ggml_gated_linear_attn(ctx, k, v, r, td, st, 0.125f);
    expect_node(g, LM_GGML_OP_GATED_LINEAR_ATTN, LM_GGML_TYPE_F32, {S * H, T + S * n_seqs, 1, 1}, {k, v, r, td, st});
    expect_fresh(g);
    expect_params(g, {fbits(0.125f)});
}

TEST_F(OpsTest, SequenceOpsRefuseNullArguments) {
    lm_ggml_tensor * a = f32(4, 4, 4);
    LogCapture log;
    EXPECT_EQ(lm_ggml_ssm_conv(ctx, a, nullptr), nullptr);
    EXPECT_EQ(lm_ggml_ssm_scan(ctx, a, a, a, a, a, nullptr), nullptr);
    EXPECT_EQ(lm_ggml_rwkv_wkv6(ctx, a, a, a, a, nullptr, a), nullptr);
    EXPECT_EQ(lm_ggml_gated_linear_attn(nullptr, a, a, a, a, a, 1.0f), nullptr);
    EXPECT_EQ(log.lines.size(), 4u);
}

namespace {
void unary_f32(const int, float *, const float *) {}
void binary_f32(const int, float *, const float *, const float *) {}
void c2_f32(lm_ggml_tensor *, const lm_ggml_tensor *, const lm_ggml_tensor *) {}
void c2(lm_ggml_tensor *, const lm_ggml_tensor *, const lm_ggml_tensor *, int, int, void *) {}
} // namespace

TEST_F(OpsTest, UserFunctionOpsAreDupOrView) {
    lm_ggml_tensor * a = f32(5, 4, 3);
    lm_ggml_tensor * b = f32(5, 4, 3);

    lm_ggml_tensor * u = lm_ggml_map_unary_f32(ctx, a, unary_f32);
    expect_node(u, LM_GGML_OP_MAP_UNARY, LM_GGML_TYPE_F32, ne_of(a), {a});
    expect_fresh(u);
    expect_inplace_view_of(lm_ggml_map_unary_inplace_f32(ctx, a, unary_f32), a);

    lm_ggml_tensor * bi = lm_ggml_map_binary_inplace_f32(ctx, a, b, binary_f32);
    expect_node(bi, LM_GGML_OP_MAP_BINARY, LM_GGML_TYPE_F32, ne_of(a), {a, b});
    expect_inplace_view_of(bi, a);

    lm_ggml_tensor * f2 = lm_ggml_map_custom2_f32(ctx, a, b, c2_f32);
    expect_node(f2, LM_GGML_OP_MAP_CUSTOM2_F32, LM_GGML_TYPE_F32, ne_of(a), {a, b});
    expect_fresh(f2);

    int ud = 0;
    lm_ggml_tensor * m2 = lm_ggml_map_custom2_inplace(ctx, a, b, c2, 3, &ud);
    expect_node(m2, LM_GGML_OP_MAP_CUSTOM2, LM_GGML_TYPE_F32, ne_of(a), {a, b});
    expect_inplace_view_of(m2, a);
    EXPECT_EQ(m2->op_params[2], 3); // n_tasks after the 8-byte function pointer
    void * got = nullptr;
    std::memcpy(&got, reinterpret_cast<const char *>(m2->op_params) + 16, sizeof(got));
    EXPECT_EQ(got, &ud);
}

// Tier-2 ops (IM2COL, POOL_1D, POOL_2D, ARANGE, TIMESTEP_EMBEDDING,
// GROUP_NORM) and the op-table registration.

#include "ew_test_util.h"

#include <cfloat>

using namespace ewtest;

namespace {

void set_i32s(lm_ggml_tensor * d, std::initializer_list<int32_t> vals) {
    int k = 0;
    for (int32_t v : vals) lm_ggml_set_op_params_i32(d, k++, v);
}

} // namespace

TEST(EwTier2, Im2col2D) {
    for (lm_ggml_type dt : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
        for (int nth : {1, 3}) {
            Context ctx;
            const int KW = 3, KH = 2, IC = 2, IW = 7, IH = 5, N = 2;
            const int s0 = 2, s1 = 1, p0 = 1, p1 = 1, d0 = 1, d1 = 2;
            const int OW = (IW + 2 * p0 - d0 * (KW - 1) - 1) / s0 + 1;
            const int OH = (IH + 2 * p1 - d1 * (KH - 1) - 1) / s1 + 1;
            lm_ggml_tensor * k = make(ctx.get(), LM_GGML_TYPE_F16, {KW, KH, IC, 4});
            lm_ggml_tensor * x = make(ctx.get(), LM_GGML_TYPE_F32, {IW, IH, IC, N}, Layout::Padded);
            fill(x, 100);
            lm_ggml_tensor * d = make(ctx.get(), dt, {IC * KH * KW, OW, OH, N});
            poison(d);
            set_srcs(d, k, x);
            set_i32s(d, {s0, s1, p0, p1, d0, d1, 1});
            run_op(LM_GGML_OP_IM2COL, d, nth);
            std::vector<double> ref;
            for_each(d, [&](int64_t i0, int64_t ow, int64_t oh, int64_t n, int64_t) {
                const int64_t c = i0 / (KH * KW), kh = (i0 / KW) % KH, kw = i0 % KW;
                const int64_t iw = ow * s0 + kw * d0 - p0, ih = oh * s1 + kh * d1 - p1;
                const bool in = iw >= 0 && iw < IW && ih >= 0 && ih < IH;
                ref.push_back(in ? get(x, iw, ih, c, n) : 0.0);
            });
            expect_close(d, ref, tol_for(dt), "im2col 2d");
            expect_guards_intact(d);
        }
    }
}

TEST(EwTier2, Im2col1D) {
    Context ctx;
    const int KW = 4, IC = 3, IW = 11, N = 2, s0 = 1, p0 = 2, d0 = 2;
    const int OW = (IW + 2 * p0 - d0 * (KW - 1) - 1) / s0 + 1;
    lm_ggml_tensor * k = make(ctx.get(), LM_GGML_TYPE_F32, {KW, IC, 5, 1});
    lm_ggml_tensor * x = make(ctx.get(), LM_GGML_TYPE_F32, {IW, IC, N, 1}, Layout::Swap);
    fill(x, 101);
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, {IC * KW, OW, N, 1});
    poison(d);
    set_srcs(d, k, x);
    set_i32s(d, {s0, 0, p0, 0, d0, 0, 0});
    run_op(LM_GGML_OP_IM2COL, d, 2);
    std::vector<double> ref;
    for_each(d, [&](int64_t i0, int64_t ow, int64_t n, int64_t, int64_t) {
        const int64_t c = i0 / KW, kw = i0 % KW;
        const int64_t iw = ow * s0 + kw * d0 - p0;
        ref.push_back(iw >= 0 && iw < IW ? get(x, iw, c, n) : 0.0);
    });
    expect_close(d, ref, {0, 0}, "im2col 1d");
    expect_guards_intact(d);
}

namespace {

// Pool over a window, skipping positions outside; AVG divides by the full window.
double pool_ref(bool is_max, const std::vector<double> & window_vals, int window_size) {
    double acc = is_max ? -FLT_MAX : 0.0;
    for (double v : window_vals) acc = is_max ? std::max(acc, v) : acc + v;
    return is_max ? acc : acc / window_size;
}

} // namespace

TEST(EwTier2, Pool1D) {
    struct Case {
        int k, s, p;
    };
    for (const Case c : {Case{3, 3, 0}, Case{2, 2, 0}, Case{3, 2, 1}}) {
        for (int op : {LM_GGML_OP_POOL_MAX, LM_GGML_OP_POOL_AVG}) {
            Context ctx;
            const int IW = 13;
            const int OW = (IW + 2 * c.p - c.k) / c.s + 1;
            lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F16, {IW, 3, 2, 1}, Layout::Padded);
            fill(a, 110);
            lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, {OW, 3, 2, 1});
            poison(d);
            set_srcs(d, a);
            set_i32s(d, {op, c.k, c.s, c.p});
            run_op(LM_GGML_OP_POOL_1D, d, 2);
            std::vector<double> ref;
            for_each(d, [&](int64_t o, int64_t i1, int64_t i2, int64_t, int64_t) {
                std::vector<double> w;
                for (int ki = 0; ki < c.k; ++ki) {
                    const int64_t j = o * c.s - c.p + ki;
                    if (j >= 0 && j < IW) w.push_back(get(a, j, i1, i2));
                }
                ref.push_back(pool_ref(op == LM_GGML_OP_POOL_MAX, w, c.k));
            });
            expect_close(d, ref, tol_for(LM_GGML_TYPE_F32), "pool_1d");
            expect_guards_intact(d);
        }
    }
}

TEST(EwTier2, Pool2DWithPadding) {
    for (int op : {LM_GGML_OP_POOL_MAX, LM_GGML_OP_POOL_AVG}) {
        for (int nth : {1, 3}) {
            Context ctx;
            const int IW = 9, IH = 7, k0 = 3, k1 = 2, s0 = 2, s1 = 2, p0 = 1, p1 = 1;
            const int OW = (IW + 2 * p0 - k0) / s0 + 1, OH = (IH + 2 * p1 - k1) / s1 + 1;
            lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {IW, IH, 3, 2}, Layout::Swap);
            fill(a, 120);
            lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, {OW, OH, 3, 2}, Layout::Padded);
            poison(d);
            set_srcs(d, a);
            set_i32s(d, {op, k0, k1, s0, s1, p0, p1});
            run_op(LM_GGML_OP_POOL_2D, d, nth);
            std::vector<double> ref;
            for_each(d, [&](int64_t ox, int64_t oy, int64_t i2, int64_t i3, int64_t) {
                std::vector<double> w;
                for (int ky = 0; ky < k1; ++ky)
                    for (int kx = 0; kx < k0; ++kx) {
                        const int64_t x = ox * s0 - p0 + kx, y = oy * s1 - p1 + ky;
                        if (x >= 0 && x < IW && y >= 0 && y < IH) w.push_back(get(a, x, y, i2, i3));
                    }
                ref.push_back(pool_ref(op == LM_GGML_OP_POOL_MAX, w, k0 * k1));
            });
            expect_close(d, ref, tol_for(LM_GGML_TYPE_F32), "pool_2d");
            expect_guards_intact(d);
        }
    }
}

TEST(EwTier2, Arange) {
    Context ctx;
    const float start = -1.5f, stop = 4.0f, step = 0.25f;
    const int64_t n = static_cast<int64_t>(std::ceil((stop - start) / step));
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, {n, 1, 1, 1});
    lm_ggml_set_op_params_f32(d, 0, start);
    lm_ggml_set_op_params_f32(d, 1, stop);
    lm_ggml_set_op_params_f32(d, 2, step);
    run_op(LM_GGML_OP_ARANGE, d, 3);
    std::vector<double> ref;
    for (int64_t i = 0; i < n; ++i) ref.push_back(start + step * static_cast<double>(i));
    expect_close(d, ref, {0, 0}, "arange"); // all values exact in float
}

TEST(EwTier2, TimestepEmbeddingOddDim) {
    for (int dim : {8, 7}) {
        Context ctx;
        const int max_period = 10000;
        lm_ggml_tensor * t = make(ctx.get(), LM_GGML_TYPE_F32, {3, 1, 1, 1});
        set(t, 0.0, 0);
        set(t, 1.5, 1);
        set(t, 999.0, 2);
        const int64_t ne0 = dim + dim % 2;
        lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, {ne0, 3, 1, 1});
        poison(d);
        set_srcs(d, t);
        lm_ggml_set_op_params_i32(d, 0, dim);
        lm_ggml_set_op_params_i32(d, 1, max_period);
        run_op(LM_GGML_OP_TIMESTEP_EMBEDDING, d, 2);
        std::vector<double> ref;
        const int half = dim / 2;
        for (int i = 0; i < 3; ++i) {
            const double ts = get(t, i);
            for (int64_t j = 0; j < ne0; ++j) {
                if (j >= 2 * half) {
                    ref.push_back(0.0);
                    continue;
                }
                const int64_t jj = j % half;
                const double arg = ts * std::exp(-std::log(double(max_period)) * jj / half);
                ref.push_back(j < half ? std::cos(arg) : std::sin(arg));
            }
        }
        // float frequencies times t=999 lose about 1e-4 in the argument
        expect_close(d, ref, {1e-4, 2e-4}, "timestep_embedding");
        expect_guards_intact(d);
    }
}

TEST(EwTier2, GroupNorm) {
    for (int groups : {2, 3, 5}) { // 3 does not divide 5 channels; 5 groups of 1
        for (int nth : {1, 4}) {
            Context ctx;
            const Shape s = {6, 4, 5, 2};
            lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, s, Layout::Padded);
            fill(a, 130, -3, 5);
            lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, s);
            poison(d);
            set_srcs(d, a);
            const float eps = 1e-5f;
            lm_ggml_set_op_params_i32(d, 0, groups);
            lm_ggml_set_op_params_f32(d, 1, eps);
            run_op(LM_GGML_OP_GROUP_NORM, d, nth);
            const int per = (5 + groups - 1) / groups;
            std::vector<double> mean(groups * 2), var(groups * 2);
            std::vector<double> cnt(groups * 2);
            for_each(a, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t) {
                const int64_t g = (i2 / per) * 2 + i3;
                mean[g] += get(a, i0, i1, i2, i3);
                cnt[g] += 1;
            });
            for (size_t g = 0; g < mean.size(); ++g)
                if (cnt[g] > 0) mean[g] /= cnt[g];
            for_each(a, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t) {
                const int64_t g = (i2 / per) * 2 + i3;
                const double v = get(a, i0, i1, i2, i3) - mean[g];
                var[g] += v * v / cnt[g];
            });
            std::vector<double> ref;
            for_each(a, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t) {
                const int64_t g = (i2 / per) * 2 + i3;
                ref.push_back((get(a, i0, i1, i2, i3) - mean[g]) / std::sqrt(var[g] + eps));
            });
            expect_close(d, ref, {1e-5, 1e-5}, ("groups " + std::to_string(groups)).c_str());
            expect_guards_intact(d);
        }
    }
}

// ---------------------------------------------------------------- registration
TEST(EwRegistration, EveryOwnedOpHasAKernel) {
    const lm_ggml_op owned[] = {
        LM_GGML_OP_DUP,     LM_GGML_OP_ADD,        LM_GGML_OP_ADD1,       LM_GGML_OP_ACC,
        LM_GGML_OP_SUB,     LM_GGML_OP_MUL,        LM_GGML_OP_DIV,        LM_GGML_OP_SQR,
        LM_GGML_OP_SQRT,    LM_GGML_OP_LOG,        LM_GGML_OP_SIN,        LM_GGML_OP_COS,
        LM_GGML_OP_SUM,     LM_GGML_OP_SUM_ROWS,   LM_GGML_OP_MEAN,       LM_GGML_OP_ARGMAX,
        LM_GGML_OP_REPEAT,  LM_GGML_OP_CONCAT,     LM_GGML_OP_GROUP_NORM, LM_GGML_OP_SCALE,
        LM_GGML_OP_SET,     LM_GGML_OP_CPY,        LM_GGML_OP_CONT,       LM_GGML_OP_RESHAPE,
        LM_GGML_OP_VIEW,    LM_GGML_OP_PERMUTE,    LM_GGML_OP_TRANSPOSE,  LM_GGML_OP_GET_ROWS,
        LM_GGML_OP_CLAMP,   LM_GGML_OP_IM2COL,     LM_GGML_OP_POOL_1D,    LM_GGML_OP_POOL_2D,
        LM_GGML_OP_UPSCALE, LM_GGML_OP_PAD,        LM_GGML_OP_ARANGE,     LM_GGML_OP_TIMESTEP_EMBEDDING,
        LM_GGML_OP_ARGSORT, LM_GGML_OP_LEAKY_RELU, LM_GGML_OP_UNARY,
    };
    for (lm_ggml_op op : owned) {
        EXPECT_NE(op_desc(op).forward, nullptr) << lm_ggml_op_name(op);
        EXPECT_EQ(op_desc(op).work_size, nullptr) << lm_ggml_op_name(op);
    }
    for (int u = 0; u < LM_GGML_UNARY_OP_COUNT; ++u) {
        EXPECT_NE(unary_desc(lm_ggml_unary_op(u)).forward, nullptr) << u;
    }
    // the runtime's table carries the same kernels
    const lm_cpu_op_table * rt = lm_cpu_get_op_table();
    ASSERT_NE(rt, nullptr);
    EXPECT_EQ(rt->ops[LM_GGML_OP_ADD].forward, op_desc(LM_GGML_OP_ADD).forward);
    EXPECT_EQ(rt->unary[LM_GGML_UNARY_OP_SILU].forward, unary_desc(LM_GGML_UNARY_OP_SILU).forward);
}

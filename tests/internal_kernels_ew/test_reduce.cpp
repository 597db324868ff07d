// SUM, SUM_ROWS, MEAN, ARGMAX, ARGSORT.

#include "ew_test_util.h"

#include <algorithm>
#include <numeric>

using namespace ewtest;

TEST(EwReduce, SumAllElements) {
    for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16}) {
        for (Layout l : {Layout::Contiguous, Layout::Padded, Layout::Cycle}) {
            Context ctx;
            lm_ggml_tensor * a = make(ctx.get(), t, {31, 7, 3, 2}, l);
            fill(a, 40);
            lm_ggml_tensor * d = make(ctx.get(), t, {1, 1, 1, 1});
            set_srcs(d, a);
            run_op(LM_GGML_OP_SUM, d, 3);
            double s = 0;
            for (double v : values(a)) s += v;
            const Tol tol = tol_for(t);
            EXPECT_NEAR(get(d, 0), s, tol.rel * std::fabs(s) + 1e-4) << lm_ggml_type_name(t) << " " << layout_name(l);
        }
    }
}

TEST(EwReduce, SumRowsAndMean) {
    for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
        for (int nth : {1, 2, 5}) {
            Context ctx;
            lm_ggml_tensor * a = make(ctx.get(), t, {45, 3, 4, 2}, Layout::Swap);
            fill(a, 41);
            lm_ggml_tensor * rs = make(ctx.get(), t, {1, 3, 4, 2}, Layout::Padded);
            lm_ggml_tensor * mn = make(ctx.get(), LM_GGML_TYPE_F32, {1, 3, 4, 2});
            poison(rs);
            set_srcs(rs, a);
            set_srcs(mn, a);
            run_op(LM_GGML_OP_SUM_ROWS, rs, nth);
            run_op(LM_GGML_OP_MEAN, mn, nth);
            std::vector<double> sums, means;
            for (int64_t i3 = 0; i3 < 2; ++i3)
                for (int64_t i2 = 0; i2 < 4; ++i2)
                    for (int64_t i1 = 0; i1 < 3; ++i1) {
                        double s = 0;
                        for (int64_t i0 = 0; i0 < 45; ++i0) s += get(a, i0, i1, i2, i3);
                        sums.push_back(s);
                        means.push_back(s / 45);
                    }
            expect_close(rs, sums, tol_for(t), "sum_rows");
            expect_close(mn, means, tol_for(LM_GGML_TYPE_F32), "mean");
            expect_guards_intact(rs);
        }
    }
}

TEST(EwReduce, ArgmaxTakesLastOfTies) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {300, 5, 1, 1}, Layout::Padded);
    fill(a, 42);
    set(a, 5.0, 17, 0); // single max
    set(a, 5.0, 3, 1);  // tie: index 250 wins (last)
    set(a, 5.0, 250, 1);
    set(a, -1e30, 0, 2); // row of negatives
    for (int64_t i = 0; i < 300; ++i) set(a, -3.0 - i, i, 3);
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_I32, {5, 1, 1, 1});
    set_srcs(d, a);
    run_op(LM_GGML_OP_ARGMAX, d, 2);
    for (int64_t r = 0; r < 5; ++r) {
        int64_t best = 0;
        for (int64_t i = 0; i < 300; ++i) {
            if (get(a, i, r) >= get(a, best, r)) best = i;
        }
        EXPECT_EQ(get(d, r), best) << "row " << r;
    }
    EXPECT_EQ(get(d, 0), 17);
    EXPECT_EQ(get(d, 1), 250);
    EXPECT_EQ(get(d, 3), 0);
}

TEST(EwReduce, ArgsortBothOrders) {
    for (int order : {LM_GGML_SORT_ORDER_ASC, LM_GGML_SORT_ORDER_DESC}) {
        for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
            for (int nth : {1, 3}) {
                Context ctx;
                lm_ggml_tensor * a = make(ctx.get(), t, {53, 4, 3, 1}, Layout::Swap);
                fill(a, 43);
                // ties within a row (stable by index) and a NaN (sorted last)
                set(a, 0.5, 2, 1, 1);
                set(a, 0.5, 40, 1, 1);
                set(a, 0.5, 9, 1, 1);
                set(a, NAN, 11, 2, 2);
                lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_I32, {53, 4, 3, 1});
                poison(d);
                set_srcs(d, a);
                lm_ggml_set_op_params_i32(d, 0, order);
                run_op(LM_GGML_OP_ARGSORT, d, nth);
                for (int64_t i2 = 0; i2 < 3; ++i2) {
                    for (int64_t i1 = 0; i1 < 4; ++i1) {
                        std::vector<int> idx(53);
                        std::iota(idx.begin(), idx.end(), 0);
                        auto key = [&](int i) { return get(a, i, i1, i2); };
                        std::stable_sort(idx.begin(), idx.end(), [&](int x, int y) {
                            const double kx = key(x), ky = key(y);
                            if (std::isnan(kx) || std::isnan(ky)) return !std::isnan(kx) && std::isnan(ky);
                            return order == LM_GGML_SORT_ORDER_ASC ? kx < ky : kx > ky;
                        });
                        for (int64_t k = 0; k < 53; ++k) {
                            ASSERT_EQ(get(d, k, i1, i2), idx[k]) << "row " << i1 << "," << i2 << " pos " << k;
                        }
                    }
                }
                expect_guards_intact(d);
            }
        }
    }
}

TEST(EwReduce, ShapeOrTypeMismatchIsUnsupported) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {8, 3, 2, 1});
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_I32, {3, 1, 1, 1});
    set_srcs(d, a);
    EXPECT_FALSE(supports(LM_GGML_OP_ARGMAX, d)); // argmax takes a matrix
    lm_ggml_tensor * s = make(ctx.get(), LM_GGML_TYPE_F32, {2, 3, 2, 1});
    set_srcs(s, a);
    EXPECT_FALSE(supports(LM_GGML_OP_SUM_ROWS, s));
    lm_ggml_tensor * f = make(ctx.get(), LM_GGML_TYPE_F32, {8, 3, 2, 1});
    set_srcs(f, a);
    lm_ggml_set_op_params_i32(f, 0, LM_GGML_SORT_ORDER_ASC);
    EXPECT_FALSE(supports(LM_GGML_OP_ARGSORT, f)); // result must be I32
}

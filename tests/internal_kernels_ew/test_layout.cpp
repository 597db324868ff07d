// REPEAT, CONCAT, GET_ROWS, PAD, UPSCALE: pure data movement, so results
// must match the reference exactly.

#include "ew_test_util.h"

using namespace ewtest;

TEST(EwLayout, RepeatEveryDim) {
    for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_I32}) {
        for (int nth : {1, 3}) {
            Context ctx;
            lm_ggml_tensor * a =
                make(ctx.get(), t, {3, 2, 1, 2}, t == LM_GGML_TYPE_I32 ? Layout::Contiguous : Layout::Cycle);
            fill(a, 50, -100, 100);
            lm_ggml_tensor * d = make(ctx.get(), t, {9, 4, 3, 2}, Layout::Padded);
            poison(d);
            set_srcs(d, a);
            run_op(LM_GGML_OP_REPEAT, d, nth);
            std::vector<double> ref;
            for_each(d, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t) {
                ref.push_back(get(a, i0 % 3, i1 % 2, i2 % 1, i3 % 2));
            });
            expect_close(d, ref, {0, 0}, lm_ggml_type_name(t));
            expect_guards_intact(d);
        }
    }
}

TEST(EwLayout, ConcatAlongEachDim) {
    for (int dim = 0; dim < 4; ++dim) {
        for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_I32}) {
            Context ctx;
            Shape sa = {4, 3, 2, 2}, sb = sa;
            sb[dim] = 3;
            Shape sd = sa;
            sd[dim] = sa[dim] + sb[dim];
            lm_ggml_tensor * a = make(ctx.get(), t, sa, Layout::Swap);
            lm_ggml_tensor * b = make(ctx.get(), t, sb, t == LM_GGML_TYPE_F32 ? Layout::Padded : Layout::Contiguous);
            fill(a, 60, -50, 50);
            fill(b, 61, -50, 50);
            lm_ggml_tensor * d = make(ctx.get(), t, sd);
            poison(d);
            set_srcs(d, a, b);
            lm_ggml_set_op_params_i32(d, 0, dim);
            run_op(LM_GGML_OP_CONCAT, d, 2);
            std::vector<double> ref;
            for_each(d, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t) {
                int64_t c[4] = {i0, i1, i2, i3};
                if (c[dim] < sa[dim]) {
                    ref.push_back(get(a, c[0], c[1], c[2], c[3]));
                } else {
                    c[dim] -= sa[dim];
                    ref.push_back(get(b, c[0], c[1], c[2], c[3]));
                }
            });
            expect_close(d, ref, {0, 0}, ("dim " + std::to_string(dim)).c_str());
            expect_guards_intact(d);
        }
    }
}

TEST(EwLayout, GetRows) {
    struct Case {
        lm_ggml_type src, dst;
    };
    const Case cases[] = {{LM_GGML_TYPE_F32, LM_GGML_TYPE_F32},
                          {LM_GGML_TYPE_F16, LM_GGML_TYPE_F32},
                          {LM_GGML_TYPE_BF16, LM_GGML_TYPE_F32},
                          {LM_GGML_TYPE_I32, LM_GGML_TYPE_I32}};
    for (const Case & c : cases) {
        for (int nth : {1, 4}) {
            Context ctx;
            // table (10 cols, 7 rows, 2 batches), ids (5, 2): dst (10, 5, 2)
            lm_ggml_tensor * a = make(ctx.get(), c.src, {10, 7, 2, 1}, Layout::Padded);
            fill(a, 70, -100, 100);
            lm_ggml_tensor * ids = make(ctx.get(), LM_GGML_TYPE_I32, {5, 2, 1, 1}, Layout::Swap);
            const int id_vals[2][5] = {{6, 0, 3, 3, 1}, {2, 5, 0, 6, 4}};
            for (int j = 0; j < 2; ++j)
                for (int i = 0; i < 5; ++i) set(ids, id_vals[j][i], i, j);
            lm_ggml_tensor * d = make(ctx.get(), c.dst, {10, 5, 2, 1});
            poison(d);
            set_srcs(d, a, ids);
            run_op(LM_GGML_OP_GET_ROWS, d, nth);
            std::vector<double> ref;
            for_each(d, [&](int64_t i0, int64_t i1, int64_t i2, int64_t, int64_t) {
                ref.push_back(get(a, i0, id_vals[i2][i1], i2));
            });
            expect_close(d, ref, {0, 0}, lm_ggml_type_name(c.src));
            expect_guards_intact(d);
        }
    }
}

TEST(EwLayout, GetRowsRejectsNonI32Ids) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {4, 3, 1, 1});
    lm_ggml_tensor * ids = make(ctx.get(), LM_GGML_TYPE_F32, {2, 1, 1, 1});
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, {4, 2, 1, 1});
    set_srcs(d, a, ids);
    EXPECT_FALSE(supports(LM_GGML_OP_GET_ROWS, d));
    lm_ggml_tensor * q = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_Q4_0, 32, 3);
    lm_ggml_tensor * ids2 = make(ctx.get(), LM_GGML_TYPE_I32, {2, 1, 1, 1});
    lm_ggml_tensor * dq = make(ctx.get(), LM_GGML_TYPE_F32, {32, 2, 1, 1});
    set_srcs(dq, q, ids2);
    EXPECT_FALSE(supports(LM_GGML_OP_GET_ROWS, dq)); // quantized tables come with the quant kernels
}

TEST(EwLayout, PadAppendsZeros) {
    for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
        Context ctx;
        lm_ggml_tensor * a = make(ctx.get(), t, {5, 3, 2, 1}, Layout::Cycle);
        fill(a, 80);
        lm_ggml_tensor * d = make(ctx.get(), t, {8, 4, 3, 2}, Layout::Padded);
        poison(d);
        set_srcs(d, a);
        run_op(LM_GGML_OP_PAD, d, 3);
        std::vector<double> ref;
        for_each(d, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t) {
            const bool in = i0 < 5 && i1 < 3 && i2 < 2 && i3 < 1;
            ref.push_back(in ? get(a, i0, i1, i2, i3) : 0.0);
        });
        expect_close(d, ref, {0, 0}, "pad");
        expect_guards_intact(d);
    }
}

TEST(EwLayout, UpscaleNearest) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {3, 4, 2, 1}, Layout::Swap);
    fill(a, 90);
    // integer factors in dims 0 and 2, a fractional one (7/4) in dim 1
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, {6, 7, 4, 1});
    poison(d);
    set_srcs(d, a);
    run_op(LM_GGML_OP_UPSCALE, d, 2);
    std::vector<double> ref;
    for_each(d, [&](int64_t i0, int64_t i1, int64_t i2, int64_t, int64_t) {
        // nearest source index = floor(i * src_ne / dst_ne)
        ref.push_back(get(a, i0 * 3 / 6, i1 * 4 / 7, i2 * 2 / 4));
    });
    expect_close(d, ref, {0, 0}, "upscale");
    expect_guards_intact(d);
}

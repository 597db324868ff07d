// ADD / SUB / MUL / DIV (broadcasting, mixed types, strided, in place) and ADD1.

#include "ew_test_util.h"

using namespace ewtest;

namespace {

double apply(lm_ggml_op op, double x, double y) {
    switch (op) {
        case LM_GGML_OP_ADD: return x + y;
        case LM_GGML_OP_SUB: return x - y;
        case LM_GGML_OP_MUL: return x * y;
        default: return x / y;
    }
}

// ref[i] = op(a[i], b[i mod b's shape]) in double.
std::vector<double> binary_ref(lm_ggml_op op, const lm_ggml_tensor * a, const lm_ggml_tensor * b) {
    std::vector<double> ref(numel(a));
    for_each(a, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t f) {
        ref[f] = apply(op, get(a, i0, i1, i2, i3), get(b, i0 % b->ne[0], i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3]));
    });
    return ref;
}

const lm_ggml_op kOps[] = {LM_GGML_OP_ADD, LM_GGML_OP_SUB, LM_GGML_OP_MUL, LM_GGML_OP_DIV};

} // namespace

// Every broadcast pattern ggml allows: src1 repeated in any subset of dims.
TEST(EwBinary, BroadcastShapes) {
    const Shape a_shape = {12, 5, 3, 2};
    const Shape b_shapes[] = {{12, 5, 3, 2}, {12, 1, 1, 1}, {1, 1, 1, 1}, {12, 5, 1, 2},
                              {4, 5, 3, 1},  {1, 5, 1, 2},  {6, 1, 3, 1}};
    for (lm_ggml_op op : kOps) {
        for (const Shape & bs : b_shapes) {
            for (int nth : {1, 2, 3}) {
                Context ctx;
                lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, a_shape);
                lm_ggml_tensor * b = make(ctx.get(), LM_GGML_TYPE_F32, bs);
                fill(a, 1);
                fill(b, 2, 0.5, 2.0); // away from 0 for DIV
                lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, a_shape, Layout::Padded);
                poison(d);
                set_srcs(d, a, b);
                run_op(op, d, nth);
                SCOPED_TRACE(std::string(lm_ggml_op_name(op)) + " b=" + std::to_string(bs[0]) + "," +
                             std::to_string(bs[1]) + "," + std::to_string(bs[2]) + "," + std::to_string(bs[3]));
                expect_close(d, binary_ref(op, a, b), tol_for(LM_GGML_TYPE_F32), "broadcast");
                expect_guards_intact(d);
            }
        }
    }
}

// One row and more threads than rows (generation): the row is cut into
// pieces, one per thread; a shorter src1 row keeps the whole-row path.
TEST(EwBinary, SingleRowSplitAcrossThreads) {
    for (lm_ggml_op op : kOps) {
        for (int64_t ne0 : {64, 100, 576, 1536}) {
            for (int64_t ne10 : {ne0, (int64_t) 4}) {
                for (int nth : {2, 3}) {
                    Context ctx;
                    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {ne0, 1, 1, 1});
                    lm_ggml_tensor * b = make(ctx.get(), LM_GGML_TYPE_F32, {ne10, 1, 1, 1});
                    fill(a, 3);
                    fill(b, 4, 0.5, 2.0);
                    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, {ne0, 1, 1, 1}, Layout::Padded);
                    poison(d);
                    set_srcs(d, a, b);
                    run_op(op, d, nth);
                    SCOPED_TRACE(std::string(lm_ggml_op_name(op)) + " ne0 " + std::to_string(ne0) + " ne10 " +
                                 std::to_string(ne10) + " threads " + std::to_string(nth));
                    expect_close(d, binary_ref(op, a, b), tol_for(LM_GGML_TYPE_F32), "single row");
                    expect_guards_intact(d);
                }
            }
        }
    }
}

// Mixed F32/F16/BF16 operands and outputs, strided and permuted operands.
TEST(EwBinary, MixedTypesAndLayouts) {
    const lm_ggml_type types[] = {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16};
    const Layout layouts[] = {Layout::Contiguous, Layout::Padded, Layout::Swap, Layout::Cycle};
    for (lm_ggml_type ta : types) {
        for (lm_ggml_type tb : types) {
            for (lm_ggml_type td : types) {
                for (Layout l : layouts) {
                    Context ctx;
                    lm_ggml_tensor * a = make(ctx.get(), ta, {9, 4, 3, 1}, l);
                    lm_ggml_tensor * b = make(ctx.get(), tb, {9, 4, 1, 1}, l == Layout::Cycle ? Layout::Swap : l);
                    fill(a, 7);
                    fill(b, 8, 0.5, 2.0);
                    lm_ggml_tensor * d =
                        make(ctx.get(), td, {9, 4, 3, 1}, l == Layout::Contiguous ? Layout::Padded : l);
                    poison(d);
                    set_srcs(d, a, b);
                    run_op(LM_GGML_OP_MUL, d, 2);
                    SCOPED_TRACE(std::string(lm_ggml_type_name(ta)) + "*" + lm_ggml_type_name(tb) + "->" +
                                 lm_ggml_type_name(td) + " " + layout_name(l));
                    expect_close(d, binary_ref(LM_GGML_OP_MUL, a, b), tol_for(td), "mixed");
                    expect_guards_intact(d);
                }
            }
        }
    }
}

// In place: dst is a view of src0 (ggml's *_inplace), or shares src1's memory
// (the allocator may reuse src1 for same-shape results).
TEST(EwBinary, InPlace) {
    for (lm_ggml_op op : kOps) {
        for (int nth : {1, 3}) {
            Context ctx;
            lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {33, 7, 1, 1}, Layout::Padded);
            lm_ggml_tensor * b = make(ctx.get(), LM_GGML_TYPE_F32, {33, 1, 1, 1});
            fill(a, 3);
            fill(b, 4, 0.5, 2.0);
            const std::vector<double> ref = binary_ref(op, a, b);
            lm_ggml_tensor * d = lm_ggml_view_tensor(ctx.get(), a);
            set_srcs(d, a, b);
            run_op(op, d, nth);
            expect_close(d, ref, tol_for(LM_GGML_TYPE_F32), "dst aliases src0");

            lm_ggml_tensor * x = make(ctx.get(), LM_GGML_TYPE_F16, {10, 3, 2, 1});
            lm_ggml_tensor * y = make(ctx.get(), LM_GGML_TYPE_F16, {10, 3, 2, 1});
            fill(x, 5);
            fill(y, 6, 0.5, 2.0);
            const std::vector<double> ref2 = binary_ref(op, x, y);
            lm_ggml_tensor * d2 = lm_ggml_view_tensor(ctx.get(), y);
            set_srcs(d2, x, y);
            run_op(op, d2, nth);
            expect_close(d2, ref2, tol_for(LM_GGML_TYPE_F16), "dst aliases src1");
        }
    }
}

TEST(EwBinary, Add1AddsTheScalar) {
    for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
        Context ctx;
        lm_ggml_tensor * a = make(ctx.get(), t, {13, 3, 2, 1}, Layout::Swap);
        lm_ggml_tensor * s = make(ctx.get(), LM_GGML_TYPE_F32, {1, 1, 1, 1});
        fill(a, 9);
        set(s, 0.75, 0);
        lm_ggml_tensor * d = make(ctx.get(), t, {13, 3, 2, 1});
        poison(d);
        set_srcs(d, a, s);
        run_op(LM_GGML_OP_ADD1, d, 2);
        std::vector<double> ref = values(a);
        for (double & v : ref) v += 0.75;
        expect_close(d, ref, tol_for(t), "add1");
        expect_guards_intact(d);
    }
}

TEST(EwBinary, UnsupportedCombinationsAreReported) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {8, 4, 1, 1});
    lm_ggml_tensor * b = make(ctx.get(), LM_GGML_TYPE_F32, {3, 4, 1, 1}); // 3 does not divide 8
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, {8, 4, 1, 1});
    set_srcs(d, a, b);
    EXPECT_FALSE(supports(LM_GGML_OP_ADD, d));
    lm_ggml_tensor * q = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_Q4_0, 32, 4);
    lm_ggml_tensor * bq = make(ctx.get(), LM_GGML_TYPE_F32, {32, 4, 1, 1});
    lm_ggml_tensor * dq = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_Q4_0, 32, 4);
    set_srcs(dq, q, bq);
    EXPECT_FALSE(supports(LM_GGML_OP_ADD, dq)); // quantized add is the quant kernels' job
    lm_ggml_tensor * i = make(ctx.get(), LM_GGML_TYPE_I32, {8, 4, 1, 1});
    set_srcs(i, i, a);
    EXPECT_FALSE(supports(LM_GGML_OP_MUL, i));
}

// DUP / CPY / CONT, SET and ACC kernels against double references.

#include "ew_test_util.h"

using namespace ewtest;

namespace {

const lm_ggml_type kFloatTypes[] = {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16};
const Layout kLayouts[] = {Layout::Contiguous, Layout::Padded, Layout::Swap, Layout::Cycle};

// The value an element of type t holds after being stored from double v.
double rounded(lm_ggml_type t, double v) {
    switch (t) {
        case LM_GGML_TYPE_F16: return lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16(static_cast<float>(v)));
        case LM_GGML_TYPE_BF16: return lm_ggml_bf16_to_fp32(lm_ggml_fp32_to_bf16(static_cast<float>(v)));
        default: return static_cast<float>(v);
    }
}

} // namespace

// Same shape, every float type pair, every src/dst layout, 1-3 threads:
// element values must be exactly the source value rounded to dst's type.
TEST(EwCopy, FloatConversionsAllLayouts) {
    for (lm_ggml_type st : kFloatTypes) {
        for (lm_ggml_type dt : kFloatTypes) {
            for (Layout sl : kLayouts) {
                for (Layout dl : {Layout::Contiguous, Layout::Padded, Layout::Swap}) {
                    for (int nth : {1, 3}) {
                        Context ctx;
                        lm_ggml_tensor * a = make(ctx.get(), st, {7, 5, 3, 2}, sl);
                        lm_ggml_tensor * d = make(ctx.get(), dt, {7, 5, 3, 2}, dl);
                        fill(a, 11);
                        poison(d);
                        set_srcs(d, a);
                        run_op(LM_GGML_OP_CPY, d, nth);
                        std::vector<double> ref = values(a);
                        for (double & v : ref) v = rounded(dt, v);
                        SCOPED_TRACE(std::string(lm_ggml_type_name(st)) + "->" + lm_ggml_type_name(dt) + " " +
                                     layout_name(sl) + "->" + layout_name(dl));
                        expect_close(d, ref, {0, 0}, "cpy");
                        expect_guards_intact(d);
                    }
                }
            }
        }
    }
}

// Different shapes with equal element counts: dst takes src's elements in
// row-major order (cont_2d of a permuted tensor, reshaping copies).
TEST(EwCopy, ReshapingCopyKeepsRowMajorOrder) {
    for (Layout sl : kLayouts) {
        for (int nth : {1, 2, 4}) {
            Context ctx;
            lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {6, 4, 5, 1}, sl);
            lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F16, {8, 15, 1, 1}, Layout::Padded);
            fill(a, 3);
            poison(d);
            set_srcs(d, a);
            run_op(LM_GGML_OP_CONT, d, nth);
            std::vector<double> ref = values(a);
            for (double & v : ref) v = rounded(LM_GGML_TYPE_F16, v);
            expect_close(d, ref, {0, 0}, layout_name(sl));
            expect_guards_intact(d);
        }
    }
}

// Non-float types copy bytewise (I32 here), including into a transposed view.
TEST(EwCopy, SameTypeIntegerCopy) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_I32, {9, 4, 3, 1}, Layout::Cycle);
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_I32, {9, 4, 3, 1}, Layout::Swap);
    for_each(a, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t f) {
        set(a, 1000003 * f - 77, i0, i1, i2, i3);
    });
    poison(d);
    set_srcs(d, a);
    run_op(LM_GGML_OP_DUP, d, 2);
    expect_close(d, values(a), {0, 0}, "i32");
    expect_guards_intact(d);
}

// Contiguous same-type copies take the bulk path; large odd counts split
// unevenly across threads.
TEST(EwCopy, ContiguousBulkCopy) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {1001, 3, 1, 1});
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, {3003, 1, 1, 1});
    fill(a, 5);
    poison(d);
    set_srcs(d, a);
    run_op(LM_GGML_OP_DUP, d, 3);
    expect_close(d, values(a), {0, 0}, "bulk");
    expect_guards_intact(d);
}

// Q8_0 to Q8_0 moves whole 34-byte blocks, also into a strided row layout.
TEST(EwCopy, SameTypeBlockCopy) {
    Context ctx;
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_Q8_0, 64, 3);
    lm_ggml_tensor * base = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_Q8_0, 96, 3);
    lm_ggml_tensor * d = lm_ggml_view_2d(ctx.get(), base, 64, 3, base->nb[1], 0);
    uint8_t * src = static_cast<uint8_t *>(a->data);
    for (size_t k = 0; k < lm_ggml_nbytes(a); ++k) src[k] = static_cast<uint8_t>(k * 7 + 1);
    std::memset(base->data, kGuard, lm_ggml_nbytes(base));
    set_srcs(d, a);
    run_op(LM_GGML_OP_CPY, d, 2);
    for (int r = 0; r < 3; ++r) {
        EXPECT_EQ(std::memcmp(static_cast<char *>(d->data) + r * d->nb[1], src + r * a->nb[1], a->nb[1]), 0) << r;
        const uint8_t * tail = static_cast<const uint8_t *>(base->data) + r * base->nb[1] + a->nb[1];
        for (size_t k = 0; k < base->nb[1] - a->nb[1]; ++k) ASSERT_EQ(tail[k], kGuard);
    }
}

TEST(EwCopy, UnsupportedConversionsAreReported) {
    Context ctx;
    lm_ggml_tensor * f = make(ctx.get(), LM_GGML_TYPE_F32, {32, 2, 1, 1});
    lm_ggml_tensor * q = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_Q8_0, 32, 2);
    lm_ggml_tensor * i = make(ctx.get(), LM_GGML_TYPE_I32, {32, 2, 1, 1});
    set_srcs(q, f);
    EXPECT_FALSE(supports(LM_GGML_OP_CPY, q)); // quantizing belongs to the quant kernels
    set_srcs(f, q);
    EXPECT_FALSE(supports(LM_GGML_OP_CPY, f));
    set_srcs(i, f);
    EXPECT_FALSE(supports(LM_GGML_OP_CPY, i)); // ggml 1.4.1 has no F32 -> I32 copy
    lm_ggml_tensor * small = make(ctx.get(), LM_GGML_TYPE_F32, {31, 2, 1, 1});
    set_srcs(small, f);
    EXPECT_FALSE(supports(LM_GGML_OP_CPY, small)); // element counts differ
}

// ---------------------------------------------------------------- SET / ACC
namespace {

void set_view_params(lm_ggml_tensor * d, size_t nb1, size_t nb2, size_t nb3, size_t offset, bool inplace) {
    const int32_t p[5] = {int32_t(nb1), int32_t(nb2), int32_t(nb3), int32_t(offset), inplace ? 1 : 0};
    std::memcpy(d->op_params, p, sizeof(p));
}

// Reference for SET/ACC: dst = a, then the view (element strides v1, v2, v3,
// element offset off) gets b (set) or += b (acc).
std::vector<double> view_op_ref(const std::vector<double> & a, const lm_ggml_tensor * b, int64_t v1, int64_t v2,
                                int64_t v3, int64_t off, bool acc) {
    std::vector<double> out = a;
    for_each(b, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t) {
        const int64_t e = off + i0 + i1 * v1 + i2 * v2 + i3 * v3;
        out[e] = (acc ? out[e] : 0.0) + get(b, i0, i1, i2, i3);
    });
    return out;
}

} // namespace

TEST(EwSetAcc, SetAndAccIntoViews) {
    for (lm_ggml_op op : {LM_GGML_OP_SET, LM_GGML_OP_ACC}) {
        for (bool inplace : {false, true}) {
            for (int nth : {1, 2, 3, 5}) {
                for (Layout bl : {Layout::Contiguous, Layout::Swap}) {
                    Context ctx;
                    // a (10, 6, 3), b (4, 3, 2) written at rows 1.., planes 1.., column 2
                    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {10, 6, 3, 1});
                    lm_ggml_tensor * b = make(ctx.get(), LM_GGML_TYPE_F32, {4, 3, 2, 1}, bl);
                    fill(a, 1);
                    fill(b, 2);
                    const std::vector<double> a0 = values(a);
                    lm_ggml_tensor * d =
                        inplace ? lm_ggml_view_tensor(ctx.get(), a) : make(ctx.get(), LM_GGML_TYPE_F32, {10, 6, 3, 1});
                    if (!inplace) poison(d);
                    set_srcs(d, a, b);
                    const size_t es = sizeof(float);
                    // view strides: every 2nd row, planes as in a; offset = plane 1, row 1, col 2
                    set_view_params(d, 2 * a->nb[1], a->nb[2], a->nb[3], a->nb[2] + a->nb[1] + 2 * es, inplace);
                    run_op(op, d, nth);
                    const auto ref = view_op_ref(a0, b, 20, 60, 180, 60 + 10 + 2, op == LM_GGML_OP_ACC);
                    SCOPED_TRACE(std::string(lm_ggml_op_name(op)) + (inplace ? " inplace" : "") +
                                 " nth=" + std::to_string(nth));
                    expect_close(d, ref, {0, 0}, "view op");
                    if (!inplace) expect_guards_intact(d);
                }
            }
        }
    }
}

// set_1d-style: a flat run crossing row boundaries, F16 data with F32 src1 (converted).
TEST(EwSetAcc, SetFlatRunAcrossRowsF16) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F16, {7, 4, 1, 1});
    lm_ggml_tensor * b = make(ctx.get(), LM_GGML_TYPE_F32, {12, 1, 1, 1});
    fill(a, 4);
    fill(b, 5);
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F16, {7, 4, 1, 1});
    poison(d);
    set_srcs(d, a, b);
    set_view_params(d, a->nb[1], a->nb[2], a->nb[3], 5 * 2, false);
    run_op(LM_GGML_OP_SET, d, 2);
    std::vector<double> ref = view_op_ref(values(a), b, 7, 28, 28, 5, false);
    for (double & v : ref) v = rounded(LM_GGML_TYPE_F16, v);
    expect_close(d, ref, {0, 0}, "set_1d");
    expect_guards_intact(d);
}

TEST(EwSetAcc, MisalignedOrOutOfBoundsViewsAreUnsupported) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {8, 4, 1, 1});
    lm_ggml_tensor * b = make(ctx.get(), LM_GGML_TYPE_F32, {4, 2, 1, 1});
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, {8, 4, 1, 1});
    set_srcs(d, a, b);
    set_view_params(d, a->nb[1], a->nb[2], a->nb[3], 2, false); // offset not a multiple of 4
    EXPECT_FALSE(supports(LM_GGML_OP_SET, d));
    set_view_params(d, a->nb[1], a->nb[2], a->nb[3], 3 * a->nb[1] + 16, false); // runs past the end
    EXPECT_FALSE(supports(LM_GGML_OP_ACC, d));
    set_view_params(d, a->nb[1], a->nb[2], a->nb[3], 2 * a->nb[1] + 16, false); // last element exactly at the end
    EXPECT_TRUE(supports(LM_GGML_OP_ACC, d));
}

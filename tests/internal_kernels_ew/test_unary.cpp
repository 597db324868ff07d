// The UNARY family and the one-input math ops (SQR, SQRT, LOG, SIN, COS,
// SCALE, CLAMP, LEAKY_RELU), checked against double-precision formulas.

#include "ew_test_util.h"

using namespace ewtest;

namespace {

double ref_unary(lm_ggml_unary_op op, double x) {
    switch (op) {
        case LM_GGML_UNARY_OP_ABS: return std::fabs(x);
        case LM_GGML_UNARY_OP_SGN: return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
        case LM_GGML_UNARY_OP_NEG: return -x;
        case LM_GGML_UNARY_OP_STEP: return x > 0 ? 1.0 : 0.0;
        case LM_GGML_UNARY_OP_TANH: return std::tanh(x);
        case LM_GGML_UNARY_OP_ELU: return x > 0 ? x : std::expm1(x);
        case LM_GGML_UNARY_OP_RELU: return x > 0 ? x : 0.0;
        case LM_GGML_UNARY_OP_SIGMOID: return 1.0 / (1.0 + std::exp(-x));
        case LM_GGML_UNARY_OP_GELU:
            return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * x * (1.0 + 0.044715 * x * x)));
        case LM_GGML_UNARY_OP_GELU_QUICK: return x / (1.0 + std::exp(-1.702 * x));
        case LM_GGML_UNARY_OP_SILU: return x / (1.0 + std::exp(-x));
        case LM_GGML_UNARY_OP_HARDSWISH: return x * std::min(1.0, std::max(0.0, (x + 3.0) / 6.0));
        case LM_GGML_UNARY_OP_HARDSIGMOID: return std::min(1.0, std::max(0.0, (x + 3.0) / 6.0));
        case LM_GGML_UNARY_OP_EXP: return std::exp(x);
        default: return NAN;
    }
}

// Float kernels differ from the double formula by a few float ulps; near
// zero crossings (gelu, silu) an absolute floor keeps the check meaningful.
Tol unary_tol(lm_ggml_type t) {
    Tol tol = tol_for(t);
    if (t == LM_GGML_TYPE_F32) tol = {1e-5, 1e-6};
    return tol;
}

void run_unary(lm_ggml_unary_op op, lm_ggml_type t, Layout l, bool inplace, int nth, bool through_dispatcher,
               Shape shape = {37, 3, 2, 2}) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), t, shape, l);
    fill(a, 100 + op, -6.0, 6.0);
    const std::vector<double> in = values(a);
    lm_ggml_tensor * d = inplace ? lm_ggml_view_tensor(ctx.get(), a) : make(ctx.get(), t, shape, Layout::Padded);
    if (!inplace) poison(d);
    set_srcs(d, a);
    lm_ggml_set_op_params_i32(d, 0, op);
    d->op = LM_GGML_OP_UNARY;
    const lm_cpu_op_desc & desc = through_dispatcher ? op_desc(LM_GGML_OP_UNARY) : unary_desc(op);
    ASSERT_TRUE(desc.supports(d));
    run(desc.forward, d, nth);
    std::vector<double> ref(in.size());
    for (size_t k = 0; k < in.size(); ++k) ref[k] = ref_unary(op, in[k]);
    expect_close(d, ref, unary_tol(t), lm_ggml_unary_op_name(op));
    if (!inplace) expect_guards_intact(d);
}

} // namespace

TEST(EwUnary, EveryOpF32) {
    for (int op = 0; op < LM_GGML_UNARY_OP_COUNT; ++op) {
        for (Layout l : {Layout::Contiguous, Layout::Padded, Layout::Cycle}) {
            SCOPED_TRACE(std::string(lm_ggml_unary_op_name(lm_ggml_unary_op(op))) + " " + layout_name(l));
            run_unary(lm_ggml_unary_op(op), LM_GGML_TYPE_F32, l, false, 2, false);
        }
    }
}

// One row and more threads than rows (generation): the row is cut into
// pieces, one per thread, in place too.
TEST(EwUnary, SingleRowSplitAcrossThreads) {
    for (int op = 0; op < LM_GGML_UNARY_OP_COUNT; ++op) {
        for (int64_t ne0 : {64, 100, 1536}) {
            for (int nth : {2, 3}) {
                SCOPED_TRACE(std::string(lm_ggml_unary_op_name(lm_ggml_unary_op(op))) + " ne0 " + std::to_string(ne0) +
                             " threads " + std::to_string(nth));
                run_unary(lm_ggml_unary_op(op), LM_GGML_TYPE_F32, Layout::Contiguous, false, nth, true, {ne0, 1, 1, 1});
                run_unary(lm_ggml_unary_op(op), LM_GGML_TYPE_F32, Layout::Contiguous, true, nth, true, {ne0, 1, 1, 1});
            }
        }
    }
}

TEST(EwUnary, EveryOpHalfTypesAndInPlace) {
    for (int op = 0; op < LM_GGML_UNARY_OP_COUNT; ++op) {
        for (lm_ggml_type t : {LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16}) {
            SCOPED_TRACE(std::string(lm_ggml_unary_op_name(lm_ggml_unary_op(op))) + " " + lm_ggml_type_name(t));
            run_unary(lm_ggml_unary_op(op), t, Layout::Swap, false, 3, false);
        }
        run_unary(lm_ggml_unary_op(op), LM_GGML_TYPE_F32, Layout::Padded, true, 3, true);
    }
}

// For F16, GELU must equal ggml's table entry bit for bit: the table holds
// fp16(gelu_f32(x)) with gelu_f32 the float tanh formula, for every fp16 x.
TEST(EwUnary, GeluF16MatchesGgmlTableDefinition) {
    Context ctx;
    std::vector<uint16_t> bits;
    for (uint32_t h = 0; h < 0x10000; ++h) {
        if (std::isfinite(lm_ggml_fp16_to_fp32(static_cast<lm_ggml_fp16_t>(h))))
            bits.push_back(static_cast<uint16_t>(h));
    }
    const int64_t n = static_cast<int64_t>(bits.size());
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F16, {n, 1, 1, 1});
    std::memcpy(a->data, bits.data(), n * 2);
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F16, {n, 1, 1, 1});
    set_srcs(d, a);
    lm_ggml_set_op_params_i32(d, 0, LM_GGML_UNARY_OP_GELU);
    run(unary_desc(LM_GGML_UNARY_OP_GELU).forward, d, 2);
    const lm_ggml_fp16_t * out = static_cast<const lm_ggml_fp16_t *>(d->data);
    int mismatches = 0;
    for (int64_t k = 0; k < n; ++k) {
        const float x = lm_ggml_fp16_to_fp32(bits[k]);
        const float g = 0.5f * x * (1.0f + tanhf(0.79788456080286535587989211986876f * x * (1.0f + 0.044715f * x * x)));
        if (out[k] != lm_ggml_fp32_to_fp16(g) && mismatches++ < 5) {
            ADD_FAILURE() << "x=" << x << " got bits " << out[k] << " want " << lm_ggml_fp32_to_fp16(g);
        }
    }
    EXPECT_EQ(mismatches, 0);
}

// ---------------------------------------------------------------- math ops
namespace {

struct MathCase {
    lm_ggml_op op;
    double lo, hi;
    std::function<double(double)> f;
};

} // namespace

TEST(EwMath, SqrSqrtLogSinCos) {
    const MathCase cases[] = {
        {LM_GGML_OP_SQR, -3, 3, [](double x) { return x * x; }},
        {LM_GGML_OP_SQRT, 0.01, 9, [](double x) { return std::sqrt(x); }},
        {LM_GGML_OP_LOG, 0.01, 9, [](double x) { return std::log(x); }},
        {LM_GGML_OP_SIN, -7, 7, [](double x) { return std::sin(x); }},
        {LM_GGML_OP_COS, -7, 7, [](double x) { return std::cos(x); }},
    };
    for (const MathCase & c : cases) {
        for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
            for (int nth : {1, 4}) {
                Context ctx;
                lm_ggml_tensor * a = make(ctx.get(), t, {21, 5, 3, 1}, Layout::Swap);
                fill(a, 17, c.lo, c.hi);
                lm_ggml_tensor * d = make(ctx.get(), t, {21, 5, 3, 1}, Layout::Padded);
                poison(d);
                set_srcs(d, a);
                run_op(c.op, d, nth);
                std::vector<double> ref = values(a);
                for (double & v : ref) v = c.f(v);
                Tol tol = t == LM_GGML_TYPE_F32 ? Tol{1e-6, 1e-6} : tol_for(t);
                expect_close(d, ref, tol, lm_ggml_op_name(c.op));
                expect_guards_intact(d);
            }
        }
    }
}

TEST(EwMath, ScaleInPlaceAndStrided) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {19, 6, 1, 1}, Layout::Padded);
    fill(a, 21);
    std::vector<double> ref = values(a);
    for (double & v : ref) v *= -0.125;
    lm_ggml_tensor * d = lm_ggml_view_tensor(ctx.get(), a);
    set_srcs(d, a);
    lm_ggml_set_op_params_f32(d, 0, -0.125f);
    run_op(LM_GGML_OP_SCALE, d, 4);
    expect_close(d, ref, {0, 0}, "scale"); // a power of two scales exactly
}

TEST(EwMath, ClampIncludingNaN) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_F32, {10, 2, 1, 1});
    fill(a, 22, -3, 3);
    set(a, NAN, 4, 1);
    const std::vector<double> in = values(a);
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_F32, {10, 2, 1, 1});
    set_srcs(d, a);
    lm_ggml_set_op_params_f32(d, 0, -1.5f);
    lm_ggml_set_op_params_f32(d, 1, 0.5f);
    run_op(LM_GGML_OP_CLAMP, d, 2);
    std::vector<double> ref(in.size());
    for (size_t k = 0; k < in.size(); ++k) ref[k] = std::isnan(in[k]) ? 0.5 : std::min(0.5, std::max(-1.5, in[k]));
    expect_close(d, ref, {0, 0}, "clamp"); // ggml's MIN-then-MAX sends NaN to max
}

TEST(EwMath, LeakyRelu) {
    for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_BF16}) {
        Context ctx;
        lm_ggml_tensor * a = make(ctx.get(), t, {17, 4, 1, 1}, Layout::Cycle);
        fill(a, 23);
        lm_ggml_tensor * d = make(ctx.get(), t, {17, 4, 1, 1});
        set_srcs(d, a);
        lm_ggml_set_op_params_f32(d, 0, 0.1f);
        run_op(LM_GGML_OP_LEAKY_RELU, d, 3);
        std::vector<double> ref = values(a);
        for (double & v : ref) v = v > 0 ? v : 0.1 * v;
        expect_close(d, ref, tol_for(t), "leaky_relu");
    }
}

TEST(EwMath, NonFloatTypesAreUnsupported) {
    Context ctx;
    lm_ggml_tensor * a = make(ctx.get(), LM_GGML_TYPE_I32, {8, 2, 1, 1});
    lm_ggml_tensor * d = make(ctx.get(), LM_GGML_TYPE_I32, {8, 2, 1, 1});
    set_srcs(d, a);
    EXPECT_FALSE(supports(LM_GGML_OP_SQR, d));
    lm_ggml_set_op_params_i32(d, 0, LM_GGML_UNARY_OP_RELU);
    EXPECT_FALSE(supports(LM_GGML_OP_UNARY, d));
    lm_ggml_tensor * f = make(ctx.get(), LM_GGML_TYPE_F32, {8, 2, 1, 1});
    lm_ggml_tensor * g = make(ctx.get(), LM_GGML_TYPE_F32, {8, 2, 1, 1});
    set_srcs(g, f);
    lm_ggml_set_op_params_i32(g, 0, LM_GGML_UNARY_OP_COUNT); // not a unary op
    EXPECT_FALSE(supports(LM_GGML_OP_UNARY, g));
}

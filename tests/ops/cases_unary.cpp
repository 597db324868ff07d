// Every LM_GGML_OP_UNARY function, plus SQR, SQRT, LOG, SIN and COS: odd and
// even shapes, in place, rows strided in memory (ggml allows any row stride
// for unary ops: contiguous_1), and F16 variants (not required of the CPU:
// ggml's CPU backend computes these ops in F32 only).
#include "op_case.h"

#include <cmath>

namespace opstest {
namespace {

struct UnaryDef {
    const char * name;
    lm_ggml_tensor * (*make)(lm_ggml_context *, lm_ggml_tensor *);
    lm_ggml_tensor * (*make_inplace)(lm_ggml_context *, lm_ggml_tensor *);
    double (*f)(double);
    double lo, hi; // input domain
    bool exact;    // result is exactly representable (compare bit for bit)
};

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double hardsigmoid(double x) { return std::fmin(1.0, std::fmax(0.0, (x + 3.0) / 6.0)); }

// ggml's tanh approximation of GELU
double gelu(double x) {
    const double sqrt_2_over_pi = 0.79788456080286535587989211986876;
    return 0.5 * x * (1.0 + std::tanh(sqrt_2_over_pi * x * (1.0 + 0.044715 * x * x)));
}

// hardswish/hardsigmoid have no _inplace constructor: use lm_ggml_unary_inplace
lm_ggml_tensor * hardswish_inplace(lm_ggml_context * c, lm_ggml_tensor * a) {
    return lm_ggml_unary_inplace(c, a, LM_GGML_UNARY_OP_HARDSWISH);
}
lm_ggml_tensor * hardsigmoid_inplace(lm_ggml_context * c, lm_ggml_tensor * a) {
    return lm_ggml_unary_inplace(c, a, LM_GGML_UNARY_OP_HARDSIGMOID);
}

const UnaryDef kUnary[] = {
    {"ABS", lm_ggml_abs, lm_ggml_abs_inplace, [](double x) { return std::fabs(x); }, -3, 3, true},
    {"SGN", lm_ggml_sgn, lm_ggml_sgn_inplace, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }, -3, 3, true},
    {"NEG", lm_ggml_neg, lm_ggml_neg_inplace, [](double x) { return -x; }, -3, 3, true},
    {"STEP", lm_ggml_step, lm_ggml_step_inplace, [](double x) { return x > 0 ? 1.0 : 0.0; }, -3, 3, true},
    {"TANH", lm_ggml_tanh, lm_ggml_tanh_inplace, [](double x) { return std::tanh(x); }, -3, 3, false},
    {"ELU", lm_ggml_elu, lm_ggml_elu_inplace, [](double x) { return x > 0 ? x : std::expm1(x); }, -3, 3, false},
    {"RELU", lm_ggml_relu, lm_ggml_relu_inplace, [](double x) { return x > 0 ? x : 0.0; }, -3, 3, true},
    {"SIGMOID", lm_ggml_sigmoid, lm_ggml_sigmoid_inplace, sigmoid, -6, 6, false},
    {"GELU", lm_ggml_gelu, lm_ggml_gelu_inplace, gelu, -4, 4, false},
    {"GELU_QUICK", lm_ggml_gelu_quick, lm_ggml_gelu_quick_inplace, [](double x) { return x * sigmoid(1.702 * x); }, -4,
     4, false},
    {"SILU", lm_ggml_silu, lm_ggml_silu_inplace, [](double x) { return x * sigmoid(x); }, -6, 6, false},
    {"HARDSWISH", lm_ggml_hardswish, hardswish_inplace, [](double x) { return x * hardsigmoid(x); }, -5, 5, false},
    {"HARDSIGMOID", lm_ggml_hardsigmoid, hardsigmoid_inplace, hardsigmoid, -5, 5, false},
    {"EXP", lm_ggml_exp, lm_ggml_exp_inplace, [](double x) { return std::exp(x); }, -3, 3, false},
    // element-wise math ops with their own op codes
    {"SQR", lm_ggml_sqr, lm_ggml_sqr_inplace, [](double x) { return x * x; }, -3, 3, false},
    {"SQRT", lm_ggml_sqrt, lm_ggml_sqrt_inplace, [](double x) { return std::sqrt(x); }, 0.05, 4, false},
    {"LOG", lm_ggml_log, lm_ggml_log_inplace, [](double x) { return std::log(x); }, 0.05, 4, false},
    {"SIN", lm_ggml_sin, lm_ggml_sin_inplace, [](double x) { return std::sin(x); }, -4, 4, false},
    {"COS", lm_ggml_cos, lm_ggml_cos_inplace, [](double x) { return std::cos(x); }, -4, 4, false},
};

bool is_unary_op(const UnaryDef & u) {
    const std::string n = u.name;
    return n != "SQR" && n != "SQRT" && n != "LOG" && n != "SIN" && n != "COS";
}

OpCase unary_case(const UnaryDef & u, const std::string & tag) {
    OpCase c;
    c.name = (is_unary_op(u) ? std::string("UNARY_") : std::string()) + u.name + "_" + tag;
    c.cmp = u.exact ? Cmp::Exact : Cmp::Nmse;
    return c;
}

} // namespace

void add_unary_cases(CaseList & t1, CaseList & /*t2*/) {
    for (const UnaryDef & u : kUnary) {
        for (Shape s : {sh(67, 3, 2, 1), sh(16, 8, 2, 2)}) {
            OpCase c = unary_case(u, std::string("f32_") + shape_str(s));
            c.build = [&u, s](Builder & b) { return u.make(b.ctx, b.uniform(LM_GGML_TYPE_F32, s, u.lo, u.hi)); };
            c.ref = [&u](const Inputs & in) { return map1(in[0], u.f); };
            t1.push_back(c);
        }
        {
            OpCase c = unary_case(u, "f32_inplace");
            c.build = [&u](Builder & b) {
                return u.make_inplace(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(33, 5, 2, 1), u.lo, u.hi));
            };
            c.ref = [&u](const Inputs & in) { return map1(in[0], u.f); };
            t1.push_back(c);
        }
        {
            // rows 10 elements long, 16 apart in memory; the result is contiguous
            OpCase c = unary_case(u, "f32_strided_rows");
            c.build = [&u](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(16, 6, 1, 1), u.lo, u.hi);
                return u.make(b.ctx, lm_ggml_view_2d(b.ctx, a, 10, 6, a->nb[1], 3 * 4));
            };
            c.ref = [&u](const Inputs & in) {
                return map1(lmtest::strided_view(in[0], sh(10, 6), sh(1, 16, 0, 0), 3), u.f);
            };
            t1.push_back(c);
        }
        {
            OpCase c = unary_case(u, "f16_" + shape_str(sh(33, 4, 2, 1)));
            c.cpu_required = false;
            c.build = [&u](Builder & b) {
                return u.make(b.ctx, b.uniform(LM_GGML_TYPE_F16, sh(33, 4, 2, 1), u.lo, u.hi));
            };
            c.ref = [&u](const Inputs & in) { return map1(in[0], u.f); };
            t1.push_back(c);
        }
    }
}

} // namespace opstest

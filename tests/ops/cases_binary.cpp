// ADD, SUB, MUL, DIV (broadcasting, non-contiguous sources, in place), ADD1,
// ACC, SET, SCALE and CLAMP.
//
// Semantics (ggml): for the binary ops src1 is repeated along every dim to
// src0's shape (ne0(a) % ne0(b) == 0 etc.), dst = a op b[i0 % ne0b, ...].
// ACC/SET view the (contiguous) dst with byte strides nb1..nb3 and a byte
// offset taken from op_params and add/assign src1 there; the rest is src0.
#include "op_case.h"

#include <algorithm>
#include <cmath>

namespace opstest {
namespace {

enum class Bin { Add, Sub, Mul, Div };

const char * bin_name(Bin op) {
    switch (op) {
        case Bin::Add: return "ADD";
        case Bin::Sub: return "SUB";
        case Bin::Mul: return "MUL";
        default: return "DIV";
    }
}

double bin_apply(Bin op, double x, double y) {
    switch (op) {
        case Bin::Add: return x + y;
        case Bin::Sub: return x - y;
        case Bin::Mul: return x * y;
        default: return x / y;
    }
}

lm_ggml_tensor * bin_build(Bin op, lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, bool inplace) {
    switch (op) {
        case Bin::Add: return inplace ? lm_ggml_add_inplace(ctx, a, b) : lm_ggml_add(ctx, a, b);
        case Bin::Sub: return inplace ? lm_ggml_sub_inplace(ctx, a, b) : lm_ggml_sub(ctx, a, b);
        case Bin::Mul: return inplace ? lm_ggml_mul_inplace(ctx, a, b) : lm_ggml_mul(ctx, a, b);
        default: return inplace ? lm_ggml_div_inplace(ctx, a, b) : lm_ggml_div(ctx, a, b);
    }
}

// dst = a op repeat(b)
HTensor bin_ref(Bin op, const HTensor & a, const HTensor & b) {
    return generate(a.ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        return bin_apply(op, a.at(i0, i1, i2, i3), b.at(i0 % b.ne[0], i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]));
    });
}

// second operand: for DIV keep |b| in [0.5, 1.5] so the quotient is well conditioned
lm_ggml_tensor * second_operand(Builder & b, Bin op, lm_ggml_type type, Shape ne) {
    if (op != Bin::Div) {
        return b.uniform(type, ne);
    }
    std::vector<double> v(static_cast<size_t>(ne[0] * ne[1] * ne[2] * ne[3]));
    for (double & x : v) {
        x = b.rng().uniform(0.5, 1.5) * (b.rng().next() & 1 ? 1.0 : -1.0);
    }
    return b.values(type, ne, v);
}

void add_broadcast_cases(CaseList & t1) {
    struct Shapes {
        Shape a, b;
    };
    const Shapes shapes[] = {
        {sh(10, 5, 4, 3), sh(10, 5, 4, 3)}, // same shape
        {sh(10, 5, 4, 3), sh(10, 1, 1, 1)}, // one row for all
        {sh(10, 5, 4, 3), sh(10, 5, 1, 1)}, // one matrix for all
        {sh(10, 5, 4, 3), sh(1, 5, 1, 3)},  // scalar per row
        {sh(10, 5, 4, 3), sh(5, 1, 2, 1)},  // repeated along dim 0 too
        {sh(67, 3, 1, 1), sh(67, 1, 1, 1)}, // vector tails
        {sh(16, 8, 2, 1), sh(1, 1, 1, 1)},  // scalar
        {sh(8, 8, 4, 3), sh(1, 1, 4, 1)},   // scalar per plane (a conv bias): whole planes at once
        {sh(7, 3, 2, 3), sh(1, 1, 2, 3)},   // the same, odd plane sizes, one value per plane
    };
    for (Bin op : {Bin::Add, Bin::Sub, Bin::Mul, Bin::Div}) {
        for (const Shapes & s : shapes) {
            for (bool inplace : {false, true}) {
                OpCase c;
                c.name = std::string(bin_name(op)) + "_f32_" + shape_str(s.a) + "_by_" + shape_str(s.b) +
                         (inplace ? "_inplace" : "");
                c.build = [=](Builder & b) {
                    lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, s.a);
                    lm_ggml_tensor * y = second_operand(b, op, LM_GGML_TYPE_F32, s.b);
                    return bin_build(op, b.ctx, a, y, inplace);
                };
                c.ref = [=](const Inputs & in) { return bin_ref(op, in[0], in[1]); };
                t1.push_back(c);
            }
        }
        // src0 permuted in dims 1/2 (rows still contiguous), result written through the view when in place
        for (bool inplace : {false, true}) {
            OpCase c;
            c.name = std::string(bin_name(op)) + "_f32_src0_permuted" + (inplace ? "_inplace" : "");
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(12, 3, 5, 2));
                lm_ggml_tensor * ap = lm_ggml_permute(b.ctx, a, 0, 2, 1, 3); // (12, 5, 3, 2)
                lm_ggml_tensor * y = second_operand(b, op, LM_GGML_TYPE_F32, sh(12, 5, 1, 2));
                return bin_build(op, b.ctx, ap, y, inplace);
            };
            c.ref = [=](const Inputs & in) { return bin_ref(op, permute(in[0], 0, 2, 1, 3), in[1]); };
            t1.push_back(c);
        }
        // src1 transposed: its elements are not contiguous along dim 0
        {
            OpCase c;
            c.name = std::string(bin_name(op)) + "_f32_src1_transposed";
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(9, 7, 2, 1));
                lm_ggml_tensor * y = second_operand(b, op, LM_GGML_TYPE_F32, sh(7, 9, 1, 1));
                return bin_build(op, b.ctx, a, lm_ggml_transpose(b.ctx, y), false); // (9, 7)
            };
            c.ref = [=](const Inputs & in) { return bin_ref(op, in[0], transpose(in[1])); };
            t1.push_back(c);
        }
    }
}

// ADD with half-precision operands (ggml: same shapes only)
void add_half_add_cases(CaseList & t1) {
    struct Types {
        lm_ggml_type a, b;
    };
    for (Types t : {Types{LM_GGML_TYPE_F16, LM_GGML_TYPE_F16}, Types{LM_GGML_TYPE_F16, LM_GGML_TYPE_F32},
                    Types{LM_GGML_TYPE_BF16, LM_GGML_TYPE_BF16}, Types{LM_GGML_TYPE_BF16, LM_GGML_TYPE_F32}}) {
        for (bool inplace : {false, true}) {
            OpCase c;
            c.name =
                std::string("ADD_") + type_str(t.a) + "_" + type_str(t.b) + "_33x4x3x1" + (inplace ? "_inplace" : "");
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(t.a, sh(33, 4, 3, 1));
                lm_ggml_tensor * y = b.uniform(t.b, sh(33, 4, 3, 1));
                return inplace ? lm_ggml_add_inplace(b.ctx, a, y) : lm_ggml_add(b.ctx, a, y);
            };
            c.ref = [](const Inputs & in) { return bin_ref(Bin::Add, in[0], in[1]); };
            t1.push_back(c);
        }
    }
}

void add_add1_cases(CaseList & t1) {
    struct Types {
        lm_ggml_type a, b;
    };
    for (Types t : {Types{LM_GGML_TYPE_F32, LM_GGML_TYPE_F32}, Types{LM_GGML_TYPE_F16, LM_GGML_TYPE_F32},
                    Types{LM_GGML_TYPE_F16, LM_GGML_TYPE_F16}}) {
        for (bool inplace : {false, true}) {
            OpCase c;
            c.name =
                std::string("ADD1_") + type_str(t.a) + "_" + type_str(t.b) + "_10x5x4x3" + (inplace ? "_inplace" : "");
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(t.a, sh(10, 5, 4, 3));
                lm_ggml_tensor * s = b.uniform(t.b, sh(1));
                return inplace ? lm_ggml_add1_inplace(b.ctx, a, s) : lm_ggml_add1(b.ctx, a, s);
            };
            c.ref = [](const Inputs & in) { return map1(in[0], [&](double x) { return x + in[1].v[0]; }); };
            t1.push_back(c);
        }
    }
}

// A dst viewed with element strides (s1, s2, s3) at element offset off, shaped like b.
template <class F>
HTensor strided_update(const HTensor & a, const HTensor & b, int64_t s1, int64_t s2, int64_t s3, int64_t off, F f) {
    HTensor r = a;
    for (int64_t i3 = 0; i3 < b.ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < b.ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < b.ne[1]; ++i1)
                for (int64_t i0 = 0; i0 < b.ne[0]; ++i0) {
                    double & d = r.v[static_cast<size_t>(off + i0 + i1 * s1 + i2 * s2 + i3 * s3)];
                    d = f(d, b.at(i0, i1, i2, i3));
                }
    return r;
}

struct Window {
    const char * tag;
    Shape a, b;
    int64_t s1, s2, s3, off; // element strides/offset of the window in a
};

void add_acc_set_cases(CaseList & t1) {
    const Window windows[] = {
        // a (10, 6, 4) F32: its own strides, window starting at row 2, column 3
        {"own_strides", sh(10, 6, 4, 1), sh(4, 3, 2, 1), 10, 60, 240, 2 * 10 + 3},
        // every other row, every other matrix
        {"skip_rows", sh(10, 6, 4, 1), sh(5, 3, 2, 1), 20, 120, 240, 1},
        // 1-d window
        {"1d", sh(10, 6, 1, 1), sh(17, 1, 1, 1), 10, 60, 60, 7},
    };
    for (const Window & w : windows) {
        for (bool inplace : {false, true}) {
            for (int which = 0; which < 2; ++which) { // 0: ACC, 1: SET
                const bool is_set = which == 1;
                OpCase c;
                c.name = std::string(is_set ? "SET" : "ACC") + "_f32_" + w.tag + (inplace ? "_inplace" : "");
                c.build = [=](Builder & b) {
                    lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, w.a);
                    lm_ggml_tensor * y = b.uniform(LM_GGML_TYPE_F32, w.b);
                    const size_t nb1 = w.s1 * 4, nb2 = w.s2 * 4, nb3 = w.s3 * 4, off = w.off * 4;
                    if (is_set) {
                        return inplace ? lm_ggml_set_inplace(b.ctx, a, y, nb1, nb2, nb3, off)
                                       : lm_ggml_set(b.ctx, a, y, nb1, nb2, nb3, off);
                    }
                    return inplace ? lm_ggml_acc_inplace(b.ctx, a, y, nb1, nb2, nb3, off)
                                   : lm_ggml_acc(b.ctx, a, y, nb1, nb2, nb3, off);
                };
                c.ref = [=](const Inputs & in) {
                    if (is_set) {
                        return strided_update(in[0], in[1], w.s1, w.s2, w.s3, w.off,
                                              [](double, double y) { return y; });
                    }
                    return strided_update(in[0], in[1], w.s1, w.s2, w.s3, w.off,
                                          [](double x, double y) { return x + y; });
                };
                c.cmp = is_set ? Cmp::Exact : Cmp::Nmse;
                t1.push_back(c);
            }
        }
    }
    // set_1d / set_2d and an I32 destination
    {
        OpCase c;
        c.name = "SET_1d_f32_offset";
        c.cmp = Cmp::Exact;
        c.build = [](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(40));
            lm_ggml_tensor * y = b.uniform(LM_GGML_TYPE_F32, sh(13));
            return lm_ggml_set_1d(b.ctx, a, y, 9 * 4);
        };
        c.ref = [](const Inputs & in) {
            return strided_update(in[0], in[1], 0, 0, 0, 9, [](double, double y) { return y; });
        };
        t1.push_back(c);
    }
    {
        OpCase c;
        c.name = "SET_2d_f32_inplace";
        c.cmp = Cmp::Exact;
        c.build = [](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(12, 7));
            lm_ggml_tensor * y = b.uniform(LM_GGML_TYPE_F32, sh(5, 4));
            return lm_ggml_set_2d_inplace(b.ctx, a, y, 12 * 4, (1 * 12 + 6) * 4);
        };
        c.ref = [](const Inputs & in) {
            return strided_update(in[0], in[1], 12, 48, 48, 18, [](double, double y) { return y; });
        };
        t1.push_back(c);
    }
    {
        OpCase c;
        c.name = "SET_i32_own_strides";
        c.cmp = Cmp::Exact;
        c.build = [](Builder & b) {
            std::vector<double> av(8 * 5 * 3), yv(3 * 2 * 2);
            for (double & x : av) x = static_cast<double>(b.rng().int_in(-1000, 1000));
            for (double & x : yv) x = static_cast<double>(b.rng().int_in(-1000, 1000));
            lm_ggml_tensor * a = b.values(LM_GGML_TYPE_I32, sh(8, 5, 3), av);
            lm_ggml_tensor * y = b.values(LM_GGML_TYPE_I32, sh(3, 2, 2), yv);
            return lm_ggml_set(b.ctx, a, y, a->nb[1], a->nb[2], a->nb[3], (8 + 4) * 4);
        };
        c.ref = [](const Inputs & in) {
            return strided_update(in[0], in[1], 8, 40, 120, 12, [](double, double y) { return y; });
        };
        t1.push_back(c);
    }
}

void add_scale_clamp_cases(CaseList & t1) {
    for (Shape s : {sh(10, 5, 4, 3), sh(67, 3, 1, 1)}) {
        for (bool inplace : {false, true}) {
            OpCase c;
            c.name = "SCALE_f32_" + shape_str(s) + (inplace ? "_inplace" : "");
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, s);
                return inplace ? lm_ggml_scale_inplace(b.ctx, a, 0.37f) : lm_ggml_scale(b.ctx, a, 0.37f);
            };
            c.ref = [](const Inputs & in) {
                return map1(in[0], [](double x) { return x * static_cast<double>(0.37f); });
            };
            t1.push_back(c);
        }
    }
    {
        OpCase c;
        c.name = "SCALE_f32_strided_rows";
        c.build = [](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(16, 5));
            return lm_ggml_scale(b.ctx, lm_ggml_view_2d(b.ctx, a, 10, 5, a->nb[1], 2 * 4), -1.5f);
        };
        c.ref = [](const Inputs & in) {
            return map1(lmtest::strided_view(in[0], sh(10, 5), sh(1, 16, 0, 0), 2), [](double x) { return -1.5 * x; });
        };
        t1.push_back(c);
    }
    for (Shape s : {sh(10, 5, 4, 3), sh(67, 3, 1, 1)}) {
        OpCase c;
        c.name = "CLAMP_f32_" + shape_str(s);
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) { return lm_ggml_clamp(b.ctx, b.uniform(LM_GGML_TYPE_F32, s, -2, 2), -0.5f, 0.7f); };
        c.ref = [](const Inputs & in) {
            return map1(in[0], [](double x) { return std::min(std::max(x, -0.5), static_cast<double>(0.7f)); });
        };
        t1.push_back(c);
    }
}

} // namespace

void add_binary_cases(CaseList & t1, CaseList & /*t2*/) {
    add_broadcast_cases(t1);
    add_half_add_cases(t1);
    add_add1_cases(t1);
    add_acc_set_cases(t1);
    add_scale_clamp_cases(t1);
}

} // namespace opstest

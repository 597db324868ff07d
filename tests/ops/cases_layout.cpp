// DUP, CPY (F32/F16/BF16 in every direction, permuted sources and
// destinations), CONT, RESHAPE, VIEW, PERMUTE, TRANSPOSE and GET_ROWS.
// View ops compute nothing: their cases read the view itself through its own
// strides, so wrong ne/nb/offsets show up as wrong values.
#include "op_case.h"

namespace opstest {
namespace {

const lm_ggml_type kFloatTypes[] = {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16};

// the elements of `a` in logical order, laid out in shape ne
HTensor reflow(const HTensor & a, Shape ne) { return reshape(a, ne); }

void add_dup_cpy_cases(CaseList & t1) {
    for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
        OpCase c;
        c.name = std::string("DUP_") + type_str(t) + "_permuted";
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) {
            return lm_ggml_dup(b.ctx, lm_ggml_permute(b.ctx, b.uniform(t, sh(5, 4, 3, 2)), 2, 0, 3, 1));
        };
        c.ref = [](const Inputs & in) { return permute(in[0], 2, 0, 3, 1); };
        t1.push_back(c);
    }
    {
        OpCase c;
        c.name = "DUP_f32_inplace";
        c.cmp = Cmp::Exact;
        c.build = [](Builder & b) { return lm_ggml_dup_inplace(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(9, 4, 3))); };
        c.ref = [](const Inputs & in) { return in[0]; };
        t1.push_back(c);
    }
    // contiguous -> contiguous, every pair of float types, and a different shape
    for (lm_ggml_type from : kFloatTypes) {
        for (lm_ggml_type to : kFloatTypes) {
            OpCase c;
            c.name = std::string("CPY_") + type_str(from) + "_to_" + type_str(to) + "_33x4x3x1";
            c.cmp = Cmp::Exact;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(from, sh(33, 4, 3, 1), -3, 3);
                lm_ggml_tensor * d = b.uniform(to, sh(33, 4, 3, 1));
                return lm_ggml_cpy(b.ctx, a, d);
            };
            c.ref = [](const Inputs & in) { return in[0]; };
            t1.push_back(c);
        }
    }
    for (lm_ggml_type to : kFloatTypes) {
        OpCase c;
        c.name = std::string("CPY_f32_to_") + type_str(to) + "_reshaped_12x5_to_20x3";
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(12, 5));
            lm_ggml_tensor * d = b.uniform(to, sh(20, 3));
            return lm_ggml_cpy(b.ctx, a, d);
        };
        c.ref = [](const Inputs & in) { return reflow(in[0], sh(20, 3)); };
        t1.push_back(c);
    }
    // permuted source (rows not contiguous), contiguous destination
    for (lm_ggml_type from : kFloatTypes) {
        for (lm_ggml_type to : kFloatTypes) {
            OpCase c;
            c.name = std::string("CPY_") + type_str(from) + "_to_" + type_str(to) + "_src_permuted";
            c.cmp = Cmp::Exact;
            // ggml's CPU converts F16 -> BF16 only from rows that are contiguous
            c.cpu_required = !(from == LM_GGML_TYPE_F16 && to == LM_GGML_TYPE_BF16);
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(from, sh(6, 5, 4, 3), -3, 3);
                lm_ggml_tensor * ap = lm_ggml_permute(b.ctx, a, 1, 2, 0, 3); // (4, 6, 5, 3)
                lm_ggml_tensor * d = b.uniform(to, sh(4, 6, 5, 3));
                return lm_ggml_cpy(b.ctx, ap, d);
            };
            c.ref = [](const Inputs & in) { return permute(in[0], 1, 2, 0, 3); };
            t1.push_back(c);
        }
    }
    // contiguous source, transposed/permuted destination view
    for (lm_ggml_type from : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
        for (lm_ggml_type to : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
            OpCase c;
            c.name = std::string("CPY_") + type_str(from) + "_to_" + type_str(to) + "_dst_permuted";
            c.cmp = Cmp::Exact;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(from, sh(7, 3, 4, 1), -3, 3);
                lm_ggml_tensor * d = b.uniform(to, sh(3, 4, 7, 1));
                return lm_ggml_cpy(b.ctx, a, lm_ggml_permute(b.ctx, d, 1, 2, 0, 3)); // d viewed as (7, 3, 4)
            };
            c.ref = [](const Inputs & in) { return in[0]; };
            t1.push_back(c);
        }
    }
    {
        OpCase c;
        c.name = "CPY_cast_f32_to_f16";
        c.cmp = Cmp::Exact;
        c.build = [](Builder & b) {
            return lm_ggml_cast(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(19, 3, 2), -70000, 70000), LM_GGML_TYPE_F16);
        };
        c.ref = [](const Inputs & in) { return in[0]; }; // rounding (and overflow to inf) happens in the harness
        t1.push_back(c);
    }
}

void add_cont_cases(CaseList & t1) {
    for (lm_ggml_type t : kFloatTypes) {
        OpCase c;
        c.name = std::string("CONT_") + type_str(t) + "_permuted";
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) {
            return lm_ggml_cont(b.ctx, lm_ggml_permute(b.ctx, b.uniform(t, sh(5, 4, 3, 2)), 0, 2, 3, 1));
        };
        c.ref = [](const Inputs & in) { return permute(in[0], 0, 2, 3, 1); };
        t1.push_back(c);
    }
    {
        OpCase c;
        c.name = "CONT_f32_transposed";
        c.cmp = Cmp::Exact;
        c.build = [](Builder & b) {
            return lm_ggml_cont(b.ctx, lm_ggml_transpose(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(33, 17))));
        };
        c.ref = [](const Inputs & in) { return transpose(in[0]); };
        t1.push_back(c);
    }
    {
        OpCase c;
        c.name = "CONT_f32_strided_view";
        c.cmp = Cmp::Exact;
        c.build = [](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(16, 6, 3));
            return lm_ggml_cont(b.ctx, lm_ggml_view_3d(b.ctx, a, 10, 4, 3, a->nb[1], a->nb[2], a->nb[1] + 4 * 4));
        };
        c.ref = [](const Inputs & in) { return lmtest::strided_view(in[0], sh(10, 4, 3), sh(1, 16, 96, 0), 16 + 4); };
        t1.push_back(c);
    }
    {
        OpCase c;
        c.name = "CONT_2d_f32_of_permuted";
        c.cmp = Cmp::Exact;
        c.build = [](Builder & b) {
            lm_ggml_tensor * p =
                lm_ggml_permute(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(4, 3, 5)), 0, 2, 1, 3); // (4, 5, 3)
            return lm_ggml_cont_2d(b.ctx, p, 20, 3);
        };
        c.ref = [](const Inputs & in) { return reflow(permute(in[0], 0, 2, 1, 3), sh(20, 3)); };
        t1.push_back(c);
    }
}

void add_view_cases(CaseList & t1) {
    auto view_case = [&](const std::string & name, Shape leaf,
                         std::function<lm_ggml_tensor *(Builder &, lm_ggml_tensor *)> mk,
                         std::function<HTensor(const HTensor &)> ref) {
        OpCase c;
        c.name = name;
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) { return mk(b, b.uniform(LM_GGML_TYPE_F32, leaf)); };
        c.ref = [=](const Inputs & in) { return ref(in[0]); };
        t1.push_back(c);
    };
    view_case(
        "RESHAPE_2d_f32", sh(6, 4, 5),
        [](Builder & b, lm_ggml_tensor * a) { return lm_ggml_reshape_2d(b.ctx, a, 12, 10); },
        [](const HTensor & a) { return reshape(a, sh(12, 10)); });
    view_case(
        "RESHAPE_4d_f32", sh(30, 4),
        [](Builder & b, lm_ggml_tensor * a) { return lm_ggml_reshape_4d(b.ctx, a, 5, 3, 4, 2); },
        [](const HTensor & a) { return reshape(a, sh(5, 3, 4, 2)); });
    view_case(
        "VIEW_1d_f32_offset", sh(40),
        [](Builder & b, lm_ggml_tensor * a) { return lm_ggml_view_1d(b.ctx, a, 17, 11 * 4); },
        [](const HTensor & a) { return lmtest::strided_view(a, sh(17), sh(1, 0, 0, 0), 11); });
    view_case(
        "VIEW_2d_f32_strided", sh(12, 8),
        [](Builder & b, lm_ggml_tensor * a) { return lm_ggml_view_2d(b.ctx, a, 5, 4, 2 * a->nb[1], a->nb[1] + 3 * 4); },
        [](const HTensor & a) { return lmtest::strided_view(a, sh(5, 4), sh(1, 24, 0, 0), 15); });
    view_case(
        "VIEW_3d_f32", sh(8, 6, 4),
        [](Builder & b, lm_ggml_tensor * a) {
            return lm_ggml_view_3d(b.ctx, a, 4, 3, 2, a->nb[1], 2 * a->nb[2], 2 * 4);
        },
        [](const HTensor & a) { return lmtest::strided_view(a, sh(4, 3, 2), sh(1, 8, 96, 0), 2); });
    view_case(
        "VIEW_4d_f32", sh(6, 5, 4, 3),
        [](Builder & b, lm_ggml_tensor * a) {
            return lm_ggml_view_4d(b.ctx, a, 3, 2, 2, 2, a->nb[1], a->nb[2], a->nb[3], a->nb[1] + 4);
        },
        [](const HTensor & a) { return lmtest::strided_view(a, sh(3, 2, 2, 2), sh(1, 6, 30, 120), 7); });
    struct Axes {
        int a0, a1, a2, a3;
    };
    for (Axes ax : {Axes{0, 2, 1, 3}, Axes{1, 0, 2, 3}, Axes{2, 0, 3, 1}, Axes{3, 2, 1, 0}}) {
        const std::string name = "PERMUTE_f32_" + std::to_string(ax.a0) + std::to_string(ax.a1) +
                                 std::to_string(ax.a2) + std::to_string(ax.a3);
        view_case(
            name, sh(5, 4, 3, 2),
            [ax](Builder & b, lm_ggml_tensor * a) { return lm_ggml_permute(b.ctx, a, ax.a0, ax.a1, ax.a2, ax.a3); },
            [ax](const HTensor & a) { return permute(a, ax.a0, ax.a1, ax.a2, ax.a3); });
    }
    view_case(
        "TRANSPOSE_f32", sh(7, 5, 3), [](Builder & b, lm_ggml_tensor * a) { return lm_ggml_transpose(b.ctx, a); },
        [](const HTensor & a) { return transpose(a); });
}

HTensor get_rows_ref(const HTensor & table, const HTensor & ids) {
    // table (ne0, rows, B, 1), ids (n, B, 1, 1) -> (ne0, n, B, 1)
    return generate(sh(table.ne[0], ids.ne[0], ids.ne[1], ids.ne[2]),
                    [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
                        const int64_t row = static_cast<int64_t>(ids.at(i1, i2, i3));
                        return table.at(i0, row, i2, i3);
                    });
}

void add_get_rows_cases(CaseList & t1) {
    const lm_ggml_type types[] = {LM_GGML_TYPE_F32,  LM_GGML_TYPE_F16,  LM_GGML_TYPE_BF16, LM_GGML_TYPE_I32,
                                  LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                                  LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q6_K};
    for (lm_ggml_type t : types) {
        const bool quant = !lmtest::is_plain_type(t);
        const bool kquant = t == LM_GGML_TYPE_Q4_K || t == LM_GGML_TYPE_Q6_K;
        for (int batched = 0; batched < 2; ++batched) {
            const int64_t ne0 = kquant ? 256 : (quant ? 64 : 33);
            const int64_t rows = 11, n = 7, B = batched ? 3 : 1;
            OpCase c;
            c.name = std::string("GET_ROWS_") + type_str(t) + (batched ? "_batched" : "") + "_" + std::to_string(ne0) +
                     "x11_take7";
            // dequantization in ggml is float arithmetic (x*d + m): not always bit-exact with double
            c.cmp = quant ? Cmp::Nmse : Cmp::Exact;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * table = nullptr;
                if (quant) {
                    table = b.quantized(t, sh(ne0, rows, B));
                } else if (t == LM_GGML_TYPE_I32) {
                    std::vector<double> v(static_cast<size_t>(ne0 * rows * B));
                    for (double & x : v) x = static_cast<double>(b.rng().int_in(-1 << 20, 1 << 20));
                    table = b.values(t, sh(ne0, rows, B), v);
                } else {
                    table = b.uniform(t, sh(ne0, rows, B));
                }
                std::vector<double> ids(static_cast<size_t>(n * B));
                for (double & x : ids) x = static_cast<double>(b.rng().int_in(0, rows - 1)); // repeats allowed
                return lm_ggml_get_rows(b.ctx, table, b.values(LM_GGML_TYPE_I32, sh(n, B), ids));
            };
            c.ref = [](const Inputs & in) { return get_rows_ref(in[0], in[1]); };
            t1.push_back(c);
        }
    }
}

} // namespace

void add_layout_cases(CaseList & t1, CaseList & /*t2*/) {
    add_dup_cpy_cases(t1);
    add_cont_cases(t1);
    add_view_cases(t1);
    add_get_rows_cases(t1);
}

} // namespace opstest

// SUM, SUM_ROWS, MEAN, ARGMAX, ARGSORT (and top_k, a view of it), REPEAT, CONCAT.
#include "op_case.h"

#include <algorithm>
#include <numeric>

namespace opstest {
namespace {

HTensor sum_rows_ref(const HTensor & a, bool mean) {
    HTensor r(sh(1, a.ne[1], a.ne[2], a.ne[3]));
    for (int64_t i3 = 0; i3 < a.ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < a.ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
                double s = 0;
                for (int64_t i0 = 0; i0 < a.ne[0]; ++i0) {
                    s += a.at(i0, i1, i2, i3);
                }
                r.at(0, i1, i2, i3) = mean ? s / static_cast<double>(a.ne[0]) : s;
            }
    return r;
}

// indices of each row sorted by value (no ties in the test data)
HTensor argsort_ref(const HTensor & a, bool desc, int64_t keep) {
    HTensor r(sh(keep, a.ne[1], a.ne[2], a.ne[3]));
    std::vector<int64_t> idx(static_cast<size_t>(a.ne[0]));
    for (int64_t i3 = 0; i3 < a.ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < a.ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
                std::iota(idx.begin(), idx.end(), 0);
                std::stable_sort(idx.begin(), idx.end(), [&](int64_t x, int64_t y) {
                    const double vx = a.at(x, i1, i2, i3), vy = a.at(y, i1, i2, i3);
                    return desc ? vx > vy : vx < vy;
                });
                for (int64_t k = 0; k < keep; ++k) {
                    r.at(k, i1, i2, i3) = static_cast<double>(idx[static_cast<size_t>(k)]);
                }
            }
    return r;
}

std::vector<double> random_ints(Builder & b, int64_t n, int64_t lo, int64_t hi) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double & x : v) {
        x = static_cast<double>(b.rng().int_in(lo, hi));
    }
    return v;
}

void add_sum_cases(CaseList & t1) {
    for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16}) {
        OpCase c;
        c.name = std::string("SUM_") + type_str(t) + "_33x4x3x2";
        c.build = [=](Builder & b) { return lm_ggml_sum(b.ctx, b.uniform(t, sh(33, 4, 3, 2))); };
        c.ref = [](const Inputs & in) {
            HTensor r(sh(1));
            for (double x : in[0].v) r.v[0] += x;
            return r;
        };
        t1.push_back(c);
    }
    {
        OpCase c;
        c.name = "SUM_f32_permuted";
        c.build = [](Builder & b) {
            return lm_ggml_sum(b.ctx, lm_ggml_permute(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(10, 3, 4, 2)), 0, 2, 1, 3));
        };
        c.ref = [](const Inputs & in) {
            HTensor r(sh(1));
            for (double x : in[0].v) r.v[0] += x;
            return r;
        };
        t1.push_back(c);
    }
    for (bool mean : {false, true}) {
        const std::string op = mean ? "MEAN" : "SUM_ROWS";
        for (Shape s : {sh(10, 5, 4, 3), sh(67, 3, 1, 1), sh(1, 7, 2, 1)}) {
            OpCase c;
            c.name = op + "_f32_" + shape_str(s);
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, s);
                return mean ? lm_ggml_mean(b.ctx, a) : lm_ggml_sum_rows(b.ctx, a);
            };
            c.ref = [=](const Inputs & in) { return sum_rows_ref(in[0], mean); };
            t1.push_back(c);
        }
        OpCase c;
        c.name = op + "_f32_permuted";
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = lm_ggml_permute(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(12, 3, 5, 2)), 0, 2, 1, 3);
            return mean ? lm_ggml_mean(b.ctx, a) : lm_ggml_sum_rows(b.ctx, a);
        };
        c.ref = [=](const Inputs & in) { return sum_rows_ref(permute(in[0], 0, 2, 1, 3), mean); };
        t1.push_back(c);
    }
}

void add_arg_cases(CaseList & t1) {
    for (Shape s : {sh(10, 5), sh(67, 8), sh(1000, 3)}) {
        OpCase c;
        c.name = "ARGMAX_f32_" + shape_str(s);
        c.cmp = Cmp::Exact;
        c.build = [=](Builder & b) { return lm_ggml_argmax(b.ctx, b.uniform(LM_GGML_TYPE_F32, s)); };
        c.ref = [](const Inputs & in) {
            const HTensor & a = in[0];
            HTensor r(sh(a.ne[1]));
            for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
                int64_t best = 0;
                for (int64_t i0 = 1; i0 < a.ne[0]; ++i0) {
                    if (a.at(i0, i1) > a.at(best, i1)) best = i0;
                }
                r.v[static_cast<size_t>(i1)] = static_cast<double>(best);
            }
            return r;
        };
        t1.push_back(c);
    }
    for (Shape s : {sh(17, 4, 2, 1), sh(64, 3, 1, 1), sh(1, 5, 1, 1), sh(200, 2, 1, 1)}) {
        for (bool desc : {false, true}) {
            OpCase c;
            c.name = std::string("ARGSORT_f32_") + shape_str(s) + (desc ? "_desc" : "_asc");
            c.cmp = Cmp::Exact;
            c.build = [=](Builder & b) {
                return lm_ggml_argsort(b.ctx, b.uniform(LM_GGML_TYPE_F32, s),
                                       desc ? LM_GGML_SORT_ORDER_DESC : LM_GGML_SORT_ORDER_ASC);
            };
            c.ref = [=](const Inputs & in) { return argsort_ref(in[0], desc, in[0].ne[0]); };
            t1.push_back(c);
        }
    }
    {
        OpCase c;
        c.name = "ARGSORT_top_k_5_of_40x3";
        c.cmp = Cmp::Exact;
        c.build = [](Builder & b) { return lm_ggml_top_k(b.ctx, b.uniform(LM_GGML_TYPE_F32, sh(40, 3)), 5); };
        c.ref = [](const Inputs & in) { return argsort_ref(in[0], true, 5); };
        t1.push_back(c);
    }
}

void add_repeat_concat_cases(CaseList & t1) {
    struct Rep {
        Shape a, to;
    };
    for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_I32}) {
        for (Rep r : {Rep{sh(3, 2, 1, 1), sh(6, 4, 3, 2)}, Rep{sh(5, 1, 2, 1), sh(10, 3, 2, 2)},
                      Rep{sh(7, 3, 2, 1), sh(7, 3, 2, 1)}}) {
            OpCase c;
            c.name = std::string("REPEAT_") + type_str(t) + "_" + shape_str(r.a) + "_to_" + shape_str(r.to);
            c.cmp = Cmp::Exact;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a =
                    t == LM_GGML_TYPE_I32
                        ? b.values(t, r.a, random_ints(b, r.a[0] * r.a[1] * r.a[2] * r.a[3], -100000, 100000))
                        : b.uniform(t, r.a);
                lm_ggml_tensor * shape = lm_ggml_new_tensor_4d(b.ctx, t, r.to[0], r.to[1], r.to[2], r.to[3]);
                return lm_ggml_repeat(b.ctx, a, shape);
            };
            c.ref = [=](const Inputs & in) {
                const HTensor & a = in[0];
                return generate(r.to, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
                    return a.at(i0 % a.ne[0], i1 % a.ne[1], i2 % a.ne[2], i3 % a.ne[3]);
                });
            };
            t1.push_back(c);
        }
    }
    // CONCAT along each dim; b's dim `dim` has a different size
    auto concat_ref = [](const HTensor & a, const HTensor & b, int dim) {
        Shape ne = a.ne;
        ne[dim] += b.ne[dim];
        return generate(ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
            int64_t i[4] = {i0, i1, i2, i3};
            if (i[dim] < a.ne[dim]) {
                return a.at(i0, i1, i2, i3);
            }
            i[dim] -= a.ne[dim];
            return b.at(i[0], i[1], i[2], i[3]);
        });
    };
    for (int dim = 0; dim < 4; ++dim) {
        for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_I32}) {
            OpCase c;
            c.name = std::string("CONCAT_") + type_str(t) + "_dim" + std::to_string(dim);
            c.cmp = Cmp::Exact;
            c.build = [=](Builder & b) {
                Shape sa = sh(5, 4, 3, 2), sb = sa;
                sb[dim] = 3;
                auto make = [&](Shape s) {
                    return t == LM_GGML_TYPE_I32 ? b.values(t, s, random_ints(b, s[0] * s[1] * s[2] * s[3], -99, 99))
                                                 : b.uniform(t, s);
                };
                lm_ggml_tensor * a = make(sa);
                lm_ggml_tensor * y = make(sb);
                return lm_ggml_concat(b.ctx, a, y, dim);
            };
            c.ref = [=](const Inputs & in) { return concat_ref(in[0], in[1], dim); };
            t1.push_back(c);
        }
    }
    {
        OpCase c;
        c.name = "CONCAT_f32_dim1_src1_permuted";
        c.cmp = Cmp::Exact;
        c.build = [](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(6, 2, 3, 1));
            lm_ggml_tensor * y = b.uniform(LM_GGML_TYPE_F32, sh(6, 3, 4, 1));
            return lm_ggml_concat(b.ctx, a, lm_ggml_permute(b.ctx, y, 0, 2, 1, 3), 1); // y viewed as (6, 4, 3)
        };
        c.ref = [=](const Inputs & in) { return concat_ref(in[0], permute(in[1], 0, 2, 1, 3), 1); };
        t1.push_back(c);
    }
}

} // namespace

void add_reduce_cases(CaseList & t1, CaseList & /*t2*/) {
    add_sum_cases(t1);
    add_arg_cases(t1);
    add_repeat_concat_cases(t1);
}

} // namespace opstest

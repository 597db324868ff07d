// User-function ops: MAP_UNARY, MAP_BINARY, MAP_CUSTOM1..3_F32 and the
// threaded MAP_CUSTOM1..3. The functions below are the test's own; each case
// checks that the backend calls them on the right tensors (rows for the
// map_* pair, whole tensors for custom*, c really being the third source),
// hands the userdata back, and splits the threaded ones so that every part
// of dst is written exactly once. Only the CPU backend runs user functions;
// other devices must report them unsupported (the harness counts those).
//
// Semantics (ggml):
//   MAP_UNARY:  fun(ne0, dst_row, a_row) per row;  MAP_BINARY: fun(ne0, dst_row, a_row, b_row)
//   MAP_CUSTOMn_F32: fun(dst, a [, b [, c]]) once
//   MAP_CUSTOMn: fun(dst, a [, b [, c]], ith, nth, userdata) for ith in [0, nth),
//     nth = n_tasks (at most the backend's threads; LM_GGML_N_TASKS_MAX: all of them)
#include "op_case.h"

#include <algorithm>
#include <string>

// the _f32 family is deprecated in ggml.h but still part of the API
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace opstest {
namespace {

// ---------------------------------------------------------------- user functions
// Element (i0, i1, i2, i3) of a float tensor through its strides.
float & el(const lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return *(float *) ((char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3]);
}

int64_t rows_of(const lm_ggml_tensor * t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

// Row r (flattened over dims 1..3) of t, element i0.
float & rel(const lm_ggml_tensor * t, int64_t i0, int64_t r) {
    return el(t, i0, r % t->ne[1], (r / t->ne[1]) % t->ne[2], r / (t->ne[1] * t->ne[2]));
}

void sq_plus_one(const int n, float * y, const float * x) {
    for (int i = 0; i < n; ++i) y[i] = x[i] * x[i] + 1.0f;
}

void twice_minus(const int n, float * y, const float * a, const float * b) {
    for (int i = 0; i < n; ++i) y[i] = 2.0f * a[i] - b[i];
}

// dst = a with every row reversed (reads the whole row, not element-wise)
void reverse_rows(lm_ggml_tensor * dst, const lm_ggml_tensor * a) {
    const int64_t n = a->ne[0];
    for (int64_t r = 0; r < rows_of(a); ++r) {
        float tmp[64];
        for (int64_t i = 0; i < n; ++i) tmp[i] = rel(a, n - 1 - i, r);
        for (int64_t i = 0; i < n; ++i) rel(dst, i, r) = tmp[i];
    }
}

// dst[i, r] = a[i, r] * b[0, r] (b: one value per row, another shape than a)
void scale_rows(lm_ggml_tensor * dst, const lm_ggml_tensor * a, const lm_ggml_tensor * b) {
    for (int64_t r = 0; r < rows_of(a); ++r)
        for (int64_t i = 0; i < a->ne[0]; ++i) rel(dst, i, r) = rel(a, i, r) * rel(b, 0, r);
}

// dst = a * b + c, with c of a third shape: one value per column
void fma_cols(lm_ggml_tensor * dst, const lm_ggml_tensor * a, const lm_ggml_tensor * b, const lm_ggml_tensor * c) {
    for (int64_t r = 0; r < rows_of(a); ++r)
        for (int64_t i = 0; i < a->ne[0]; ++i) rel(dst, i, r) = rel(a, i, r) * rel(b, i, r) + rel(c, i, 0);
}

// Threaded: thread ith takes rows ith, ith + nth, ...; userdata holds a float
// factor. Writing only its own rows, a thread that is skipped or runs twice
// leaves NaN-filled rows or is caught by the tests/cpu n_tasks test.
struct Factor {
    float f;
};

void t_scale(lm_ggml_tensor * dst, const lm_ggml_tensor * a, int ith, int nth, void * ud) {
    const float f = static_cast<const Factor *>(ud)->f;
    for (int64_t r = ith; r < rows_of(a); r += nth)
        for (int64_t i = 0; i < a->ne[0]; ++i) rel(dst, i, r) = f * rel(a, i, r);
}

void t_add_scaled(lm_ggml_tensor * dst, const lm_ggml_tensor * a, const lm_ggml_tensor * b, int ith, int nth,
                  void * ud) {
    const float f = static_cast<const Factor *>(ud)->f;
    for (int64_t r = ith; r < rows_of(a); r += nth)
        for (int64_t i = 0; i < a->ne[0]; ++i) rel(dst, i, r) = rel(a, i, r) + f * rel(b, i, r);
}

// dst = a * b + c, elements split in contiguous blocks by thread
void t_fma(lm_ggml_tensor * dst, const lm_ggml_tensor * a, const lm_ggml_tensor * b, const lm_ggml_tensor * c, int ith,
           int nth, void * ud) {
    const float f = static_cast<const Factor *>(ud)->f;
    const int64_t n = a->ne[0] * rows_of(a);
    const int64_t per = (n + nth - 1) / nth;
    for (int64_t e = per * ith; e < std::min(n, per * (ith + 1)); ++e) {
        const int64_t i = e % a->ne[0], r = e / a->ne[0];
        rel(dst, i, r) = f * (rel(a, i, r) * rel(b, i, r) + rel(c, i, r));
    }
}

// Every thread reads ALL of a (its row sums), so a partially written a (a
// missing barrier after the node producing it) shows: dst[i, r] = a[i, r] + sum(a[:, r]).
void t_add_row_sum(lm_ggml_tensor * dst, const lm_ggml_tensor * a, int ith, int nth, void *) {
    for (int64_t r = ith; r < rows_of(a); r += nth) {
        float s = 0.0f;
        for (int64_t i = 0; i < a->ne[0]; ++i) s += rel(a, i, r);
        for (int64_t i = 0; i < a->ne[0]; ++i) rel(dst, i, r) = rel(a, i, r) + s;
    }
}

Factor g_half{0.5f};
Factor g_three{3.0f};

// ---------------------------------------------------------------- cases
void add_map_cases(CaseList & t1) {
    for (bool inplace : {false, true}) {
        OpCase c;
        c.name = std::string("MAP_UNARY_f32_sq_plus_one") + (inplace ? "_inplace" : "");
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(7, 5, 3));
            return inplace ? lm_ggml_map_unary_inplace_f32(b.ctx, a, sq_plus_one)
                           : lm_ggml_map_unary_f32(b.ctx, a, sq_plus_one);
        };
        c.ref = [](const Inputs & in) { return map1(in[0], [](double x) { return x * x + 1.0; }); };
        t1.push_back(c);
    }
    {
        // rows of a strided view: the function gets each row's own address
        OpCase c;
        c.name = "MAP_UNARY_f32_strided_rows";
        c.build = [](Builder & b) {
            lm_ggml_tensor * base = b.uniform(LM_GGML_TYPE_F32, sh(9, 6));
            lm_ggml_tensor * a = lm_ggml_view_2d(b.ctx, base, 5, 6, base->nb[1], 2 * sizeof(float));
            return lm_ggml_map_unary_f32(b.ctx, a, sq_plus_one);
        };
        c.ref = [](const Inputs & in) {
            return generate(sh(5, 6), [&](int64_t i, int64_t j, int64_t, int64_t) {
                const double x = in[0].at(i + 2, j);
                return x * x + 1.0;
            });
        };
        t1.push_back(c);
    }
    for (bool inplace : {false, true}) {
        OpCase c;
        c.name = std::string("MAP_BINARY_f32_twice_minus") + (inplace ? "_inplace" : "");
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(6, 4, 2, 2));
            lm_ggml_tensor * y = b.uniform(LM_GGML_TYPE_F32, sh(6, 4, 2, 2));
            return inplace ? lm_ggml_map_binary_inplace_f32(b.ctx, a, y, twice_minus)
                           : lm_ggml_map_binary_f32(b.ctx, a, y, twice_minus);
        };
        c.ref = [](const Inputs & in) {
            return generate(in[0].ne, [&](int64_t i, int64_t j, int64_t k, int64_t l) {
                return 2.0 * in[0].at(i, j, k, l) - in[1].at(i, j, k, l);
            });
        };
        t1.push_back(c);
    }
}

void add_custom_f32_cases(CaseList & t1) {
    for (bool inplace : {false, true}) {
        OpCase c;
        c.name = std::string("MAP_CUSTOM1_F32_reverse_rows") + (inplace ? "_inplace" : "");
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(11, 4, 3));
            return inplace ? lm_ggml_map_custom1_inplace_f32(b.ctx, a, reverse_rows)
                           : lm_ggml_map_custom1_f32(b.ctx, a, reverse_rows);
        };
        c.ref = [](const Inputs & in) {
            return generate(in[0].ne, [&](int64_t i, int64_t j, int64_t k, int64_t) { return in[0].at(10 - i, j, k); });
        };
        t1.push_back(c);
    }
    for (bool inplace : {false, true}) {
        OpCase c;
        c.name = std::string("MAP_CUSTOM2_F32_scale_rows") + (inplace ? "_inplace" : "");
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(8, 5, 2));
            lm_ggml_tensor * s = b.uniform(LM_GGML_TYPE_F32, sh(1, 5, 2));
            return inplace ? lm_ggml_map_custom2_inplace_f32(b.ctx, a, s, scale_rows)
                           : lm_ggml_map_custom2_f32(b.ctx, a, s, scale_rows);
        };
        c.ref = [](const Inputs & in) {
            return generate(in[0].ne, [&](int64_t i, int64_t j, int64_t k, int64_t) {
                return in[0].at(i, j, k) * in[1].at(0, j, k);
            });
        };
        t1.push_back(c);
    }
    for (bool inplace : {false, true}) {
        OpCase c;
        c.name = std::string("MAP_CUSTOM3_F32_fma_cols") + (inplace ? "_inplace" : "");
        c.build = [=](Builder & b) {
            lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(6, 7));
            lm_ggml_tensor * m = b.uniform(LM_GGML_TYPE_F32, sh(6, 7));
            lm_ggml_tensor * k = b.uniform(LM_GGML_TYPE_F32, sh(6), 2.0, 3.0);
            return inplace ? lm_ggml_map_custom3_inplace_f32(b.ctx, a, m, k, fma_cols)
                           : lm_ggml_map_custom3_f32(b.ctx, a, m, k, fma_cols);
        };
        c.ref = [](const Inputs & in) {
            return generate(in[0].ne, [&](int64_t i, int64_t j, int64_t, int64_t) {
                return in[0].at(i, j) * in[1].at(i, j) + in[2].at(i);
            });
        };
        t1.push_back(c);
    }
}

void add_custom_threaded_cases(CaseList & t1) {
    for (int n_tasks : {LM_GGML_N_TASKS_MAX, 1, 2, 3}) {
        const std::string nt = n_tasks == LM_GGML_N_TASKS_MAX ? "max" : std::to_string(n_tasks);
        for (bool inplace : {false, true}) {
            OpCase c;
            c.name = "MAP_CUSTOM1_scale_tasks_" + nt + (inplace ? "_inplace" : "");
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(10, 9, 2));
                return inplace ? lm_ggml_map_custom1_inplace(b.ctx, a, t_scale, n_tasks, &g_half)
                               : lm_ggml_map_custom1(b.ctx, a, t_scale, n_tasks, &g_half);
            };
            c.ref = [](const Inputs & in) { return map1(in[0], [](double x) { return 0.5 * x; }); };
            t1.push_back(c);
        }
        for (bool inplace : {false, true}) {
            OpCase c;
            c.name = "MAP_CUSTOM2_add_scaled_tasks_" + nt + (inplace ? "_inplace" : "");
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(7, 13));
                lm_ggml_tensor * y = b.uniform(LM_GGML_TYPE_F32, sh(7, 13));
                return inplace ? lm_ggml_map_custom2_inplace(b.ctx, a, y, t_add_scaled, n_tasks, &g_three)
                               : lm_ggml_map_custom2(b.ctx, a, y, t_add_scaled, n_tasks, &g_three);
            };
            c.ref = [](const Inputs & in) {
                return generate(in[0].ne, [&](int64_t i, int64_t j, int64_t, int64_t) {
                    return in[0].at(i, j) + 3.0 * in[1].at(i, j);
                });
            };
            t1.push_back(c);
        }
        for (bool inplace : {false, true}) {
            OpCase c;
            c.name = "MAP_CUSTOM3_fma_tasks_" + nt + (inplace ? "_inplace" : "");
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.uniform(LM_GGML_TYPE_F32, sh(5, 4, 3));
                lm_ggml_tensor * m = b.uniform(LM_GGML_TYPE_F32, sh(5, 4, 3));
                lm_ggml_tensor * k = b.uniform(LM_GGML_TYPE_F32, sh(5, 4, 3));
                return inplace ? lm_ggml_map_custom3_inplace(b.ctx, a, m, k, t_fma, n_tasks, &g_half)
                               : lm_ggml_map_custom3(b.ctx, a, m, k, t_fma, n_tasks, &g_half);
            };
            c.ref = [](const Inputs & in) {
                return generate(in[0].ne, [&](int64_t i, int64_t j, int64_t k, int64_t) {
                    return 0.5 * (in[0].at(i, j, k) * in[1].at(i, j, k) + in[2].at(i, j, k));
                });
            };
            t1.push_back(c);
        }
    }
}

// add (split over threads) -> custom reading all of its source on every
// thread -> mul (split over threads) reading the custom op's result: wrong
// without a barrier on both sides of the custom node.
void add_custom_graph_cases(CaseList & t1) {
    for (int n_tasks : {LM_GGML_N_TASKS_MAX, 1}) {
        OpCase c;
        c.name = std::string("MAP_CUSTOM1_between_threaded_nodes_tasks_") + (n_tasks == 1 ? "1" : "max");
        c.build = [=](Builder & b) {
            lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(96, 64));
            lm_ggml_tensor * y = b.uniform(LM_GGML_TYPE_F32, sh(96, 64));
            lm_ggml_tensor * w = b.uniform(LM_GGML_TYPE_F32, sh(96, 64));
            lm_ggml_tensor * s = lm_ggml_add(b.ctx, x, y);
            lm_ggml_tensor * u = lm_ggml_map_custom1(b.ctx, s, t_add_row_sum, n_tasks, nullptr);
            return lm_ggml_mul(b.ctx, u, w);
        };
        c.ref = [](const Inputs & in) {
            HTensor r(in[0].ne);
            for (int64_t j = 0; j < r.ne[1]; ++j) {
                double sum = 0;
                for (int64_t i = 0; i < r.ne[0]; ++i) sum += in[0].at(i, j) + in[1].at(i, j);
                for (int64_t i = 0; i < r.ne[0]; ++i)
                    r.at(i, j) = (in[0].at(i, j) + in[1].at(i, j) + sum) * in[2].at(i, j);
            }
            return r;
        };
        t1.push_back(c);
    }
}

} // namespace

void add_custom_cases(CaseList & t1, CaseList & /*t2*/) {
    add_map_cases(t1);
    add_custom_f32_cases(t1);
    add_custom_threaded_cases(t1);
    add_custom_graph_cases(t1);
}

} // namespace opstest

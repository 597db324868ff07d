// MUL_MAT and GET_ROWS with IQ4_NL, IQ4_XS, TQ1_0 and TQ2_0 weights. The
// weights are random valid blocks; the reference decodes them with the
// test-side decoder (lmtest_iq4_tq.h, from the format description).
#include "op_case.h"
#include "refs.h"

namespace opstest {
namespace {

const lm_ggml_type kTypes[] = {LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_IQ4_XS, LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0};

struct MM {
    const char * tag;
    int64_t m, n;
    Shape batch_a, batch_b; // only [2] and [3] are used
};

const MM kShapes[] = {
    {"gemv", 16, 1, sh(1), sh(1)},
    {"odd", 17, 7, sh(1), sh(1)},
    {"gemm", 32, 33, sh(1), sh(1)},
    {"bcast", 9, 5, sh(1, 1, 2, 1), sh(1, 1, 6, 3)},
};

void add_mul_mat(CaseList & t1) {
    for (lm_ggml_type t : kTypes) {
        // two blocks per row for the 256-value formats, nine for iq4_nl
        const int64_t K = lm_ggml_blck_size(t) == 32 ? 288 : 512;
        for (const MM & s : kShapes) {
            OpCase c;
            c.name = std::string("MUL_MAT_") + lm_ggml_type_name(t) + "_f32_" + s.tag + "_m" + std::to_string(s.m) +
                     "_n" + std::to_string(s.n) + "_k" + std::to_string(K);
            c.max_nmse = kNmseLowPrec;
            c.build = [=](Builder & b) {
                lm_ggml_tensor * a = b.quantized(t, sh(K, s.m, s.batch_a[2], s.batch_a[3]));
                lm_ggml_tensor * x = b.uniform(LM_GGML_TYPE_F32, sh(K, s.n, s.batch_b[2], s.batch_b[3]));
                return lm_ggml_mul_mat(b.ctx, a, x);
            };
            c.ref = [](const Inputs & in) { return mul_mat_ref(in[0], in[1]); };
            t1.push_back(c);
        }
    }
}

// dst[:, j, b] = table[:, ids[j, b], b]
void add_get_rows(CaseList & t1) {
    for (lm_ggml_type t : kTypes) {
        for (int batched = 0; batched < 2; ++batched) {
            const int64_t ne0 = 2 * lm_ggml_blck_size(t), rows = 11, n = 7, B = batched ? 3 : 1;
            OpCase c;
            c.name = std::string("GET_ROWS_") + lm_ggml_type_name(t) + (batched ? "_batched" : "") + "_" +
                     std::to_string(ne0) + "x11_take7";
            c.build = [=](Builder & b) {
                lm_ggml_tensor * table = b.quantized(t, sh(ne0, rows, B));
                std::vector<double> ids(static_cast<size_t>(n * B));
                for (double & x : ids) x = static_cast<double>(b.rng().int_in(0, rows - 1));
                return lm_ggml_get_rows(b.ctx, table, b.values(LM_GGML_TYPE_I32, sh(n, B), ids));
            };
            c.ref = [=](const Inputs & in) {
                const HTensor & table = in[0];
                const HTensor & ids = in[1];
                return generate(sh(ne0, n, B), [&](int64_t i0, int64_t j, int64_t bb, int64_t) {
                    return table.at(i0, static_cast<int64_t>(ids.at(j, bb, 0, 0)), bb, 0);
                });
            };
            t1.push_back(c);
        }
    }
}

} // namespace

void add_quant_iq4_cases(CaseList & t1, CaseList & /*t2*/) {
    add_mul_mat(t1);
    add_get_rows(t1);
}

} // namespace opstest

// ggml-quants.h: the base library's row conversions under ggml's names, for
// backend plugins. Each forwards to src/quant's implementation of the type
// (the same functions as the type traits and lm_ggml_quantize_chunk) after
// checking its arguments; bad arguments log one line and do nothing.
#include "ggml-quants.h"

#include "quants.h"
#include "q_iq4_tq.h"
#include "../core/ggml-impl.h"

namespace {

// ggml's struct and ours must be the same bytes
static_assert(sizeof(block_q4_0) == sizeof(lm_block_q4_0) && sizeof(block_q4_1) == sizeof(lm_block_q4_1) &&
                  sizeof(block_q5_0) == sizeof(lm_block_q5_0) && sizeof(block_q5_1) == sizeof(lm_block_q5_1) &&
                  sizeof(block_q8_0) == sizeof(lm_block_q8_0) && sizeof(block_q8_1) == sizeof(lm_block_q8_1) &&
                  sizeof(block_q2_K) == sizeof(lm_block_q2_K) && sizeof(block_q3_K) == sizeof(lm_block_q3_K) &&
                  sizeof(block_q4_K) == sizeof(lm_block_q4_K) && sizeof(block_q5_K) == sizeof(lm_block_q5_K) &&
                  sizeof(block_q6_K) == sizeof(lm_block_q6_K) && sizeof(block_q8_K) == sizeof(lm_block_q8_K) &&
                  sizeof(block_tq1_0) == sizeof(lm_block_tq1_0) && sizeof(block_tq2_0) == sizeof(lm_block_tq2_0) &&
                  sizeof(block_iq4_nl) == sizeof(lm_block_iq4_nl) && sizeof(block_iq4_xs) == sizeof(lm_block_iq4_xs),
              "ggml-common.h and src/quant disagree on a block size");

bool row_args_ok(const char * fn, enum lm_ggml_type type, const void * in, const void * out, int64_t k) {
    if (!in || !out) {
        LM_GGML_LOG_ERROR("%s: %s: NULL pointer\n", fn, !in ? "x" : "y");
        return false;
    }
    const int64_t blck = lm_ggml_blck_size(type);
    if (k < 0 || k % blck != 0) {
        LM_GGML_LOG_ERROR("%s: k: %lld is not a multiple of the %s block size %lld\n", fn, (long long) k,
                          lm_ggml_type_name(type), (long long) blck);
        return false;
    }
    return true;
}

bool rows_args_ok(const char * fn, enum lm_ggml_type type, const void * src, const void * dst, int64_t nrows,
                  int64_t n_per_row) {
    if (!src || !dst) {
        LM_GGML_LOG_ERROR("%s: %s: NULL pointer\n", fn, !src ? "src" : "dst");
        return false;
    }
    const int64_t blck = lm_ggml_blck_size(type);
    if (nrows < 0 || n_per_row <= 0 || n_per_row % blck != 0) {
        LM_GGML_LOG_ERROR("%s: shape: nrows %lld, n_per_row %lld (must be a multiple of the %s block size %lld)\n", fn,
                          (long long) nrows, (long long) n_per_row, lm_ggml_type_name(type), (long long) blck);
        return false;
    }
    return true;
}

// quantize_X of the types whose quantizer ignores the imatrix: the reference
// path over all rows, as ggml does
size_t rows_by_ref(lm_ggml_from_float_t ref, enum lm_ggml_type type, const float * src, void * dst, int64_t nrows,
                   int64_t n_per_row) {
    ref(src, dst, nrows * n_per_row);
    return (size_t) nrows * lm_ggml_row_size(type, n_per_row);
}

} // namespace

#define LM_QUANT_EXPORT_ROWS(t, T)                                                                                     \
    extern "C" void quantize_row_##t##_ref(const float * LM_GGML_RESTRICT x, block_##t * LM_GGML_RESTRICT y,           \
                                           int64_t k) {                                                                \
        if (row_args_ok("quantize_row_" #t "_ref", LM_GGML_TYPE_##T, x, y, k))                                         \
            lm_quant_quantize_row_##t##_ref(x, y, k);                                                                  \
    }                                                                                                                  \
    extern "C" void dequantize_row_##t(const block_##t * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {  \
        if (row_args_ok("dequantize_row_" #t, LM_GGML_TYPE_##T, x, y, k)) lm_quant_dequantize_row_##t(x, y, k);        \
    }

LM_QUANT_EXPORT_ROWS(q4_0, Q4_0)
LM_QUANT_EXPORT_ROWS(q4_1, Q4_1)
LM_QUANT_EXPORT_ROWS(q5_0, Q5_0)
LM_QUANT_EXPORT_ROWS(q5_1, Q5_1)
LM_QUANT_EXPORT_ROWS(q8_0, Q8_0)
LM_QUANT_EXPORT_ROWS(q8_1, Q8_1)
LM_QUANT_EXPORT_ROWS(q2_K, Q2_K)
LM_QUANT_EXPORT_ROWS(q3_K, Q3_K)
LM_QUANT_EXPORT_ROWS(q4_K, Q4_K)
LM_QUANT_EXPORT_ROWS(q5_K, Q5_K)
LM_QUANT_EXPORT_ROWS(q6_K, Q6_K)
LM_QUANT_EXPORT_ROWS(q8_K, Q8_K)
LM_QUANT_EXPORT_ROWS(tq1_0, TQ1_0)
LM_QUANT_EXPORT_ROWS(tq2_0, TQ2_0)
LM_QUANT_EXPORT_ROWS(iq4_nl, IQ4_NL)
LM_QUANT_EXPORT_ROWS(iq4_xs, IQ4_XS)

#undef LM_QUANT_EXPORT_ROWS

// quantize_X through the type's imatrix-aware path
#define LM_QUANT_EXPORT_QUANTIZE(t, T)                                                                                 \
    extern "C" size_t quantize_##t(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows,     \
                                   int64_t n_per_row, const float * imatrix) {                                         \
        if (!rows_args_ok("quantize_" #t, LM_GGML_TYPE_##T, src, dst, nrows, n_per_row)) return 0;                     \
        return lm_quant_rows_##t(src, dst, nrows, n_per_row, imatrix);                                                 \
    }

LM_QUANT_EXPORT_QUANTIZE(q4_0, Q4_0)
LM_QUANT_EXPORT_QUANTIZE(q4_1, Q4_1)
LM_QUANT_EXPORT_QUANTIZE(q5_0, Q5_0)
LM_QUANT_EXPORT_QUANTIZE(q5_1, Q5_1)
LM_QUANT_EXPORT_QUANTIZE(q2_K, Q2_K)
LM_QUANT_EXPORT_QUANTIZE(q3_K, Q3_K)
LM_QUANT_EXPORT_QUANTIZE(q4_K, Q4_K)
LM_QUANT_EXPORT_QUANTIZE(q5_K, Q5_K)
LM_QUANT_EXPORT_QUANTIZE(q6_K, Q6_K)
LM_QUANT_EXPORT_QUANTIZE(tq1_0, TQ1_0)
LM_QUANT_EXPORT_QUANTIZE(tq2_0, TQ2_0)
LM_QUANT_EXPORT_QUANTIZE(iq4_nl, IQ4_NL)
LM_QUANT_EXPORT_QUANTIZE(iq4_xs, IQ4_XS)

#undef LM_QUANT_EXPORT_QUANTIZE

// q8_0 has no imatrix variant in ggml: the reference quantizer, whatever imatrix is
extern "C" size_t quantize_q8_0(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows,
                                int64_t n_per_row, const float * imatrix) {
    (void) imatrix;
    if (!rows_args_ok("quantize_q8_0", LM_GGML_TYPE_Q8_0, src, dst, nrows, n_per_row)) return 0;
    return rows_by_ref(lm_quant_quantize_row_q8_0_ref, LM_GGML_TYPE_Q8_0, src, dst, nrows, n_per_row);
}

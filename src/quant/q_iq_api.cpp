// ggml-quants.h's C entry points for the grid I-quants, exported from the
// library: dequantize_row_*, quantize_* (with or without an importance
// matrix; IQ2_XXS, IQ2_XS and IQ1_S refuse to work without one: a log line
// and 0) and the quantize_row_*_ref of the three formats that have one.
// Bad arguments (NULL pointers, lengths that are not whole super-blocks)
// give one log line and nothing done.
#include "ggml-quants.h"

#include "q_iq.h"
#include "../core/ggml-impl.h"

// ggml's structs and ours must be the same bytes
static_assert(sizeof(block_iq2_xxs) == sizeof(lm_block_iq2_xxs) && sizeof(block_iq2_xs) == sizeof(lm_block_iq2_xs) &&
                  sizeof(block_iq2_s) == sizeof(lm_block_iq2_s) && sizeof(block_iq3_xxs) == sizeof(lm_block_iq3_xxs) &&
                  sizeof(block_iq3_s) == sizeof(lm_block_iq3_s) && sizeof(block_iq1_s) == sizeof(lm_block_iq1_s) &&
                  sizeof(block_iq1_m) == sizeof(lm_block_iq1_m),
              "ggml-common.h and src/quant disagree on an I-quant block size");

namespace {

bool row_args_ok(const char * fn, const void * x, const void * y, int64_t k) {
    if (!x || !y) {
        LM_GGML_LOG_ERROR("%s: %s: NULL pointer\n", fn, !x ? "x" : "y");
        return false;
    }
    if (k < 0 || k % LM_QK_K != 0) {
        LM_GGML_LOG_ERROR("%s: k: %lld is not a multiple of %d\n", fn, (long long) k, LM_QK_K);
        return false;
    }
    return true;
}

bool rows_args_ok(const char * fn, const void * src, const void * dst, int64_t nrows, int64_t n_per_row) {
    if (!src || !dst) {
        LM_GGML_LOG_ERROR("%s: %s: NULL pointer\n", fn, !src ? "src" : "dst");
        return false;
    }
    if (nrows < 0 || n_per_row <= 0 || n_per_row % LM_QK_K != 0) {
        LM_GGML_LOG_ERROR("%s: shape: nrows %lld, n_per_row %lld (must be a multiple of %d)\n", fn, (long long) nrows,
                          (long long) n_per_row, LM_QK_K);
        return false;
    }
    return true;
}

} // namespace

#define LM_IQ_EXPORT_DEQUANT(t)                                                                                        \
    LM_GGML_API void dequantize_row_##t(const block_##t * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) { \
        if (row_args_ok("dequantize_row_" #t, x, y, k)) lm_quant_dequantize_row_##t(x, y, k);                          \
    }
#define LM_IQ_EXPORT_QUANT(t)                                                                                          \
    LM_GGML_API size_t quantize_##t(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows,    \
                                    int64_t n_per_row, const float * imatrix) {                                        \
        if (!rows_args_ok("quantize_" #t, src, dst, nrows, n_per_row)) return 0;                                       \
        return lm_quant_rows_##t(src, dst, nrows, n_per_row, imatrix);                                                 \
    }
#define LM_IQ_EXPORT_REF(t)                                                                                            \
    LM_GGML_API void quantize_row_##t##_ref(const float * LM_GGML_RESTRICT x, block_##t * LM_GGML_RESTRICT y,          \
                                            int64_t k) {                                                               \
        if (row_args_ok("quantize_row_" #t "_ref", x, y, k)) lm_quant_quantize_row_##t##_ref(x, y, k);                 \
    }

extern "C" {

LM_IQ_EXPORT_DEQUANT(iq2_xxs)
LM_IQ_EXPORT_DEQUANT(iq2_xs)
LM_IQ_EXPORT_DEQUANT(iq2_s)
LM_IQ_EXPORT_DEQUANT(iq3_xxs)
LM_IQ_EXPORT_DEQUANT(iq3_s)
LM_IQ_EXPORT_DEQUANT(iq1_s)
LM_IQ_EXPORT_DEQUANT(iq1_m)

LM_IQ_EXPORT_QUANT(iq2_xxs)
LM_IQ_EXPORT_QUANT(iq2_xs)
LM_IQ_EXPORT_QUANT(iq2_s)
LM_IQ_EXPORT_QUANT(iq3_xxs)
LM_IQ_EXPORT_QUANT(iq3_s)
LM_IQ_EXPORT_QUANT(iq1_s)
LM_IQ_EXPORT_QUANT(iq1_m)

LM_IQ_EXPORT_REF(iq2_s)
LM_IQ_EXPORT_REF(iq3_xxs)
LM_IQ_EXPORT_REF(iq3_s)

} // extern "C"

// Public quantization entry points of ggml.h: lm_ggml_quantize_init / _free /
// _requires_imatrix / _chunk. Bad arguments log one line and return 0.
#include "ggml-quants.h"

#include "quants.h"
#include "../core/ggml-impl.h"

#include <cstring>

namespace {

bool valid_type_value(int type) { return type >= 0 && type < LM_GGML_TYPE_COUNT; }

// Plain float formats quantize_chunk also accepts (as ggml does).
size_t convert_float_rows(enum lm_ggml_type type, const float * src, void * dst, int64_t start, int64_t n) {
    switch (type) {
        case LM_GGML_TYPE_F32:
            std::memcpy(static_cast<float *>(dst) + start, src + start, (size_t) n * sizeof(float));
            return (size_t) n * sizeof(float);
        case LM_GGML_TYPE_F16: {
            lm_ggml_fp16_t * out = static_cast<lm_ggml_fp16_t *>(dst) + start;
            for (int64_t i = 0; i < n; ++i) out[i] = LM_GGML_FP32_TO_FP16(src[start + i]);
            return (size_t) n * sizeof(lm_ggml_fp16_t);
        }
        case LM_GGML_TYPE_BF16: {
            lm_ggml_bf16_t * out = static_cast<lm_ggml_bf16_t *>(dst) + start;
            for (int64_t i = 0; i < n; ++i) out[i] = LM_GGML_FP32_TO_BF16(src[start + i]);
            return (size_t) n * sizeof(lm_ggml_bf16_t);
        }
        default: return 0;
    }
}

} // namespace

// The grid I-quants' quantizers search neighbour maps (q_iq_maps.cpp):
// init builds the one of `type` ahead of time (as ggml does; the quantizers
// would otherwise build it on first use), free releases them all.
extern "C" void lm_ggml_quantize_init(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_IQ2_XXS:
        case LM_GGML_TYPE_IQ2_XS:
        case LM_GGML_TYPE_IQ2_S:
        case LM_GGML_TYPE_IQ1_S:
        case LM_GGML_TYPE_IQ1_M: lm_iq2xs_init_impl(type); break;
        case LM_GGML_TYPE_IQ3_XXS: lm_iq3xs_init_impl(256); break;
        case LM_GGML_TYPE_IQ3_S: lm_iq3xs_init_impl(512); break;
        default: break; // the other formats need no tables
    }
}

extern "C" void lm_ggml_quantize_free(void) {
    lm_iq2xs_free_impl(LM_GGML_TYPE_IQ2_XXS);
    lm_iq2xs_free_impl(LM_GGML_TYPE_IQ2_XS);
    lm_iq2xs_free_impl(LM_GGML_TYPE_IQ2_S);
    lm_iq2xs_free_impl(LM_GGML_TYPE_IQ1_S); // shared with IQ1_M
    lm_iq3xs_free_impl(256);
    lm_iq3xs_free_impl(512);
}

// As in ggml: these formats are unusable without importance weights.
extern "C" bool lm_ggml_quantize_requires_imatrix(enum lm_ggml_type type) {
    return type == LM_GGML_TYPE_IQ2_XXS || type == LM_GGML_TYPE_IQ2_XS || type == LM_GGML_TYPE_IQ1_S;
}

// Quantizes nrows rows of n_per_row floats starting at element `start` of src
// (a whole row boundary) into dst at the matching row offset. imatrix: NULL or
// n_per_row importance weights shared by all rows. Returns the bytes written,
// or 0 after logging when an argument is invalid.
extern "C" size_t lm_ggml_quantize_chunk(enum lm_ggml_type type, const float * src, void * dst, int64_t start,
                                         int64_t nrows, int64_t n_per_row, const float * imatrix) {
    static const char * fn = "lm_ggml_quantize_chunk";
    if (!valid_type_value(type)) {
        LM_GGML_LOG_ERROR("%s: type: invalid type %d\n", fn, (int) type);
        return 0;
    }
    const bool is_float = type == LM_GGML_TYPE_F32 || type == LM_GGML_TYPE_F16 || type == LM_GGML_TYPE_BF16;
    const lm_quant_type_fns * fns = lm_quant_get_fns(type);
    if (!fns && !is_float) {
        LM_GGML_LOG_ERROR("%s: type: quantization to %s is not supported\n", fn, lm_ggml_type_name(type));
        return 0;
    }
    if (!src || !dst) {
        LM_GGML_LOG_ERROR("%s: %s: NULL pointer\n", fn, !src ? "src" : "dst");
        return 0;
    }
    if (nrows < 0 || n_per_row <= 0 || start < 0) {
        LM_GGML_LOG_ERROR("%s: shape: invalid start %lld, nrows %lld, n_per_row %lld\n", fn, (long long) start,
                          (long long) nrows, (long long) n_per_row);
        return 0;
    }
    const int64_t blck = fns ? fns->blck_size : 1;
    if (n_per_row % blck != 0) {
        LM_GGML_LOG_ERROR("%s: n_per_row: %lld is not a multiple of the %s block size %lld\n", fn,
                          (long long) n_per_row, lm_ggml_type_name(type), (long long) blck);
        return 0;
    }
    if (start % n_per_row != 0) {
        LM_GGML_LOG_ERROR("%s: start: %lld is not at a row boundary (n_per_row %lld)\n", fn, (long long) start,
                          (long long) n_per_row);
        return 0;
    }
    if (lm_ggml_quantize_requires_imatrix(type) && !imatrix) {
        LM_GGML_LOG_ERROR("%s: imatrix: %s needs an importance matrix\n", fn, lm_ggml_type_name(type));
        return 0;
    }

    if (is_float) return convert_float_rows(type, src, dst, start, nrows * n_per_row);

    const size_t row_size = fns->type_size * (size_t) (n_per_row / blck);
    const float * in = src + start;
    void * out = static_cast<char *>(dst) + (size_t) (start / n_per_row) * row_size;
    if (fns->quantize) return fns->quantize(in, out, nrows, n_per_row, imatrix);
    fns->from_float(in, out, nrows * n_per_row); // no imatrix variant: the reference path
    return (size_t) nrows * row_size;
}

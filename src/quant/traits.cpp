// The per-type table of src/quant, and the hook that hands its row
// conversions to the core's lm_ggml_type_traits table.
//
// lm_quant_get_fns lives in this file on purpose: quantize_chunk and the CPU
// dot products call it, so whenever any quantization code is linked from the
// static library this object is linked too, and its strong
// lm_quant_fill_traits replaces the core's weak empty default.
#include "quants.h"
#include "q_iq4_tq.h"
#include "q_iq.h"

namespace {

using Fns = lm_quant_type_fns;

#define LM_QUANT_ENTRY(T, t, blck, rows)                                                                               \
    Fns {                                                                                                              \
        LM_GGML_TYPE_##T, blck, sizeof(lm_block_##t), lm_quant_dequantize_row_##t, lm_quant_quantize_row_##t##_ref,    \
            rows                                                                                                       \
    }

const Fns kTable[] = {
    LM_QUANT_ENTRY(Q4_0, q4_0, LM_QK4_0, lm_quant_rows_q4_0),
    LM_QUANT_ENTRY(Q4_1, q4_1, LM_QK4_1, lm_quant_rows_q4_1),
    LM_QUANT_ENTRY(Q5_0, q5_0, LM_QK5_0, lm_quant_rows_q5_0),
    LM_QUANT_ENTRY(Q5_1, q5_1, LM_QK5_1, lm_quant_rows_q5_1),
    LM_QUANT_ENTRY(Q8_0, q8_0, LM_QK8_0, nullptr), // the imatrix does not change q8_0
    LM_QUANT_ENTRY(Q8_1, q8_1, LM_QK8_1, nullptr),
    LM_QUANT_ENTRY(Q2_K, q2_K, LM_QK_K, lm_quant_rows_q2_K),
    LM_QUANT_ENTRY(Q3_K, q3_K, LM_QK_K, lm_quant_rows_q3_K),
    LM_QUANT_ENTRY(Q4_K, q4_K, LM_QK_K, lm_quant_rows_q4_K),
    LM_QUANT_ENTRY(Q5_K, q5_K, LM_QK_K, lm_quant_rows_q5_K),
    LM_QUANT_ENTRY(Q6_K, q6_K, LM_QK_K, lm_quant_rows_q6_K),
    LM_QUANT_ENTRY(Q8_K, q8_K, LM_QK_K, nullptr),
    LM_QUANT_ENTRY(IQ4_NL, iq4_nl, LM_QK4_NL, lm_quant_rows_iq4_nl),
    LM_QUANT_ENTRY(IQ4_XS, iq4_xs, LM_QK_K, lm_quant_rows_iq4_xs),
    LM_QUANT_ENTRY(TQ1_0, tq1_0, LM_QK_K, lm_quant_rows_tq1_0),
    LM_QUANT_ENTRY(TQ2_0, tq2_0, LM_QK_K, lm_quant_rows_tq2_0),
    // grid I-quants (q_iq*.cpp); as in ggml, no reference quantizer for the
    // four that are meant to be made with an importance matrix
    Fns{LM_GGML_TYPE_IQ2_XXS, LM_QK_K, sizeof(lm_block_iq2_xxs), lm_quant_dequantize_row_iq2_xxs, nullptr,
        lm_quant_rows_iq2_xxs},
    Fns{LM_GGML_TYPE_IQ2_XS, LM_QK_K, sizeof(lm_block_iq2_xs), lm_quant_dequantize_row_iq2_xs, nullptr,
        lm_quant_rows_iq2_xs},
    Fns{LM_GGML_TYPE_IQ2_S, LM_QK_K, sizeof(lm_block_iq2_s), lm_quant_dequantize_row_iq2_s,
        lm_quant_quantize_row_iq2_s_ref, lm_quant_rows_iq2_s},
    Fns{LM_GGML_TYPE_IQ3_XXS, LM_QK_K, sizeof(lm_block_iq3_xxs), lm_quant_dequantize_row_iq3_xxs,
        lm_quant_quantize_row_iq3_xxs_ref, lm_quant_rows_iq3_xxs},
    Fns{LM_GGML_TYPE_IQ3_S, LM_QK_K, sizeof(lm_block_iq3_s), lm_quant_dequantize_row_iq3_s,
        lm_quant_quantize_row_iq3_s_ref, lm_quant_rows_iq3_s},
    Fns{LM_GGML_TYPE_IQ1_S, LM_QK_K, sizeof(lm_block_iq1_s), lm_quant_dequantize_row_iq1_s, nullptr,
        lm_quant_rows_iq1_s},
    Fns{LM_GGML_TYPE_IQ1_M, LM_QK_K, sizeof(lm_block_iq1_m), lm_quant_dequantize_row_iq1_m, nullptr,
        lm_quant_rows_iq1_m},
};

#undef LM_QUANT_ENTRY

} // namespace

const struct lm_quant_type_fns * lm_quant_get_fns(enum lm_ggml_type type) {
    for (const Fns & f : kTable) {
        if (f.type == type) return &f;
    }
    return nullptr;
}

// Called once by the core while it builds its traits table (indexed by type,
// LM_GGML_TYPE_COUNT entries). Sizes and names stay the core's; only the
// conversions are ours.
extern "C" void lm_quant_fill_traits(struct lm_ggml_type_traits * table) {
    if (!table) return;
    for (const Fns & f : kTable) {
        table[f.type].to_float = f.to_float;
        table[f.type].from_float_ref = f.from_float;
    }
}

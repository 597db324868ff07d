#pragma once
// Block formats IQ4_NL, IQ4_XS (4-bit non-linear levels) and TQ1_0, TQ2_0
// (ternary, BitNet b1.58 / TriLM): byte layouts (fixed facts of the GGUF
// format), row conversions and the importance-aware quantizers, with the
// conventions of quants.h.

#include "quants.h"

#define LM_QK4_NL 32

// The 16 levels of IQ4_NL and IQ4_XS (a fixed part of both formats).
extern const int8_t lm_quant_kvalues_iq4nl[16];

struct lm_block_iq4_nl {
    lm_half d;                 // x = d * kvalues[q]
    uint8_t qs[LM_QK4_NL / 2]; // q of value j in the low nibble of byte j, of value j+16 in the high nibble
};
struct lm_block_iq4_xs {
    lm_half d;                      // super-block scale
    uint16_t scales_h;              // high 2 bits of the 8 6-bit sub-block scales (offset 32)
    uint8_t scales_l[LM_QK_K / 64]; // low 4 bits, two sub-blocks per byte
    uint8_t qs[LM_QK_K / 2];        // per 32 values: 16 bytes of nibbles, packed as in iq4_nl
};
struct lm_block_tq1_0 {
    uint8_t qs[(LM_QK_K - 4 * LM_QK_K / 64) / 5]; // 5 trits per byte (base-3 fixed point)
    uint8_t qh[LM_QK_K / 64];                     // 4 trits per byte, the last 16 values
    lm_half d;
};
struct lm_block_tq2_0 {
    uint8_t qs[LM_QK_K / 4]; // 2 bits per value: x = d * (q - 1)
    lm_half d;
};

static_assert(sizeof(lm_block_iq4_nl) == 18, "iq4_nl block is 18 bytes");
static_assert(sizeof(lm_block_iq4_xs) == 136, "iq4_xs block is 136 bytes");
static_assert(sizeof(lm_block_tq1_0) == 54, "tq1_0 block is 54 bytes");
static_assert(sizeof(lm_block_tq2_0) == 66, "tq2_0 block is 66 bytes");

#define LM_QUANT_DECLARE_ROW_FNS(t)                                                                                    \
    void lm_quant_quantize_row_##t##_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k);      \
    void lm_quant_dequantize_row_##t(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k);

LM_QUANT_DECLARE_ROW_FNS(iq4_nl)
LM_QUANT_DECLARE_ROW_FNS(iq4_xs)
LM_QUANT_DECLARE_ROW_FNS(tq1_0)
LM_QUANT_DECLARE_ROW_FNS(tq2_0)

#undef LM_QUANT_DECLARE_ROW_FNS

// ggml's quantize_<type>. Unlike the other formats, iq4_nl without an
// imatrix does NOT fall back to its reference quantizer: it runs the same
// scale search as with one (weights x^2), as ggml does; iq4_xs's reference
// quantizer is that path. The ternary formats ignore the imatrix.
size_t lm_quant_rows_iq4_nl(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_iq4_xs(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_tq1_0(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_tq2_0(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);

// 6-bit sub-block scale ib (0..7) of an iq4_xs block, minus its offset 32.
static inline int lm_quant_iq4_xs_scale(const struct lm_block_iq4_xs * b, int ib) {
    const int lo = (b->scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
    const int hi = (b->scales_h >> (2 * ib)) & 3;
    return (lo | (hi << 4)) - 32;
}

// Trit n (0 = most significant) of a tq1_0 byte: the byte is a base-3
// fraction q/256 of 5 (or, in qh, 4 padded to 5) digits; multiplying by 3^n
// in 8 bits drops the n leading digits, then * 3 >> 8 takes the next one.
static inline int lm_quant_tq1_trit(uint8_t q, int n) {
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    const uint8_t v = (uint8_t) (q * pow3[n]);
    return (int) (((uint16_t) v * 3) >> 8);
}

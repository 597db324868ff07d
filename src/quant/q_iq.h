#pragma once
// The grid-based I-quants: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
// IQ1_M. Block layouts (fixed GGUF facts, as quants.h), the row conversions,
// and the neighbour maps their quantizers search (q_iq_maps.cpp).
//
// Every block decodes to value = d * kFactor * m[g] * w[e] with integer
// levels w[e] and integer group multipliers m[g] (unpack_* in q_iq_unpack.h),
// which is also how the CPU dot products work in integers.
#include "quants.h"

#include <cstddef>
#include <cstdint>

struct lm_block_iq2_xxs {
    lm_half d;
    uint16_t qs[LM_QK_K / 8]; // per 32 values two u32: 4 grid indices (bytes); 4 x 7 sign bits + 4-bit scale on top
};
struct lm_block_iq2_xs {
    lm_half d;
    uint16_t qs[LM_QK_K / 8];     // per 8 values: 9-bit grid index | 7 sign bits << 9
    uint8_t scales[LM_QK_K / 32]; // 4-bit scale per 16 values (low nibble first)
};
struct lm_block_iq2_s {
    lm_half d;
    uint8_t qs[LM_QK_K / 4];  // 32 low bytes of the 10-bit grid indices, then 32 sign bytes
    uint8_t qh[LM_QK_K / 32]; // 2 high index bits per group of 8
    uint8_t scales[LM_QK_K / 32];
};
struct lm_block_iq3_xxs {
    lm_half d;
    uint8_t qs[3 * LM_QK_K / 8]; // 64 grid indices, then per 32 values a u32: 4 x 7 sign bits + 4-bit scale
};
struct lm_block_iq3_s {
    lm_half d;
    uint8_t qs[LM_QK_K / 4];      // low bytes of the 9-bit grid indices (groups of 4)
    uint8_t qh[LM_QK_K / 32];     // 9th index bits
    uint8_t signs[LM_QK_K / 8];   // one sign bit per value
    uint8_t scales[LM_QK_K / 64]; // 4-bit scale per 32 values
};
struct lm_block_iq1_s {
    lm_half d;
    uint8_t qs[LM_QK_K / 8];   // low bytes of the 11-bit grid indices
    uint16_t qh[LM_QK_K / 32]; // per 32 values: 4 x 3 high index bits, 3-bit scale << 12, delta sign << 15
};
struct lm_block_iq1_m {
    uint8_t qs[LM_QK_K / 8];      // low bytes of the 11-bit grid indices
    uint8_t qh[LM_QK_K / 16];     // per 16 values: 3 high index bits + delta sign bit, for each group of 8
    uint8_t scales[LM_QK_K / 32]; // 3-bit scales; the fp16 d is spread over the top nibbles of the 4 u16
};

static_assert(sizeof(lm_block_iq2_xxs) == 66, "iq2_xxs block is 66 bytes");
static_assert(sizeof(lm_block_iq2_xs) == 74, "iq2_xs block is 74 bytes");
static_assert(sizeof(lm_block_iq2_s) == 82, "iq2_s block is 82 bytes");
static_assert(sizeof(lm_block_iq3_xxs) == 98, "iq3_xxs block is 98 bytes");
static_assert(sizeof(lm_block_iq3_s) == 110, "iq3_s block is 110 bytes");
static_assert(sizeof(lm_block_iq1_s) == 50, "iq1_s block is 50 bytes");
static_assert(sizeof(lm_block_iq1_m) == 56, "iq1_m block is 56 bytes");

#define LM_IQ1S_DELTA 0.125f

// Dequantizers (all seven) and the reference quantizers ggml has (the other
// four need an importance matrix: their from_float is NULL, as in ggml).
void lm_quant_dequantize_row_iq2_xxs(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k);
void lm_quant_dequantize_row_iq2_xs(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k);
void lm_quant_dequantize_row_iq2_s(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k);
void lm_quant_dequantize_row_iq3_xxs(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k);
void lm_quant_dequantize_row_iq3_s(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k);
void lm_quant_dequantize_row_iq1_s(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k);
void lm_quant_dequantize_row_iq1_m(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k);

void lm_quant_quantize_row_iq2_s_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k);
void lm_quant_quantize_row_iq3_xxs_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k);
void lm_quant_quantize_row_iq3_s_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k);

// Importance-weighted quantizers (lm_quant_rows_fn). IQ2_XXS, IQ2_XS and
// IQ1_S need imatrix: without one they log and return 0 (no bytes written).
size_t lm_quant_rows_iq2_xxs(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_iq2_xs(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_iq2_s(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_iq3_xxs(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_iq3_s(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_iq1_s(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_iq1_m(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);

namespace lm_quant::iq {

// Grid search support (q_iq_maps.cpp). A grid's points are written in
// "levels": coordinate j of point p is level l in 0..nlev-1 and stands for
// the idealised magnitude 2l+1. key() packs a vector of levels (bits per
// level: 2 for the 8-value grids, 3 for the 4-value ones).
struct GridMap {
    int dim;                     // values per point: 8 or 4
    int bits;                    // bits per level in a key
    int size;                    // number of grid points
    const uint8_t * levels;      // size * dim levels, point after point
    const int32_t * index_of;    // key -> point index, or -(1 + offset into neighbours) when off the grid
    const uint16_t * neighbours; // at an offset: count n, then n point indices (the nearest points)
};

enum class Grid : int { iq2xxs = 0, iq2xs, iq2s, iq1s, iq3xxs, iq3s, count };

// The map of a grid, built on first use (thread-safe), NULL if it could not
// be allocated. release() frees it; the next use builds it again.
const GridMap * grid_map(Grid g);
void release(Grid g);

} // namespace lm_quant::iq

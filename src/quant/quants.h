#pragma once
// Block formats of GGUF files: the byte layout of every block (these structs
// ARE the on-disk format, so field order and sizes are fixed facts), and the
// reference row conversions. Internal to lmggml.
//
// Conventions for every row function below:
//   k / n_per_row  number of float values; a multiple of the format's block size
//   x (float)      k values;  y (blocks) k / block_size blocks
// The *_ref quantizers are deterministic and bit-exact with ggml v1.4.1's
// reference quantizers (and so with the `gguf` Python package where it has one).

#include "ggml.h"

#include <stddef.h>
#include <stdint.h>

#define LM_QK4_0        32
#define LM_QK4_1        32
#define LM_QK5_0        32
#define LM_QK5_1        32
#define LM_QK8_0        32
#define LM_QK8_1        32
#define LM_QK_K         256
#define LM_K_SCALE_SIZE 12

typedef uint16_t lm_half; // IEEE binary16 bits, little endian on disk

// ---------------------------------------------------------------- 32-value blocks
struct lm_block_q4_0 {
    lm_half d;                // scale: x = d * (q - 8)
    uint8_t qs[LM_QK4_0 / 2]; // q of value j in the low nibble of byte j, of value j+16 in the high nibble
};
struct lm_block_q4_1 {
    lm_half d;                // scale: x = d * q + m
    lm_half m;                // minimum
    uint8_t qs[LM_QK4_1 / 2]; // nibbles, packed as in q4_0
};
struct lm_block_q5_0 {
    lm_half d;                // x = d * (q - 16)
    uint8_t qh[4];            // bit j (little-endian u32): 5th bit of value j
    uint8_t qs[LM_QK5_0 / 2]; // low 4 bits, packed as in q4_0
};
struct lm_block_q5_1 {
    lm_half d; // x = d * q + m
    lm_half m;
    uint8_t qh[4];
    uint8_t qs[LM_QK5_1 / 2];
};
struct lm_block_q8_0 {
    lm_half d; // x = d * q
    int8_t qs[LM_QK8_0];
};
struct lm_block_q8_1 {
    lm_half d; // x = d * q
    lm_half s; // d * sum(qs), used by the q4_1/q5_1 dot products
    int8_t qs[LM_QK8_1];
};

// ---------------------------------------------------------------- 256-value super-blocks
struct lm_block_q2_K {
    uint8_t scales[LM_QK_K / 16]; // per 16 values: low nibble scale, high nibble min
    uint8_t qs[LM_QK_K / 4];      // 2-bit quants
    lm_half d;                    // scale of the scales
    lm_half dmin;                 // scale of the mins
};
struct lm_block_q3_K {
    uint8_t hmask[LM_QK_K / 8]; // high bit of each 3-bit quant
    uint8_t qs[LM_QK_K / 4];    // low 2 bits
    uint8_t scales[12];         // 16 signed 6-bit scales (offset 32)
    lm_half d;
};
struct lm_block_q4_K {
    lm_half d;
    lm_half dmin;
    uint8_t scales[LM_K_SCALE_SIZE]; // 8 scales + 8 mins, 6 bits each
    uint8_t qs[LM_QK_K / 2];
};
struct lm_block_q5_K {
    lm_half d;
    lm_half dmin;
    uint8_t scales[LM_K_SCALE_SIZE];
    uint8_t qh[LM_QK_K / 8]; // 5th bits
    uint8_t qs[LM_QK_K / 2]; // low 4 bits
};
struct lm_block_q6_K {
    uint8_t ql[LM_QK_K / 2];     // low 4 bits
    uint8_t qh[LM_QK_K / 4];     // high 2 bits
    int8_t scales[LM_QK_K / 16]; // signed 8-bit scale per 16 values
    lm_half d;
};
struct lm_block_q8_K { // activations only (dot products with K-quants)
    float d;
    int8_t qs[LM_QK_K];
    int16_t bsums[LM_QK_K / 16]; // sum of qs per 16 values
};

static_assert(sizeof(lm_block_q4_0) == 18, "q4_0 block is 18 bytes");
static_assert(sizeof(lm_block_q4_1) == 20, "q4_1 block is 20 bytes");
static_assert(sizeof(lm_block_q5_0) == 22, "q5_0 block is 22 bytes");
static_assert(sizeof(lm_block_q5_1) == 24, "q5_1 block is 24 bytes");
static_assert(sizeof(lm_block_q8_0) == 34, "q8_0 block is 34 bytes");
static_assert(sizeof(lm_block_q8_1) == 36, "q8_1 block is 36 bytes");
static_assert(sizeof(lm_block_q2_K) == 84, "q2_K block is 84 bytes");
static_assert(sizeof(lm_block_q3_K) == 110, "q3_K block is 110 bytes");
static_assert(sizeof(lm_block_q4_K) == 144, "q4_K block is 144 bytes");
static_assert(sizeof(lm_block_q5_K) == 176, "q5_K block is 176 bytes");
static_assert(sizeof(lm_block_q6_K) == 210, "q6_K block is 210 bytes");
static_assert(sizeof(lm_block_q8_K) == 292, "q8_K block is 292 bytes");
static_assert(alignof(lm_block_q4_0) <= 2, "blocks are packed back to back in files");

// ---------------------------------------------------------------- row conversions
// Reference quantizers: (k floats) -> (k / block blocks). Signatures match
// lm_ggml_from_float_t / lm_ggml_to_float_t so they can sit in type traits.
#define LM_QUANT_DECLARE_ROW_FNS(t)                                                                                    \
    void lm_quant_quantize_row_##t##_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k);      \
    void lm_quant_dequantize_row_##t(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k);

LM_QUANT_DECLARE_ROW_FNS(q4_0)
LM_QUANT_DECLARE_ROW_FNS(q4_1)
LM_QUANT_DECLARE_ROW_FNS(q5_0)
LM_QUANT_DECLARE_ROW_FNS(q5_1)
LM_QUANT_DECLARE_ROW_FNS(q8_0)
LM_QUANT_DECLARE_ROW_FNS(q8_1)
LM_QUANT_DECLARE_ROW_FNS(q2_K)
LM_QUANT_DECLARE_ROW_FNS(q3_K)
LM_QUANT_DECLARE_ROW_FNS(q4_K)
LM_QUANT_DECLARE_ROW_FNS(q5_K)
LM_QUANT_DECLARE_ROW_FNS(q6_K)
LM_QUANT_DECLARE_ROW_FNS(q8_K)

#undef LM_QUANT_DECLARE_ROW_FNS

// Importance-weighted quantizers (ggml's quantize_<type> with quant_weights):
// nrow rows of n_per_row values, each row written at its row size; imatrix
// holds n_per_row weights shared by all rows. With imatrix == NULL they use
// the reference path. Return the bytes written (nrow * row size).
typedef size_t (*lm_quant_rows_fn)(const float * src, void * dst, int64_t nrow, int64_t n_per_row,
                                   const float * imatrix);

size_t lm_quant_rows_q4_0(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_q4_1(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_q5_0(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_q5_1(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_q2_K(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_q3_K(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_q4_K(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_q5_K(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);
size_t lm_quant_rows_q6_K(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix);

// ---------------------------------------------------------------- per-type table
// Everything src/quant knows about one block format. NULL for types it does
// not handle (plain floats and ints).
struct lm_quant_type_fns {
    enum lm_ggml_type type;
    int64_t blck_size;               // values per block
    size_t type_size;                // bytes per block
    lm_ggml_to_float_t to_float;     // dequantize a row
    lm_ggml_from_float_t from_float; // reference quantizer
    lm_quant_rows_fn quantize;       // imatrix-aware path; NULL: from_float row by row
};

const struct lm_quant_type_fns * lm_quant_get_fns(enum lm_ggml_type type);

// Block layouts of ggml's quantized types, as backend plugins see them
// (ggml's ggml-common.h of v1.4.1: same type names, field names, sizes and
// macros). The structs ARE the GGUF on-disk format: every field order and
// size is fixed. Usable from C and C++.
//
// The two-scale blocks (q4_1, q5_1, q8_1, q2_K, q4_K, q5_K) keep their fp16
// pair in a union with one 32-bit lm_ggml_half2. As in ggml, C and C++ code
// that defines neither macro below reaches the halves directly (x.d, x.m:
// anonymous members, a GNU/Clang extension in C++); C++ code that defines
// LM_GGML_COMMON_DECL_CPP first gets both the union and the struct named
// `data` (x.data.data.d, x.data.dm), as with ggml's header.
//
// Defining LM_GGML_COMMON_IMPL_C or LM_GGML_COMMON_IMPL_CPP before the
// include also gives ggml's I-quant grid and sign tables as static arrays
// (ggml-common-tables.h; iq1s_grid for C, iq1s_grid_gpu for C++), as ggml's
// header does. Like ggml's, it does not define kvalues_iq4nl: the sources that
// use it define their own.

#ifndef LM_GGML_COMMON_DECL
#define LM_GGML_COMMON_DECL

#ifdef __cplusplus
#    include <cstdint>
#else
#    include <stdint.h>
#endif

typedef uint16_t lm_ggml_half;  // IEEE binary16 bits
typedef uint32_t lm_ggml_half2; // two of them, the first in the low half

#if defined(LM_GGML_COMMON_DECL_CPP)
#    define LM_GGML_COMMON_AGGR_U data
#    define LM_GGML_COMMON_AGGR_S data
#else
#    define LM_GGML_COMMON_AGGR_U
#    define LM_GGML_COMMON_AGGR_S
#endif

#ifndef __cplusplus
#    ifndef static_assert
#        if defined(__STDC_VERSION__) && (__STDC_VERSION__ >= 201100L)
#            define static_assert(cond, msg) _Static_assert(cond, msg)
#        else
#            define static_assert(cond, msg) struct lm_ggml_common_static_assert_noop
#        endif
#    endif
#endif

#define QK_K 256         // values per super-block
#define K_SCALE_SIZE 12

// ---------------------------------------------------------------- 32-value blocks
#define QK4_0 32
typedef struct {
    lm_ggml_half d;          // x = d * (q - 8)
    uint8_t qs[QK4_0 / 2];   // value j in the low nibble of byte j, value j + 16 in the high one
} block_q4_0;
static_assert(sizeof(block_q4_0) == sizeof(lm_ggml_half) + QK4_0 / 2, "wrong q4_0 block size/padding");

#define QK4_1 32
typedef struct {
    union {
        struct {
            lm_ggml_half d;  // x = d * q + m
            lm_ggml_half m;
        } LM_GGML_COMMON_AGGR_S;
        lm_ggml_half2 dm;
    } LM_GGML_COMMON_AGGR_U;
    uint8_t qs[QK4_1 / 2];
} block_q4_1;
static_assert(sizeof(block_q4_1) == 2 * sizeof(lm_ggml_half) + QK4_1 / 2, "wrong q4_1 block size/padding");

#define QK5_0 32
typedef struct {
    lm_ggml_half d;          // x = d * (q - 16)
    uint8_t qh[4];           // 5th bits, little-endian u32
    uint8_t qs[QK5_0 / 2];
} block_q5_0;
static_assert(sizeof(block_q5_0) == sizeof(lm_ggml_half) + sizeof(uint32_t) + QK5_0 / 2, "wrong q5_0 block size/padding");

#define QK5_1 32
typedef struct {
    union {
        struct {
            lm_ggml_half d;  // x = d * q + m
            lm_ggml_half m;
        } LM_GGML_COMMON_AGGR_S;
        lm_ggml_half2 dm;
    } LM_GGML_COMMON_AGGR_U;
    uint8_t qh[4];
    uint8_t qs[QK5_1 / 2];
} block_q5_1;
static_assert(sizeof(block_q5_1) == 2 * sizeof(lm_ggml_half) + sizeof(uint32_t) + QK5_1 / 2, "wrong q5_1 block size/padding");

#define QK8_0 32
typedef struct {
    lm_ggml_half d;          // x = d * q
    int8_t qs[QK8_0];
} block_q8_0;
static_assert(sizeof(block_q8_0) == sizeof(lm_ggml_half) + QK8_0, "wrong q8_0 block size/padding");

#define QK8_1 32
typedef struct {
    union {
        struct {
            lm_ggml_half d;  // x = d * q
            lm_ggml_half s;  // d * sum(qs)
        } LM_GGML_COMMON_AGGR_S;
        lm_ggml_half2 ds;
    } LM_GGML_COMMON_AGGR_U;
    int8_t qs[QK8_1];
} block_q8_1;
static_assert(sizeof(block_q8_1) == 2 * sizeof(lm_ggml_half) + QK8_1, "wrong q8_1 block size/padding");

// ---------------------------------------------------------------- ternary
typedef struct {
    uint8_t qs[(QK_K - 4 * QK_K / 64) / 5]; // 5 trits per byte
    uint8_t qh[QK_K / 64];                  // 4 trits per byte
    lm_ggml_half d;
} block_tq1_0;
static_assert(sizeof(block_tq1_0) == sizeof(lm_ggml_half) + QK_K / 64 + (QK_K - 4 * QK_K / 64) / 5, "wrong tq1_0 block size/padding");

typedef struct {
    uint8_t qs[QK_K / 4];    // 2 bits per value
    lm_ggml_half d;
} block_tq2_0;
static_assert(sizeof(block_tq2_0) == sizeof(lm_ggml_half) + QK_K / 4, "wrong tq2_0 block size/padding");

// ---------------------------------------------------------------- K-quants
typedef struct {
    uint8_t scales[QK_K / 16]; // 4-bit scale (low) and min (high) per 16 values
    uint8_t qs[QK_K / 4];
    union {
        struct {
            lm_ggml_half d;
            lm_ggml_half dmin;
        } LM_GGML_COMMON_AGGR_S;
        lm_ggml_half2 dm;
    } LM_GGML_COMMON_AGGR_U;
} block_q2_K;
static_assert(sizeof(block_q2_K) == 2 * sizeof(lm_ggml_half) + QK_K / 16 + QK_K / 4, "wrong q2_K block size/padding");

typedef struct {
    uint8_t hmask[QK_K / 8]; // high bits
    uint8_t qs[QK_K / 4];    // low 2 bits
    uint8_t scales[12];      // 6-bit scales
    lm_ggml_half d;
} block_q3_K;
static_assert(sizeof(block_q3_K) == sizeof(lm_ggml_half) + QK_K / 4 + QK_K / 8 + 12, "wrong q3_K block size/padding");

typedef struct {
    union {
        struct {
            lm_ggml_half d;
            lm_ggml_half dmin;
        } LM_GGML_COMMON_AGGR_S;
        lm_ggml_half2 dm;
    } LM_GGML_COMMON_AGGR_U;
    uint8_t scales[K_SCALE_SIZE]; // 8 scales and 8 mins, 6 bits each
    uint8_t qs[QK_K / 2];
} block_q4_K;
static_assert(sizeof(block_q4_K) == 2 * sizeof(lm_ggml_half) + K_SCALE_SIZE + QK_K / 2, "wrong q4_K block size/padding");

typedef struct {
    union {
        struct {
            lm_ggml_half d;
            lm_ggml_half dmin;
        } LM_GGML_COMMON_AGGR_S;
        lm_ggml_half2 dm;
    } LM_GGML_COMMON_AGGR_U;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} block_q5_K;
static_assert(sizeof(block_q5_K) == 2 * sizeof(lm_ggml_half) + K_SCALE_SIZE + QK_K / 2 + QK_K / 8, "wrong q5_K block size/padding");

typedef struct {
    uint8_t ql[QK_K / 2];      // low 4 bits
    uint8_t qh[QK_K / 4];      // high 2 bits
    int8_t  scales[QK_K / 16]; // signed 8-bit scales
    lm_ggml_half d;
} block_q6_K;
static_assert(sizeof(block_q6_K) == sizeof(lm_ggml_half) + QK_K / 16 + 3 * QK_K / 4, "wrong q6_K block size/padding");

typedef struct {              // activations of the K-quant dot products
    float   d;
    int8_t  qs[QK_K];
    int16_t bsums[QK_K / 16]; // sum of qs per 16 values
} block_q8_K;
static_assert(sizeof(block_q8_K) == sizeof(float) + QK_K + QK_K / 16 * sizeof(int16_t), "wrong q8_K block size/padding");

// ---------------------------------------------------------------- grid I-quants
typedef struct {
    lm_ggml_half d;
    uint16_t qs[QK_K / 8];
} block_iq2_xxs;
static_assert(sizeof(block_iq2_xxs) == sizeof(lm_ggml_half) + QK_K / 8 * sizeof(uint16_t), "wrong iq2_xxs block size/padding");

typedef struct {
    lm_ggml_half d;
    uint16_t qs[QK_K / 8];
    uint8_t  scales[QK_K / 32];
} block_iq2_xs;
static_assert(sizeof(block_iq2_xs) == sizeof(lm_ggml_half) + QK_K / 8 * sizeof(uint16_t) + QK_K / 32, "wrong iq2_xs block size/padding");

typedef struct {
    lm_ggml_half d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t scales[QK_K / 32];
} block_iq2_s;
static_assert(sizeof(block_iq2_s) == sizeof(lm_ggml_half) + QK_K / 4 + QK_K / 16, "wrong iq2_s block size/padding");

typedef struct {
    lm_ggml_half d;
    uint8_t qs[3 * QK_K / 8];
} block_iq3_xxs;
static_assert(sizeof(block_iq3_xxs) == sizeof(lm_ggml_half) + 3 * (QK_K / 8), "wrong iq3_xxs block size/padding");

#define IQ3S_N_SCALE QK_K / 64
typedef struct {
    lm_ggml_half d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t signs[QK_K / 8];
    uint8_t scales[IQ3S_N_SCALE];
} block_iq3_s;
static_assert(sizeof(block_iq3_s) == sizeof(lm_ggml_half) + 13 * (QK_K / 32) + IQ3S_N_SCALE, "wrong iq3_s block size/padding");

typedef struct {
    lm_ggml_half d;
    uint8_t  qs[QK_K / 8];
    uint16_t qh[QK_K / 32];
} block_iq1_s;
static_assert(sizeof(block_iq1_s) == sizeof(lm_ggml_half) + QK_K / 8 + QK_K / 16, "wrong iq1_s block size/padding");

typedef struct {
    uint8_t qs[QK_K / 8];      // grid index, low 8 bits
    uint8_t qh[QK_K / 16];     // grid index, high 3 bits + shift bit, per group of 8
    uint8_t scales[QK_K / 32]; // 3-bit scales; the fp16 scale sits in the top nibbles
} block_iq1_m;
static_assert(sizeof(block_iq1_m) == QK_K / 8 + QK_K / 16 + QK_K / 32, "wrong iq1_m block size/padding");

typedef union { // the fp16 scale of iq1_m, gathered from its scales
    lm_ggml_half f16;
    uint16_t     u16;
} iq1m_scale_t;

// ---------------------------------------------------------------- non-linear 4-bit
#define QK4_NL 32
typedef struct {
    lm_ggml_half d;           // x = d * kvalues_iq4nl[q]
    uint8_t qs[QK4_NL / 2];
} block_iq4_nl;
static_assert(sizeof(block_iq4_nl) == sizeof(lm_ggml_half) + QK4_NL / 2, "wrong iq4_nl block size/padding");

typedef struct {
    lm_ggml_half d;
    uint16_t scales_h;        // high 2 bits of the 8 6-bit scales (offset 32)
    uint8_t  scales_l[QK_K / 64];
    uint8_t  qs[QK_K / 2];
} block_iq4_xs;
static_assert(sizeof(block_iq4_xs) == sizeof(lm_ggml_half) + sizeof(uint16_t) + QK_K / 64 + QK_K / 2, "wrong iq4_xs block size/padding");

#endif // LM_GGML_COMMON_DECL

#if (defined(LM_GGML_COMMON_IMPL_C) || defined(LM_GGML_COMMON_IMPL_CPP)) && !defined(LM_GGML_COMMON_IMPL)
#define LM_GGML_COMMON_IMPL
#include "ggml-common-tables.h"
#endif

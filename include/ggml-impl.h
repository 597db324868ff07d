#pragma once

// lmggml: the implementation header for backends.
//
// ggml ships an internal header of the same name that its own backends (CPU,
// GPU plugins) include for graph internals, logging, op-parameter access and
// fp16 conversions. This is lmggml's version of that surface: the same names,
// layouts and meanings, so a backend written against ggml's header builds
// against this one and links with liblmggml. lmggml's own sources include it
// through src/core/ggml-impl.h, which adds what only the library uses.
//
// Differences from ggml, all on the "errors are values" side:
//   - lm_ggml_hash_insert / lm_ggml_hash_find_or_insert return
//     LM_GGML_HASHSET_FULL for a full set instead of aborting;
//   - lm_ggml_up does not assert that m is a power of two (it must be);
//   - LM_GGML_FP16_TO_FP32 computes the conversion (bit-exact, no table).
// The functions below marked LM_GGML_API are exported by liblmggml.

#include "ggml.h"
#include "gguf.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MIN
#    define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#    define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

// GGUF promises only 32-byte alignment of tensor data, so mmap'd weights have it.
#define TENSOR_ALIGNMENT 32

static inline int lm_ggml_up32(int n) {
    return (n + 31) & ~31;
}

// n rounded up to a multiple of m (m a power of two)
static inline int lm_ggml_up(int n, int m) {
    return (n + m - 1) & ~(m - 1);
}

// ---------------------------------------------------------------- logging
// Messages go to the callback set with lm_ggml_log_set (default: stderr).
// LM_GGML_LOG_CONT continues the previous message at its level.
LM_GGML_ATTRIBUTE_FORMAT(2, 3)
LM_GGML_API void lm_ggml_log_internal(enum lm_ggml_log_level level, const char * fmt, ...);
// The callback in effect when none is set: writes text to stderr and flushes.
LM_GGML_API void lm_ggml_log_callback_default(enum lm_ggml_log_level level, const char * text, void * user_data);

#define LM_GGML_LOG(...)       lm_ggml_log_internal(LM_GGML_LOG_LEVEL_NONE,  __VA_ARGS__)
#define LM_GGML_LOG_INFO(...)  lm_ggml_log_internal(LM_GGML_LOG_LEVEL_INFO,  __VA_ARGS__)
#define LM_GGML_LOG_WARN(...)  lm_ggml_log_internal(LM_GGML_LOG_LEVEL_WARN,  __VA_ARGS__)
#define LM_GGML_LOG_ERROR(...) lm_ggml_log_internal(LM_GGML_LOG_LEVEL_ERROR, __VA_ARGS__)
#define LM_GGML_LOG_DEBUG(...) lm_ggml_log_internal(LM_GGML_LOG_LEVEL_DEBUG, __VA_ARGS__)
#define LM_GGML_LOG_CONT(...)  lm_ggml_log_internal(LM_GGML_LOG_LEVEL_CONT,  __VA_ARGS__)

// Verbose tracing, compiled in only when LM_GGML_DEBUG is raised (1, 5, 10).
#ifndef LM_GGML_DEBUG
#    define LM_GGML_DEBUG 0
#endif
#if (LM_GGML_DEBUG >= 1)
#    define LM_GGML_PRINT_DEBUG(...) LM_GGML_LOG_DEBUG(__VA_ARGS__)
#else
#    define LM_GGML_PRINT_DEBUG(...)
#endif
#if (LM_GGML_DEBUG >= 5)
#    define LM_GGML_PRINT_DEBUG_5(...) LM_GGML_LOG_DEBUG(__VA_ARGS__)
#else
#    define LM_GGML_PRINT_DEBUG_5(...)
#endif
#if (LM_GGML_DEBUG >= 10)
#    define LM_GGML_PRINT_DEBUG_10(...) LM_GGML_LOG_DEBUG(__VA_ARGS__)
#else
#    define LM_GGML_PRINT_DEBUG_10(...)
#endif

// ---------------------------------------------------------------- op parameters
// op_params are raw int32 words; floats are stored bit-for-bit. Layouts per
// op: docs/OPS.md.
static inline void lm_ggml_set_op_params(struct lm_ggml_tensor * t, const void * params, size_t size) {
    LM_GGML_ASSERT(t && size <= LM_GGML_MAX_OP_PARAMS);
    memcpy(t->op_params, params, size);
}
static inline int32_t lm_ggml_get_op_params_i32(const struct lm_ggml_tensor * t, uint32_t i) {
    return t->op_params[i];
}
static inline float lm_ggml_get_op_params_f32(const struct lm_ggml_tensor * t, uint32_t i) {
    float v; memcpy(&v, &t->op_params[i], sizeof(v)); return v;
}
static inline void lm_ggml_set_op_params_i32(struct lm_ggml_tensor * t, uint32_t i, int32_t v) {
    t->op_params[i] = v;
}
static inline void lm_ggml_set_op_params_f32(struct lm_ggml_tensor * t, uint32_t i, float v) {
    memcpy(&t->op_params[i], &v, sizeof(v));
}

// op_params of MAP_CUSTOM1..3 (lm_ggml_map_custom1/2/3): the user function, the
// threads it asks for (LM_GGML_N_TASKS_MAX: all of the backend's) and its userdata.
struct lm_ggml_map_custom1_op_params {
    lm_ggml_custom1_op_t fun;
    int                  n_tasks;
    void *               userdata;
};
struct lm_ggml_map_custom2_op_params {
    lm_ggml_custom2_op_t fun;
    int                  n_tasks;
    void *               userdata;
};
struct lm_ggml_map_custom3_op_params {
    lm_ggml_custom3_op_t fun;
    int                  n_tasks;
    void *               userdata;
};

// ---------------------------------------------------------------- bitset
typedef uint32_t lm_ggml_bitset_t;

#define BITSET_SHR  5                                    // log2 of the bits per word
#define BITSET_MASK (sizeof(lm_ggml_bitset_t) * 8 - 1)   // bit index within a word

LM_GGML_API size_t lm_ggml_bitset_size(size_t n); // words needed for n bits

static inline bool lm_ggml_bitset_get(const lm_ggml_bitset_t * bitset, size_t i) {
    return (bitset[i >> BITSET_SHR] >> (i & BITSET_MASK)) & 1u;
}
static inline void lm_ggml_bitset_set(lm_ggml_bitset_t * bitset, size_t i) {
    bitset[i >> BITSET_SHR] |= (1u << (i & BITSET_MASK));
}
static inline void lm_ggml_bitset_clear(lm_ggml_bitset_t * bitset, size_t i) {
    bitset[i >> BITSET_SHR] &= ~(1u << (i & BITSET_MASK));
}

// ---------------------------------------------------------------- hash set
// Open-addressing set of tensor pointers (linear probing), used by graphs,
// the allocator and the scheduler.
struct lm_ggml_hash_set {
    size_t                   size;  // number of slots (a prime)
    lm_ggml_bitset_t *       used;  // which slots hold a key
    struct lm_ggml_tensor ** keys;  // keys[i] is meaningful only where used
};

#define LM_GGML_HASHSET_FULL           ((size_t)-1)
#define LM_GGML_HASHSET_ALREADY_EXISTS ((size_t)-2)

LM_GGML_API size_t lm_ggml_hash_size(size_t min_sz);              // slots for a set of min_sz keys
LM_GGML_API struct lm_ggml_hash_set lm_ggml_hash_set_new(size_t size); // size 0 and NULL arrays on OOM (logged)
LM_GGML_API void   lm_ggml_hash_set_free(struct lm_ggml_hash_set * hash_set);
LM_GGML_API void   lm_ggml_hash_set_reset(struct lm_ggml_hash_set * hash_set); // empties the set

static inline size_t lm_ggml_hash(const struct lm_ggml_tensor * p) {
    return (size_t)(uintptr_t)p >> 4; // tensors are at least 16-byte aligned
}
// slot of key, or the first empty slot where it would go; FULL if neither
static inline size_t lm_ggml_hash_find(const struct lm_ggml_hash_set * hs, const struct lm_ggml_tensor * key) {
    size_t h = lm_ggml_hash(key) % hs->size;
    size_t i = h;
    while (lm_ggml_bitset_get(hs->used, i) && hs->keys[i] != key) {
        i = (i + 1) % hs->size;
        if (i == h) return LM_GGML_HASHSET_FULL;
    }
    return i;
}
static inline bool lm_ggml_hash_contains(const struct lm_ggml_hash_set * hs, struct lm_ggml_tensor * key) {
    size_t i = lm_ggml_hash_find(hs, key);
    return i != LM_GGML_HASHSET_FULL && lm_ggml_bitset_get(hs->used, i);
}
// slot index, LM_GGML_HASHSET_ALREADY_EXISTS, or LM_GGML_HASHSET_FULL
static inline size_t lm_ggml_hash_insert(struct lm_ggml_hash_set * hs, struct lm_ggml_tensor * key) {
    size_t i = lm_ggml_hash_find(hs, key);
    if (i == LM_GGML_HASHSET_FULL) return i;
    if (lm_ggml_bitset_get(hs->used, i)) return LM_GGML_HASHSET_ALREADY_EXISTS;
    lm_ggml_bitset_set(hs->used, i);
    hs->keys[i] = key;
    return i;
}
// slot index (inserting if absent), or LM_GGML_HASHSET_FULL
static inline size_t lm_ggml_hash_find_or_insert(struct lm_ggml_hash_set * hs, struct lm_ggml_tensor * key) {
    size_t i = lm_ggml_hash_find(hs, key);
    if (i == LM_GGML_HASHSET_FULL) return i;
    lm_ggml_bitset_set(hs->used, i);
    hs->keys[i] = key;
    return i;
}

// ---------------------------------------------------------------- graphs
enum lm_ggml_cgraph_eval_order {
    LM_GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT = 0,
    LM_GGML_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT,
    LM_GGML_CGRAPH_EVAL_ORDER_COUNT
};

struct lm_ggml_cgraph {
    int size;     // capacity of nodes and leafs (and grads / grad_accs when present)
    int n_nodes;  // tensors computed by an op, in execution order
    int n_leafs;  // inputs and constants

    struct lm_ggml_tensor ** nodes;     // (size)
    struct lm_ggml_tensor ** grads;     // gradient of each visited tensor, by hash slot; may be NULL
    struct lm_ggml_tensor ** grad_accs; // gradient accumulators, by hash slot; may be NULL
    struct lm_ggml_tensor ** leafs;     // (size)

    struct lm_ggml_hash_set visited_hash_set; // every tensor reachable from nodes

    enum lm_ggml_cgraph_eval_order order;
};

// A graph aliasing nodes [i0, i1) of cgraph, with no leafs, gradients or hash
// set: how a scheduler hands one split to a backend. Valid while cgraph lives.
LM_GGML_API struct lm_ggml_cgraph lm_ggml_graph_view(struct lm_ggml_cgraph * cgraph, int i0, int i1);

// ---------------------------------------------------------------- memory
// Host memory aligned for any SIMD load (64 bytes). NULL (logged) on failure;
// size 0 may return NULL. Free with lm_ggml_aligned_free, passing the size.
LM_GGML_API void * lm_ggml_aligned_malloc(size_t size);
LM_GGML_API void   lm_ggml_aligned_free(void * ptr, size_t size);

// ---------------------------------------------------------------- fp16 / bf16
// Portable bit-exact conversions: round-to-nearest-even, Inf and NaN kept.
static inline float lm_ggml_compute_fp16_to_fp32(lm_ggml_fp16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp  = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else { // subnormal: normalise
        exp = 113;
        while ((mant & 0x400u) == 0) { mant <<= 1; exp--; }
        mant &= 0x3ffu;
        bits = sign | (exp << 23) | (mant << 13);
    }
    float f; memcpy(&f, &bits, sizeof(f)); return f;
}

static inline lm_ggml_fp16_t lm_ggml_compute_fp32_to_fp16(float f) {
    uint32_t x; memcpy(&x, &f, sizeof(x));
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) { // Inf or NaN (keep NaN quiet and non-zero)
        return (lm_ggml_fp16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0u));
    }
    if (ax >= 0x477ff000u) { // rounds to >= 65520: overflow to Inf
        return (lm_ggml_fp16_t)(sign | 0x7c00u);
    }
    if (ax < 0x38800000u) { // result is subnormal or zero
        if (ax < 0x33000000u) return (lm_ggml_fp16_t)sign; // < 2^-25 rounds to 0
        const uint32_t e = ax >> 23;
        const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126u - e; // 14..24
        uint32_t r = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1u);
        const uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (lm_ggml_fp16_t)(sign | r);
    }
    uint32_t r = ((ax >> 13) - (112u << 10));
    const uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
    return (lm_ggml_fp16_t)(sign | r);
}

static inline float lm_ggml_compute_bf16_to_fp32(lm_ggml_bf16_t h) {
    uint32_t bits = (uint32_t)h.bits << 16;
    float f; memcpy(&f, &bits, sizeof(f)); return f;
}

// round-to-nearest-even; NaN is kept quiet (bit 6 set), as ggml does
static inline lm_ggml_bf16_t lm_ggml_compute_fp32_to_bf16(float s) {
    uint32_t u; memcpy(&u, &s, sizeof(u));
    lm_ggml_bf16_t h;
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        h.bits = (uint16_t)((u >> 16) | 64u);
        return h;
    }
    h.bits = (uint16_t)((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
    return h;
}

// The compiler's own half type, for SIMD code that loads fp16 rows (NEON).
#if defined(__ARM_NEON) && !defined(_MSC_VER)
typedef __fp16 lm_ggml_fp16_internal_t;
#endif

#define LM_GGML_COMPUTE_FP16_TO_FP32(x) lm_ggml_compute_fp16_to_fp32(x)
#define LM_GGML_COMPUTE_FP32_TO_FP16(x) lm_ggml_compute_fp32_to_fp16(x)
#define LM_GGML_FP16_TO_FP32(x) lm_ggml_compute_fp16_to_fp32(x)
#define LM_GGML_FP32_TO_FP16(x) lm_ggml_compute_fp32_to_fp16(x)
#define LM_GGML_BF16_TO_FP32(x) lm_ggml_compute_bf16_to_fp32(x)
#define LM_GGML_FP32_TO_BF16(x) lm_ggml_compute_fp32_to_bf16(x)

// fp32 value of every fp16 bit pattern (exported as ggml exports it, for
// code that indexes it directly); filled when the library loads.
LM_GGML_API float lm_ggml_table_f32_f16[1 << 16];

#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
#include <vector>

// GGUF internals for tests and tools. C++ linkage, as ggml declares them.
// Bytes per element of a fixed-size value type; 0 for STRING, ARRAY, invalid.
LM_GGML_API size_t lm_gguf_type_size(enum lm_gguf_type type);
// lm_gguf_init_from_file on an open file holding a GGUF image from its start
// (the file is rewound). The caller keeps and closes the file. NULL on error (logged).
LM_GGML_API struct lm_gguf_context * lm_gguf_init_from_file_impl(FILE * file, struct lm_gguf_init_params params);
// Appends the file image of ctx (only the metadata when only_meta) to buf;
// on error (logged) buf is left as it was.
LM_GGML_API void lm_gguf_write_to_buf(const struct lm_gguf_context * ctx, std::vector<int8_t> & buf, bool only_meta);
#endif // __cplusplus

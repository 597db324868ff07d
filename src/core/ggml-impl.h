#pragma once
// Internal to lmggml (not installed): graph layout, hash sets, logging,
// op-parameter access and fp16 helpers shared by the core, backends and CPU.

#include "ggml.h"

#include <stdarg.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#ifdef __cplusplus
#include <cstring>
#endif

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------- logging
// One line per failure: "<function>: <object>: <what is wrong>".
// Exported so plugin backends log through the application's callback too.
LM_GGML_ATTRIBUTE_FORMAT(2, 3)
LM_GGML_API void lm_ggml_log_internal(enum lm_ggml_log_level level, const char * fmt, ...);
LM_GGML_API void lm_ggml_log_internal_v(enum lm_ggml_log_level level, const char * fmt, va_list args);

// Logs "<fn>: a required pointer argument is NULL" (public entry points).
void lm_ggml_null_arg(const char * fn);

#define LM_GGML_LOG(...)       lm_ggml_log_internal(LM_GGML_LOG_LEVEL_NONE,  __VA_ARGS__)
#define LM_GGML_LOG_INFO(...)  lm_ggml_log_internal(LM_GGML_LOG_LEVEL_INFO,  __VA_ARGS__)
#define LM_GGML_LOG_WARN(...)  lm_ggml_log_internal(LM_GGML_LOG_LEVEL_WARN,  __VA_ARGS__)
#define LM_GGML_LOG_ERROR(...) lm_ggml_log_internal(LM_GGML_LOG_LEVEL_ERROR, __VA_ARGS__)
#define LM_GGML_LOG_DEBUG(...) lm_ggml_log_internal(LM_GGML_LOG_LEVEL_DEBUG, __VA_ARGS__)
#define LM_GGML_LOG_CONT(...)  lm_ggml_log_internal(LM_GGML_LOG_LEVEL_CONT,  __VA_ARGS__)

// ---------------------------------------------------------------- memory
// Aligned host allocation (64 bytes: one cache line, one AVX-512 register).
// Returns NULL on failure (never aborts). Free with lm_ggml_aligned_free.
#define LM_GGML_HOST_ALIGNMENT 64
void * lm_ggml_aligned_malloc(size_t size);
void   lm_ggml_aligned_free(void * ptr, size_t size);

// ---------------------------------------------------------------- hash set
// Open-addressing set of tensor pointers, used by graphs and the allocator.
struct lm_ggml_hash_set {
    size_t                   size;  // number of slots (a prime)
    uint32_t *               used;  // bitset of occupied slots
    struct lm_ggml_tensor ** keys;
};

#define LM_GGML_HASHSET_FULL           ((size_t)-1)
#define LM_GGML_HASHSET_ALREADY_EXISTS ((size_t)-2)

size_t lm_ggml_hash_size(size_t min_sz); // smallest prime >= min_sz from a table
struct lm_ggml_hash_set lm_ggml_hash_set_new(size_t size); // keys/used are malloc'd (NULL on OOM)
void   lm_ggml_hash_set_free(struct lm_ggml_hash_set * hash_set);
void   lm_ggml_hash_set_reset(struct lm_ggml_hash_set * hash_set);
size_t lm_ggml_bitset_size(size_t n); // number of uint32_t words for n bits

static inline size_t lm_ggml_hash(const struct lm_ggml_tensor * p) {
    return (size_t)(uintptr_t)p >> 4; // tensors are at least 16-byte aligned
}
static inline bool lm_ggml_bitset_get(const uint32_t * bitset, size_t i) {
    return (bitset[i >> 5] >> (i & 31)) & 1u;
}
static inline void lm_ggml_bitset_set(uint32_t * bitset, size_t i) {
    bitset[i >> 5] |= (1u << (i & 31));
}
static inline void lm_ggml_bitset_clear(uint32_t * bitset, size_t i) {
    bitset[i >> 5] &= ~(1u << (i & 31));
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
    int size;     // capacity of nodes and leafs
    int n_nodes;  // tensors computed by an op, in execution order
    int n_leafs;  // inputs and constants (op NONE, or views of leafs)

    struct lm_ggml_tensor ** nodes;     // (size)
    struct lm_ggml_tensor ** grads;     // unused (no training), kept for layout
    struct lm_ggml_tensor ** grad_accs; // unused
    struct lm_ggml_tensor ** leafs;     // (size)

    struct lm_ggml_hash_set visited_hash_set; // every tensor reachable from nodes

    enum lm_ggml_cgraph_eval_order order;
};

// A graph aliasing nodes [i0, i1) of cgraph (no leafs, no hash set): used by
// the scheduler to hand one split to a backend. Valid while cgraph lives.
struct lm_ggml_cgraph lm_ggml_graph_view(struct lm_ggml_cgraph * cgraph, int i0, int i1);

// ---------------------------------------------------------------- tensors
// The single constructor every op uses. view_src != NULL makes a view at
// view_offs bytes into view_src's data. Returns NULL (and logs) when the
// context is out of memory or the arguments are invalid.
struct lm_ggml_tensor * lm_ggml_new_tensor_impl(struct lm_ggml_context * ctx, enum lm_ggml_type type, int n_dims,
                                                const int64_t * ne, struct lm_ggml_tensor * view_src, size_t view_offs);

static inline bool lm_ggml_is_empty_ne(const int64_t * ne) {
    return ne[0] == 0 || ne[1] == 0 || ne[2] == 0 || ne[3] == 0;
}

// op_params are raw int32 words; floats are stored bit-for-bit.
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

// ---------------------------------------------------------------- fp16 / bf16
// Portable bit-exact conversions (round-to-nearest-even, NaN/Inf preserved).
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

#define LM_GGML_FP16_TO_FP32(x) lm_ggml_compute_fp16_to_fp32(x)
#define LM_GGML_FP32_TO_FP16(x) lm_ggml_compute_fp32_to_fp16(x)
#define LM_GGML_BF16_TO_FP32(x) lm_ggml_compute_bf16_to_fp32(x)
#define LM_GGML_FP32_TO_BF16(x) lm_ggml_compute_fp32_to_bf16(x)

#ifdef __cplusplus
}
#endif

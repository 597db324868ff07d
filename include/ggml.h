#pragma once

// lmggml: tensor core API (C ABI).
// Names, enum values and the lm_ggml_tensor layout follow ggml as shipped in
// cui-llama.rn 1.4.1 (lm_ prefix), so code and files written for it work here.
//
// Ownership: tensors and graphs live inside the lm_ggml_context that created
// them and die with lm_ggml_free(ctx). Tensor data lives in the context
// (no_alloc = false) or in a backend buffer (see ggml-backend.h).
//
// Errors: functions that can fail on bad input return NULL / false and report
// one line through the log callback (lm_ggml_log_set). Shape mismatches in
// graph construction are programmer errors and go through lm_ggml_abort.

#ifdef LM_GGML_SHARED
#    if defined(_WIN32) && !defined(__MINGW32__)
#        ifdef LM_GGML_BUILD
#            define LM_GGML_API __declspec(dllexport) extern
#        else
#            define LM_GGML_API __declspec(dllimport) extern
#        endif
#    else
#        define LM_GGML_API __attribute__((visibility("default"))) extern
#    endif
#else
#    define LM_GGML_API extern
#endif

#ifdef __GNUC__
#    define LM_GGML_DEPRECATED(func, hint) func __attribute__((deprecated(hint)))
#    define LM_GGML_ATTRIBUTE_FORMAT(...) __attribute__((format(printf, __VA_ARGS__)))
#else
#    define LM_GGML_DEPRECATED(func, hint) func
#    define LM_GGML_ATTRIBUTE_FORMAT(...)
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LM_GGML_FILE_MAGIC   0x67676d6c
#define LM_GGML_FILE_VERSION 2

#define LM_GGML_QNT_VERSION        2
#define LM_GGML_QNT_VERSION_FACTOR 1000

#define LM_GGML_MAX_DIMS           4
#define LM_GGML_MAX_PARAMS         2048
#define LM_GGML_MAX_SRC            10
#define LM_GGML_MAX_N_THREADS      512
#define LM_GGML_MAX_OP_PARAMS      64
#ifndef LM_GGML_MAX_NAME
#    define LM_GGML_MAX_NAME       64
#endif
#define LM_GGML_DEFAULT_N_THREADS  4
#define LM_GGML_DEFAULT_GRAPH_SIZE 2048

#if UINTPTR_MAX == 0xFFFFFFFF
#    define LM_GGML_MEM_ALIGN 4
#else
#    define LM_GGML_MEM_ALIGN 16
#endif

#define LM_GGML_EXIT_SUCCESS 0
#define LM_GGML_EXIT_ABORTED 1

// rope modes (op_params[2] of LM_GGML_OP_ROPE)
#define LM_GGML_ROPE_TYPE_NEOX   2
#define LM_GGML_ROPE_TYPE_MROPE  8
#define LM_GGML_ROPE_TYPE_VISION 24

#define LM_GGML_UNUSED(x) (void)(x)
#define LM_GGML_PAD(x, n) (((x) + (n) - 1) & ~((n) - 1))

#ifdef __cplusplus
#    define LM_GGML_NORETURN [[noreturn]]
#elif defined(_MSC_VER)
#    define LM_GGML_NORETURN __declspec(noreturn)
#else
#    define LM_GGML_NORETURN _Noreturn
#endif

#ifdef __cplusplus
#    define LM_GGML_RESTRICT __restrict__
#else
#    define LM_GGML_RESTRICT restrict
#endif

// Programmer errors (bad shapes while building a graph) end here. The handler
// is replaceable (lm_ggml_set_abort_handler) so an app can log and unwind its own way.
#define LM_GGML_ABORT(...) lm_ggml_abort((strrchr(__FILE__, '/') ? strrchr(__FILE__, '/') + 1 : __FILE__), __LINE__, __VA_ARGS__)
#define LM_GGML_ASSERT(x) if (!(x)) LM_GGML_ABORT("LM_GGML_ASSERT(%s) failed", #x)

// Declares ne00..ne03 / nb00..nb03 style locals for kernels.
#define LM_GGML_TENSOR_LOCALS_1(type, prefix, pointer, array) \
    const type prefix##0 = (pointer)->array[0];               \
    LM_GGML_UNUSED(prefix##0);
#define LM_GGML_TENSOR_LOCALS_2(type, prefix, pointer, array) \
    LM_GGML_TENSOR_LOCALS_1(type, prefix, pointer, array)     \
    const type prefix##1 = (pointer)->array[1];               \
    LM_GGML_UNUSED(prefix##1);
#define LM_GGML_TENSOR_LOCALS_3(type, prefix, pointer, array) \
    LM_GGML_TENSOR_LOCALS_2(type, prefix, pointer, array)     \
    const type prefix##2 = (pointer)->array[2];               \
    LM_GGML_UNUSED(prefix##2);
#define LM_GGML_TENSOR_LOCALS(type, prefix, pointer, array)   \
    LM_GGML_TENSOR_LOCALS_3(type, prefix, pointer, array)     \
    const type prefix##3 = (pointer)->array[3];               \
    LM_GGML_UNUSED(prefix##3);

#define LM_GGML_TENSOR_UNARY_OP_LOCALS                 \
    LM_GGML_TENSOR_LOCALS(int64_t, ne0, src0, ne)      \
    LM_GGML_TENSOR_LOCALS(size_t,  nb0, src0, nb)      \
    LM_GGML_TENSOR_LOCALS(int64_t, ne,  dst,  ne)      \
    LM_GGML_TENSOR_LOCALS(size_t,  nb,  dst,  nb)

// ggml's spelling of "this cannot happen": lmggml's own code never relies on
// it, clients (and backends built for ggml) do.
#if defined(LM_GGML_NDEBUG_UNREACHABLE_ABORT)
#   define LM_GGML_UNREACHABLE() do { fprintf(stderr, "statement should be unreachable\n"); abort(); } while(0)
#elif defined(__GNUC__)
#   define LM_GGML_UNREACHABLE() __builtin_unreachable()
#elif defined(_MSC_VER)
#   define LM_GGML_UNREACHABLE() __assume(0)
#else
#   define LM_GGML_UNREACHABLE() ((void) 0)
#endif

#define LM_GGML_TENSOR_BINARY_OP_LOCALS01              \
    LM_GGML_TENSOR_LOCALS(int64_t, ne0, src0, ne)      \
    LM_GGML_TENSOR_LOCALS(size_t,  nb0, src0, nb)      \
    LM_GGML_TENSOR_LOCALS(int64_t, ne1, src1, ne)      \
    LM_GGML_TENSOR_LOCALS(size_t,  nb1, src1, nb)

#define LM_GGML_TENSOR_BINARY_OP_LOCALS                \
    LM_GGML_TENSOR_LOCALS(int64_t, ne0, src0, ne)      \
    LM_GGML_TENSOR_LOCALS(size_t,  nb0, src0, nb)      \
    LM_GGML_TENSOR_LOCALS(int64_t, ne1, src1, ne)      \
    LM_GGML_TENSOR_LOCALS(size_t,  nb1, src1, nb)      \
    LM_GGML_TENSOR_LOCALS(int64_t, ne,  dst,  ne)      \
    LM_GGML_TENSOR_LOCALS(size_t,  nb,  dst,  nb)

#ifdef __cplusplus
extern "C" {
#endif

    LM_GGML_NORETURN LM_GGML_ATTRIBUTE_FORMAT(3, 4)
    LM_GGML_API void lm_ggml_abort(const char * file, int line, const char * fmt, ...);

    // lmggml extension: replace what lm_ggml_abort does after formatting its
    // message (default: print to stderr and abort()). NULL restores the default.
    typedef void (*lm_ggml_abort_handler_t)(const char * message);
    LM_GGML_API void lm_ggml_set_abort_handler(lm_ggml_abort_handler_t handler);

    enum lm_ggml_status {
        LM_GGML_STATUS_ALLOC_FAILED = -2,
        LM_GGML_STATUS_FAILED       = -1,
        LM_GGML_STATUS_SUCCESS      =  0,
        LM_GGML_STATUS_ABORTED      =  1,
    };

    typedef uint16_t lm_ggml_fp16_t;
    typedef struct { uint16_t bits; } lm_ggml_bf16_t;

    struct lm_ggml_object;
    struct lm_ggml_context;
    struct lm_ggml_cgraph;

    // Values are those of the GGUF file format.
    enum lm_ggml_type {
        LM_GGML_TYPE_F32     = 0,
        LM_GGML_TYPE_F16     = 1,
        LM_GGML_TYPE_Q4_0    = 2,
        LM_GGML_TYPE_Q4_1    = 3,
        // 4 and 5 were Q4_2 / Q4_3, removed
        LM_GGML_TYPE_Q5_0    = 6,
        LM_GGML_TYPE_Q5_1    = 7,
        LM_GGML_TYPE_Q8_0    = 8,
        LM_GGML_TYPE_Q8_1    = 9,
        LM_GGML_TYPE_Q2_K    = 10,
        LM_GGML_TYPE_Q3_K    = 11,
        LM_GGML_TYPE_Q4_K    = 12,
        LM_GGML_TYPE_Q5_K    = 13,
        LM_GGML_TYPE_Q6_K    = 14,
        LM_GGML_TYPE_Q8_K    = 15,
        LM_GGML_TYPE_IQ2_XXS = 16,
        LM_GGML_TYPE_IQ2_XS  = 17,
        LM_GGML_TYPE_IQ3_XXS = 18,
        LM_GGML_TYPE_IQ1_S   = 19,
        LM_GGML_TYPE_IQ4_NL  = 20,
        LM_GGML_TYPE_IQ3_S   = 21,
        LM_GGML_TYPE_IQ2_S   = 22,
        LM_GGML_TYPE_IQ4_XS  = 23,
        LM_GGML_TYPE_I8      = 24,
        LM_GGML_TYPE_I16     = 25,
        LM_GGML_TYPE_I32     = 26,
        LM_GGML_TYPE_I64     = 27,
        LM_GGML_TYPE_F64     = 28,
        LM_GGML_TYPE_IQ1_M   = 29,
        LM_GGML_TYPE_BF16    = 30,
        // 31-33 were Q4_0_4_4 / Q4_0_4_8 / Q4_0_8_8, removed
        LM_GGML_TYPE_TQ1_0   = 34,
        LM_GGML_TYPE_TQ2_0   = 35,
        // 36-38 were IQ4_NL_4_4 / IQ4_NL_4_8 / IQ4_NL_8_8, removed
        LM_GGML_TYPE_COUNT   = 39,
    };

    enum lm_ggml_prec {
        LM_GGML_PREC_DEFAULT,
        LM_GGML_PREC_F32,
    };

    enum lm_ggml_ftype {
        LM_GGML_FTYPE_UNKNOWN              = -1,
        LM_GGML_FTYPE_ALL_F32              = 0,
        LM_GGML_FTYPE_MOSTLY_F16           = 1,
        LM_GGML_FTYPE_MOSTLY_Q4_0          = 2,
        LM_GGML_FTYPE_MOSTLY_Q4_1          = 3,
        LM_GGML_FTYPE_MOSTLY_Q4_1_SOME_F16 = 4,
        LM_GGML_FTYPE_MOSTLY_Q8_0          = 7,
        LM_GGML_FTYPE_MOSTLY_Q5_0          = 8,
        LM_GGML_FTYPE_MOSTLY_Q5_1          = 9,
        LM_GGML_FTYPE_MOSTLY_Q2_K          = 10,
        LM_GGML_FTYPE_MOSTLY_Q3_K          = 11,
        LM_GGML_FTYPE_MOSTLY_Q4_K          = 12,
        LM_GGML_FTYPE_MOSTLY_Q5_K          = 13,
        LM_GGML_FTYPE_MOSTLY_Q6_K          = 14,
        LM_GGML_FTYPE_MOSTLY_IQ2_XXS       = 15,
        LM_GGML_FTYPE_MOSTLY_IQ2_XS        = 16,
        LM_GGML_FTYPE_MOSTLY_IQ3_XXS       = 17,
        LM_GGML_FTYPE_MOSTLY_IQ1_S         = 18,
        LM_GGML_FTYPE_MOSTLY_IQ4_NL        = 19,
        LM_GGML_FTYPE_MOSTLY_IQ3_S         = 20,
        LM_GGML_FTYPE_MOSTLY_IQ2_S         = 21,
        LM_GGML_FTYPE_MOSTLY_IQ4_XS        = 22,
        LM_GGML_FTYPE_MOSTLY_IQ1_M         = 23,
        LM_GGML_FTYPE_MOSTLY_BF16          = 24,
    };

    // The order is part of the ABI: op enum values appear in serialized graphs
    // and in backends compiled against cui-llama.rn's headers.
    enum lm_ggml_op {
        LM_GGML_OP_NONE = 0,

        LM_GGML_OP_DUP,
        LM_GGML_OP_ADD,
        LM_GGML_OP_ADD1,
        LM_GGML_OP_ACC,
        LM_GGML_OP_SUB,
        LM_GGML_OP_MUL,
        LM_GGML_OP_DIV,
        LM_GGML_OP_SQR,
        LM_GGML_OP_SQRT,
        LM_GGML_OP_LOG,
        LM_GGML_OP_SIN,
        LM_GGML_OP_COS,
        LM_GGML_OP_SUM,
        LM_GGML_OP_SUM_ROWS,
        LM_GGML_OP_MEAN,
        LM_GGML_OP_ARGMAX,
        LM_GGML_OP_COUNT_EQUAL,
        LM_GGML_OP_REPEAT,
        LM_GGML_OP_REPEAT_BACK,
        LM_GGML_OP_CONCAT,
        LM_GGML_OP_SILU_BACK,
        LM_GGML_OP_NORM,
        LM_GGML_OP_RMS_NORM,
        LM_GGML_OP_RMS_NORM_BACK,
        LM_GGML_OP_GROUP_NORM,

        LM_GGML_OP_MUL_MAT,
        LM_GGML_OP_MUL_MAT_ID,
        LM_GGML_OP_OUT_PROD,

        LM_GGML_OP_SCALE,
        LM_GGML_OP_SET,
        LM_GGML_OP_CPY,
        LM_GGML_OP_CONT,
        LM_GGML_OP_RESHAPE,
        LM_GGML_OP_VIEW,
        LM_GGML_OP_PERMUTE,
        LM_GGML_OP_TRANSPOSE,
        LM_GGML_OP_GET_ROWS,
        LM_GGML_OP_GET_ROWS_BACK,
        LM_GGML_OP_DIAG,
        LM_GGML_OP_DIAG_MASK_INF,
        LM_GGML_OP_DIAG_MASK_ZERO,
        LM_GGML_OP_SOFT_MAX,
        LM_GGML_OP_SOFT_MAX_BACK,
        LM_GGML_OP_ROPE,
        LM_GGML_OP_ROPE_BACK,
        LM_GGML_OP_CLAMP,
        LM_GGML_OP_CONV_TRANSPOSE_1D,
        LM_GGML_OP_IM2COL,
        LM_GGML_OP_IM2COL_BACK,
        LM_GGML_OP_CONV_TRANSPOSE_2D,
        LM_GGML_OP_POOL_1D,
        LM_GGML_OP_POOL_2D,
        LM_GGML_OP_POOL_2D_BACK,
        LM_GGML_OP_UPSCALE,
        LM_GGML_OP_PAD,
        LM_GGML_OP_PAD_REFLECT_1D,
        LM_GGML_OP_ARANGE,
        LM_GGML_OP_TIMESTEP_EMBEDDING,
        LM_GGML_OP_ARGSORT,
        LM_GGML_OP_LEAKY_RELU,

        LM_GGML_OP_FLASH_ATTN_EXT,
        LM_GGML_OP_FLASH_ATTN_BACK,
        LM_GGML_OP_SSM_CONV,
        LM_GGML_OP_SSM_SCAN,
        LM_GGML_OP_WIN_PART,
        LM_GGML_OP_WIN_UNPART,
        LM_GGML_OP_GET_REL_POS,
        LM_GGML_OP_ADD_REL_POS,
        LM_GGML_OP_RWKV_WKV6,
        LM_GGML_OP_GATED_LINEAR_ATTN,

        LM_GGML_OP_UNARY,

        LM_GGML_OP_MAP_UNARY,
        LM_GGML_OP_MAP_BINARY,

        LM_GGML_OP_MAP_CUSTOM1_F32,
        LM_GGML_OP_MAP_CUSTOM2_F32,
        LM_GGML_OP_MAP_CUSTOM3_F32,

        LM_GGML_OP_MAP_CUSTOM1,
        LM_GGML_OP_MAP_CUSTOM2,
        LM_GGML_OP_MAP_CUSTOM3,

        LM_GGML_OP_CROSS_ENTROPY_LOSS,
        LM_GGML_OP_CROSS_ENTROPY_LOSS_BACK,
        LM_GGML_OP_OPT_STEP_ADAMW,

        LM_GGML_OP_COUNT,
    };

    enum lm_ggml_unary_op {
        LM_GGML_UNARY_OP_ABS,
        LM_GGML_UNARY_OP_SGN,
        LM_GGML_UNARY_OP_NEG,
        LM_GGML_UNARY_OP_STEP,
        LM_GGML_UNARY_OP_TANH,
        LM_GGML_UNARY_OP_ELU,
        LM_GGML_UNARY_OP_RELU,
        LM_GGML_UNARY_OP_SIGMOID,
        LM_GGML_UNARY_OP_GELU,
        LM_GGML_UNARY_OP_GELU_QUICK,
        LM_GGML_UNARY_OP_SILU,
        LM_GGML_UNARY_OP_HARDSWISH,
        LM_GGML_UNARY_OP_HARDSIGMOID,
        LM_GGML_UNARY_OP_EXP,

        LM_GGML_UNARY_OP_COUNT,
    };

    enum lm_ggml_object_type {
        LM_GGML_OBJECT_TYPE_TENSOR,
        LM_GGML_OBJECT_TYPE_GRAPH,
        LM_GGML_OBJECT_TYPE_WORK_BUFFER
    };

    enum lm_ggml_log_level {
        LM_GGML_LOG_LEVEL_NONE  = 0,
        LM_GGML_LOG_LEVEL_DEBUG = 1,
        LM_GGML_LOG_LEVEL_INFO  = 2,
        LM_GGML_LOG_LEVEL_WARN  = 3,
        LM_GGML_LOG_LEVEL_ERROR = 4,
        LM_GGML_LOG_LEVEL_CONT  = 5,
    };

    enum lm_ggml_tensor_flag {
        LM_GGML_TENSOR_FLAG_INPUT  = 1,
        LM_GGML_TENSOR_FLAG_OUTPUT = 2,
        LM_GGML_TENSOR_FLAG_PARAM  = 4,
        LM_GGML_TENSOR_FLAG_LOSS   = 8,
    };

    struct lm_ggml_init_params {
        size_t mem_size;   // bytes of the arena
        void * mem_buffer; // caller-owned arena, or NULL to let the context allocate it
        bool   no_alloc;   // true: tensors get headers only, data comes from a backend buffer
    };

    // Layout fixed by the ABI (backends index these fields directly).
    struct lm_ggml_tensor {
        enum lm_ggml_type type;

        struct lm_ggml_backend_buffer * buffer;

        int64_t ne[LM_GGML_MAX_DIMS]; // elements per dimension, ne[0] innermost
        size_t  nb[LM_GGML_MAX_DIMS]; // byte strides: nb[0] = type size, nb[i] = nb[i-1]*ne[i-1] when contiguous

        enum lm_ggml_op op;

        // op parameters, int32-aligned
        int32_t op_params[LM_GGML_MAX_OP_PARAMS / sizeof(int32_t)];

        int32_t flags; // enum lm_ggml_tensor_flag bits

        struct lm_ggml_tensor * src[LM_GGML_MAX_SRC];

        // views: the tensor whose memory this one aliases, and the byte offset
        struct lm_ggml_tensor * view_src;
        size_t               view_offs;

        void * data;

        char name[LM_GGML_MAX_NAME];

        void * extra; // backend-specific

        char padding[8];
    };

    static const size_t LM_GGML_TENSOR_SIZE = sizeof(struct lm_ggml_tensor);

    // returning true aborts the running graph computation
    typedef bool (*lm_ggml_abort_callback)(void * data);

    typedef uint8_t lm_ggml_guid[16];
    typedef lm_ggml_guid * lm_ggml_guid_t;

    // ---- Core utilities ----
    LM_GGML_API const char * lm_ggml_status_to_string(enum lm_ggml_status status);
    LM_GGML_API float lm_ggml_fp16_to_fp32(lm_ggml_fp16_t);
    LM_GGML_API lm_ggml_fp16_t lm_ggml_fp32_to_fp16(float);
    LM_GGML_API void lm_ggml_fp16_to_fp32_row(const lm_ggml_fp16_t *, float *, int64_t);
    LM_GGML_API void lm_ggml_fp32_to_fp16_row(const float *, lm_ggml_fp16_t *, int64_t);
    LM_GGML_API lm_ggml_bf16_t lm_ggml_fp32_to_bf16(float);
    LM_GGML_API float lm_ggml_bf16_to_fp32(lm_ggml_bf16_t);
    LM_GGML_API void lm_ggml_bf16_to_fp32_row(const lm_ggml_bf16_t *, float *, int64_t);
    LM_GGML_API void lm_ggml_fp32_to_bf16_row_ref(const float *, lm_ggml_bf16_t *, int64_t);
    LM_GGML_API void lm_ggml_fp32_to_bf16_row(const float *, lm_ggml_bf16_t *, int64_t);
    LM_GGML_API bool lm_ggml_guid_matches(lm_ggml_guid_t guid_a, lm_ggml_guid_t guid_b);
    LM_GGML_API void lm_ggml_time_init(void);
    LM_GGML_API int64_t lm_ggml_time_ms(void);
    LM_GGML_API int64_t lm_ggml_time_us(void);

    // ---- Tensor and type queries ----
    LM_GGML_API int64_t lm_ggml_nelements (const struct lm_ggml_tensor * tensor);
    LM_GGML_API int64_t lm_ggml_nrows (const struct lm_ggml_tensor * tensor);
    LM_GGML_API size_t lm_ggml_nbytes (const struct lm_ggml_tensor * tensor);
    LM_GGML_API size_t lm_ggml_nbytes_pad(const struct lm_ggml_tensor * tensor);
    LM_GGML_API int64_t lm_ggml_blck_size(enum lm_ggml_type type);
    LM_GGML_API size_t lm_ggml_type_size(enum lm_ggml_type type);
    LM_GGML_API size_t lm_ggml_row_size (enum lm_ggml_type type, int64_t ne);
    LM_GGML_API const char * lm_ggml_type_name(enum lm_ggml_type type);
    LM_GGML_API const char * lm_ggml_op_name (enum lm_ggml_op op);
    LM_GGML_API const char * lm_ggml_op_symbol(enum lm_ggml_op op);
    LM_GGML_API const char * lm_ggml_unary_op_name(enum lm_ggml_unary_op op);
    LM_GGML_API const char * lm_ggml_op_desc(const struct lm_ggml_tensor * t);
    LM_GGML_API size_t lm_ggml_element_size(const struct lm_ggml_tensor * tensor);
    LM_GGML_API bool lm_ggml_is_quantized(enum lm_ggml_type type);
    LM_GGML_API bool lm_ggml_is_transposed(const struct lm_ggml_tensor * tensor);
    LM_GGML_API bool lm_ggml_is_permuted (const struct lm_ggml_tensor * tensor);
    LM_GGML_API bool lm_ggml_is_empty (const struct lm_ggml_tensor * tensor);
    LM_GGML_API bool lm_ggml_is_scalar (const struct lm_ggml_tensor * tensor);
    LM_GGML_API bool lm_ggml_is_vector (const struct lm_ggml_tensor * tensor);
    LM_GGML_API bool lm_ggml_is_matrix (const struct lm_ggml_tensor * tensor);
    LM_GGML_API bool lm_ggml_is_3d (const struct lm_ggml_tensor * tensor);
    LM_GGML_API int lm_ggml_n_dims (const struct lm_ggml_tensor * tensor);
    LM_GGML_API bool lm_ggml_is_contiguous (const struct lm_ggml_tensor * tensor);
    LM_GGML_API bool lm_ggml_is_contiguous_0(const struct lm_ggml_tensor * tensor);
    LM_GGML_API bool lm_ggml_is_contiguous_1(const struct lm_ggml_tensor * tensor);
    LM_GGML_API bool lm_ggml_is_contiguous_2(const struct lm_ggml_tensor * tensor);
    LM_GGML_API bool lm_ggml_are_same_shape (const struct lm_ggml_tensor * t0, const struct lm_ggml_tensor * t1);
    LM_GGML_API bool lm_ggml_are_same_stride(const struct lm_ggml_tensor * t0, const struct lm_ggml_tensor * t1);
    LM_GGML_API bool lm_ggml_can_repeat(const struct lm_ggml_tensor * t0, const struct lm_ggml_tensor * t1);
    LM_GGML_API size_t lm_ggml_tensor_overhead(void);
    LM_GGML_API bool lm_ggml_validate_row_data(enum lm_ggml_type type, const void * data, size_t nbytes);

    // ---- Contexts: an arena holding tensor headers, graphs and (unless no_alloc) tensor data ----
    LM_GGML_API struct lm_ggml_context * lm_ggml_init (struct lm_ggml_init_params params);
    LM_GGML_API void lm_ggml_reset(struct lm_ggml_context * ctx);
    LM_GGML_API void lm_ggml_free (struct lm_ggml_context * ctx);
    LM_GGML_API size_t lm_ggml_used_mem(const struct lm_ggml_context * ctx);
    LM_GGML_API bool lm_ggml_get_no_alloc(struct lm_ggml_context * ctx);
    LM_GGML_API void lm_ggml_set_no_alloc(struct lm_ggml_context * ctx, bool no_alloc);
    LM_GGML_API void * lm_ggml_get_mem_buffer (const struct lm_ggml_context * ctx);
    LM_GGML_API size_t lm_ggml_get_mem_size (const struct lm_ggml_context * ctx);
    LM_GGML_API size_t lm_ggml_get_max_tensor_size(const struct lm_ggml_context * ctx);

    // ---- Tensors ----
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_new_tensor(struct lm_ggml_context * ctx, enum lm_ggml_type type, int n_dims, const int64_t *ne);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_new_tensor_1d(struct lm_ggml_context * ctx, enum lm_ggml_type type, int64_t ne0);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_new_tensor_2d(struct lm_ggml_context * ctx, enum lm_ggml_type type, int64_t ne0, int64_t ne1);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_new_tensor_3d(struct lm_ggml_context * ctx, enum lm_ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_new_tensor_4d(struct lm_ggml_context * ctx, enum lm_ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
    LM_GGML_API void * lm_ggml_new_buffer(struct lm_ggml_context * ctx, size_t nbytes);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_dup_tensor (struct lm_ggml_context * ctx, const struct lm_ggml_tensor * src);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_view_tensor(struct lm_ggml_context * ctx, struct lm_ggml_tensor * src);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_get_first_tensor(const struct lm_ggml_context * ctx);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_get_next_tensor (const struct lm_ggml_context * ctx, struct lm_ggml_tensor * tensor);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_get_tensor(struct lm_ggml_context * ctx, const char * name);
    LM_GGML_API void lm_ggml_unravel_index(const struct lm_ggml_tensor * tensor, int64_t i, int64_t * i0, int64_t * i1, int64_t * i2, int64_t * i3);
    LM_GGML_API enum lm_ggml_unary_op lm_ggml_get_unary_op(const struct lm_ggml_tensor * tensor);
    LM_GGML_API void * lm_ggml_get_data (const struct lm_ggml_tensor * tensor);
    LM_GGML_API float * lm_ggml_get_data_f32(const struct lm_ggml_tensor * tensor);
    LM_GGML_API const char * lm_ggml_get_name (const struct lm_ggml_tensor * tensor);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_set_name (struct lm_ggml_tensor * tensor, const char * name);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_format_name(struct lm_ggml_tensor * tensor, const char * fmt, ...);
    LM_GGML_API void lm_ggml_set_input(struct lm_ggml_tensor * tensor);
    LM_GGML_API void lm_ggml_set_output(struct lm_ggml_tensor * tensor);
    LM_GGML_API void lm_ggml_set_param(struct lm_ggml_context * ctx, struct lm_ggml_tensor * tensor);
    LM_GGML_API void lm_ggml_set_loss(struct lm_ggml_tensor * tensor);

    // ---- Element-wise and reduction ops ----
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_dup(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_dup_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_add(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_add_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_add_cast(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, enum lm_ggml_type type);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_add1(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_add1_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_acc(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_acc_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sub(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sub_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_mul(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_mul_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_div(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_div_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sqr(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sqr_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sqrt(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sqrt_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_log(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_log_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sin(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sin_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_cos(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_cos_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sum(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sum_rows(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_mean(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_argmax(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_repeat(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_concat(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int dim);

    // ---- Unary activations (LM_GGML_OP_UNARY) ----
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_abs(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_abs_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sgn(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sgn_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_neg(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_neg_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_step(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_step_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_tanh(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_tanh_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_elu(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_elu_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_relu(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_relu_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sigmoid(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_sigmoid_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_gelu(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_gelu_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_gelu_quick(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_gelu_quick_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_silu(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_silu_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_exp(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_exp_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_leaky_relu(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float negative_slope, bool inplace);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_hardswish(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_hardsigmoid(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_unary(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, enum lm_ggml_unary_op op);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_unary_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, enum lm_ggml_unary_op op);

    // ---- Normalisation ----
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_norm(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float eps);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_norm_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float eps);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_rms_norm(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float eps);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_rms_norm_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float eps);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_group_norm(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_groups, float eps);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_group_norm_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_groups, float eps);

    // ---- Matrix products: result ne = [a->ne[1], b->ne[1], b->ne[2], b->ne[3]] ----
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_mul_mat(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API void lm_ggml_mul_mat_set_prec(struct lm_ggml_tensor * a, enum lm_ggml_prec prec);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_mul_mat_id(struct lm_ggml_context * ctx, struct lm_ggml_tensor * as, struct lm_ggml_tensor * b, struct lm_ggml_tensor * ids);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_out_prod(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);

    // ---- Scale, set, copy, layout ----
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_scale(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float s);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_scale_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float s);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_set(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_set_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_set_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, size_t offset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_set_1d_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, size_t offset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_set_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, size_t nb1, size_t offset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_set_2d_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, size_t nb1, size_t offset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_cpy(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_cast(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, enum lm_ggml_type type);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_cont(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_cont_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_cont_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_cont_3d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_cont_4d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_reshape(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_reshape_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_reshape_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_reshape_3d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_reshape_4d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_view_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, size_t offset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_view_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_view_3d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t offset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_view_4d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1, size_t nb2, size_t nb3, size_t offset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_permute(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int axis0, int axis1, int axis2, int axis3);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_transpose(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_get_rows(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);

    // ---- Attention building blocks ----
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_diag_mask_inf(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_past);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_diag_mask_inf_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_past);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_soft_max(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_soft_max_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_soft_max_ext(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * mask, float scale, float max_bias);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_rope(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int n_dims, int mode);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_rope_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int n_dims, int mode);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_rope_ext(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_rope_ext_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow);
    LM_GGML_API void lm_ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_clamp(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float min, float max);

    enum lm_ggml_op_pool {
        LM_GGML_OP_POOL_MAX,
        LM_GGML_OP_POOL_AVG,
        LM_GGML_OP_POOL_COUNT,
    };

    // ---- Convolution helpers, pooling, resampling (tier 2) ----
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_im2col(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D, enum lm_ggml_type dst_type);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_pool_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, enum lm_ggml_op_pool op, int k0, int s0, int p0);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_pool_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, enum lm_ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_upscale(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int scale_factor);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_upscale_ext(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int ne0, int ne1, int ne2, int ne3);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_pad(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int p0, int p1, int p2, int p3);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_timestep_embedding(struct lm_ggml_context * ctx, struct lm_ggml_tensor * timesteps, int dim, int max_period);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_arange(struct lm_ggml_context * ctx, float start, float stop, float step);

    enum lm_ggml_sort_order {
        LM_GGML_SORT_ORDER_ASC,
        LM_GGML_SORT_ORDER_DESC,
    };

    // the attention mask must be padded to this many rows
#define LM_GGML_KQ_MASK_PAD 32

    // ---- Sorting and fused attention ----
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_argsort(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, enum lm_ggml_sort_order order);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_top_k(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int k);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_flash_attn_ext(struct lm_ggml_context * ctx, struct lm_ggml_tensor * q, struct lm_ggml_tensor * k, struct lm_ggml_tensor * v, struct lm_ggml_tensor * mask, float scale, float max_bias, float logit_softcap);
    LM_GGML_API void lm_ggml_flash_attn_ext_set_prec(struct lm_ggml_tensor * a, enum lm_ggml_prec prec);
    LM_GGML_API enum lm_ggml_prec lm_ggml_flash_attn_ext_get_prec(const struct lm_ggml_tensor * a);

    // ---- Graphs ----
    LM_GGML_API void lm_ggml_build_forward_expand(struct lm_ggml_cgraph * cgraph, struct lm_ggml_tensor * tensor);
    LM_GGML_API struct lm_ggml_cgraph * lm_ggml_new_graph (struct lm_ggml_context * ctx);
    LM_GGML_API struct lm_ggml_cgraph * lm_ggml_new_graph_custom(struct lm_ggml_context * ctx, size_t size, bool grads);
    LM_GGML_API struct lm_ggml_cgraph * lm_ggml_graph_dup (struct lm_ggml_context * ctx, struct lm_ggml_cgraph * cgraph);
    LM_GGML_API void lm_ggml_graph_cpy (struct lm_ggml_cgraph * src, struct lm_ggml_cgraph * dst);
    LM_GGML_API void lm_ggml_graph_clear (struct lm_ggml_cgraph * cgraph);
    LM_GGML_API int lm_ggml_graph_size (struct lm_ggml_cgraph * cgraph);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_graph_node (struct lm_ggml_cgraph * cgraph, int i);
    LM_GGML_API struct lm_ggml_tensor ** lm_ggml_graph_nodes (struct lm_ggml_cgraph * cgraph);
    LM_GGML_API int lm_ggml_graph_n_nodes(struct lm_ggml_cgraph * cgraph);
    LM_GGML_API void lm_ggml_graph_add_node(struct lm_ggml_cgraph * cgraph, struct lm_ggml_tensor * tensor);
    LM_GGML_API size_t lm_ggml_graph_overhead(void);
    LM_GGML_API size_t lm_ggml_graph_overhead_custom(size_t size, bool grads);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_graph_get_tensor (const struct lm_ggml_cgraph * cgraph, const char * name);
    LM_GGML_API void lm_ggml_graph_print(const struct lm_ggml_cgraph * cgraph);

    // ---- Utilities ----
    LM_GGML_API int64_t lm_ggml_cycles(void);
    LM_GGML_API int64_t lm_ggml_cycles_per_ms(void);
    // fopen that accepts UTF-8 paths everywhere (on POSIX: fopen)
    LM_GGML_API FILE *  lm_ggml_fopen(const char * fname, const char * mode);
    LM_GGML_API void    lm_ggml_print_object (const struct lm_ggml_object * obj);
    LM_GGML_API void    lm_ggml_print_objects(const struct lm_ggml_context * ctx);
    LM_GGML_DEPRECATED(LM_GGML_API double lm_ggml_type_sizef(enum lm_ggml_type type), "use lm_ggml_row_size() instead");
    LM_GGML_API enum lm_ggml_type lm_ggml_ftype_to_lm_ggml_type(enum lm_ggml_ftype ftype);

    // ---- Ops that complete ggml's set (src/core/ops_*.cpp; docs/OPS.md) ----
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_count_equal(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_repeat_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_silu_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_rms_norm_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, float eps);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_get_rows_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, struct lm_ggml_tensor * c);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_diag(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_diag_mask_zero(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_past);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_diag_mask_zero_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_past);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_soft_max_ext_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, float scale, float max_bias);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_soft_max_ext_back_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, float scale, float max_bias);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_rope_multi(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, int n_dims, int sections[4], int mode, int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow);
    LM_GGML_DEPRECATED(LM_GGML_API struct lm_ggml_tensor * lm_ggml_rope_custom(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow), "use lm_ggml_rope_ext instead");
    LM_GGML_DEPRECATED(LM_GGML_API struct lm_ggml_tensor * lm_ggml_rope_custom_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow), "use lm_ggml_rope_ext_inplace instead");
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_rope_ext_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_rope_multi_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, int n_dims, int sections[4], int mode, int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_im2col_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int64_t * ne, int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_conv_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int s0, int p0, int d0);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_conv_1d_ph(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int s, int d);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_conv_1d_dw(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int s0, int p0, int d0);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_conv_1d_dw_ph(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int s0, int d0);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_conv_transpose_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int s0, int p0, int d0);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_conv_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int s0, int s1, int p0, int p1, int d0, int d1);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_conv_2d_sk_p0(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_conv_2d_s1_ph(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_conv_2d_dw(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int s0, int s1, int p0, int p1, int d0, int d1);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_conv_transpose_2d_p0(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int stride);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_pool_2d_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * af, enum lm_ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_pad_reflect_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int p0, int p1);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_flash_attn_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * q, struct lm_ggml_tensor * k, struct lm_ggml_tensor * v, struct lm_ggml_tensor * d, bool masked);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_ssm_conv(struct lm_ggml_context * ctx, struct lm_ggml_tensor * sx, struct lm_ggml_tensor * c);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_ssm_scan(struct lm_ggml_context * ctx, struct lm_ggml_tensor * s, struct lm_ggml_tensor * x, struct lm_ggml_tensor * dt, struct lm_ggml_tensor * A, struct lm_ggml_tensor * B, struct lm_ggml_tensor * C);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_win_part(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int w);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_win_unpart(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int w0, int h0, int w);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_get_rel_pos(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int qh, int kh);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_add_rel_pos(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * pw, struct lm_ggml_tensor * ph);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_add_rel_pos_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * pw, struct lm_ggml_tensor * ph);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_rwkv_wkv6(struct lm_ggml_context * ctx, struct lm_ggml_tensor * k, struct lm_ggml_tensor * v, struct lm_ggml_tensor * r, struct lm_ggml_tensor * tf, struct lm_ggml_tensor * td, struct lm_ggml_tensor * state);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_gated_linear_attn(struct lm_ggml_context * ctx, struct lm_ggml_tensor * k, struct lm_ggml_tensor * v, struct lm_ggml_tensor * q, struct lm_ggml_tensor * g, struct lm_ggml_tensor * state, float scale);

    // ---- Custom ops: user functions run by the CPU backend ----
    typedef void (*lm_ggml_unary_op_f32_t) (const int, float *, const float *);
    typedef void (*lm_ggml_binary_op_f32_t)(const int, float *, const float *, const float *);
    typedef void (*lm_ggml_custom1_op_f32_t)(struct lm_ggml_tensor *, const struct lm_ggml_tensor *);
    typedef void (*lm_ggml_custom2_op_f32_t)(struct lm_ggml_tensor *, const struct lm_ggml_tensor *, const struct lm_ggml_tensor *);
    typedef void (*lm_ggml_custom3_op_f32_t)(struct lm_ggml_tensor *, const struct lm_ggml_tensor *, const struct lm_ggml_tensor *, const struct lm_ggml_tensor *);

    LM_GGML_DEPRECATED(LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_unary_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, lm_ggml_unary_op_f32_t fun), "use lm_ggml_map_custom1 instead");
    LM_GGML_DEPRECATED(LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_unary_inplace_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, lm_ggml_unary_op_f32_t fun), "use lm_ggml_map_custom1_inplace instead");
    LM_GGML_DEPRECATED(LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_binary_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, lm_ggml_binary_op_f32_t fun), "use lm_ggml_map_custom2 instead");
    LM_GGML_DEPRECATED(LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_binary_inplace_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, lm_ggml_binary_op_f32_t fun), "use lm_ggml_map_custom2_inplace instead");
    LM_GGML_DEPRECATED(LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_custom1_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, lm_ggml_custom1_op_f32_t fun), "use lm_ggml_map_custom1 instead");
    LM_GGML_DEPRECATED(LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_custom1_inplace_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, lm_ggml_custom1_op_f32_t fun), "use lm_ggml_map_custom1_inplace instead");
    LM_GGML_DEPRECATED(LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_custom2_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, lm_ggml_custom2_op_f32_t fun), "use lm_ggml_map_custom2 instead");
    LM_GGML_DEPRECATED(LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_custom2_inplace_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, lm_ggml_custom2_op_f32_t fun), "use lm_ggml_map_custom2_inplace instead");
    LM_GGML_DEPRECATED(LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_custom3_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, lm_ggml_custom3_op_f32_t fun), "use lm_ggml_map_custom3 instead");
    LM_GGML_DEPRECATED(LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_custom3_inplace_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, lm_ggml_custom3_op_f32_t fun), "use lm_ggml_map_custom3_inplace instead");

    typedef void (*lm_ggml_custom1_op_t)(struct lm_ggml_tensor * dst , const struct lm_ggml_tensor * a, int ith, int nth, void * userdata);
    typedef void (*lm_ggml_custom2_op_t)(struct lm_ggml_tensor * dst , const struct lm_ggml_tensor * a, const struct lm_ggml_tensor * b, int ith, int nth, void * userdata);
    typedef void (*lm_ggml_custom3_op_t)(struct lm_ggml_tensor * dst , const struct lm_ggml_tensor * a, const struct lm_ggml_tensor * b, const struct lm_ggml_tensor * c, int ith, int nth, void * userdata);

    // n_tasks == LM_GGML_N_TASKS_MAX: as many tasks as the backend has threads
#define LM_GGML_N_TASKS_MAX (-1)

    LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_custom1(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, lm_ggml_custom1_op_t fun, int n_tasks, void * userdata);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_custom1_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, lm_ggml_custom1_op_t fun, int n_tasks, void * userdata);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_custom2(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, lm_ggml_custom2_op_t fun, int n_tasks, void * userdata);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_custom2_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, lm_ggml_custom2_op_t fun, int n_tasks, void * userdata);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_custom3(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, lm_ggml_custom3_op_t fun, int n_tasks, void * userdata);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_map_custom3_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, lm_ggml_custom3_op_t fun, int n_tasks, void * userdata);

    // ---- Loss functions and training ----
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_cross_entropy_loss(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_cross_entropy_loss_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, struct lm_ggml_tensor * c);
    // AdamW step on a in place; adamw_params: F32 [7] = alpha, beta1, beta2, eps, wd, beta1h, beta2h
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_opt_step_adamw(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * grad, struct lm_ggml_tensor * m, struct lm_ggml_tensor * v, struct lm_ggml_tensor * adamw_params);
    LM_GGML_API void lm_ggml_build_backward_expand(struct lm_ggml_context * ctx_static, struct lm_ggml_context * ctx_compute, struct lm_ggml_cgraph * cgraph, bool accumulate);
    LM_GGML_API void lm_ggml_graph_reset(struct lm_ggml_cgraph * cgraph);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_graph_get_grad(const struct lm_ggml_cgraph * cgraph, const struct lm_ggml_tensor * node);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_graph_get_grad_acc(const struct lm_ggml_cgraph * cgraph, const struct lm_ggml_tensor * node);

    // ---- Graph files ----
    LM_GGML_API void lm_ggml_graph_export(const struct lm_ggml_cgraph * cgraph, const char * fname);
    LM_GGML_API struct lm_ggml_cgraph * lm_ggml_graph_import(const char * fname, struct lm_ggml_context ** ctx_data, struct lm_ggml_context ** ctx_eval);
    // writes a Graphviz dot file of gb (nodes of gf, when given, are drawn as in the forward graph)
    LM_GGML_API void lm_ggml_graph_dump_dot(const struct lm_ggml_cgraph * gb, const struct lm_ggml_cgraph * gf, const char * filename);

    // ---- Logging: every failure is reported as one line through this callback ----
    typedef void (*lm_ggml_log_callback)(enum lm_ggml_log_level level, const char * text, void * user_data);
    // NULL restores the default (stderr). Thread-safe to call before use, not concurrently with logging.
    LM_GGML_API void lm_ggml_log_set(lm_ggml_log_callback log_callback, void * user_data);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_set_zero(struct lm_ggml_tensor * tensor);

    // ---- Quantization (src/quant) ----
    LM_GGML_API void lm_ggml_quantize_init(enum lm_ggml_type type);
    LM_GGML_API void lm_ggml_quantize_free(void);
    LM_GGML_API bool lm_ggml_quantize_requires_imatrix(enum lm_ggml_type type);
    LM_GGML_API size_t lm_ggml_quantize_chunk(enum lm_ggml_type type, const float * src, void * dst, int64_t start, int64_t nrows, int64_t n_per_row, const float * imatrix);
    // ---- Type traits ----
    typedef void (*lm_ggml_to_float_t)  (const void  * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k);
    typedef void (*lm_ggml_from_float_t)(const float * LM_GGML_RESTRICT x, void  * LM_GGML_RESTRICT y, int64_t k);

    struct lm_ggml_type_traits {
        const char *         type_name;
        int64_t              blck_size;
        int64_t              blck_size_interleave;
        size_t               type_size;
        bool                 is_quantized;
        lm_ggml_to_float_t   to_float;
        lm_ggml_from_float_t from_float_ref;
    };

    // Returns NULL (and logs) for a value outside enum lm_ggml_type.
    LM_GGML_API const struct lm_ggml_type_traits * lm_ggml_get_type_traits(enum lm_ggml_type type);

    // ---- Thread pools (implemented by the CPU backend, see ggml-cpu.h) ----
    enum lm_ggml_sched_priority {
        LM_GGML_SCHED_PRIO_NORMAL,
        LM_GGML_SCHED_PRIO_MEDIUM,
        LM_GGML_SCHED_PRIO_HIGH,
        LM_GGML_SCHED_PRIO_REALTIME
    };

    struct lm_ggml_threadpool_params {
        bool                        cpumask[LM_GGML_MAX_N_THREADS]; // all false: default affinity
        int                         n_threads;
        enum lm_ggml_sched_priority prio;
        uint32_t                    poll;       // 0: sleep when idle .. 100: spin
        bool                        strict_cpu;
        bool                        paused;     // start paused
    };

    struct lm_ggml_threadpool;
    typedef struct lm_ggml_threadpool * lm_ggml_threadpool_t;

    LM_GGML_API struct lm_ggml_threadpool_params lm_ggml_threadpool_params_default(int n_threads);
    LM_GGML_API void lm_ggml_threadpool_params_init(struct lm_ggml_threadpool_params * p, int n_threads);
    LM_GGML_API bool lm_ggml_threadpool_params_match(const struct lm_ggml_threadpool_params * p0, const struct lm_ggml_threadpool_params * p1);

#ifdef __cplusplus
}
#endif

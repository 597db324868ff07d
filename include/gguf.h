#pragma once

// lmggml: GGUF files. The reader checks every count, size and offset against the
// file before use: a malformed file gives NULL and one log line, never a crash.
// Ownership: lm_gguf_free frees the context; strings returned point into it.

#include "ggml.h"

#include <stdbool.h>
#include <stdint.h>

#define LM_GGUF_MAGIC   "GGUF"
#define LM_GGUF_VERSION 3

#define LM_GGUF_KEY_GENERAL_ALIGNMENT "general.alignment"

#define LM_GGUF_DEFAULT_ALIGNMENT 32

#ifdef  __cplusplus
extern "C" {
#endif

    enum lm_gguf_type {
        LM_GGUF_TYPE_UINT8   = 0,
        LM_GGUF_TYPE_INT8    = 1,
        LM_GGUF_TYPE_UINT16  = 2,
        LM_GGUF_TYPE_INT16   = 3,
        LM_GGUF_TYPE_UINT32  = 4,
        LM_GGUF_TYPE_INT32   = 5,
        LM_GGUF_TYPE_FLOAT32 = 6,
        LM_GGUF_TYPE_BOOL    = 7,
        LM_GGUF_TYPE_STRING  = 8,
        LM_GGUF_TYPE_ARRAY   = 9,
        LM_GGUF_TYPE_UINT64  = 10,
        LM_GGUF_TYPE_INT64   = 11,
        LM_GGUF_TYPE_FLOAT64 = 12,
        LM_GGUF_TYPE_COUNT,
    };

    struct lm_gguf_context;

    struct lm_gguf_init_params {
        bool no_alloc;

        struct lm_ggml_context ** ctx;
    };

    LM_GGML_API struct lm_gguf_context * lm_gguf_init_empty(void);
    LM_GGML_API struct lm_gguf_context * lm_gguf_init_from_file(const char * fname, struct lm_gguf_init_params params);

    LM_GGML_API void lm_gguf_free(struct lm_gguf_context * ctx);

    LM_GGML_API const char * lm_gguf_type_name(enum lm_gguf_type type);

    LM_GGML_API uint32_t lm_gguf_get_version    (const struct lm_gguf_context * ctx);
    LM_GGML_API size_t   lm_gguf_get_alignment  (const struct lm_gguf_context * ctx);
    LM_GGML_API size_t   lm_gguf_get_data_offset(const struct lm_gguf_context * ctx);

    LM_GGML_API int64_t      lm_gguf_get_n_kv(const struct lm_gguf_context * ctx);
    LM_GGML_API int64_t      lm_gguf_find_key(const struct lm_gguf_context * ctx, const char * key);
    LM_GGML_API const char * lm_gguf_get_key (const struct lm_gguf_context * ctx, int64_t key_id);

    LM_GGML_API enum lm_gguf_type lm_gguf_get_kv_type (const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API enum lm_gguf_type lm_gguf_get_arr_type(const struct lm_gguf_context * ctx, int64_t key_id);

    LM_GGML_API uint8_t      lm_gguf_get_val_u8  (const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API int8_t       lm_gguf_get_val_i8  (const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API uint16_t     lm_gguf_get_val_u16 (const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API int16_t      lm_gguf_get_val_i16 (const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API uint32_t     lm_gguf_get_val_u32 (const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API int32_t      lm_gguf_get_val_i32 (const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API float        lm_gguf_get_val_f32 (const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API uint64_t     lm_gguf_get_val_u64 (const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API int64_t      lm_gguf_get_val_i64 (const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API double       lm_gguf_get_val_f64 (const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API bool         lm_gguf_get_val_bool(const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API const char * lm_gguf_get_val_str (const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API const void * lm_gguf_get_val_data(const struct lm_gguf_context * ctx, int64_t key_id);
    LM_GGML_API size_t       lm_gguf_get_arr_n   (const struct lm_gguf_context * ctx, int64_t key_id);

    LM_GGML_API const void * lm_gguf_get_arr_data(const struct lm_gguf_context * ctx, int64_t key_id);

    LM_GGML_API const char * lm_gguf_get_arr_str (const struct lm_gguf_context * ctx, int64_t key_id, size_t i);

    LM_GGML_API int64_t        lm_gguf_get_n_tensors    (const struct lm_gguf_context * ctx);
    LM_GGML_API int64_t        lm_gguf_find_tensor      (const struct lm_gguf_context * ctx, const char * name);
    LM_GGML_API size_t         lm_gguf_get_tensor_offset(const struct lm_gguf_context * ctx, int64_t tensor_id);
    LM_GGML_API const char *   lm_gguf_get_tensor_name  (const struct lm_gguf_context * ctx, int64_t tensor_id);
    LM_GGML_API enum lm_ggml_type lm_gguf_get_tensor_type  (const struct lm_gguf_context * ctx, int64_t tensor_id);
    LM_GGML_API size_t         lm_gguf_get_tensor_size  (const struct lm_gguf_context * ctx, int64_t tensor_id);

    LM_GGML_API int64_t lm_gguf_remove_key(struct lm_gguf_context * ctx, const char * key);

    LM_GGML_API void lm_gguf_set_val_u8  (struct lm_gguf_context * ctx, const char * key, uint8_t      val);
    LM_GGML_API void lm_gguf_set_val_i8  (struct lm_gguf_context * ctx, const char * key, int8_t       val);
    LM_GGML_API void lm_gguf_set_val_u16 (struct lm_gguf_context * ctx, const char * key, uint16_t     val);
    LM_GGML_API void lm_gguf_set_val_i16 (struct lm_gguf_context * ctx, const char * key, int16_t      val);
    LM_GGML_API void lm_gguf_set_val_u32 (struct lm_gguf_context * ctx, const char * key, uint32_t     val);
    LM_GGML_API void lm_gguf_set_val_i32 (struct lm_gguf_context * ctx, const char * key, int32_t      val);
    LM_GGML_API void lm_gguf_set_val_f32 (struct lm_gguf_context * ctx, const char * key, float        val);
    LM_GGML_API void lm_gguf_set_val_u64 (struct lm_gguf_context * ctx, const char * key, uint64_t     val);
    LM_GGML_API void lm_gguf_set_val_i64 (struct lm_gguf_context * ctx, const char * key, int64_t      val);
    LM_GGML_API void lm_gguf_set_val_f64 (struct lm_gguf_context * ctx, const char * key, double       val);
    LM_GGML_API void lm_gguf_set_val_bool(struct lm_gguf_context * ctx, const char * key, bool         val);
    LM_GGML_API void lm_gguf_set_val_str (struct lm_gguf_context * ctx, const char * key, const char * val);

    LM_GGML_API void lm_gguf_set_arr_data(struct lm_gguf_context * ctx, const char * key, enum lm_gguf_type type, const void * data, size_t n);

    LM_GGML_API void lm_gguf_set_arr_str (struct lm_gguf_context * ctx, const char * key, const char ** data, size_t n);

    LM_GGML_API void lm_gguf_set_kv(struct lm_gguf_context * ctx, const struct lm_gguf_context * src);

    LM_GGML_API void lm_gguf_add_tensor(struct lm_gguf_context * ctx, const struct lm_ggml_tensor * tensor);

    LM_GGML_API void lm_gguf_set_tensor_type(struct lm_gguf_context * ctx, const char * name, enum lm_ggml_type type);

    LM_GGML_API void lm_gguf_set_tensor_data(struct lm_gguf_context * ctx, const char * name, const void * data);

    LM_GGML_API bool lm_gguf_write_to_file(const struct lm_gguf_context * ctx, const char * fname, bool only_meta);

    LM_GGML_API size_t lm_gguf_get_meta_size(const struct lm_gguf_context * ctx);

    LM_GGML_API void   lm_gguf_get_meta_data(const struct lm_gguf_context * ctx, void * data);

#ifdef  __cplusplus
}
#endif

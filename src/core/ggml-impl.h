#pragma once
// Internal to lmggml (not installed): the public backend-implementation
// header (include/ggml-impl.h: graph layout, hash sets, logging, op-parameter
// access, fp16 helpers) plus what only the library itself uses.

// By path: a plain "ggml-impl.h" would name this very file from src/core.
#include "../../include/ggml-impl.h"

#include <stdarg.h>

#ifdef __cplusplus
#include <cstring>
#endif

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------- logging
// One line per failure: "<function>: <object>: <what is wrong>".
LM_GGML_API void lm_ggml_log_internal_v(enum lm_ggml_log_level level, const char * fmt, va_list args);

// Logs "<fn>: a required pointer argument is NULL" (public entry points).
void lm_ggml_null_arg(const char * fn);

// ---------------------------------------------------------------- memory
// The alignment lm_ggml_aligned_malloc gives (one cache line, one AVX-512 register).
#define LM_GGML_HOST_ALIGNMENT 64

// ---------------------------------------------------------------- tensors
// The single constructor every op uses. view_src != NULL makes a view at
// view_offs bytes into view_src's data. Returns NULL (and logs) when the
// context is out of memory or the arguments are invalid.
struct lm_ggml_tensor * lm_ggml_new_tensor_impl(struct lm_ggml_context * ctx, enum lm_ggml_type type, int n_dims,
                                                const int64_t * ne, struct lm_ggml_tensor * view_src, size_t view_offs);

static inline bool lm_ggml_is_empty_ne(const int64_t * ne) {
    return ne[0] == 0 || ne[1] == 0 || ne[2] == 0 || ne[3] == 0;
}

#ifdef __cplusplus
}
#endif

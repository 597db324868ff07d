#pragma once

// lmggml: memory planning. tallocr places tensors one after another in a
// buffer; gallocr plans a graph's intermediate tensors with reuse by liveness.

#include "ggml.h"

#ifdef  __cplusplus
extern "C" {
#endif

typedef struct lm_ggml_backend_buffer_type * lm_ggml_backend_buffer_type_t;
typedef struct      lm_ggml_backend_buffer * lm_ggml_backend_buffer_t;
typedef struct             lm_ggml_backend * lm_ggml_backend_t;

struct lm_ggml_tallocr {
    lm_ggml_backend_buffer_t buffer;
    void * base;
    size_t alignment;
    size_t offset;
};

LM_GGML_API struct lm_ggml_tallocr lm_ggml_tallocr_new(lm_ggml_backend_buffer_t buffer);
LM_GGML_API void                lm_ggml_tallocr_alloc(struct lm_ggml_tallocr * talloc, struct lm_ggml_tensor * tensor);

typedef struct lm_ggml_gallocr * lm_ggml_gallocr_t;

LM_GGML_API lm_ggml_gallocr_t lm_ggml_gallocr_new(lm_ggml_backend_buffer_type_t buft);
LM_GGML_API lm_ggml_gallocr_t lm_ggml_gallocr_new_n(lm_ggml_backend_buffer_type_t * bufts, int n_bufs);
LM_GGML_API void           lm_ggml_gallocr_free(lm_ggml_gallocr_t galloc);

LM_GGML_API bool lm_ggml_gallocr_reserve(lm_ggml_gallocr_t galloc, struct lm_ggml_cgraph * graph);
LM_GGML_API bool lm_ggml_gallocr_reserve_n(
    lm_ggml_gallocr_t galloc,
    struct lm_ggml_cgraph * graph,
    const int * node_buffer_ids,
    const int * leaf_buffer_ids);

LM_GGML_API bool lm_ggml_gallocr_alloc_graph(lm_ggml_gallocr_t galloc, struct lm_ggml_cgraph * graph);

LM_GGML_API size_t lm_ggml_gallocr_get_buffer_size(lm_ggml_gallocr_t galloc, int buffer_id);

LM_GGML_API struct lm_ggml_backend_buffer * lm_ggml_backend_alloc_ctx_tensors_from_buft(struct lm_ggml_context * ctx, lm_ggml_backend_buffer_type_t buft);
LM_GGML_API struct lm_ggml_backend_buffer * lm_ggml_backend_alloc_ctx_tensors(struct lm_ggml_context * ctx, lm_ggml_backend_t backend);

#ifdef  __cplusplus
}
#endif

#pragma once
// The context arena (internal): a caller- or self-owned block of memory that
// holds object headers, tensor structs, graphs and (unless no_alloc) tensor data.

#include "ggml-impl.h"

struct lm_ggml_object {
    size_t offs; // byte offset of the payload in mem_buffer
    size_t size; // payload bytes (padded to LM_GGML_MEM_ALIGN)
    struct lm_ggml_object * next;
    enum lm_ggml_object_type type;
    char padding[4];
};

#define LM_GGML_OBJECT_SIZE sizeof(struct lm_ggml_object)

struct lm_ggml_context {
    size_t mem_size;
    void * mem_buffer;
    bool mem_buffer_owned;
    bool no_alloc;
    int n_objects;
    struct lm_ggml_object * objects_begin;
    struct lm_ggml_object * objects_end;
};

// Reserves an object of `size` payload bytes; NULL (and one log line naming
// `what`) when the arena is full.
struct lm_ggml_object * lm_ggml_new_object(struct lm_ggml_context * ctx, enum lm_ggml_object_type type, size_t size,
                                           const char * what);

// Contexts: arena allocation of tensors, graphs and work buffers.
#include "context.h"
#include "fault.h" // [reliability] allocation fault injection (tests only)

#include <cstdarg>
#include <cstdio>
#include <new>

extern "C" struct lm_ggml_context * lm_ggml_init(struct lm_ggml_init_params params) {
    if (!params.mem_buffer && params.mem_size > SIZE_MAX - LM_GGML_MEM_ALIGN) { // padding would wrap to 0
        LM_GGML_LOG_ERROR("lm_ggml_init: mem_size %zu is too large\n", params.mem_size);
        return nullptr;
    }
    lm_ggml_context * ctx = lm_fault_should_fail() ? nullptr : new (std::nothrow) lm_ggml_context{}; // [reliability]
    if (!ctx) {
        LM_GGML_LOG_ERROR("lm_ggml_init: out of memory for the context struct\n");
        return nullptr;
    }
    // a zero-sized arena is legal (useful for no_alloc contexts that hold nothing yet)
    const size_t mem_size = params.mem_buffer ? params.mem_size : LM_GGML_PAD(params.mem_size, LM_GGML_MEM_ALIGN);
    ctx->mem_size = mem_size;
    ctx->no_alloc = params.no_alloc;
    ctx->mem_buffer_owned = params.mem_buffer == nullptr;
    ctx->mem_buffer = params.mem_buffer ? params.mem_buffer : lm_ggml_aligned_malloc(mem_size);
    if (!ctx->mem_buffer) {
        LM_GGML_LOG_ERROR("lm_ggml_init: failed to allocate a %zu-byte arena\n", mem_size);
        delete ctx;
        return nullptr;
    }
    if (((uintptr_t) ctx->mem_buffer) % LM_GGML_MEM_ALIGN != 0) {
        LM_GGML_LOG_ERROR("lm_ggml_init: mem_buffer %p is not %d-byte aligned\n", ctx->mem_buffer, LM_GGML_MEM_ALIGN);
        delete ctx;
        return nullptr;
    }
    return ctx;
}

extern "C" void lm_ggml_reset(struct lm_ggml_context * ctx) {
    if (!ctx) {
        lm_ggml_null_arg("lm_ggml_reset");
        return;
    }
    if (!ctx) return;
    ctx->n_objects = 0;
    ctx->objects_begin = nullptr;
    ctx->objects_end = nullptr;
}

extern "C" void lm_ggml_free(struct lm_ggml_context * ctx) {
    if (!ctx) return;
    if (ctx->mem_buffer_owned) lm_ggml_aligned_free(ctx->mem_buffer, ctx->mem_size);
    delete ctx;
}

extern "C" size_t lm_ggml_used_mem(const struct lm_ggml_context * ctx) {
    if (!ctx) {
        lm_ggml_null_arg("lm_ggml_used_mem");
        return 0;
    }
    if (!ctx || !ctx->objects_end) return 0;
    return ctx->objects_end->offs + ctx->objects_end->size;
}

extern "C" bool lm_ggml_get_no_alloc(struct lm_ggml_context * ctx) {
    if (!ctx) {
        lm_ggml_null_arg("lm_ggml_get_no_alloc");
        return false;
    }
    return ctx->no_alloc;
}
extern "C" void lm_ggml_set_no_alloc(struct lm_ggml_context * ctx, bool no_alloc) {
    if (!ctx) {
        lm_ggml_null_arg("lm_ggml_set_no_alloc");
        return;
    }
    ctx->no_alloc = no_alloc;
}
extern "C" void * lm_ggml_get_mem_buffer(const struct lm_ggml_context * ctx) {
    if (!ctx) {
        lm_ggml_null_arg("lm_ggml_get_mem_buffer");
        return nullptr;
    }
    return ctx->mem_buffer;
}
extern "C" size_t lm_ggml_get_mem_size(const struct lm_ggml_context * ctx) {
    if (!ctx) {
        lm_ggml_null_arg("lm_ggml_get_mem_size");
        return 0;
    }
    return ctx->mem_size;
}

extern "C" size_t lm_ggml_get_max_tensor_size(const struct lm_ggml_context * ctx) {
    if (!ctx) {
        lm_ggml_null_arg("lm_ggml_get_max_tensor_size");
        return 0;
    }
    size_t max_size = 0;
    for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t; t = lm_ggml_get_next_tensor(ctx, t)) {
        const size_t n = lm_ggml_nbytes(t);
        if (n > max_size) max_size = n;
    }
    return max_size;
}

struct lm_ggml_object * lm_ggml_new_object(struct lm_ggml_context * ctx, enum lm_ggml_object_type type, size_t size,
                                           const char * what) {
    const size_t cur_end = ctx->objects_end ? ctx->objects_end->offs + ctx->objects_end->size : 0;
    const size_t size_needed = LM_GGML_PAD(size, LM_GGML_MEM_ALIGN);
    // overflow-safe: cur_end + header + size_needed <= mem_size
    if (size_needed < size || cur_end > ctx->mem_size || ctx->mem_size - cur_end < LM_GGML_OBJECT_SIZE ||
        ctx->mem_size - cur_end - LM_GGML_OBJECT_SIZE < size_needed) {
        LM_GGML_LOG_ERROR(
            "lm_ggml_new_object: not enough space in the context for %s (needed %zu bytes, %zu of %zu used)\n", what,
            size_needed + LM_GGML_OBJECT_SIZE, cur_end, ctx->mem_size);
        return nullptr;
    }
    char * base = static_cast<char *>(ctx->mem_buffer);
    lm_ggml_object * obj = reinterpret_cast<lm_ggml_object *>(base + cur_end);
    *obj = lm_ggml_object{cur_end + LM_GGML_OBJECT_SIZE, size_needed, nullptr, type, {0, 0, 0, 0}};
    if (ctx->objects_end) {
        ctx->objects_end->next = obj;
    } else {
        ctx->objects_begin = obj;
    }
    ctx->objects_end = obj;
    ctx->n_objects++;
    return obj;
}

extern "C" size_t lm_ggml_tensor_overhead(void) { return LM_GGML_OBJECT_SIZE + LM_GGML_TENSOR_SIZE; }

extern "C" void * lm_ggml_new_buffer(struct lm_ggml_context * ctx, size_t nbytes) {
    if (!ctx) {
        lm_ggml_null_arg("lm_ggml_new_buffer");
        return nullptr;
    }
    if (!ctx) return nullptr;
    lm_ggml_object * obj = lm_ggml_new_object(ctx, LM_GGML_OBJECT_TYPE_WORK_BUFFER, nbytes, "a work buffer");
    if (!obj) return nullptr;
    return static_cast<char *>(ctx->mem_buffer) + obj->offs;
}

extern "C" struct lm_ggml_tensor * lm_ggml_get_first_tensor(const struct lm_ggml_context * ctx) {
    if (!ctx) {
        lm_ggml_null_arg("lm_ggml_get_first_tensor");
        return nullptr;
    }
    if (!ctx) return nullptr;
    for (lm_ggml_object * obj = ctx->objects_begin; obj; obj = obj->next) {
        if (obj->type == LM_GGML_OBJECT_TYPE_TENSOR) {
            return reinterpret_cast<lm_ggml_tensor *>(static_cast<char *>(ctx->mem_buffer) + obj->offs);
        }
    }
    return nullptr;
}

extern "C" struct lm_ggml_tensor * lm_ggml_get_next_tensor(const struct lm_ggml_context * ctx,
                                                           struct lm_ggml_tensor * tensor) {
    if (!ctx || !tensor) {
        lm_ggml_null_arg("lm_ggml_get_next_tensor");
        return nullptr;
    }
    if (!ctx || !tensor) return nullptr;
    lm_ggml_object * obj = reinterpret_cast<lm_ggml_object *>(reinterpret_cast<char *>(tensor) - LM_GGML_OBJECT_SIZE);
    for (obj = obj->next; obj; obj = obj->next) {
        if (obj->type == LM_GGML_OBJECT_TYPE_TENSOR) {
            return reinterpret_cast<lm_ggml_tensor *>(static_cast<char *>(ctx->mem_buffer) + obj->offs);
        }
    }
    return nullptr;
}

extern "C" struct lm_ggml_tensor * lm_ggml_get_tensor(struct lm_ggml_context * ctx, const char * name) {
    if (!ctx || !name) {
        lm_ggml_null_arg("lm_ggml_get_tensor");
        return nullptr;
    }
    if (!ctx || !name) return nullptr;
    for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t; t = lm_ggml_get_next_tensor(ctx, t)) {
        if (std::strcmp(t->name, name) == 0) return t;
    }
    return nullptr;
}

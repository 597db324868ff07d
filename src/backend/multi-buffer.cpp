// Multi-buffer: one buffer object standing for several buffers of the same
// type (used when a context's tensors exceed the type's max buffer size).
// It owns its parts: freeing it frees them; clear and usage reach every part.
// It has no memory of its own (no base, no tensor access): tensors live in
// the parts.

#include "backend/backend-internal.h"

#include <new>
#include <vector>

namespace {

struct multi_buffer_context {
    std::vector<lm_ggml_backend_buffer_t> parts;
};

multi_buffer_context * ctx_of(lm_ggml_backend_buffer_t buffer) {
    return static_cast<multi_buffer_context *>(buffer->context);
}

void multi_buffer_free(lm_ggml_backend_buffer_t buffer) {
    multi_buffer_context * ctx = ctx_of(buffer);
    for (lm_ggml_backend_buffer_t part : ctx->parts) {
        lm_ggml_backend_buffer_free(part);
    }
    delete ctx;
}

void multi_buffer_clear(lm_ggml_backend_buffer_t buffer, uint8_t value) {
    for (lm_ggml_backend_buffer_t part : ctx_of(buffer)->parts) {
        lm_ggml_backend_buffer_clear(part, value);
    }
}

// free_buffer doubles as the type tag (see lm_ggml_backend_buffer_is_multi_buffer)
constexpr lm_ggml_backend_buffer_i multi_buffer_iface = {
    .free_buffer = multi_buffer_free,
    .get_base = nullptr,
    .init_tensor = nullptr,
    .memset_tensor = nullptr,
    .set_tensor = nullptr,
    .get_tensor = nullptr,
    .cpy_tensor = nullptr,
    .clear = multi_buffer_clear,
    .reset = nullptr,
};

} // namespace

lm_ggml_backend_buffer_t lm_ggml_backend_multi_buffer_alloc_buffer(lm_ggml_backend_buffer_t * buffers,
                                                                   size_t n_buffers) {
    LMGGML_CHECK_ARG(buffers, nullptr);
    if (n_buffers == 0) {
        LM_GGML_LOG_ERROR("%s: n_buffers is 0\n", __func__);
        return nullptr;
    }
    size_t total = 0;
    for (size_t i = 0; i < n_buffers; i++) {
        if (buffers[i] == nullptr) {
            LM_GGML_LOG_ERROR("%s: buffers[%zu] is NULL\n", __func__, i);
            return nullptr;
        }
        total += buffers[i]->size;
    }
    multi_buffer_context * ctx = new (std::nothrow) multi_buffer_context;
    if (ctx == nullptr) {
        LM_GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return nullptr;
    }
    try {
        ctx->parts.assign(buffers, buffers + n_buffers);
    } catch (const std::bad_alloc &) {
        delete ctx;
        LM_GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return nullptr;
    }
    lm_ggml_backend_buffer_t buffer = lm_ggml_backend_buffer_init(buffers[0]->buft, multi_buffer_iface, ctx, total);
    if (buffer == nullptr) {
        delete ctx; // the caller still owns the parts
    }
    return buffer;
}

bool lm_ggml_backend_buffer_is_multi_buffer(lm_ggml_backend_buffer_t buffer) {
    LMGGML_CHECK_ARG(buffer, false);
    return buffer->iface.free_buffer == multi_buffer_free;
}

void lm_ggml_backend_multi_buffer_set_usage(lm_ggml_backend_buffer_t buffer, enum lm_ggml_backend_buffer_usage usage) {
    LMGGML_CHECK_ARG_VOID(buffer);
    if (!lm_ggml_backend_buffer_is_multi_buffer(buffer)) {
        LM_GGML_LOG_ERROR("%s: buffer %s: is not a multi-buffer\n", __func__, lm_ggml_backend_buffer_name(buffer));
        return;
    }
    buffer->usage = usage;
    for (lm_ggml_backend_buffer_t part : ctx_of(buffer)->parts) {
        lm_ggml_backend_buffer_set_usage(part, usage);
    }
}

#pragma once
// Internal helpers shared by the src/backend/ files: where a tensor's memory
// lives, and the argument checks every public wrapper repeats.

#include "ggml-backend-impl.h"
#include "core/ggml-impl.h"

namespace lmggml::backend {

// The buffer that owns a tensor's memory: views borrow their source's buffer
// (a view may have been created after its source was allocated, so its own
// `buffer` field can still be NULL).
inline lm_ggml_backend_buffer_t tensor_buffer(const lm_ggml_tensor * t) {
    if (t->view_src != nullptr && t->view_src->buffer != nullptr) {
        return t->view_src->buffer;
    }
    return t->buffer;
}

// True when both tensors have the same type, shape and strides, i.e. a raw
// byte copy of nbytes moves every element to the same logical position.
inline bool same_layout(const lm_ggml_tensor * a, const lm_ggml_tensor * b) {
    if (a->type != b->type) {
        return false;
    }
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i]) {
            return false;
        }
    }
    return true;
}

// Checks that a byte range [offset, offset + size) of an allocated tensor can
// be accessed. Logs one line naming `fn` and returns false otherwise.
bool check_tensor_range(const char * fn, const lm_ggml_tensor * tensor, size_t offset, size_t size);

// For the loader: add a reg (and its devices) to the registry, remembering
// the dlopen handle that must be closed on unload, or find it already there
// (in one step under the registry lock, so that threads racing to load the
// same library agree; checking, then adding, let two of them both try to
// add it, and the second failed). failed: logged; the handle is not closed
// here.
enum class LoadAdd { added, already_registered, failed };
LoadAdd registry_add_loaded(lm_ggml_backend_reg_t reg, void * dl_handle);

// Removes a reg and its devices. Returns the dlopen handle it was loaded
// from (NULL for built-ins), or sets *found = false when reg is unknown.
void * registry_remove(lm_ggml_backend_reg_t reg, bool * found);

} // namespace lmggml::backend

// Logs one error line "<fn>: <msg>" when ptr is NULL and returns `ret`.
#define LMGGML_CHECK_ARG(ptr, ret)                                                                                     \
    do {                                                                                                               \
        if ((ptr) == nullptr) {                                                                                        \
            LM_GGML_LOG_ERROR("%s: %s is NULL\n", __func__, #ptr);                                                     \
            return ret;                                                                                                \
        }                                                                                                              \
    } while (0)

// Same for functions returning void.
#define LMGGML_CHECK_ARG_VOID(ptr)                                                                                     \
    do {                                                                                                               \
        if ((ptr) == nullptr) {                                                                                        \
            LM_GGML_LOG_ERROR("%s: %s is NULL\n", __func__, #ptr);                                                     \
            return;                                                                                                    \
        }                                                                                                              \
    } while (0)

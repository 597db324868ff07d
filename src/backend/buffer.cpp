// Buffer types and buffers: the public wrappers around the seed's
// lm_ggml_backend_buffer_type_i / lm_ggml_backend_buffer_i. Optional slots get
// their documented default here, once; NULL objects are logged and refused.

#include "backend/backend-internal.h"
#include "core/fault.h" // [reliability] allocation fault injection (tests only)

#include <cstdint>
#include <new>

using lmggml::backend::tensor_buffer;

// ---------------------------------------------------------------- buffer type

const char * lm_ggml_backend_buft_name(lm_ggml_backend_buffer_type_t buft) {
    LMGGML_CHECK_ARG(buft, "NULL");
    if (buft->iface.get_name == nullptr) {
        return "(unnamed)";
    }
    return buft->iface.get_name(buft);
}

lm_ggml_backend_buffer_t lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_buffer_type_t buft, size_t size) {
    LMGGML_CHECK_ARG(buft, nullptr);
    if (size == 0) {
        // A zero-sized buffer needs no memory: an empty interface is enough,
        // since every wrapper treats size 0 as "nothing to do".
        return lm_ggml_backend_buffer_init(buft, {}, nullptr, 0);
    }
    if (buft->iface.alloc_buffer == nullptr) {
        LM_GGML_LOG_ERROR("%s: buffer type %s: has no alloc_buffer\n", __func__, lm_ggml_backend_buft_name(buft));
        return nullptr;
    }
    const size_t max_size = lm_ggml_backend_buft_get_max_size(buft);
    if (size > max_size) {
        LM_GGML_LOG_ERROR("%s: buffer type %s: size %zu exceeds the maximum %zu\n", __func__,
                          lm_ggml_backend_buft_name(buft), size, max_size);
        return nullptr;
    }
    try {
        return buft->iface.alloc_buffer(buft, size);
    } catch (...) {
        LM_GGML_LOG_ERROR("%s: buffer type %s: allocation of %zu bytes failed\n", __func__,
                          lm_ggml_backend_buft_name(buft), size);
        return nullptr;
    }
}

size_t lm_ggml_backend_buft_get_alignment(lm_ggml_backend_buffer_type_t buft) {
    LMGGML_CHECK_ARG(buft, 0);
    if (buft->iface.get_alignment == nullptr) {
        return LM_GGML_MEM_ALIGN; // not optional in the seed; be lenient
    }
    return buft->iface.get_alignment(buft);
}

size_t lm_ggml_backend_buft_get_max_size(lm_ggml_backend_buffer_type_t buft) {
    LMGGML_CHECK_ARG(buft, 0);
    if (buft->iface.get_max_size == nullptr) {
        return SIZE_MAX;
    }
    return buft->iface.get_max_size(buft);
}

size_t lm_ggml_backend_buft_get_alloc_size(lm_ggml_backend_buffer_type_t buft, struct lm_ggml_tensor * tensor) {
    LMGGML_CHECK_ARG(buft, 0);
    LMGGML_CHECK_ARG(tensor, 0);
    const size_t nbytes = lm_ggml_nbytes(tensor);
    if (buft->iface.get_alloc_size == nullptr) {
        return nbytes;
    }
    const size_t size = buft->iface.get_alloc_size(buft, tensor);
    if (size < nbytes) {
        // a backend bug; never hand out less than the tensor needs
        LM_GGML_LOG_ERROR("%s: buffer type %s: get_alloc_size returned %zu < nbytes %zu\n", __func__,
                          lm_ggml_backend_buft_name(buft), size, nbytes);
        return nbytes;
    }
    return size;
}

bool lm_ggml_backend_buft_is_host(lm_ggml_backend_buffer_type_t buft) {
    LMGGML_CHECK_ARG(buft, false);
    if (buft->iface.is_host == nullptr) {
        return false;
    }
    return buft->iface.is_host(buft);
}

lm_ggml_backend_dev_t lm_ggml_backend_buft_get_device(lm_ggml_backend_buffer_type_t buft) {
    LMGGML_CHECK_ARG(buft, nullptr);
    return buft->device;
}

// ---------------------------------------------------------------- buffer

lm_ggml_backend_buffer_t lm_ggml_backend_buffer_init(lm_ggml_backend_buffer_type_t buft,
                                                     struct lm_ggml_backend_buffer_i iface, void * context,
                                                     size_t size) {
    LMGGML_CHECK_ARG(buft, nullptr);
    // [reliability] lm_fault_should_fail(): injected failure in LMGGML_FAULT_INJECTION builds
    auto * buffer = lm_fault_should_fail() ? nullptr
                                           : new (std::nothrow) lm_ggml_backend_buffer{
                                                 .iface = iface,
                                                 .buft = buft,
                                                 .context = context,
                                                 .size = size,
                                                 .usage = LM_GGML_BACKEND_BUFFER_USAGE_ANY,
                                             };
    if (buffer == nullptr) {
        LM_GGML_LOG_ERROR("%s: buffer type %s: out of memory for the buffer object\n", __func__,
                          lm_ggml_backend_buft_name(buft));
    }
    return buffer;
}

const char * lm_ggml_backend_buffer_name(lm_ggml_backend_buffer_t buffer) {
    LMGGML_CHECK_ARG(buffer, "NULL");
    return lm_ggml_backend_buft_name(buffer->buft);
}

void lm_ggml_backend_buffer_free(lm_ggml_backend_buffer_t buffer) {
    if (buffer == nullptr) {
        return; // like free(NULL)
    }
    if (buffer->iface.free_buffer != nullptr) {
        buffer->iface.free_buffer(buffer);
    }
    delete buffer;
}

size_t lm_ggml_backend_buffer_get_size(lm_ggml_backend_buffer_t buffer) {
    LMGGML_CHECK_ARG(buffer, 0);
    return buffer->size;
}

void * lm_ggml_backend_buffer_get_base(lm_ggml_backend_buffer_t buffer) {
    LMGGML_CHECK_ARG(buffer, nullptr);
    if (buffer->size == 0) {
        return nullptr; // zero-sized buffers have no memory and need no get_base
    }
    if (buffer->iface.get_base == nullptr) {
        LM_GGML_LOG_ERROR("%s: buffer %s: has no get_base\n", __func__, lm_ggml_backend_buffer_name(buffer));
        return nullptr;
    }
    void * base = buffer->iface.get_base(buffer);
    if (base == nullptr) {
        LM_GGML_LOG_ERROR("%s: buffer %s: get_base returned NULL\n", __func__, lm_ggml_backend_buffer_name(buffer));
    }
    return base;
}

void lm_ggml_backend_buffer_init_tensor(lm_ggml_backend_buffer_t buffer, struct lm_ggml_tensor * tensor) {
    LMGGML_CHECK_ARG_VOID(buffer);
    LMGGML_CHECK_ARG_VOID(tensor);
    if (buffer->iface.init_tensor != nullptr) {
        buffer->iface.init_tensor(buffer, tensor);
    }
}

size_t lm_ggml_backend_buffer_get_alignment(lm_ggml_backend_buffer_t buffer) {
    LMGGML_CHECK_ARG(buffer, 0);
    return lm_ggml_backend_buft_get_alignment(buffer->buft);
}

size_t lm_ggml_backend_buffer_get_max_size(lm_ggml_backend_buffer_t buffer) {
    LMGGML_CHECK_ARG(buffer, 0);
    return lm_ggml_backend_buft_get_max_size(buffer->buft);
}

size_t lm_ggml_backend_buffer_get_alloc_size(lm_ggml_backend_buffer_t buffer, struct lm_ggml_tensor * tensor) {
    LMGGML_CHECK_ARG(buffer, 0);
    return lm_ggml_backend_buft_get_alloc_size(buffer->buft, tensor);
}

void lm_ggml_backend_buffer_clear(lm_ggml_backend_buffer_t buffer, uint8_t value) {
    LMGGML_CHECK_ARG_VOID(buffer);
    if (buffer->size == 0) {
        return;
    }
    if (buffer->iface.clear == nullptr) {
        LM_GGML_LOG_ERROR("%s: buffer %s: has no clear\n", __func__, lm_ggml_backend_buffer_name(buffer));
        return;
    }
    buffer->iface.clear(buffer, value);
}

bool lm_ggml_backend_buffer_is_host(lm_ggml_backend_buffer_t buffer) {
    LMGGML_CHECK_ARG(buffer, false);
    return lm_ggml_backend_buft_is_host(buffer->buft);
}

void lm_ggml_backend_buffer_set_usage(lm_ggml_backend_buffer_t buffer, enum lm_ggml_backend_buffer_usage usage) {
    LMGGML_CHECK_ARG_VOID(buffer);
    buffer->usage = usage;
    // a multi-buffer's parts are what the scheduler actually inspects
    if (lm_ggml_backend_buffer_is_multi_buffer(buffer)) {
        lm_ggml_backend_multi_buffer_set_usage(buffer, usage);
    }
}

enum lm_ggml_backend_buffer_usage lm_ggml_backend_buffer_get_usage(lm_ggml_backend_buffer_t buffer) {
    LMGGML_CHECK_ARG(buffer, LM_GGML_BACKEND_BUFFER_USAGE_ANY);
    return buffer->usage;
}

lm_ggml_backend_buffer_type_t lm_ggml_backend_buffer_get_type(lm_ggml_backend_buffer_t buffer) {
    LMGGML_CHECK_ARG(buffer, nullptr);
    return buffer->buft;
}

void lm_ggml_backend_buffer_reset(lm_ggml_backend_buffer_t buffer) {
    LMGGML_CHECK_ARG_VOID(buffer);
    if (buffer->iface.reset != nullptr) {
        buffer->iface.reset(buffer);
    }
}

// ---------------------------------------------------------------- placing tensors

void lm_ggml_backend_tensor_alloc(lm_ggml_backend_buffer_t buffer, struct lm_ggml_tensor * tensor, void * addr) {
    LMGGML_CHECK_ARG_VOID(buffer);
    LMGGML_CHECK_ARG_VOID(tensor);
    LMGGML_CHECK_ARG_VOID(addr);
    if (tensor->buffer != nullptr || tensor->data != nullptr) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': already allocated\n", __func__, tensor->name);
        return;
    }
    if (tensor->view_src != nullptr) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': is a view (use lm_ggml_backend_view_init)\n", __func__, tensor->name);
        return;
    }
    if (buffer->size == 0 || buffer->iface.get_base == nullptr) {
        LM_GGML_LOG_ERROR("%s: buffer %s: has no memory to place tensor '%s'\n", __func__,
                          lm_ggml_backend_buffer_name(buffer), tensor->name);
        return;
    }
    // Compare as integers: for device buffers the base is only an address
    // token, never dereferenced here.
    const uintptr_t base = (uintptr_t) buffer->iface.get_base(buffer);
    const uintptr_t a = (uintptr_t) addr;
    const size_t need = lm_ggml_backend_buffer_get_alloc_size(buffer, tensor);
    if (a < base || a - base > buffer->size || need > buffer->size - (a - base)) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': %zu bytes at offset %td do not fit buffer %s of %zu bytes\n", __func__,
                          tensor->name, need, (ptrdiff_t) (a - base), lm_ggml_backend_buffer_name(buffer),
                          buffer->size);
        return;
    }
    tensor->buffer = buffer;
    tensor->data = addr;
    lm_ggml_backend_buffer_init_tensor(buffer, tensor);
}

void lm_ggml_backend_view_init(struct lm_ggml_tensor * tensor) {
    LMGGML_CHECK_ARG_VOID(tensor);
    if (tensor->view_src == nullptr) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': is not a view\n", __func__, tensor->name);
        return;
    }
    if (tensor->buffer != nullptr) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': already initialized\n", __func__, tensor->name);
        return;
    }
    const lm_ggml_tensor * src = tensor->view_src;
    if (src->buffer == nullptr || src->data == nullptr) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': view source '%s' is not allocated\n", __func__, tensor->name, src->name);
        return;
    }
    tensor->buffer = src->buffer;
    tensor->data = (char *) src->data + tensor->view_offs;
    lm_ggml_backend_buffer_init_tensor(tensor->buffer, tensor);
}

// ---------------------------------------------------------------- shared checks

bool lmggml::backend::check_tensor_range(const char * fn, const lm_ggml_tensor * tensor, size_t offset, size_t size) {
    if (tensor == nullptr) {
        LM_GGML_LOG_ERROR("%s: tensor is NULL\n", fn);
        return false;
    }
    if (tensor_buffer(tensor) == nullptr) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': has no buffer\n", fn, tensor->name);
        return false;
    }
    if (tensor->data == nullptr) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': has no data (not allocated)\n", fn, tensor->name);
        return false;
    }
    const size_t nbytes = lm_ggml_nbytes(tensor);
    if (offset > nbytes || size > nbytes - offset) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': range [%zu, %zu + %zu) is outside its %zu bytes\n", fn, tensor->name,
                          offset, offset, size, nbytes);
        return false;
    }
    return true;
}

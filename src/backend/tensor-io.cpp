// Moving bytes in and out of tensors that live in backend buffers: set, get,
// memset, copy, and their asynchronous (per-stream) variants. Every entry
// point checks that the tensor is allocated and the byte range lies inside it
// before it reaches a backend, so backends may trust what they receive.

#include "backend/backend-internal.h"

#include <algorithm>
#include <new>
#include <vector>

using lmggml::backend::check_tensor_range;
using lmggml::backend::same_layout;
using lmggml::backend::tensor_buffer;

namespace {

// Staging chunk for emulated memset and host-staged copies: bounded so a
// huge tensor does not need a second full-size host allocation for memset.
constexpr size_t kMemsetChunk = 1u << 20;

} // namespace

void lm_ggml_backend_tensor_set(struct lm_ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    LMGGML_CHECK_ARG_VOID(tensor);
    if (size == 0) {
        return;
    }
    LMGGML_CHECK_ARG_VOID(data);
    if (!check_tensor_range(__func__, tensor, offset, size)) {
        return;
    }
    lm_ggml_backend_buffer_t buf = tensor_buffer(tensor);
    if (buf->iface.set_tensor == nullptr) {
        LM_GGML_LOG_ERROR("%s: buffer %s: has no set_tensor\n", __func__, lm_ggml_backend_buffer_name(buf));
        return;
    }
    buf->iface.set_tensor(buf, tensor, data, offset, size);
}

void lm_ggml_backend_tensor_get(const struct lm_ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    LMGGML_CHECK_ARG_VOID(tensor);
    if (size == 0) {
        return;
    }
    LMGGML_CHECK_ARG_VOID(data);
    if (!check_tensor_range(__func__, tensor, offset, size)) {
        return;
    }
    lm_ggml_backend_buffer_t buf = tensor_buffer(tensor);
    if (buf->iface.get_tensor == nullptr) {
        LM_GGML_LOG_ERROR("%s: buffer %s: has no get_tensor\n", __func__, lm_ggml_backend_buffer_name(buf));
        return;
    }
    buf->iface.get_tensor(buf, tensor, data, offset, size);
}

void lm_ggml_backend_tensor_memset(struct lm_ggml_tensor * tensor, uint8_t value, size_t offset, size_t size) {
    LMGGML_CHECK_ARG_VOID(tensor);
    if (size == 0) {
        return;
    }
    if (!check_tensor_range(__func__, tensor, offset, size)) {
        return;
    }
    lm_ggml_backend_buffer_t buf = tensor_buffer(tensor);
    if (buf->iface.memset_tensor != nullptr) {
        buf->iface.memset_tensor(buf, tensor, value, offset, size);
        return;
    }
    if (buf->iface.set_tensor == nullptr) {
        LM_GGML_LOG_ERROR("%s: buffer %s: has neither memset_tensor nor set_tensor\n", __func__,
                          lm_ggml_backend_buffer_name(buf));
        return;
    }
    // emulate with set_tensor from a host pattern, chunk by chunk
    try {
        std::vector<uint8_t> pattern(std::min(size, kMemsetChunk), value);
        for (size_t done = 0; done < size;) {
            const size_t n = std::min(pattern.size(), size - done);
            buf->iface.set_tensor(buf, tensor, pattern.data(), offset + done, n);
            done += n;
        }
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': out of memory for the memset pattern\n", __func__, tensor->name);
    }
}

bool lm_ggml_backend_buffer_copy_tensor(const struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst) {
    LMGGML_CHECK_ARG(src, false);
    LMGGML_CHECK_ARG(dst, false);
    lm_ggml_backend_buffer_t dst_buf = tensor_buffer(dst);
    if (dst_buf == nullptr || dst_buf->iface.cpy_tensor == nullptr) {
        return false; // "not supported" is an answer, not an error
    }
    return dst_buf->iface.cpy_tensor(dst_buf, src, dst);
}

void lm_ggml_backend_tensor_copy(struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst) {
    LMGGML_CHECK_ARG_VOID(src);
    LMGGML_CHECK_ARG_VOID(dst);
    if (!same_layout(src, dst)) {
        LM_GGML_LOG_ERROR("%s: tensors '%s' and '%s': different type, shape or strides\n", __func__, src->name,
                          dst->name);
        return;
    }
    if (src == dst) {
        return;
    }
    const size_t nbytes = lm_ggml_nbytes(src);
    if (!check_tensor_range(__func__, src, 0, nbytes) || !check_tensor_range(__func__, dst, 0, nbytes)) {
        return;
    }
    lm_ggml_backend_buffer_t src_buf = tensor_buffer(src);
    lm_ggml_backend_buffer_t dst_buf = tensor_buffer(dst);
    // Prefer one direct transfer when either side is plain host memory.
    if (lm_ggml_backend_buffer_is_host(src_buf)) {
        lm_ggml_backend_tensor_set(dst, src->data, 0, nbytes);
    } else if (lm_ggml_backend_buffer_is_host(dst_buf)) {
        lm_ggml_backend_tensor_get(src, dst->data, 0, nbytes);
    } else if (!lm_ggml_backend_buffer_copy_tensor(src, dst)) {
        // two device buffers that cannot talk: stage through host memory
        try {
            std::vector<uint8_t> staging(nbytes);
            lm_ggml_backend_tensor_get(src, staging.data(), 0, nbytes);
            lm_ggml_backend_tensor_set(dst, staging.data(), 0, nbytes);
        } catch (const std::bad_alloc &) {
            LM_GGML_LOG_ERROR("%s: tensor '%s': out of memory for %zu staging bytes\n", __func__, src->name, nbytes);
        }
    }
}

// ---------------------------------------------------------------- async (per stream)

void lm_ggml_backend_tensor_set_async(lm_ggml_backend_t backend, struct lm_ggml_tensor * tensor, const void * data,
                                      size_t offset, size_t size) {
    LMGGML_CHECK_ARG_VOID(backend);
    LMGGML_CHECK_ARG_VOID(tensor);
    if (size == 0) {
        return;
    }
    LMGGML_CHECK_ARG_VOID(data);
    if (!check_tensor_range(__func__, tensor, offset, size)) {
        return;
    }
    if (backend->iface.set_tensor_async == nullptr) {
        // queued work may still read this tensor: finish it, then copy
        lm_ggml_backend_synchronize(backend);
        lm_ggml_backend_tensor_set(tensor, data, offset, size);
        return;
    }
    backend->iface.set_tensor_async(backend, tensor, data, offset, size);
}

void lm_ggml_backend_tensor_get_async(lm_ggml_backend_t backend, const struct lm_ggml_tensor * tensor, void * data,
                                      size_t offset, size_t size) {
    LMGGML_CHECK_ARG_VOID(backend);
    LMGGML_CHECK_ARG_VOID(tensor);
    if (size == 0) {
        return;
    }
    LMGGML_CHECK_ARG_VOID(data);
    if (!check_tensor_range(__func__, tensor, offset, size)) {
        return;
    }
    if (backend->iface.get_tensor_async == nullptr) {
        // queued work may still write this tensor: finish it, then copy
        lm_ggml_backend_synchronize(backend);
        lm_ggml_backend_tensor_get(tensor, data, offset, size);
        return;
    }
    backend->iface.get_tensor_async(backend, tensor, data, offset, size);
}

void lm_ggml_backend_tensor_copy_async(lm_ggml_backend_t backend_src, lm_ggml_backend_t backend_dst,
                                       struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst) {
    LMGGML_CHECK_ARG_VOID(backend_src);
    LMGGML_CHECK_ARG_VOID(backend_dst);
    LMGGML_CHECK_ARG_VOID(src);
    LMGGML_CHECK_ARG_VOID(dst);
    if (!same_layout(src, dst)) {
        LM_GGML_LOG_ERROR("%s: tensors '%s' and '%s': different type, shape or strides\n", __func__, src->name,
                          dst->name);
        return;
    }
    if (src == dst) {
        return;
    }
    const size_t nbytes = lm_ggml_nbytes(src);
    if (!check_tensor_range(__func__, src, 0, nbytes) || !check_tensor_range(__func__, dst, 0, nbytes)) {
        return;
    }
    if (backend_dst->iface.cpy_tensor_async != nullptr &&
        backend_dst->iface.cpy_tensor_async(backend_src, backend_dst, src, dst)) {
        return;
    }
    // No queued copy: emulate the ordering of one (after everything already
    // queued on both streams) with a blocking copy.
    lm_ggml_backend_synchronize(backend_src);
    lm_ggml_backend_synchronize(backend_dst);
    lm_ggml_backend_tensor_copy(src, dst);
}

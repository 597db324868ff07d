// Linear tensor allocator over one buffer, and allocation of all tensors of a
// context into fresh buffers of a type (split over several when the type has a
// max size).
#include <new>
#include <vector>

#include "../../core/ggml-impl.h"
#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-backend.h"

namespace {

size_t align_offset(const void * base, size_t offset, size_t alignment) {
    const uintptr_t addr = (uintptr_t) base + offset;
    return offset + (alignment - addr % alignment) % alignment;
}

} // namespace

extern "C" struct lm_ggml_tallocr lm_ggml_tallocr_new(lm_ggml_backend_buffer_t buffer) {
    lm_ggml_tallocr t = {buffer, nullptr, 1, 0};
    if (!buffer) {
        LM_GGML_LOG_ERROR("lm_ggml_tallocr_new: buffer is NULL\n");
        return t;
    }
    t.base = lm_ggml_backend_buffer_get_base(buffer);
    t.alignment = lm_ggml_backend_buffer_get_alignment(buffer);
    if (t.alignment == 0) t.alignment = 1;
    t.offset = align_offset(t.base, 0, t.alignment);
    return t;
}

extern "C" void lm_ggml_tallocr_alloc(struct lm_ggml_tallocr * talloc, struct lm_ggml_tensor * tensor) {
    if (!talloc || !talloc->buffer || !tensor) {
        LM_GGML_LOG_ERROR("lm_ggml_tallocr_alloc: %s is NULL\n", tensor ? "allocator or its buffer" : "tensor");
        return;
    }
    const size_t size = lm_ggml_backend_buffer_get_alloc_size(talloc->buffer, tensor);
    const size_t padded = (size + talloc->alignment - 1) / talloc->alignment * talloc->alignment;
    const size_t buf_size = lm_ggml_backend_buffer_get_size(talloc->buffer);
    if (padded < size || talloc->offset > buf_size || padded > buf_size - talloc->offset) {
        LM_GGML_LOG_ERROR("lm_ggml_tallocr_alloc: not enough space in buffer '%s' for tensor '%s' (needed %zu, %zu of %zu used)\n",
                          lm_ggml_backend_buffer_name(talloc->buffer), tensor->name, padded, talloc->offset, buf_size);
        return;
    }
    lm_ggml_backend_tensor_alloc(talloc->buffer, tensor, static_cast<char *>(talloc->base) + talloc->offset);
    talloc->offset += padded;
}

namespace {

// Places tensors [first, last) of the list into a new buffer of `size` bytes.
lm_ggml_backend_buffer_t alloc_group(lm_ggml_backend_buffer_type_t buft, size_t size,
                                     const std::vector<lm_ggml_tensor *> & tensors, size_t first, size_t last) {
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_buft_alloc_buffer(buft, size);
    if (!buf) return nullptr;
    lm_ggml_tallocr talloc = lm_ggml_tallocr_new(buf);
    for (size_t i = first; i < last; i++) lm_ggml_tallocr_alloc(&talloc, tensors[i]);
    return buf;
}

} // namespace

extern "C" struct lm_ggml_backend_buffer * lm_ggml_backend_alloc_ctx_tensors_from_buft(struct lm_ggml_context * ctx,
                                                                                        lm_ggml_backend_buffer_type_t buft) {
    if (!ctx || !buft) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_alloc_ctx_tensors_from_buft: %s is NULL\n", ctx ? "buffer type" : "context");
        return nullptr;
    }
    try {
        const size_t align = lm_ggml_backend_buft_get_alignment(buft) ? lm_ggml_backend_buft_get_alignment(buft) : 1;
        const size_t max_size = lm_ggml_backend_buft_get_max_size(buft);
        std::vector<lm_ggml_tensor *> todo;
        std::vector<size_t> sizes;
        for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t; t = lm_ggml_get_next_tensor(ctx, t)) {
            if (t->data != nullptr || t->view_src != nullptr) continue;
            const size_t s = lm_ggml_backend_buft_get_alloc_size(buft, t);
            const size_t padded = (s + align - 1) / align * align;
            if (padded > max_size) {
                LM_GGML_LOG_ERROR("lm_ggml_backend_alloc_ctx_tensors_from_buft: tensor '%s' (%zu bytes) exceeds the max size %zu of buffer type %s\n",
                                  t->name, padded, max_size, lm_ggml_backend_buft_name(buft));
                return nullptr;
            }
            todo.push_back(t);
            sizes.push_back(padded);
        }
        if (todo.empty()) return nullptr; // nothing to allocate: all tensors have memory already

        // group consecutive tensors into buffers no larger than max_size
        std::vector<lm_ggml_backend_buffer_t> buffers;
        buffers.reserve(todo.size() + 1); // push_back below must not throw while buffers are held
        size_t first = 0, cur = 0;
        for (size_t i = 0; i <= todo.size(); i++) {
            if (i == todo.size() || (cur > 0 && cur + sizes[i] > max_size)) {
                lm_ggml_backend_buffer_t b = alloc_group(buft, cur + align, todo, first, i);
                if (!b) {
                    LM_GGML_LOG_ERROR("lm_ggml_backend_alloc_ctx_tensors_from_buft: failed to allocate a %s buffer of %zu bytes\n",
                                      lm_ggml_backend_buft_name(buft), cur + align);
                    for (lm_ggml_backend_buffer_t done : buffers) lm_ggml_backend_buffer_free(done);
                    for (size_t k = 0; k < first; k++) { todo[k]->data = nullptr; todo[k]->buffer = nullptr; }
                    return nullptr;
                }
                buffers.push_back(b);
                first = i;
                cur = 0;
            }
            if (i < todo.size()) cur += sizes[i];
        }
        // views get their address from their (now allocated) sources
        for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t; t = lm_ggml_get_next_tensor(ctx, t)) {
            if (t->data == nullptr && t->view_src && t->view_src->data) lm_ggml_backend_view_init(t);
        }
        if (buffers.size() == 1) return buffers[0];
        return lm_ggml_backend_multi_buffer_alloc_buffer(buffers.data(), buffers.size());
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_alloc_ctx_tensors_from_buft: out of memory\n");
        return nullptr;
    }
}

extern "C" struct lm_ggml_backend_buffer * lm_ggml_backend_alloc_ctx_tensors(struct lm_ggml_context * ctx,
                                                                             lm_ggml_backend_t backend) {
    if (!backend) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_alloc_ctx_tensors: backend is NULL\n");
        return nullptr;
    }
    return lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx, lm_ggml_backend_get_default_buffer_type(backend));
}

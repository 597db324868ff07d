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
        LM_GGML_LOG_ERROR(
            "lm_ggml_tallocr_alloc: not enough space in buffer '%s' for tensor '%s' (needed %zu, %zu of %zu used)\n",
            lm_ggml_backend_buffer_name(talloc->buffer), tensor->name, padded, talloc->offset, buf_size);
        return;
    }
    lm_ggml_backend_tensor_alloc(talloc->buffer, tensor, static_cast<char *>(talloc->base) + talloc->offset);
    talloc->offset += padded;
}

namespace {

// Tensors [first, last) of the context's list, with `size` bytes: the sum of
// their padded sizes.
struct Group {
    size_t first, last, size;
};

// Places the tensors of g that need memory into a new buffer of exactly g.size
// bytes. NULL (logged) when the buffer cannot be had or a tensor does not fit
// (a buffer type whose memory is not aligned to its own alignment).
lm_ggml_backend_buffer_t alloc_group(lm_ggml_backend_buffer_type_t buft, const Group & g,
                                     const std::vector<lm_ggml_tensor *> & all) {
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_buft_alloc_buffer(buft, g.size);
    if (!buf) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_alloc_ctx_tensors_from_buft: failed to allocate a %s buffer of %zu bytes\n",
                          lm_ggml_backend_buft_name(buft), g.size);
        return nullptr;
    }
    lm_ggml_tallocr talloc = lm_ggml_tallocr_new(buf);
    for (size_t i = g.first; i < g.last; i++) {
        if (all[i]->data != nullptr || all[i]->view_src != nullptr) continue;
        lm_ggml_tallocr_alloc(&talloc, all[i]);
        if (all[i]->buffer != buf) { // tallocr logged why
            for (size_t k = g.first; k < i; k++) {
                if (all[k]->buffer == buf) {
                    all[k]->data = nullptr;
                    all[k]->buffer = nullptr;
                }
            }
            lm_ggml_backend_buffer_free(buf);
            return nullptr;
        }
    }
    return buf;
}

} // namespace

// As ggml: tensors are taken in context order, each needing
// PAD(buft_get_alloc_size, alignment) bytes; a buffer is closed when the next
// tensor would take it past the type's max size, and every buffer is exactly
// the sum of its tensors' padded sizes (none when that sum is 0).
extern "C" struct lm_ggml_backend_buffer *
lm_ggml_backend_alloc_ctx_tensors_from_buft(struct lm_ggml_context * ctx, lm_ggml_backend_buffer_type_t buft) {
    if (!ctx || !buft) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_alloc_ctx_tensors_from_buft: %s is NULL\n", ctx ? "buffer type" : "context");
        return nullptr;
    }
    try {
        const size_t align = lm_ggml_backend_buft_get_alignment(buft) ? lm_ggml_backend_buft_get_alignment(buft) : 1;
        const size_t max_size = lm_ggml_backend_buft_get_max_size(buft);
        std::vector<lm_ggml_tensor *> all;
        std::vector<Group> groups;
        size_t first = 0, cur = 0;
        for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t; t = lm_ggml_get_next_tensor(ctx, t)) {
            size_t padded = 0;
            if (t->data == nullptr && t->view_src == nullptr) {
                const size_t s = lm_ggml_backend_buft_get_alloc_size(buft, t);
                padded = (s + align - 1) / align * align;
                if (padded < s || padded > max_size) {
                    LM_GGML_LOG_ERROR("lm_ggml_backend_alloc_ctx_tensors_from_buft: tensor '%s' (%zu bytes) exceeds "
                                      "the max size %zu of buffer type %s\n",
                                      t->name, s, max_size, lm_ggml_backend_buft_name(buft));
                    return nullptr;
                }
            }
            if (cur + padded > max_size) {
                groups.push_back({first, all.size(), cur});
                first = all.size();
                cur = 0;
            }
            all.push_back(t);
            cur += padded;
        }
        if (cur > 0) groups.push_back({first, all.size(), cur});
        if (groups.empty()) return nullptr; // nothing needs memory (ggml: the same NULL, no error)

        std::vector<lm_ggml_backend_buffer_t> buffers;
        buffers.reserve(groups.size()); // push_back below must not throw while buffers are held
        for (const Group & g : groups) {
            lm_ggml_backend_buffer_t b = alloc_group(buft, g, all);
            if (!b) {
                for (lm_ggml_backend_buffer_t done : buffers) {
                    for (size_t k = 0; k < g.first; k++) {
                        if (all[k]->buffer == done) {
                            all[k]->data = nullptr;
                            all[k]->buffer = nullptr;
                        }
                    }
                    lm_ggml_backend_buffer_free(done);
                }
                return nullptr;
            }
            buffers.push_back(b);
        }
        // views get their buffer (and address) from their sources
        for (lm_ggml_tensor * t : all) {
            if (t->view_src && t->buffer == nullptr && t->view_src->buffer && t->view_src->data)
                lm_ggml_backend_view_init(t);
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

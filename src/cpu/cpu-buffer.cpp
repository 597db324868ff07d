// CPU buffers: host memory, 64-byte aligned. Two buffer types:
//   "CPU"        - memory this library allocates (and frees with the buffer)
//   "CPU_Mapped" - caller memory wrapped without copying (e.g. an mmap'd
//                  model); the buffer never frees it.
// Tensor access is plain memmove/memset (views of one buffer may overlap); range checks happen in the public
// lm_ggml_backend_tensor_* wrappers.

#include "cpu/cpu-internal.h"

#include "core/ggml-impl.h"
#include "ggml-backend.h"

#include <cstdint>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace {

// Caller pointers must meet ggml's tensor alignment (GGUF data is 32-aligned).
constexpr size_t kMinHostPtrAlignment = 32;

// lm_ggml_aligned_malloc(0) may return NULL: a zero-byte buffer still gets a
// real (tiny) allocation so its base is valid.
size_t backing_size(size_t size) { return size > 0 ? size : LM_GGML_HOST_ALIGNMENT; }

// Large buffers get whole 2 MiB pages (see lm_cpu_buffer_alloc).
constexpr size_t kHugePage = 2u << 20;
constexpr size_t kHugeMin = 2 * kHugePage;

void * cpu_buffer_get_base(lm_ggml_backend_buffer_t buffer) { return buffer->context; }

void cpu_buffer_free(lm_ggml_backend_buffer_t buffer) { lm_cpu_buffer_free(buffer->context, buffer->size); }

void cpu_buffer_memset_tensor(lm_ggml_backend_buffer_t buffer, struct lm_ggml_tensor * tensor, uint8_t value,
                              size_t offset, size_t size) {
    (void) buffer;
    memset((char *) tensor->data + offset, value, size);
}

void cpu_buffer_set_tensor(lm_ggml_backend_buffer_t buffer, struct lm_ggml_tensor * tensor, const void * data,
                           size_t offset, size_t size) {
    (void) buffer;
    memmove((char *) tensor->data + offset, data, size); // data may lie in this buffer
}

void cpu_buffer_get_tensor(lm_ggml_backend_buffer_t buffer, const struct lm_ggml_tensor * tensor, void * data,
                           size_t offset, size_t size) {
    (void) buffer;
    memmove(data, (const char *) tensor->data + offset, size);
}

// Copies from any host memory: a host buffer, or a context-allocated tensor
// (no buffer). Anything else is left to the caller's fallback path.
bool cpu_buffer_cpy_tensor(lm_ggml_backend_buffer_t buffer, const struct lm_ggml_tensor * src,
                           struct lm_ggml_tensor * dst) {
    (void) buffer;
    const bool src_on_host =
        src->buffer != nullptr ? lm_ggml_backend_buffer_is_host(src->buffer) : src->data != nullptr;
    if (!src_on_host) {
        return false;
    }
    // two views of one buffer may overlap (an RPC client can ask for that): memmove
    memmove(dst->data, src->data, lm_ggml_nbytes(src));
    return true;
}

void cpu_buffer_clear(lm_ggml_backend_buffer_t buffer, uint8_t value) { memset(buffer->context, value, buffer->size); }

constexpr struct lm_ggml_backend_buffer_i cpu_buffer_iface = {
    .free_buffer = cpu_buffer_free,
    .get_base = cpu_buffer_get_base,
    .init_tensor = nullptr, // nothing per tensor
    .memset_tensor = cpu_buffer_memset_tensor,
    .set_tensor = cpu_buffer_set_tensor,
    .get_tensor = cpu_buffer_get_tensor,
    .cpy_tensor = cpu_buffer_cpy_tensor,
    .clear = cpu_buffer_clear,
    .reset = nullptr,
};

// Same as above, but the memory belongs to the caller: nothing to free.
constexpr struct lm_ggml_backend_buffer_i cpu_mapped_buffer_iface = {
    .free_buffer = nullptr,
    .get_base = cpu_buffer_get_base,
    .init_tensor = nullptr,
    .memset_tensor = cpu_buffer_memset_tensor,
    .set_tensor = cpu_buffer_set_tensor,
    .get_tensor = cpu_buffer_get_tensor,
    .cpy_tensor = cpu_buffer_cpy_tensor,
    .clear = cpu_buffer_clear,
    .reset = nullptr,
};

const char * cpu_buft_get_name(lm_ggml_backend_buffer_type_t buft) {
    (void) buft;
    return "CPU";
}

const char * cpu_mapped_buft_get_name(lm_ggml_backend_buffer_type_t buft) {
    (void) buft;
    return "CPU_Mapped";
}

lm_ggml_backend_buffer_t cpu_buft_alloc_buffer(lm_ggml_backend_buffer_type_t buft, size_t size) {
    void * data = lm_cpu_buffer_alloc(size);
    if (data == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_buft_alloc_buffer: %s: cannot allocate %zu bytes\n",
                          buft->iface.get_name(buft), size);
        return nullptr;
    }
    lm_ggml_backend_buffer_t buffer = lm_ggml_backend_buffer_init(buft, cpu_buffer_iface, data, size);
    if (buffer == nullptr) {
        lm_cpu_buffer_free(data, size);
    }
    return buffer;
}

size_t cpu_buft_get_alignment(lm_ggml_backend_buffer_type_t buft) {
    (void) buft;
    return LM_GGML_HOST_ALIGNMENT;
}

bool cpu_buft_is_host(lm_ggml_backend_buffer_type_t buft) {
    (void) buft;
    return true;
}

// The CPU's buffer types differ only in their name.
lm_ggml_backend_buffer_type cpu_buft_named(const char * (*get_name)(lm_ggml_backend_buffer_type_t)) {
    return {
        .iface =
            {
                .get_name = get_name,
                .alloc_buffer = cpu_buft_alloc_buffer,
                .get_alignment = cpu_buft_get_alignment,
                .get_max_size = nullptr,   // SIZE_MAX
                .get_alloc_size = nullptr, // lm_ggml_nbytes
                .is_host = cpu_buft_is_host,
            },
        .device = lm_cpu_device(),
        .context = nullptr,
    };
}

lm_ggml_backend_buffer_type_t cpu_mapped_buffer_type() {
    static lm_ggml_backend_buffer_type buft = cpu_buft_named(cpu_mapped_buft_get_name);
    return &buft;
}

} // namespace

// Above kHugeMin the block is 2 MiB aligned (the allocation's own pointer
// stored just below it) and advised to use transparent huge pages: a token
// streams every weight once, and with 4 KiB pages each one costs a TLB miss
// (measured: repacked weights +7 % generation at 2 threads with huge pages).
void * lm_cpu_buffer_alloc(size_t size) {
    if (size < kHugeMin) {
        return lm_ggml_aligned_malloc(backing_size(size));
    }
    if (size > SIZE_MAX - kHugePage) {
        return nullptr;
    }
    char * raw = static_cast<char *>(lm_ggml_aligned_malloc(size + kHugePage));
    if (raw == nullptr) {
        return nullptr;
    }
    char * p = reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(raw) + kHugePage) & ~(uintptr_t) (kHugePage - 1));
    memcpy(p - sizeof(raw), &raw, sizeof(raw)); // p - raw >= 64: raw is 64-byte aligned and p > raw
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void) madvise(p, size & ~(kHugePage - 1), MADV_HUGEPAGE); // advice: failure keeps small pages
#endif
    return p;
}

void lm_cpu_buffer_free(void * data, size_t size) {
    if (data == nullptr) {
        return;
    }
    if (size < kHugeMin) {
        lm_ggml_aligned_free(data, backing_size(size));
        return;
    }
    char * raw;
    memcpy(&raw, static_cast<char *>(data) - sizeof(raw), sizeof(raw));
    lm_ggml_aligned_free(raw, size + kHugePage);
}

lm_ggml_backend_buffer_type_t lm_ggml_backend_cpu_buffer_type(void) {
    static lm_ggml_backend_buffer_type buft = cpu_buft_named(cpu_buft_get_name);
    return &buft;
}

// Ownership: the returned buffer is freed with lm_ggml_backend_buffer_free;
// ptr stays the caller's and must outlive the buffer.
lm_ggml_backend_buffer_t lm_ggml_backend_cpu_buffer_from_ptr(void * ptr, size_t size) {
    if (ptr == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_cpu_buffer_from_ptr: ptr is NULL\n");
        return nullptr;
    }
    if ((uintptr_t) ptr % kMinHostPtrAlignment != 0) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_cpu_buffer_from_ptr: ptr %p: not aligned to %zu bytes\n", ptr,
                          kMinHostPtrAlignment);
        return nullptr;
    }
    return lm_ggml_backend_buffer_init(cpu_mapped_buffer_type(), cpu_mapped_buffer_iface, ptr, size);
}

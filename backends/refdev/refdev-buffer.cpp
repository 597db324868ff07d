// refdev buffers and buffer type: device memory the host cannot address.

#include "refdev.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>

// lmggml's internal logger. Declared weak: if the library does not export it,
// the address is NULL and messages go to stderr instead.
extern "C" __attribute__((weak)) void lm_ggml_log_internal(enum lm_ggml_log_level level, const char * fmt, ...);

namespace refdev {

namespace {

std::atomic<size_t> g_used{0};
std::atomic<uint64_t> g_next_base{0};

// Bases sit above the 47-bit user address space (bit 55 set, non-canonical
// on x86-64 and aarch64), so a host dereference faults at once instead of
// silently reading unrelated memory. Spaced 64 GiB apart so buffers differ.
uintptr_t next_fake_base() {
    const uint64_t k = g_next_base.fetch_add(1) % (uint64_t(1) << 18);
    return (uintptr_t(1) << 55) + uintptr_t(k << 36);
}

buffer_ctx * ctx_of(lm_ggml_backend_buffer_t buffer) { return static_cast<buffer_ctx *>(buffer->context); }

// Host pointer for [offset, offset + size) of tensor t in buffer, or NULL.
uint8_t * at(lm_ggml_backend_buffer_t buffer, const lm_ggml_tensor * t, size_t offset, size_t size) {
    buffer_ctx * ctx = ctx_of(buffer);
    const uintptr_t addr = (uintptr_t) t->data;
    if (addr < ctx->base) {
        return nullptr;
    }
    const size_t pos = addr - ctx->base;
    if (pos > ctx->mem.size() || offset > ctx->mem.size() - pos || size > ctx->mem.size() - pos - offset) {
        return nullptr;
    }
    return ctx->mem.data() + pos + offset;
}

void buffer_free(lm_ggml_backend_buffer_t buffer) {
    g_used -= buffer->size;
    delete ctx_of(buffer);
}

void * buffer_get_base(lm_ggml_backend_buffer_t buffer) { return (void *) ctx_of(buffer)->base; }

void buffer_memset_tensor(lm_ggml_backend_buffer_t buffer, lm_ggml_tensor * t, uint8_t value, size_t offset,
                          size_t size) {
    uint8_t * p = at(buffer, t, offset, size);
    if (p == nullptr) {
        log(LM_GGML_LOG_LEVEL_ERROR, "refdev memset_tensor: tensor '%s': range outside its buffer\n", t->name);
        return;
    }
    std::memset(p, value, size);
}

void buffer_set_tensor(lm_ggml_backend_buffer_t buffer, lm_ggml_tensor * t, const void * data, size_t offset,
                       size_t size) {
    uint8_t * p = at(buffer, t, offset, size);
    if (p == nullptr) {
        log(LM_GGML_LOG_LEVEL_ERROR, "refdev set_tensor: tensor '%s': range outside its buffer\n", t->name);
        return;
    }
    std::memcpy(p, data, size);
}

void buffer_get_tensor(lm_ggml_backend_buffer_t buffer, const lm_ggml_tensor * t, void * data, size_t offset,
                       size_t size) {
    const uint8_t * p = at(buffer, t, offset, size);
    if (p == nullptr) {
        log(LM_GGML_LOG_LEVEL_ERROR, "refdev get_tensor: tensor '%s': range outside its buffer\n", t->name);
        return;
    }
    std::memcpy(data, p, size);
}

// dst is in this buffer; src may be refdev memory or plain host memory
bool buffer_cpy_tensor(lm_ggml_backend_buffer_t buffer, const lm_ggml_tensor * src, lm_ggml_tensor * dst) {
    const size_t n = lm_ggml_nbytes(src);
    uint8_t * d = at(buffer, dst, 0, n);
    if (d == nullptr) {
        return false;
    }
    lm_ggml_backend_buffer_t src_buf = src->view_src && src->view_src->buffer ? src->view_src->buffer : src->buffer;
    if (src_buf != nullptr && is_refdev_buffer(src_buf)) {
        const uint8_t * s = at(src_buf, src, 0, n);
        if (s == nullptr) {
            return false;
        }
        std::memmove(d, s, n);
        return true;
    }
    if (src_buf != nullptr && lm_ggml_backend_buffer_is_host(src_buf)) {
        std::memcpy(d, src->data, n);
        return true;
    }
    return false;
}

void buffer_clear(lm_ggml_backend_buffer_t buffer, uint8_t value) {
    std::memset(ctx_of(buffer)->mem.data(), value, ctx_of(buffer)->mem.size());
}

constexpr lm_ggml_backend_buffer_i kBufferIface = {
    .free_buffer = buffer_free,
    .get_base = buffer_get_base,
    .init_tensor = nullptr,
    .memset_tensor = buffer_memset_tensor,
    .set_tensor = buffer_set_tensor,
    .get_tensor = buffer_get_tensor,
    .cpy_tensor = buffer_cpy_tensor,
    .clear = buffer_clear,
    .reset = nullptr,
};

const char * buft_get_name(lm_ggml_backend_buffer_type_t) { return "REFDEV0"; }

lm_ggml_backend_buffer_t buft_alloc_buffer(lm_ggml_backend_buffer_type_t buft, size_t size) {
    if (size > kTotalMemory - g_used.load()) {
        log(LM_GGML_LOG_LEVEL_ERROR, "refdev alloc_buffer: %zu bytes: out of device memory (%zu free)\n", size,
            kTotalMemory - g_used.load());
        return nullptr;
    }
    auto * ctx = new (std::nothrow) buffer_ctx;
    if (ctx == nullptr) {
        log(LM_GGML_LOG_LEVEL_ERROR, "refdev alloc_buffer: %zu bytes: out of host memory\n", size);
        return nullptr;
    }
    try {
        ctx->mem.resize(size);
    } catch (const std::bad_alloc &) {
        delete ctx;
        log(LM_GGML_LOG_LEVEL_ERROR, "refdev alloc_buffer: %zu bytes: out of host memory\n", size);
        return nullptr;
    }
    ctx->base = next_fake_base();
    lm_ggml_backend_buffer_t buffer = lm_ggml_backend_buffer_init(buft, kBufferIface, ctx, size);
    if (buffer == nullptr) {
        delete ctx;
        return nullptr;
    }
    g_used += size;
    return buffer;
}

size_t buft_get_alignment(lm_ggml_backend_buffer_type_t) { return kAlignment; }

size_t buft_get_max_size(lm_ggml_backend_buffer_type_t) { return kMaxBuffer; }

// The device wants every tensor's allocation padded (as GPU backends pad
// rows); allocators must honour this rather than assume nbytes.
size_t buft_get_alloc_size(lm_ggml_backend_buffer_type_t, const lm_ggml_tensor * t) {
    return (lm_ggml_nbytes(t) + kAllocRound - 1) / kAllocRound * kAllocRound;
}

bool buft_is_host(lm_ggml_backend_buffer_type_t) { return false; }

} // namespace

lm_ggml_backend_buffer_type_t buffer_type() {
    static lm_ggml_backend_buffer_type buft = {
        .iface =
            {
                .get_name = buft_get_name,
                .alloc_buffer = buft_alloc_buffer,
                .get_alignment = buft_get_alignment,
                .get_max_size = buft_get_max_size,
                .get_alloc_size = buft_get_alloc_size,
                .is_host = buft_is_host,
            },
        .device = device(),
        .context = nullptr,
    };
    return &buft;
}

bool is_refdev_buffer(lm_ggml_backend_buffer_t buffer) {
    return buffer != nullptr && buffer->iface.free_buffer == buffer_free;
}

size_t extent_of(const lm_ggml_tensor * t) {
    if (lm_ggml_is_empty(t)) {
        return 0;
    }
    size_t last = lm_ggml_type_size(t->type);
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        last += (size_t) (t->ne[i] - 1) * t->nb[i];
    }
    return last;
}

uint8_t * storage_of(const lm_ggml_tensor * t, size_t extent) {
    lm_ggml_backend_buffer_t buf = t->view_src && t->view_src->buffer ? t->view_src->buffer : t->buffer;
    if (!is_refdev_buffer(buf) || t->data == nullptr) {
        return nullptr;
    }
    return at(buf, t, 0, extent);
}

size_t memory_used() { return g_used.load(); }

void log(lm_ggml_log_level level, const char * fmt, ...) {
    char buf[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, args);
    va_end(args);
    if (lm_ggml_log_internal != nullptr) {
        lm_ggml_log_internal(level, "%s", buf);
    } else {
        std::fputs(buf, stderr);
    }
}

} // namespace refdev

// Device buffers (cl_mem, addressed by offset from a fake base) and the host
// buffer type (a cl_mem in host-reachable memory, mapped once for its life,
// so transfers from it can take the driver's fast path).

#include "ocl.h"

#include <cstring>
#include <new>

namespace lmocl {

namespace {

std::atomic<uint64_t> g_next_base{0};

// Bases sit above the 47-bit user address space (bit 55 set), so a host
// dereference of a device address faults at once. 64 GiB apart.
uintptr_t next_fake_base() {
    const uint64_t k = g_next_base.fetch_add(1) % (uint64_t(1) << 18);
    return (uintptr_t(1) << 55) + uintptr_t(k << 36);
}

buffer_ctx * ctx_of(lm_ggml_backend_buffer_t buffer) { return static_cast<buffer_ctx *>(buffer->context); }

// Byte offset in the cl_mem of [t->data + offset, + size), or false.
bool range_of(lm_ggml_backend_buffer_t buffer, const lm_ggml_tensor * t, size_t offset, size_t size, size_t * pos) {
    const buffer_ctx * ctx = ctx_of(buffer);
    const uintptr_t addr = (uintptr_t) t->data;
    if (t->data == nullptr || addr < ctx->base) {
        return false;
    }
    const size_t p = addr - ctx->base;
    if (p > buffer->size || offset > buffer->size - p || size > buffer->size - p - offset) {
        return false;
    }
    *pos = p + offset;
    return true;
}

// ---------------------------------------------------------------- device buffer
void buffer_free(lm_ggml_backend_buffer_t buffer) {
    buffer_ctx * ctx = ctx_of(buffer);
    ctx->dev->used -= buffer->size;
    clReleaseMemObject(ctx->mem);
    delete ctx;
}

void * buffer_get_base(lm_ggml_backend_buffer_t buffer) { return (void *) ctx_of(buffer)->base; }

void buffer_memset_tensor(lm_ggml_backend_buffer_t buffer, lm_ggml_tensor * t, uint8_t value, size_t offset,
                          size_t size) {
    size_t pos = 0;
    if (!range_of(buffer, t, offset, size, &pos)) {
        log(LM_GGML_LOG_LEVEL_ERROR, "opencl memset_tensor: tensor '%s': range outside its buffer\n", t->name);
        return;
    }
    if (size == 0) {
        return;
    }
    buffer_ctx * ctx = ctx_of(buffer);
    if (cl_ok(clEnqueueFillBuffer(ctx->dev->queue, ctx->mem, &value, 1, pos, size, 0, nullptr, nullptr),
              "memset_tensor: clEnqueueFillBuffer")) {
        cl_ok(clFinish(ctx->dev->queue), "memset_tensor: clFinish");
    }
}

void buffer_set_tensor(lm_ggml_backend_buffer_t buffer, lm_ggml_tensor * t, const void * data, size_t offset,
                       size_t size) {
    size_t pos = 0;
    if (!range_of(buffer, t, offset, size, &pos)) {
        log(LM_GGML_LOG_LEVEL_ERROR, "opencl set_tensor: tensor '%s': range outside its buffer\n", t->name);
        return;
    }
    if (size == 0) {
        return;
    }
    buffer_ctx * ctx = ctx_of(buffer);
    cl_ok(clEnqueueWriteBuffer(ctx->dev->queue, ctx->mem, CL_TRUE, pos, size, data, 0, nullptr, nullptr),
          "set_tensor: clEnqueueWriteBuffer");
}

void buffer_get_tensor(lm_ggml_backend_buffer_t buffer, const lm_ggml_tensor * t, void * data, size_t offset,
                       size_t size) {
    size_t pos = 0;
    if (!range_of(buffer, t, offset, size, &pos)) {
        log(LM_GGML_LOG_LEVEL_ERROR, "opencl get_tensor: tensor '%s': range outside its buffer\n", t->name);
        return;
    }
    if (size == 0) {
        return;
    }
    buffer_ctx * ctx = ctx_of(buffer);
    cl_ok(clEnqueueReadBuffer(ctx->dev->queue, ctx->mem, CL_TRUE, pos, size, data, 0, nullptr, nullptr),
          "get_tensor: clEnqueueReadBuffer");
}

// dst is in this buffer; src may be in a device buffer of the same context
// or in host memory
bool buffer_cpy_tensor(lm_ggml_backend_buffer_t buffer, const lm_ggml_tensor * src, lm_ggml_tensor * dst) {
    const size_t n = lm_ggml_nbytes(src);
    size_t dpos = 0;
    if (!range_of(buffer, dst, 0, n, &dpos)) {
        return false;
    }
    buffer_ctx * ctx = ctx_of(buffer);
    lm_ggml_backend_buffer_t sbuf = buffer_of(src);
    if (sbuf != nullptr && is_device_buffer(sbuf)) {
        buffer_ctx * sctx = ctx_of(sbuf);
        size_t spos = 0;
        if (sctx->dev->context != ctx->dev->context || !range_of(sbuf, src, 0, n, &spos)) {
            return false;
        }
        if (n == 0) {
            return true;
        }
        if (sctx->mem == ctx->mem && spos < dpos + n && dpos < spos + n) {
            return false; // overlapping ranges of one cl_mem: not a copy OpenCL allows
        }
        return cl_ok(clEnqueueCopyBuffer(ctx->dev->queue, sctx->mem, ctx->mem, spos, dpos, n, 0, nullptr, nullptr),
                     "cpy_tensor: clEnqueueCopyBuffer") &&
               cl_ok(clFinish(ctx->dev->queue), "cpy_tensor: clFinish");
    }
    if (sbuf != nullptr && lm_ggml_backend_buffer_is_host(sbuf)) {
        return n == 0 ||
               cl_ok(clEnqueueWriteBuffer(ctx->dev->queue, ctx->mem, CL_TRUE, dpos, n, src->data, 0, nullptr, nullptr),
                     "cpy_tensor: clEnqueueWriteBuffer");
    }
    return false;
}

void buffer_clear(lm_ggml_backend_buffer_t buffer, uint8_t value) {
    buffer_ctx * ctx = ctx_of(buffer);
    if (buffer->size == 0) {
        return;
    }
    if (cl_ok(clEnqueueFillBuffer(ctx->dev->queue, ctx->mem, &value, 1, 0, buffer->size, 0, nullptr, nullptr),
              "clear: clEnqueueFillBuffer")) {
        cl_ok(clFinish(ctx->dev->queue), "clear: clFinish");
    }
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

device_ctx * dev_of(lm_ggml_backend_buffer_type_t buft) { return static_cast<device_ctx *>(buft->context); }

const char * buft_get_name(lm_ggml_backend_buffer_type_t buft) { return dev_of(buft)->name.c_str(); }

lm_ggml_backend_buffer_t buft_alloc_buffer(lm_ggml_backend_buffer_type_t buft, size_t size) {
    device_ctx * dev = dev_of(buft);
    if (size > dev->max_alloc) {
        log(LM_GGML_LOG_LEVEL_ERROR,
            "opencl %s alloc_buffer: %zu bytes: more than the device's largest allocation (%zu)\n", dev->name.c_str(),
            size, dev->max_alloc);
        return nullptr;
    }
    cl_int err = CL_SUCCESS;
    // OpenCL refuses empty buffers: a zero-sized lmggml buffer still owns one byte
    cl_mem mem = clCreateBuffer(dev->context, CL_MEM_READ_WRITE, size > 0 ? size : 1, nullptr, &err);
    if (!cl_ok(err, "alloc_buffer: clCreateBuffer")) {
        return nullptr;
    }
    auto * ctx = new (std::nothrow) buffer_ctx{dev, mem, next_fake_base()};
    if (ctx == nullptr) {
        clReleaseMemObject(mem);
        log(LM_GGML_LOG_LEVEL_ERROR, "opencl alloc_buffer: out of host memory\n");
        return nullptr;
    }
    lm_ggml_backend_buffer_t buffer = lm_ggml_backend_buffer_init(buft, kBufferIface, ctx, size);
    if (buffer == nullptr) {
        clReleaseMemObject(mem);
        delete ctx;
        return nullptr;
    }
    dev->used += size;
    return buffer;
}

size_t buft_get_alignment(lm_ggml_backend_buffer_type_t) { return kAlignment; }

size_t buft_get_max_size(lm_ggml_backend_buffer_type_t buft) { return dev_of(buft)->max_alloc; }

bool buft_is_host(lm_ggml_backend_buffer_type_t) { return false; }

// ---------------------------------------------------------------- host buffer
struct host_ctx {
    device_ctx * dev;
    cl_mem mem;
    void * ptr; // mapped for the buffer's whole life
};

host_ctx * hctx_of(lm_ggml_backend_buffer_t buffer) { return static_cast<host_ctx *>(buffer->context); }

void host_free(lm_ggml_backend_buffer_t buffer) {
    host_ctx * ctx = hctx_of(buffer);
    cl_event ev = nullptr;
    if (cl_ok(clEnqueueUnmapMemObject(ctx->dev->queue, ctx->mem, ctx->ptr, 0, nullptr, &ev), "host buffer: unmap")) {
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
    }
    clReleaseMemObject(ctx->mem);
    delete ctx;
}

void * host_get_base(lm_ggml_backend_buffer_t buffer) { return hctx_of(buffer)->ptr; }

void host_memset_tensor(lm_ggml_backend_buffer_t, lm_ggml_tensor * t, uint8_t value, size_t offset, size_t size) {
    std::memset((uint8_t *) t->data + offset, value, size);
}

void host_set_tensor(lm_ggml_backend_buffer_t, lm_ggml_tensor * t, const void * data, size_t offset, size_t size) {
    std::memmove((uint8_t *) t->data + offset, data, size);
}

void host_get_tensor(lm_ggml_backend_buffer_t, const lm_ggml_tensor * t, void * data, size_t offset, size_t size) {
    std::memmove(data, (const uint8_t *) t->data + offset, size);
}

bool host_cpy_tensor(lm_ggml_backend_buffer_t, const lm_ggml_tensor * src, lm_ggml_tensor * dst) {
    lm_ggml_backend_buffer_t sbuf = buffer_of(src);
    if (sbuf != nullptr && lm_ggml_backend_buffer_is_host(sbuf)) {
        std::memmove(dst->data, src->data, lm_ggml_nbytes(src)); // views of one buffer may overlap
        return true;
    }
    return false;
}

void host_clear(lm_ggml_backend_buffer_t buffer, uint8_t value) {
    std::memset(hctx_of(buffer)->ptr, value, buffer->size);
}

constexpr lm_ggml_backend_buffer_i kHostIface = {
    .free_buffer = host_free,
    .get_base = host_get_base,
    .init_tensor = nullptr,
    .memset_tensor = host_memset_tensor,
    .set_tensor = host_set_tensor,
    .get_tensor = host_get_tensor,
    .cpy_tensor = host_cpy_tensor,
    .clear = host_clear,
    .reset = nullptr,
};

const char * host_buft_get_name(lm_ggml_backend_buffer_type_t buft) { return dev_of(buft)->host_name.c_str(); }

lm_ggml_backend_buffer_t host_buft_alloc_buffer(lm_ggml_backend_buffer_type_t buft, size_t size) {
    device_ctx * dev = dev_of(buft);
    cl_int err = CL_SUCCESS;
    const size_t n = size > 0 ? size : 1;
    cl_mem mem = clCreateBuffer(dev->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n, nullptr, &err);
    if (!cl_ok(err, "host buffer: clCreateBuffer")) {
        return nullptr;
    }
    void * ptr =
        clEnqueueMapBuffer(dev->queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n, 0, nullptr, nullptr, &err);
    if (!cl_ok(err, "host buffer: clEnqueueMapBuffer")) {
        clReleaseMemObject(mem);
        return nullptr;
    }
    auto * ctx = new (std::nothrow) host_ctx{dev, mem, ptr};
    lm_ggml_backend_buffer_t buffer = ctx ? lm_ggml_backend_buffer_init(buft, kHostIface, ctx, size) : nullptr;
    if (buffer == nullptr) {
        clEnqueueUnmapMemObject(dev->queue, mem, ptr, 0, nullptr, nullptr);
        clFinish(dev->queue);
        clReleaseMemObject(mem);
        delete ctx;
        log(LM_GGML_LOG_LEVEL_ERROR, "opencl host buffer: out of host memory\n");
        return nullptr;
    }
    return buffer;
}

size_t host_buft_get_alignment(lm_ggml_backend_buffer_type_t) { return 64; }

bool host_buft_is_host(lm_ggml_backend_buffer_type_t) { return true; }

} // namespace

void init_buffer_types(device_ctx * dev) {
    dev->buft = {
        .iface =
            {
                .get_name = buft_get_name,
                .alloc_buffer = buft_alloc_buffer,
                .get_alignment = buft_get_alignment,
                .get_max_size = buft_get_max_size,
                .get_alloc_size = nullptr,
                .is_host = buft_is_host,
            },
        .device = &dev->dev,
        .context = dev,
    };
    dev->host_buft = {
        .iface =
            {
                .get_name = host_buft_get_name,
                .alloc_buffer = host_buft_alloc_buffer,
                .get_alignment = host_buft_get_alignment,
                .get_max_size = nullptr,
                .get_alloc_size = nullptr,
                .is_host = host_buft_is_host,
            },
        .device = &dev->dev,
        .context = dev,
    };
}

bool is_device_buffer(lm_ggml_backend_buffer_t buffer) {
    return buffer != nullptr && buffer->iface.free_buffer == buffer_free;
}

lm_ggml_backend_buffer_t buffer_of(const lm_ggml_tensor * t) {
    return t->view_src && t->view_src->buffer ? t->view_src->buffer : t->buffer;
}

bool mem_of(const lm_ggml_tensor * t, cl_mem * mem, size_t * offset) {
    lm_ggml_backend_buffer_t buf = buffer_of(t);
    if (!is_device_buffer(buf) || t->data == nullptr) {
        return false;
    }
    const buffer_ctx * ctx = ctx_of(buf);
    const uintptr_t addr = (uintptr_t) t->data;
    if (addr < ctx->base || addr - ctx->base > buf->size) {
        return false;
    }
    *mem = ctx->mem;
    *offset = addr - ctx->base;
    return true;
}

} // namespace lmocl

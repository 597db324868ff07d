#pragma once
// opencl: an lmggml backend over OpenCL 1.2. One lmggml device per OpenCL
// device. Device buffers are cl_mem objects; tensor->data holds a fake
// address (a per-buffer base that is never dereferenced on the host) and
// every kernel receives (cl_mem, byte offset = data - base), so no
// sub-buffers are needed. Each stream owns an in-order command queue;
// transfers on it are asynchronous and events are cl_event markers.

#include "ggml-backend-impl.h"

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace lmocl {

constexpr size_t kAlignment = 128; // tensor alignment in device buffers

struct device_ctx {
    int index = 0;
    cl_platform_id platform = nullptr;
    cl_device_id id = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr; // blocking buffer transfers (buffer iface)
    std::string name;                 // "OpenCL0", ...
    std::string host_name;            // "OpenCL0_Host": its host buffer type
    std::string description;          // "<platform>: <device>"
    size_t mem_total = 0;
    size_t max_alloc = 0;
    size_t max_wg = 0; // CL_DEVICE_MAX_WORK_GROUP_SIZE
    size_t local_mem = 0;
    cl_device_type cl_type = 0;
    std::atomic<size_t> used{0};

    std::mutex program_mutex; // the program is built once, lazily
    cl_program program = nullptr;
    bool program_failed = false;

    lm_ggml_backend_buffer_type buft{};
    lm_ggml_backend_buffer_type host_buft{};
    lm_ggml_backend_device dev{};
};

struct buffer_ctx {
    device_ctx * dev;
    cl_mem mem;
    uintptr_t base; // fake device address of byte 0
};

// A stream: its own queue and its own kernel objects (clSetKernelArg is not
// thread-safe on a shared kernel, so kernels are never shared by streams).
struct stream_ctx {
    device_ctx * dev;
    cl_command_queue queue;
    std::unordered_map<std::string, cl_kernel> kernels;
    std::string name;
    // LMGGML_OPENCL_PROFILE=1: each launch is timed (and waited for); the
    // totals per kernel are logged when the stream is freed
    bool profile = false;
    // matrix-vector products by work-groups (GPUs) or by rows per work-item
    // (CPU devices such as PoCL, where it is several times faster);
    // LMGGML_OPENCL_MATVEC=wg|rows overrides
    bool matvec_wg = true;
    std::unordered_map<std::string, std::pair<double, uint64_t>> prof; // kernel: (ms, launches)
};

struct event_ctx {
    cl_event event = nullptr; // latest recorded marker (NULL: never recorded)
    cl_context context = nullptr;
};

// ---------------------------------------------------------------- runtime
// Every OpenCL device found (enumerated once; empty without a platform).
std::vector<device_ctx *> & devices();
// Whether some OpenCL device qualifies, without enumerating into devices().
bool any_usable_device();
lm_ggml_backend_reg_t reg();

const char * cl_error_name(cl_int err);
// Logs one line "opencl <what>: <error>" when err != CL_SUCCESS.
bool cl_ok(cl_int err, const char * what);
void log(lm_ggml_log_level level, const char * fmt, ...) __attribute__((format(printf, 2, 3)));

// The device's program (built on first use); NULL after a build failure.
cl_program program_of(device_ctx * dev);
// The stream's kernel `name`, created on first use; NULL on failure.
cl_kernel kernel_of(stream_ctx * s, const char * name);

// ---------------------------------------------------------------- buffers
void init_buffer_types(device_ctx * dev);
bool is_device_buffer(lm_ggml_backend_buffer_t buffer);
lm_ggml_backend_buffer_t buffer_of(const lm_ggml_tensor * t);
// cl_mem and byte offset of t's data; false when t is not in a device buffer.
bool mem_of(const lm_ggml_tensor * t, cl_mem * mem, size_t * offset);

// ---------------------------------------------------------------- compute
// op_params word i (the internal accessors are not part of the public API)
inline int32_t op_i32(const lm_ggml_tensor * t, int i) { return ((const int32_t *) t->op_params)[i]; }

bool supports_op(const device_ctx * dev, const lm_ggml_tensor * op);
lm_ggml_status compute_graph(stream_ctx * s, lm_ggml_cgraph * graph);

} // namespace lmocl

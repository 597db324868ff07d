#pragma once
// refdev: a reference "device" plugin. Its buffers are not host memory: each
// owns a std::vector, and tensor->data holds a fake device address (a
// per-buffer base that must never be dereferenced on the host). Everything
// that touches data translates (data - base) into an offset in that vector.
// It computes a handful of ops with plain loops, synchronously.

#include "ggml-backend-impl.h"

#include <cstdint>
#include <vector>

namespace refdev {

constexpr size_t kAlignment = 32;
constexpr size_t kAllocRound = 128;              // get_alloc_size pads to this
constexpr size_t kMaxBuffer = size_t(1) << 30;   // 1 GiB per buffer
constexpr size_t kTotalMemory = size_t(4) << 30; // simulated device memory

struct buffer_ctx {
    std::vector<uint8_t> mem; // (size) bytes of device memory
    uintptr_t base;           // fake device address of mem[0]
};

// the plugin's single device, buffer type and reg
lm_ggml_backend_dev_t device();
lm_ggml_backend_buffer_type_t buffer_type();
lm_ggml_backend_reg_t reg();

bool is_refdev_buffer(lm_ggml_backend_buffer_t buffer);

// Host pointer to the device bytes of `t` covering `extent` bytes from its
// data address, or NULL when t is not in a refdev buffer or out of range.
uint8_t * storage_of(const lm_ggml_tensor * t, size_t extent);

// Bytes spanned by t's elements given its strides (0 for empty tensors).
size_t extent_of(const lm_ggml_tensor * t);

bool supports_op(const lm_ggml_tensor * op);
lm_ggml_status compute_graph(lm_ggml_cgraph * graph);

// nodes computed by any refdev stream since load (exposed to tests through
// get_proc_address("lm_ggml_backend_refdev_n_nodes_computed"))
uint64_t n_nodes_computed();

// bytes currently allocated in refdev buffers
size_t memory_used();

void log(lm_ggml_log_level level, const char * fmt, ...) __attribute__((format(printf, 2, 3)));

} // namespace refdev

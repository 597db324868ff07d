#pragma once
// A minimal backend written in the test against the seed's structs, with
// every optional slot left NULL (unless a test asks otherwise), to prove
// the public wrappers supply the documented defaults. Its buffers are host
// memory but do not say so (is_host is NULL -> false), so copies to and from
// it take the generic paths. It computes ADD and MUL on contiguous F32
// tensors of equal shape.

#include "ggml-backend-impl.h"

#include <cstddef>

namespace minibk {

struct Config {
    const char * dev_name = "MINI0";
    const char * reg_name = "MINI";
    size_t max_size = 0;  // 0: get_max_size slot NULL
    size_t alloc_pad = 0; // 0: get_alloc_size slot NULL; else pad nbytes up to a multiple
};

struct Mini {
    lm_ggml_backend_reg_t reg;
    lm_ggml_backend_dev_t dev;
    lm_ggml_backend_buffer_type_t buft;
    int * n_graph_compute; // calls of its graph_compute
};

// A new, independent reg/device/buffer type (never freed; not registered).
Mini make(const Config & cfg = {});

constexpr size_t kAlignment = 16;

} // namespace minibk

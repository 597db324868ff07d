#pragma once
// Small models for the ggml-opt tests: parameters and inputs in one
// statically allocated context (CPU memory), the graph in a no_alloc
// ctx_compute, and the backends (CPU alone, or REFDEV + CPU) in a scheduler.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-opt.h"
#include "ggml.h"

namespace opttest {

// CPU backend (+ REFDEV in front when with_ref) in one scheduler
struct Backends {
    lm_ggml_backend_t cpu = nullptr;
    lm_ggml_backend_t ref = nullptr;
    lm_ggml_backend_sched_t sched = nullptr;

    explicit Backends(bool with_ref);
    ~Backends();
    Backends(const Backends &) = delete;
    Backends & operator=(const Backends &) = delete;
};

// nodes REFDEV has computed since it was loaded (0 when not loaded)
uint64_t refdev_nodes_computed();

struct Net {
    lm_ggml_context * ctx_static = nullptr;
    lm_ggml_context * ctx_compute = nullptr;
    lm_ggml_backend_buffer_t buf = nullptr;
    lm_ggml_tensor * inputs = nullptr;
    lm_ggml_tensor * outputs = nullptr;
    std::vector<lm_ggml_tensor *> params;

    Net();
    ~Net();
    Net(const Net &) = delete;
    Net & operator=(const Net &) = delete;

    lm_ggml_tensor * param(int64_t ne0, int64_t ne1, const char * name);
    // allocates ctx_static in CPU memory (usage WEIGHTS: a device may offload
    // the matrix products) and draws the parameters from N(0, scale^2 / ne0)
    // (or in buft when given)
    void allocate(uint32_t seed, float scale = 1.0f, lm_ggml_backend_buffer_type_t buft = nullptr);
};

// y = W x + b with W [nin, 1]: a linear regression
void build_linear(Net & n, int nin, int batch);
// out = W2 relu(W1 x + b1) + b2: a 2-layer classifier
void build_mlp(Net & n, int nin, int nhid, int nclass, int batch);

// nclass Gaussian blobs in nin dimensions (one-hot labels), ndata points
lm_ggml_opt_dataset_t blobs(int nin, int nclass, int64_t ndata, uint32_t seed);

std::vector<float> get(const lm_ggml_tensor * t);
void set(lm_ggml_tensor * t, const std::vector<float> & v);

} // namespace opttest

#pragma once
// The objects behind ggml-opt.h's handles (src/opt/*.cpp).

#include "core/ggml-impl.h"
#include "ggml-opt.h"

#include <cstdint>
#include <random>
#include <vector>

struct lm_ggml_opt_dataset {
    lm_ggml_context * ctx = nullptr; // data and labels (host memory)
    lm_ggml_backend_buffer_t buf = nullptr;
    lm_ggml_tensor * data = nullptr;   // [ne_datapoint, ndata]
    lm_ggml_tensor * labels = nullptr; // [ne_label, ndata] or NULL

    int64_t ndata = 0;
    int64_t ndata_shard = 0;
    size_t nbs_data = 0;   // bytes of one shard of data
    size_t nbs_labels = 0; // ... of labels

    std::vector<int64_t> permutation; // shard order used by get_batch
};

struct lm_ggml_opt_context {
    lm_ggml_backend_sched_t backend_sched = nullptr;
    lm_ggml_context * ctx_compute = nullptr;    // the caller's
    lm_ggml_context * ctx_static = nullptr;     // labels, loss, pred, ncorrect, gradient accumulators, moments
    lm_ggml_context * ctx_host = nullptr;       // adamw_params
    std::vector<lm_ggml_backend_buffer_t> bufs; // memory of ctx_static's and ctx_host's tensors

    // the graph the scheduler holds an allocation for, and its private copy
    lm_ggml_cgraph * allocated_graph = nullptr;
    lm_ggml_cgraph * allocated_graph_copy = nullptr;
    lm_ggml_context * ctx_copy = nullptr;

    std::mt19937 rng; // dataset shuffles (default seed, as ggml)

    lm_ggml_tensor * inputs = nullptr;
    lm_ggml_tensor * outputs = nullptr;
    lm_ggml_tensor * labels = nullptr;
    lm_ggml_tensor * loss = nullptr;
    lm_ggml_tensor * pred = nullptr;
    lm_ggml_tensor * ncorrect = nullptr;

    lm_ggml_cgraph * gf = nullptr;      // forward
    lm_ggml_cgraph * gb_grad = nullptr; // forward + gradients
    lm_ggml_cgraph * gb_opt = nullptr;  // forward + gradients + AdamW steps

    int64_t iter = 1; // AdamW step number (bias corrections)
    int32_t opt_period = 1;
    int32_t opt_i = 0; // accumulation steps since the last optimizer step
    bool loss_per_datapoint = false;

    lm_ggml_opt_get_optimizer_params get_opt_pars = nullptr;
    void * get_opt_pars_ud = nullptr;
    lm_ggml_tensor * adamw_params = nullptr;
};

struct lm_ggml_opt_result {
    int64_t ndata = 0;
    std::vector<float> loss; // one value per physical batch
    std::vector<int32_t> pred;
    int64_t ncorrect = 0; // -1: no labels

    int64_t opt_period = -1;
    bool loss_per_datapoint = false;
};

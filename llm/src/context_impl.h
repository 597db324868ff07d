#pragma once

#include <memory>
#include <vector>

#include "ggml-backend.h"
#include "graph.h"
#include "kv_cache.h"
#include "lmllm/context.h"
#include "model_impl.h"

namespace lmllm {

struct BuiltGraph {
    lm_ggml_cgraph * gf = nullptr;
    lm_ggml_tensor * logits = nullptr; // (n_vocab, n_outputs)
    GraphInputs in;
    BatchLayout layout;                 // what it was built for
    std::vector<KvStoreView> kv_stores; // moved when it runs again at another kv_head
};

struct Context::Impl {
    explicit Impl(const Model & model_) : model(model_), m(model_.impl()) {}
    ~Impl();
    Impl(const Impl &) = delete;
    Impl & operator=(const Impl &) = delete;

    const Model & model; // must outlive the context
    const Model::Impl & m;
    ContextParams params;
    uint32_t n_batch = 0;

    std::unique_ptr<KvCache> kv;
    lm_ggml_backend_t backend_cpu = nullptr;
    std::vector<lm_ggml_backend_t> backend_devs; // one per device of the model's devs (same order)
    lm_ggml_backend_sched_t sched = nullptr;

    int32_t max_nodes = 0;
    std::vector<uint8_t> graph_buf; // holds the per-batch graph context (tensor metadata only)
    lm_ggml_context * graph_ctx = nullptr;
    // The last graph, built and allocated; runs again when the next batch has
    // the same shape (generation: 32 tokens in a row share n_kv). gf null: none.
    BuiltGraph last;
    std::vector<float> mask_buf;

    std::vector<float> logits; // (n_vocab, logit_rows)
    int32_t logit_rows = 0;    // rows held
    int32_t logit_first = 0;   // token index (in the last decode call) of row 0
    uint32_t used_before = 0;  // cache fill at the start of the current decode

    Status init(const ContextParams & p);
    Status decode(const std::vector<Token> & tokens);
    BuiltGraph build(const BatchLayout & layout);
    lm_ggml_backend_t backend_of(lm_ggml_backend_dev_t dev) const; // null for the CPU
    bool can_reuse(const BatchLayout & layout) const;
    void set_inputs(const BuiltGraph & g, const BatchLayout & layout, const Token * tokens);
    Status run_batch(const Token * tokens, int32_t n_tokens, int32_t n_outputs, float * logits_out);
};

} // namespace lmllm

#pragma once
// Inference state for one sequence: KV cache, batched decode, logits.

#include <cstdint>
#include <memory>
#include <vector>

#include "lmllm/model.h"
#include "lmllm/status.h"

namespace lmllm {

struct ContextParams {
    uint32_t n_ctx = 2048;  // 0: the model's training context
    uint32_t n_batch = 512; // max tokens per decode call (longer inputs are split)
    int32_t n_threads = 2;
    enum lm_ggml_type type_k = LM_GGML_TYPE_F16;
    enum lm_ggml_type type_v = LM_GGML_TYPE_F16;
    bool all_logits = false; // keep logits of every token (perplexity)
    // Attention as one fused op (FLASH_ATTN_EXT) with V cached by cell like
    // K; off: K.Q, softmax and V.P as separate ops over a V cache stored
    // transposed. Models with attention logit softcapping always take the
    // separate ops (their softcap is applied after the scale).
    bool flash_attn = true;
};

class Context {
public:
    static Result<std::unique_ptr<Context>> create(const Model & model, const ContextParams & params);
    ~Context();

    // Appends tokens at positions n_past().. and computes them. Fails (without
    // changing the cache) when they do not fit in n_ctx.
    Status decode(const std::vector<Token> & tokens);

    // (n_vocab) logits of the last decoded token; with all_logits, logits(i)
    // gives token i of the last decode call.
    const float * logits() const;
    const float * logits(int32_t i) const;
    int32_t n_vocab() const;

    uint32_t n_past() const;
    uint32_t n_ctx() const;
    void clear(); // empty the KV cache
    void set_n_threads(int32_t n);

    struct Impl;

private:
    explicit Context(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace lmllm

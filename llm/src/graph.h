#pragma once
// Building blocks the architectures compose into a forward graph for one
// batch: inputs, RMS norm, RoPE, attention over the KV cache, gated FFN.
// The op sequence follows llama.cpp's so results match it numerically.

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "ggml.h"
#include "kv_cache.h"
#include "model_impl.h"

namespace lmllm {

// Shape of one batch against the cache.
struct BatchLayout {
    int32_t n_tokens = 0;  // tokens in this batch
    int32_t n_outputs = 0; // rows of logits wanted (the last n_outputs tokens)
    int32_t n_kv = 0;      // cache cells attention reads
    int32_t kv_head = 0;   // first cell written (= position of the first token)
};

// Graph inputs the context fills after allocation; null when unused.
struct GraphInputs {
    lm_ggml_tensor * tokens = nullptr;   // (n_tokens) I32
    lm_ggml_tensor * pos = nullptr;      // (n_tokens) I32
    lm_ggml_tensor * mask = nullptr;     // (n_kv, PAD(n_tokens)) F32 causal
    lm_ggml_tensor * mask_swa = nullptr; // (n_kv, PAD(n_tokens)) F32 causal + sliding window
    lm_ggml_tensor * out_ids = nullptr;  // (n_outputs) I32 rows kept after the last layer
};

// A tensor whose data sits at (cache cell kv_head) * bytes_per_cell past a
// fixed base: the KV stores. Shifting these is all it takes to run a built
// graph for another kv_head.
struct KvStoreView {
    lm_ggml_tensor * t = nullptr;
    size_t bytes_per_cell = 0;
};

enum class FfnAct { SILU, GELU };

class GraphBuilder {
public:
    GraphBuilder(const Model::Impl & model, const KvCache & kv, lm_ggml_context * ctx, lm_ggml_cgraph * gf,
                 const BatchLayout & batch);

    const HParams & hp;
    const Weights & w;
    lm_ggml_context * ctx;
    lm_ggml_cgraph * gf;
    BatchLayout batch;
    GraphInputs in;
    std::vector<KvStoreView> kv_stores; // every tensor that depends on batch.kv_head
    // Called on each layer's norm output with the layer index, so the context
    // can pin it to the layer's device (the scheduler would otherwise leave it
    // on the previous layer's device and copy more).
    std::function<void(lm_ggml_tensor *, uint32_t)> on_layer_norm;
    // Attention as FLASH_ATTN_EXT over a V cache stored by cell (ContextParams).
    bool flash_attn = false;

    lm_ggml_tensor * embed();     // (n_embd, n_tokens)
    lm_ggml_tensor * positions(); // (n_tokens)
    lm_ggml_tensor * kq_mask(bool swa);

    // rms_norm(x) * weight; weight broadcasts over rows. il < 0: not a layer norm.
    lm_ggml_tensor * norm(lm_ggml_tensor * x, lm_ggml_tensor * weight, int il);
    // x: (head_dim, n_heads, n_tokens)
    lm_ggml_tensor * rope(lm_ggml_tensor * x, float freq_base, float freq_scale, lm_ggml_tensor * freq_factors);
    // Stores k, v at the batch's cells and attends q to the cache; returns the
    // output projection (n_embd, n_tokens).
    // q: (head_dim, n_head, n_tokens), k: (head_dim, n_head_kv, n_tokens),
    // v: (n_embd_v_gqa, n_tokens)
    lm_ggml_tensor * attention(uint32_t il, lm_ggml_tensor * q, lm_ggml_tensor * k, lm_ggml_tensor * v,
                               lm_ggml_tensor * mask, float kq_scale, lm_ggml_tensor * wo, lm_ggml_tensor * bo);
    // down(act(gate(x)) * up(x))
    lm_ggml_tensor * ffn(lm_ggml_tensor * x, lm_ggml_tensor * up, lm_ggml_tensor * gate, lm_ggml_tensor * down,
                         FfnAct act);
    // Keeps only the output rows (after the last layer's attention); a no-op
    // when every token is an output.
    lm_ggml_tensor * select_outputs(lm_ggml_tensor * x);
    // Linear projection with an optional bias: (n_in, T) -> (n_out, T)
    lm_ggml_tensor * linear(lm_ggml_tensor * x, lm_ggml_tensor * weight, lm_ggml_tensor * bias);
    // The q, k, v projections of x (optional biases): the three products go
    // into the graph next to each other, before anything that uses them, so
    // the CPU runs them back to back without a barrier between them.
    // Returns {q, k, v}, each (n_out, T).
    std::array<lm_ggml_tensor *, 3> qkv(lm_ggml_tensor * x, const LayerWeights & l, bool biases);

private:
    const KvCache & kv_;
};

} // namespace lmllm

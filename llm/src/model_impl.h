#pragma once
// Model internals shared by the loader, the architectures and the context:
// the weight tensors, where they live, and what owns their memory.

#include <memory>
#include <string>
#include <vector>

#include "ggml-backend.h"
#include "ggml.h"
#include "lmllm/model.h"
#include "mmap.h"

namespace lmllm {

struct ArchOps;

// One transformer block. Tensors an architecture does not use stay null.
// Shapes in ggml order (ne0, ne1): a weight (n_in, n_out) maps n_in -> n_out.
struct LayerWeights {
    lm_ggml_tensor * attn_norm = nullptr;      // (n_embd)
    lm_ggml_tensor * wq = nullptr;             // (n_embd, n_head*n_embd_head_k)
    lm_ggml_tensor * wk = nullptr;             // (n_embd, n_head_kv*n_embd_head_k)
    lm_ggml_tensor * wv = nullptr;             // (n_embd, n_head_kv*n_embd_head_v)
    lm_ggml_tensor * wo = nullptr;             // (n_head*n_embd_head_v, n_embd)
    lm_ggml_tensor * bq = nullptr;             // (n_head*n_embd_head_k)     qwen2
    lm_ggml_tensor * bk = nullptr;             // (n_head_kv*n_embd_head_k)  qwen2
    lm_ggml_tensor * bv = nullptr;             // (n_head_kv*n_embd_head_v)  qwen2
    lm_ggml_tensor * bo = nullptr;             // (n_embd)
    lm_ggml_tensor * attn_q_norm = nullptr;    // (n_embd_head_k)            gemma3
    lm_ggml_tensor * attn_k_norm = nullptr;    // (n_embd_head_k)            gemma3
    lm_ggml_tensor * attn_post_norm = nullptr; // (n_embd)                   gemma3
    lm_ggml_tensor * ffn_norm = nullptr;       // (n_embd)
    lm_ggml_tensor * ffn_gate = nullptr;       // (n_embd, n_ff)
    lm_ggml_tensor * ffn_up = nullptr;         // (n_embd, n_ff)
    lm_ggml_tensor * ffn_down = nullptr;       // (n_ff, n_embd)
    lm_ggml_tensor * ffn_post_norm = nullptr;  // (n_embd)                   gemma3
    lm_ggml_tensor * rope_freqs = nullptr;     // (n_rot/2) llama3 rope factors, shared by all layers
};

struct Weights {
    lm_ggml_tensor * tok_embd = nullptr;    // (n_embd, n_vocab), always on the CPU
    lm_ggml_tensor * output_norm = nullptr; // (n_embd)
    lm_ggml_tensor * output = nullptr;      // (n_embd, n_vocab); tok_embd (or a copy) when tied
    std::vector<LayerWeights> layers;
};

struct Model::Impl {
    HParams hp;
    const ArchOps * arch = nullptr;
    std::unique_ptr<Vocab> vocab;
    std::string chat_template;
    std::string file_type; // e.g. "Q4_1"
    Weights w;

    lm_ggml_backend_dev_t cpu_dev = nullptr;
    // The device of each layer and of the output layer (cpu_dev: the CPU).
    std::vector<lm_ggml_backend_dev_t> layer_dev;
    lm_ggml_backend_dev_t output_dev = nullptr;
    // The other devices holding weights, in the order they were listed, and
    // the tensor metadata (no_alloc) of each; ctx_cpu holds the CPU's.
    std::vector<lm_ggml_backend_dev_t> devs;
    std::vector<lm_ggml_context *> ctx_devs;
    lm_ggml_context * ctx_cpu = nullptr;
    std::vector<lm_ggml_backend_buffer_t> buffers;
    std::unique_ptr<MappedFile> mapping;

    uint64_t n_params = 0;
    uint64_t n_bytes = 0;
    int32_t n_weight_tensors = 0;

    lm_ggml_backend_dev_t layer_device(uint32_t il) const { return il < layer_dev.size() ? layer_dev[il] : cpu_dev; }
    bool on_cpu(lm_ggml_backend_dev_t d) const { return d == nullptr || d == cpu_dev; }
    // The weight context of d (ctx_cpu for the CPU), null when d holds none.
    lm_ggml_context * ctx_of(lm_ggml_backend_dev_t d) const {
        if (on_cpu(d)) {
            return ctx_cpu;
        }
        for (size_t i = 0; i < devs.size(); i++) {
            if (devs[i] == d) {
                return i < ctx_devs.size() ? ctx_devs[i] : nullptr;
            }
        }
        return nullptr;
    }

    Impl() = default;
    Impl(const Impl &) = delete;
    Impl & operator=(const Impl &) = delete;
    ~Impl();
};

} // namespace lmllm

#pragma once
// Tiny generated models: random weights written to GGUF with lmggml's own
// writer, and a naive double-precision forward pass over the same weights
// (as they read back after quantization) to check the runner against.
// Shared by every suite: the runner tests (llm_model, reliability) and the
// program's tests (cli), which run on these instead of a downloaded model.
// tiny_model.cpp writes the file, tiny_reference.cpp is the forward pass.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ggml.h"

namespace tiny {

struct Spec {
    std::string arch = "llama"; // llama | qwen2 | gemma3
    int n_embd = 64;
    int n_layer = 2;
    int n_head = 4;
    int n_head_kv = 2;
    int head_dim = 16; // key_length = value_length
    int n_ff = 96;
    int n_vocab = 300;
    int n_ctx_train = 256;
    int n_rot = 16;
    float rope_base = 10000.0f;
    float rope_scale_factor = 0.0f; // rope.scaling.factor; 0: none
    float eps = 1e-5f;
    bool tied = true; // no output.weight: the embeddings serve
    // gemma3
    int n_swa = 0;
    int swa_pattern = 6;
    float rope_base_swa = 10000.0f;
    float final_softcap = 0.0f;

    lm_ggml_type wtype = LM_GGML_TYPE_F32; // 2-D weights
    uint32_t alignment = 0;                // general.alignment; 0: not written (32)

    // Control tokens (e.g. "<|im_start|>") that take the last ids of the
    // vocabulary, and tokenizer.chat_template (written only when not empty).
    std::vector<std::string> special_tokens;
    std::string chat_template;

    // For error tests: tensors left out, shapes altered, keys left out, arch override.
    std::set<std::string> drop_tensors;
    std::set<std::string> drop_keys;
    std::map<std::string, std::vector<int64_t>> reshape;
    std::string arch_override;
};

Spec llama_spec();
Spec qwen2_spec();
Spec gemma3_spec();

// Weights by GGUF name, as float (the values a quantized file decodes to),
// with their ggml shape (ne0 = input dim for matrices).
struct Weights {
    std::map<std::string, std::vector<float>> data;
    std::map<std::string, std::vector<int64_t>> shape;
    const std::vector<float> & operator[](const std::string & name) const { return data.at(name); }
    bool has(const std::string & name) const { return data.count(name) != 0; }
};

Weights make_weights(const Spec & spec, uint64_t seed);

// Writes the GGUF file (metadata, a minimal SentencePiece-style vocabulary,
// tensors in spec.wtype). Returns false on a write error.
bool write_gguf(const Spec & spec, const Weights & w, const std::string & path);

// Logits of every position: (T, n_vocab), double precision.
std::vector<std::vector<double>> reference_forward(const Spec & spec, const Weights & w,
                                                   const std::vector<int32_t> & tokens);

double nmse(const float * got, const std::vector<double> & want);

} // namespace tiny

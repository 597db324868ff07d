#pragma once
// One entry per supported architecture (arch_<name>.cpp): its extra
// hyper-parameters, its tensors, and its forward graph.

#include <string>

#include "graph.h"
#include "loader.h"
#include "model_impl.h"

namespace lmllm {

struct ArchOps {
    Arch arch;
    const char * name; // general.architecture
    int rope_type;     // 0 (normal) or LM_GGML_ROPE_TYPE_NEOX
    // Reads what the common loader does not (model_hparams.cpp reads the rest).
    Status (*load_hparams)(const GgufFile & file, HParams & hp);
    // Creates every weight through the loader; check loader.status() after.
    void (*create_tensors)(TensorLoader & loader, const HParams & hp, Weights & w);
    // Returns the logits (n_vocab, n_outputs).
    lm_ggml_tensor * (*build_graph)(GraphBuilder & b);
};

const ArchOps & arch_llama();
const ArchOps & arch_qwen2();
const ArchOps & arch_gemma3();

// The architecture named by general.architecture, or null.
const ArchOps * find_arch(const std::string & name);

// The llama block (shared with qwen2, which adds q/k/v biases and NeoX rope).
void create_llama_tensors(TensorLoader & loader, const HParams & hp, Weights & w, bool qkv_bias);
lm_ggml_tensor * build_llama_graph(GraphBuilder & b);

} // namespace lmllm

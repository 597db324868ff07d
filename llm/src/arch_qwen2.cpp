// qwen2: the llama block with biases on the q/k/v projections and RoPE in
// NeoX mode (rotating the two halves of each head). Small Qwen2 models tie
// the output projection to the token embeddings.

#include "arch.h"

namespace lmllm {

namespace {

Status qwen2_hparams(const GgufFile &, HParams &) { return {}; }

void qwen2_tensors(TensorLoader & ld, const HParams & hp, Weights & w) {
    create_llama_tensors(ld, hp, w, /*qkv_bias =*/true);
}

} // namespace

const ArchOps & arch_qwen2() {
    static const ArchOps ops = {Arch::QWEN2,   "qwen2",       LM_GGML_ROPE_TYPE_NEOX,
                                qwen2_hparams, qwen2_tensors, build_llama_graph};
    return ops;
}

} // namespace lmllm

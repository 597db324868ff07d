#pragma once
// A loaded model: hyper-parameters, vocabulary and weights placed on devices.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ggml-backend.h"
#include "ggml.h"
#include "lmllm/status.h"
#include "lmllm/vocab.h"

namespace lmllm {

enum class Arch { LLAMA, QWEN2, GEMMA3 };

struct HParams {
    Arch arch = Arch::LLAMA;
    std::string arch_name; // general.architecture
    uint32_t n_vocab = 0;
    uint32_t n_ctx_train = 0;
    uint32_t n_embd = 0;
    uint32_t n_layer = 0;
    uint32_t n_head = 0;
    uint32_t n_head_kv = 0;
    uint32_t n_embd_head_k = 0; // per-head key size
    uint32_t n_embd_head_v = 0;
    uint32_t n_ff = 0;
    uint32_t n_rot = 0; // rope dimensions
    int rope_type = 0;  // 0 normal, LM_GGML_ROPE_TYPE_NEOX
    float rope_freq_base = 10000.0f;
    float rope_freq_scale = 1.0f;
    float norm_rms_eps = 1e-5f;
    // gemma3
    uint32_t n_swa = 0;       // sliding window size (0: none)
    uint32_t swa_pattern = 1; // every swa_pattern-th layer is global
    float rope_freq_base_swa = 10000.0f;
    float f_attn_logit_softcapping = 0.0f;
    float f_final_logit_softcapping = 0.0f;
};

struct ModelParams {
    bool use_mmap = true;
    // Copy the CPU's matrix weights into memory laid out for its kernels:
    // the repacked layout (CPU_REPACK buffer type) for the types the CPU
    // repacks, CPU buffers (huge pages) for the rest. They are then held in
    // memory instead of mapped from the file; false keeps them mapped.
    bool repack = true;
    // Devices to place layers on, by name (empty: CPU only), as llama.cpp's
    // --device list: the last n_gpu_layers layers (-1: all) are split over
    // them in contiguous ranges, in the order listed, by tensor_split
    // (lmllm/split.h; one proportion per device; empty: by each device's
    // free memory, as llama.cpp). The CPU may be listed: it then takes its
    // share like any device. The output layer goes with the last layer.
    std::vector<std::string> devices;
    int32_t n_gpu_layers = 0;
    std::vector<float> tensor_split;
    // progress in [0,1]; return false to cancel loading
    std::function<bool(float)> progress;
};

class Model {
public:
    static Result<std::unique_ptr<Model>> load(const std::string & path, const ModelParams & params);
    ~Model();

    const HParams & hparams() const;
    const Vocab & vocab() const;
    const std::string & chat_template() const; // tokenizer.chat_template, may be empty
    std::string description() const;           // e.g. "llama 135M Q4_1"
    uint64_t n_params() const;
    uint64_t size_bytes() const; // bytes of all weights
    // Which layers went where, e.g. "layers 0-14: CPU, 15-29: RPC0; output: RPC0"
    std::string placement() const;

    struct Impl;
    Impl & impl() { return *impl_; }
    const Impl & impl() const { return *impl_; }

private:
    explicit Model(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace lmllm

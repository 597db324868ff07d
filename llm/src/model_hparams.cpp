// Hyper-parameters every supported architecture shares, read from
// "<arch>.*" metadata with llama.cpp's defaults, then checked for
// consistency before any tensor is created.

#include "model_hparams.h"

#include <cmath>

#include "arch.h"

namespace lmllm {

const ArchOps * find_arch(const std::string & name) {
    for (const ArchOps * ops : {&arch_llama(), &arch_qwen2(), &arch_gemma3()}) {
        if (name == ops->name) {
            return ops;
        }
    }
    return nullptr;
}

Status load_hparams(const GgufFile & f, const ArchOps & arch, HParams & hp) {
    hp = HParams();
    hp.arch = arch.arch;
    hp.arch_name = arch.name;
    hp.rope_type = arch.rope_type;
    const std::string a = hp.arch_name + ".";

    uint64_t n_tokens = 0;
    if (Status s = f.get_arr_n("tokenizer.ggml.tokens", n_tokens, true); !s.ok()) {
        return s;
    }
    if (n_tokens == 0 || n_tokens > INT32_MAX) {
        return Status::error("tokenizer.ggml.tokens has " + std::to_string(n_tokens) + " entries");
    }
    hp.n_vocab = static_cast<uint32_t>(n_tokens);

    Status s;
    auto u32 = [&](const char * key, uint32_t & out, bool required) {
        if (s.ok()) {
            s = f.get_u32(a + key, out, required);
        }
    };
    auto f32 = [&](const char * key, float & out, bool required) {
        if (s.ok()) {
            s = f.get_f32(a + key, out, required);
        }
    };
    u32("context_length", hp.n_ctx_train, true);
    u32("embedding_length", hp.n_embd, true);
    u32("block_count", hp.n_layer, true);
    u32("feed_forward_length", hp.n_ff, true);
    u32("attention.head_count", hp.n_head, true);
    if (!s.ok()) {
        return s;
    }
    if (hp.n_head == 0 || hp.n_embd == 0 || hp.n_layer == 0 || hp.n_ff == 0) {
        return Status::error("invalid hyper-parameters: embedding_length, block_count, feed_forward_length and "
                             "attention.head_count must be positive");
    }
    hp.n_head_kv = hp.n_head;
    u32("attention.head_count_kv", hp.n_head_kv, false);
    hp.n_embd_head_k = hp.n_embd / hp.n_head;
    u32("attention.key_length", hp.n_embd_head_k, false);
    hp.n_embd_head_v = hp.n_embd / hp.n_head;
    u32("attention.value_length", hp.n_embd_head_v, false);
    hp.n_rot = hp.n_embd_head_k;
    u32("rope.dimension_count", hp.n_rot, false);
    f32("rope.freq_base", hp.rope_freq_base, false);
    // Linear rope scaling: positions divided by the factor.
    float factor = 0.0f;
    if (f.has(a + "rope.scaling.factor")) {
        f32("rope.scaling.factor", factor, true);
    } else {
        f32("rope.scale_linear", factor, false);
    }
    hp.rope_freq_scale = factor == 0.0f ? 1.0f : 1.0f / factor;
    f32("attention.layer_norm_rms_epsilon", hp.norm_rms_eps, true);
    if (!s.ok()) {
        return s;
    }
    if (Status sa = arch.load_hparams(f, hp); !sa.ok()) {
        return sa;
    }

    if (hp.n_head_kv == 0 || hp.n_head % hp.n_head_kv != 0) {
        return Status::error("invalid hyper-parameters: head_count " + std::to_string(hp.n_head) +
                             " is not a multiple of head_count_kv " + std::to_string(hp.n_head_kv));
    }
    if (hp.n_embd_head_k == 0 || hp.n_embd_head_v == 0) {
        return Status::error("invalid hyper-parameters: zero head size");
    }
    if (hp.n_rot == 0 || hp.n_rot > hp.n_embd_head_k || hp.n_rot % 2 != 0) {
        return Status::error("invalid hyper-parameters: rope.dimension_count " + std::to_string(hp.n_rot) +
                             " must be even and at most the head size " + std::to_string(hp.n_embd_head_k));
    }
    if (!(hp.rope_freq_base > 0.0f) || !std::isfinite(hp.rope_freq_base) || !(hp.rope_freq_scale > 0.0f) ||
        !std::isfinite(hp.rope_freq_scale)) {
        return Status::error("invalid hyper-parameters: rope frequency base/scale");
    }
    if (!(hp.norm_rms_eps >= 0.0f) || !std::isfinite(hp.norm_rms_eps)) {
        return Status::error("invalid hyper-parameters: layer_norm_rms_epsilon");
    }
    if (hp.n_ctx_train == 0) {
        return Status::error("invalid hyper-parameters: context_length is 0");
    }
    return {};
}

} // namespace lmllm

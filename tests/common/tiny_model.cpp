// Tiny model generation: random weights and a GGUF file holding them.

#include "tiny_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "gguf.h"

namespace tiny {

Spec llama_spec() { return Spec(); }

Spec qwen2_spec() {
    Spec s;
    s.arch = "qwen2";
    s.rope_base = 1000000.0f;
    s.eps = 1e-6f;
    s.tied = false;
    return s;
}

Spec gemma3_spec() {
    Spec s;
    s.arch = "gemma3";
    s.n_layer = 3;   // layers 0 and 1 slide, layer 2 is global (pattern 3)
    s.head_dim = 32; // n_head * head_dim != n_embd, as in real Gemma 3
    s.n_rot = 32;
    s.n_head = 4;
    s.n_head_kv = 1;
    s.eps = 1e-6f;
    s.rope_base = 1000000.0f;
    s.rope_base_swa = 10000.0f;
    s.rope_scale_factor = 8.0f; // global layers only
    s.n_swa = 4;
    s.swa_pattern = 3;
    s.final_softcap = 3.0f; // small enough to bend the random logits
    return s;
}

namespace {

void add(Weights & w, const std::string & name, std::vector<int64_t> shape, std::mt19937_64 & rng, double lo,
         double hi) {
    int64_t n = 1;
    for (int64_t d : shape) {
        n *= d;
    }
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (float & x : v) {
        x = static_cast<float>(u(rng));
    }
    w.data[name] = std::move(v);
    w.shape[name] = std::move(shape);
}

// Uniform with variance 1/n_in: activations keep their scale through a layer.
void add_matrix(Weights & w, const std::string & name, int64_t n_in, int64_t n_out, std::mt19937_64 & rng) {
    const double a = std::sqrt(3.0 / double(n_in));
    add(w, name, {n_in, n_out}, rng, -a, a);
}

void add_norm(Weights & w, const std::string & name, int64_t n, std::mt19937_64 & rng) {
    add(w, name, {n}, rng, 0.8, 1.2);
}

// Rounds 2-D weights through the file type so the reference sees what the
// model reads.
void round_through(lm_ggml_type type, std::vector<float> & v, int64_t n_per_row) {
    if (type == LM_GGML_TYPE_F32) {
        return;
    }
    const int64_t nrows = static_cast<int64_t>(v.size()) / n_per_row;
    std::vector<uint8_t> q(lm_ggml_row_size(type, n_per_row) * nrows);
    lm_ggml_quantize_chunk(type, v.data(), q.data(), 0, nrows, n_per_row, nullptr);
    lm_ggml_get_type_traits(type)->to_float(q.data(), v.data(), static_cast<int64_t>(v.size()));
}

} // namespace

Weights make_weights(const Spec & s, uint64_t seed) {
    std::mt19937_64 rng(seed);
    Weights w;
    const int64_t E = s.n_embd, hd = s.head_dim;
    const int64_t nq = hd * s.n_head, nk = hd * s.n_head_kv;
    add(w, "token_embd.weight", {E, s.n_vocab}, rng, -1.0, 1.0);
    for (int il = 0; il < s.n_layer; il++) {
        const std::string p = "blk." + std::to_string(il) + ".";
        add_norm(w, p + "attn_norm.weight", E, rng);
        add_matrix(w, p + "attn_q.weight", E, nq, rng);
        add_matrix(w, p + "attn_k.weight", E, nk, rng);
        add_matrix(w, p + "attn_v.weight", E, nk, rng);
        add_matrix(w, p + "attn_output.weight", nq, E, rng);
        if (s.arch == "qwen2") {
            add(w, p + "attn_q.bias", {nq}, rng, -0.5, 0.5);
            add(w, p + "attn_k.bias", {nk}, rng, -0.5, 0.5);
            add(w, p + "attn_v.bias", {nk}, rng, -0.5, 0.5);
        }
        if (s.arch == "gemma3") {
            add_norm(w, p + "attn_q_norm.weight", hd, rng);
            add_norm(w, p + "attn_k_norm.weight", hd, rng);
            add_norm(w, p + "post_attention_norm.weight", E, rng);
            add_norm(w, p + "post_ffw_norm.weight", E, rng);
        }
        add_norm(w, p + "ffn_norm.weight", E, rng);
        add_matrix(w, p + "ffn_gate.weight", E, s.n_ff, rng);
        add_matrix(w, p + "ffn_up.weight", E, s.n_ff, rng);
        add_matrix(w, p + "ffn_down.weight", s.n_ff, E, rng);
    }
    add_norm(w, "output_norm.weight", E, rng);
    if (!s.tied) {
        add_matrix(w, "output.weight", E, s.n_vocab, rng);
    }
    for (auto & [name, v] : w.data) {
        if (w.shape[name].size() == 2) {
            round_through(s.wtype, v, w.shape[name][0]);
        }
    }
    return w;
}

namespace {

// The vocabulary: <unk> <s> </s>, the 256 byte tokens, then short pieces;
// the special tokens asked for replace the last pieces.
void add_vocab(lm_gguf_context * g, int n_vocab, const std::vector<std::string> & specials) {
    std::vector<std::string> texts = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    for (int b = 0; b < 256 && int(texts.size()) < n_vocab; b++) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
        texts.emplace_back(buf);
        types.push_back(6);
    }
    for (int i = 0; int(texts.size()) < n_vocab; i++) {
        texts.push_back("\xE2\x96\x81w" + std::to_string(i)); // "▁w<i>"
        types.push_back(1);
    }
    const size_t first = texts.size() - std::min(specials.size(), texts.size());
    for (size_t i = first; i < texts.size(); i++) {
        texts[i] = specials[i - first];
        types[i] = 3;
    }
    std::vector<const char *> ptrs;
    std::vector<float> scores;
    for (size_t i = 0; i < texts.size(); i++) {
        ptrs.push_back(texts[i].c_str());
        scores.push_back(-float(i));
    }
    lm_gguf_set_val_str(g, "tokenizer.ggml.model", "llama");
    lm_gguf_set_arr_str(g, "tokenizer.ggml.tokens", ptrs.data(), ptrs.size());
    lm_gguf_set_arr_data(g, "tokenizer.ggml.scores", LM_GGUF_TYPE_FLOAT32, scores.data(), scores.size());
    lm_gguf_set_arr_data(g, "tokenizer.ggml.token_type", LM_GGUF_TYPE_INT32, types.data(), types.size());
    lm_gguf_set_val_u32(g, "tokenizer.ggml.bos_token_id", 1);
    lm_gguf_set_val_u32(g, "tokenizer.ggml.eos_token_id", 2);
    lm_gguf_set_val_u32(g, "tokenizer.ggml.unknown_token_id", 0);
}

} // namespace

bool write_gguf(const Spec & s, const Weights & w, const std::string & path) {
    lm_gguf_context * g = lm_gguf_init_empty();
    const std::string arch = s.arch_override.empty() ? s.arch : s.arch_override;
    const std::string a = arch + ".";
    auto u32 = [&](const std::string & key, uint32_t v) {
        if (!s.drop_keys.count(key)) {
            lm_gguf_set_val_u32(g, key.c_str(), v);
        }
    };
    auto f32 = [&](const std::string & key, float v) {
        if (!s.drop_keys.count(key)) {
            lm_gguf_set_val_f32(g, key.c_str(), v);
        }
    };
    lm_gguf_set_val_str(g, "general.architecture", arch.c_str());
    if (s.alignment != 0) {
        lm_gguf_set_val_u32(g, "general.alignment", s.alignment);
    }
    lm_gguf_set_val_str(g, "general.name", ("tiny-" + s.arch).c_str());
    u32(a + "context_length", s.n_ctx_train);
    u32(a + "embedding_length", s.n_embd);
    u32(a + "block_count", s.n_layer);
    u32(a + "feed_forward_length", s.n_ff);
    u32(a + "attention.head_count", s.n_head);
    u32(a + "attention.head_count_kv", s.n_head_kv);
    u32(a + "attention.key_length", s.head_dim);
    u32(a + "attention.value_length", s.head_dim);
    u32(a + "rope.dimension_count", s.n_rot);
    f32(a + "rope.freq_base", s.rope_base);
    f32(a + "attention.layer_norm_rms_epsilon", s.eps);
    if (s.rope_scale_factor != 0.0f) {
        lm_gguf_set_val_str(g, (a + "rope.scaling.type").c_str(), "linear");
        f32(a + "rope.scaling.factor", s.rope_scale_factor);
    }
    if (s.arch == "gemma3") {
        u32(a + "attention.sliding_window", s.n_swa);
        u32(a + "attention.sliding_window_pattern", s.swa_pattern);
        f32(a + "rope.freq_base_swa", s.rope_base_swa);
        if (s.final_softcap != 0.0f) {
            f32(a + "final_logit_softcapping", s.final_softcap);
        }
    }
    add_vocab(g, s.n_vocab, s.special_tokens);
    if (!s.chat_template.empty()) {
        lm_gguf_set_val_str(g, "tokenizer.chat_template", s.chat_template.c_str());
    }

    // Tensor data: quantized where asked (2-D weights), F32 otherwise.
    size_t total = 0;
    for (const auto & [name, v] : w.data) {
        total += v.size() * sizeof(float) + 256;
    }
    lm_ggml_init_params ip = {total + w.data.size() * lm_ggml_tensor_overhead() + 4096, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    for (const auto & [name, v] : w.data) {
        if (s.drop_tensors.count(name)) {
            continue;
        }
        std::vector<int64_t> shape = s.reshape.count(name) ? s.reshape.at(name) : w.shape.at(name);
        const bool quant = shape.size() == 2 && s.wtype != LM_GGML_TYPE_F32 && !s.reshape.count(name);
        const lm_ggml_type type = quant ? s.wtype : LM_GGML_TYPE_F32;
        lm_ggml_tensor * t = shape.size() == 1 ? lm_ggml_new_tensor_1d(ctx, type, shape[0])
                                               : lm_ggml_new_tensor_2d(ctx, type, shape[0], shape[1]);
        lm_ggml_set_name(t, name.c_str());
        const int64_t n = lm_ggml_nelements(t);
        if (quant) {
            lm_ggml_quantize_chunk(type, v.data(), t->data, 0, shape[1], shape[0], nullptr);
        } else {
            std::vector<float> src(v.begin(), v.begin() + std::min<int64_t>(n, int64_t(v.size())));
            src.resize(static_cast<size_t>(n), 0.5f);
            std::memcpy(t->data, src.data(), src.size() * sizeof(float));
        }
        lm_gguf_add_tensor(g, t);
    }
    const bool ok = lm_gguf_write_to_file(g, path.c_str(), false);
    lm_gguf_free(g);
    lm_ggml_free(ctx);
    return ok;
}

double nmse(const float * got, const std::vector<double> & want) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < want.size(); i++) {
        const double d = double(got[i]) - want[i];
        num += d * d;
        den += want[i] * want[i];
    }
    return den > 0.0 ? num / den : num;
}

} // namespace tiny

// llama: Llama 2/3, SmolLM2, TinyLlama, Mistral. Pre-norm blocks with RMS
// norm, RoPE in normal (interleaved pairs) mode, grouped-query attention and
// a SwiGLU feed-forward. Optional: q/k/v/o biases, llama3 rope factors, an
// output projection tied to the token embeddings.

#include <cmath>

#include "arch.h"

namespace lmllm {

void create_llama_tensors(TensorLoader & ld, const HParams & hp, Weights & w, bool qkv_bias) {
    const int64_t n_embd = hp.n_embd;
    const int64_t n_vocab = hp.n_vocab;
    const int64_t n_q = int64_t(hp.n_embd_head_k) * hp.n_head;
    const int64_t n_k = int64_t(hp.n_embd_head_k) * hp.n_head_kv;
    const int64_t n_v = int64_t(hp.n_embd_head_v) * hp.n_head_kv;
    const int64_t n_o = int64_t(hp.n_embd_head_v) * hp.n_head;
    const int64_t n_ff = hp.n_ff;

    w.tok_embd = ld.create("token_embd.weight", {n_embd, n_vocab}, ld.cpu());
    // Llama 3.1+ rope frequency factors, one table for every layer.
    lm_ggml_tensor * rope_freqs = ld.create("rope_freqs.weight", {int64_t(hp.n_rot / 2)}, ld.cpu(), false);
    w.layers.resize(hp.n_layer);
    for (uint32_t il = 0; il < hp.n_layer; il++) {
        LayerWeights & l = w.layers[il];
        l.attn_norm = ld.layer(il, "attn_norm.weight", {n_embd});
        l.wq = ld.layer(il, "attn_q.weight", {n_embd, n_q});
        l.wk = ld.layer(il, "attn_k.weight", {n_embd, n_k});
        l.wv = ld.layer(il, "attn_v.weight", {n_embd, n_v});
        l.wo = ld.layer(il, "attn_output.weight", {n_o, n_embd});
        l.bq = ld.layer(il, "attn_q.bias", {n_q}, qkv_bias);
        l.bk = ld.layer(il, "attn_k.bias", {n_k}, qkv_bias);
        l.bv = ld.layer(il, "attn_v.bias", {n_v}, qkv_bias);
        l.bo = ld.layer(il, "attn_output.bias", {n_embd}, false);
        l.ffn_norm = ld.layer(il, "ffn_norm.weight", {n_embd});
        l.ffn_gate = ld.layer(il, "ffn_gate.weight", {n_embd, n_ff});
        l.ffn_up = ld.layer(il, "ffn_up.weight", {n_embd, n_ff});
        l.ffn_down = ld.layer(il, "ffn_down.weight", {n_ff, n_embd});
        l.rope_freqs = rope_freqs;
    }
    w.output_norm = ld.output_layer("output_norm.weight", {n_embd});
    w.output = ld.output_or_tied(n_embd, n_vocab);
}

lm_ggml_tensor * build_llama_graph(GraphBuilder & b) {
    const HParams & hp = b.hp;
    const int64_t T = b.batch.n_tokens;
    const int64_t hd = hp.n_embd_head_k;
    const float kq_scale = 1.0f / std::sqrt(float(hd));

    lm_ggml_tensor * x = b.embed();           // (n_embd, T)
    lm_ggml_tensor * mask = b.kq_mask(false); // (n_kv, PAD(T))
    for (uint32_t il = 0; il < hp.n_layer; il++) {
        const LayerWeights & l = b.w.layers[il];
        lm_ggml_tensor * residual = x;

        lm_ggml_tensor * cur = b.norm(x, l.attn_norm, int(il));                      // (n_embd, T)
        const auto [q_proj, k_proj, v] = b.qkv(cur, l, true);                        // v: (n_embd_v_gqa, T)
        lm_ggml_tensor * q = lm_ggml_reshape_3d(b.ctx, q_proj, hd, hp.n_head, T);    // (hd, n_head, T)
        lm_ggml_tensor * k = lm_ggml_reshape_3d(b.ctx, k_proj, hd, hp.n_head_kv, T); // (hd, n_head_kv, T)
        q = b.rope(q, hp.rope_freq_base, hp.rope_freq_scale, l.rope_freqs);
        k = b.rope(k, hp.rope_freq_base, hp.rope_freq_scale, l.rope_freqs);
        cur = b.attention(il, q, k, v, mask, kq_scale, l.wo, l.bo); // (n_embd, T)

        if (il + 1 == hp.n_layer) { // only the output rows go on from here
            cur = b.select_outputs(cur);
            residual = b.select_outputs(residual);
        }
        lm_ggml_tensor * ffn_in = lm_ggml_add(b.ctx, cur, residual);
        cur = b.norm(ffn_in, l.ffn_norm, int(il));
        cur = b.ffn(cur, l.ffn_up, l.ffn_gate, l.ffn_down, FfnAct::SILU);
        x = lm_ggml_add(b.ctx, cur, ffn_in); // (n_embd, T')
    }
    x = b.norm(x, b.w.output_norm, -1);
    return lm_ggml_mul_mat(b.ctx, b.w.output, x); // (n_vocab, n_outputs)
}

namespace {

Status llama_hparams(const GgufFile &, HParams &) {
    return {}; // everything it needs is common
}

void llama_tensors(TensorLoader & ld, const HParams & hp, Weights & w) {
    create_llama_tensors(ld, hp, w, /*qkv_bias =*/false);
}

} // namespace

const ArchOps & arch_llama() {
    static const ArchOps ops = {Arch::LLAMA, "llama", 0, llama_hparams, llama_tensors, build_llama_graph};
    return ops;
}

} // namespace lmllm

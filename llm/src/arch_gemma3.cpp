// gemma3: embeddings scaled by sqrt(n_embd); RMS norms whose weights the
// converter stored as (1 + w), so they are applied as stored; norms before
// and after both attention and FFN; RMS norms on q and k per head; NeoX
// RoPE; a GELU(tanh)-gated FFN. Layers use a sliding attention window with
// their own RoPE base, except every swa_pattern-th layer, which is global.
// An optional final logit soft-cap: c * tanh(logits / c).

#include <cmath>

#include "arch.h"

namespace lmllm {

namespace {

bool is_swa_layer(const HParams & hp, uint32_t il) {
    if (hp.n_swa == 0) {
        return false;
    }
    return hp.swa_pattern == 0 || il % hp.swa_pattern < hp.swa_pattern - 1;
}

Status gemma3_hparams(const GgufFile & f, HParams & hp) {
    const std::string a = hp.arch_name + ".";
    hp.n_swa = 0;
    if (Status s = f.get_u32(a + "attention.sliding_window", hp.n_swa, false); !s.ok()) {
        return s;
    }
    hp.swa_pattern = 6; // every 6th layer is global unless the file says otherwise
    if (f.has(a + "attention.sliding_window_pattern")) {
        if (Status s = f.get_u32(a + "attention.sliding_window_pattern", hp.swa_pattern, true); !s.ok()) {
            return s;
        }
    }
    hp.rope_freq_base_swa = 10000.0f;
    if (Status s = f.get_f32(a + "rope.freq_base_swa", hp.rope_freq_base_swa, false); !s.ok()) {
        return s;
    }
    hp.f_final_logit_softcapping = 0.0f;
    if (Status s = f.get_f32(a + "final_logit_softcapping", hp.f_final_logit_softcapping, false); !s.ok()) {
        return s;
    }
    hp.f_attn_logit_softcapping = 0.0f; // gemma3 attention is not soft-capped
    return {};
}

void gemma3_tensors(TensorLoader & ld, const HParams & hp, Weights & w) {
    const int64_t n_embd = hp.n_embd;
    const int64_t hd = hp.n_embd_head_k;
    const int64_t n_q = hd * hp.n_head;
    const int64_t n_k = hd * hp.n_head_kv;
    const int64_t n_v = int64_t(hp.n_embd_head_v) * hp.n_head_kv;
    const int64_t n_o = int64_t(hp.n_embd_head_v) * hp.n_head;
    const int64_t n_ff = hp.n_ff;

    w.tok_embd = ld.create("token_embd.weight", {n_embd, int64_t(hp.n_vocab)}, ld.cpu());
    w.layers.resize(hp.n_layer);
    for (uint32_t il = 0; il < hp.n_layer; il++) {
        LayerWeights & l = w.layers[il];
        l.attn_norm = ld.layer(il, "attn_norm.weight", {n_embd});
        l.wq = ld.layer(il, "attn_q.weight", {n_embd, n_q});
        l.wk = ld.layer(il, "attn_k.weight", {n_embd, n_k});
        l.wv = ld.layer(il, "attn_v.weight", {n_embd, n_v});
        l.wo = ld.layer(il, "attn_output.weight", {n_o, n_embd});
        l.attn_q_norm = ld.layer(il, "attn_q_norm.weight", {hd});
        l.attn_k_norm = ld.layer(il, "attn_k_norm.weight", {hd});
        l.attn_post_norm = ld.layer(il, "post_attention_norm.weight", {n_embd});
        l.ffn_norm = ld.layer(il, "ffn_norm.weight", {n_embd});
        l.ffn_gate = ld.layer(il, "ffn_gate.weight", {n_embd, n_ff});
        l.ffn_up = ld.layer(il, "ffn_up.weight", {n_embd, n_ff});
        l.ffn_down = ld.layer(il, "ffn_down.weight", {n_ff, n_embd});
        l.ffn_post_norm = ld.layer(il, "post_ffw_norm.weight", {n_embd});
    }
    w.output_norm = ld.output_layer("output_norm.weight", {n_embd});
    w.output = ld.output_or_tied(n_embd, hp.n_vocab);
}

lm_ggml_tensor * gemma3_graph(GraphBuilder & b) {
    const HParams & hp = b.hp;
    lm_ggml_context * ctx = b.ctx;
    const int64_t T = b.batch.n_tokens;
    const int64_t hd = hp.n_embd_head_k;
    // Queries are scaled by query_pre_attn_scalar^-1/2: the head size, except
    // for the 27B model (62 layers), which uses n_embd / n_head.
    const float q_scale =
        hp.n_layer == 62 ? 1.0f / std::sqrt(float(hp.n_embd / hp.n_head)) : 1.0f / std::sqrt(float(hd));

    lm_ggml_tensor * x = lm_ggml_scale(ctx, b.embed(), std::sqrt(float(hp.n_embd))); // (n_embd, T)
    lm_ggml_tensor * mask = b.kq_mask(false);
    lm_ggml_tensor * mask_swa = hp.n_swa > 0 ? b.kq_mask(true) : nullptr;
    for (uint32_t il = 0; il < hp.n_layer; il++) {
        const LayerWeights & l = b.w.layers[il];
        const bool swa = is_swa_layer(hp, il);
        const float base = swa ? hp.rope_freq_base_swa : hp.rope_freq_base;
        const float fscale = swa ? 1.0f : hp.rope_freq_scale;

        lm_ggml_tensor * cur = b.norm(x, l.attn_norm, int(il));
        const auto [q_proj, k_proj, v] = b.qkv(cur, l, false);                     // v: (n_embd_v_gqa, T)
        lm_ggml_tensor * q = lm_ggml_reshape_3d(ctx, q_proj, hd, hp.n_head, T);    // (hd, n_head, T)
        lm_ggml_tensor * k = lm_ggml_reshape_3d(ctx, k_proj, hd, hp.n_head_kv, T); // (hd, n_head_kv, T)
        q = b.rope(b.norm(q, l.attn_q_norm, -1), base, fscale, nullptr);
        k = b.rope(b.norm(k, l.attn_k_norm, -1), base, fscale, nullptr);
        q = lm_ggml_scale(ctx, q, q_scale);
        cur = b.attention(il, q, k, v, swa ? mask_swa : mask, 1.0f, l.wo, nullptr); // (n_embd, T)

        if (il + 1 == hp.n_layer) {
            cur = b.select_outputs(cur);
            x = b.select_outputs(x);
        }
        cur = b.norm(cur, l.attn_post_norm, -1);
        lm_ggml_tensor * sa_out = lm_ggml_add(ctx, cur, x);
        cur = b.norm(sa_out, l.ffn_norm, int(il));
        cur = b.ffn(cur, l.ffn_up, l.ffn_gate, l.ffn_down, FfnAct::GELU);
        cur = b.norm(cur, l.ffn_post_norm, -1);
        x = lm_ggml_add(ctx, cur, sa_out); // (n_embd, T')
    }
    x = b.norm(x, b.w.output_norm, -1);
    lm_ggml_tensor * logits = lm_ggml_mul_mat(ctx, b.w.output, x); // (n_vocab, n_outputs)
    if (hp.f_final_logit_softcapping > 0.0f) {
        logits = lm_ggml_scale(ctx, logits, 1.0f / hp.f_final_logit_softcapping);
        logits = lm_ggml_tanh(ctx, logits);
        logits = lm_ggml_scale(ctx, logits, hp.f_final_logit_softcapping);
    }
    return logits;
}

} // namespace

const ArchOps & arch_gemma3() {
    static const ArchOps ops = {Arch::GEMMA3,   "gemma3",       LM_GGML_ROPE_TYPE_NEOX,
                                gemma3_hparams, gemma3_tensors, gemma3_graph};
    return ops;
}

} // namespace lmllm

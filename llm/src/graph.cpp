#include "graph.h"

namespace lmllm {

GraphBuilder::GraphBuilder(const Model::Impl & model, const KvCache & kv, lm_ggml_context * ctx_, lm_ggml_cgraph * gf_,
                           const BatchLayout & batch_)
    : hp(model.hp), w(model.w), ctx(ctx_), gf(gf_), batch(batch_), kv_(kv) {}

lm_ggml_tensor * GraphBuilder::embed() {
    in.tokens = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, batch.n_tokens); // (n_tokens)
    lm_ggml_set_name(in.tokens, "inp_tokens");
    lm_ggml_set_input(in.tokens);
    return lm_ggml_get_rows(ctx, w.tok_embd, in.tokens); // (n_embd, n_tokens)
}

lm_ggml_tensor * GraphBuilder::positions() {
    if (in.pos == nullptr) {
        in.pos = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, batch.n_tokens); // (n_tokens)
        lm_ggml_set_name(in.pos, "inp_pos");
        lm_ggml_set_input(in.pos);
    }
    return in.pos;
}

lm_ggml_tensor * GraphBuilder::kq_mask(bool swa) {
    lm_ggml_tensor *& m = swa ? in.mask_swa : in.mask;
    if (m == nullptr) {
        // Rows padded for the attention kernels; one mask broadcast to all heads.
        m = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, batch.n_kv, LM_GGML_PAD(batch.n_tokens, LM_GGML_KQ_MASK_PAD));
        lm_ggml_set_name(m, swa ? "kq_mask_swa" : "kq_mask");
        lm_ggml_set_input(m);
    }
    return m;
}

lm_ggml_tensor * GraphBuilder::norm(lm_ggml_tensor * x, lm_ggml_tensor * weight, int il) {
    lm_ggml_tensor * cur = lm_ggml_rms_norm(ctx, x, hp.norm_rms_eps);
    if (il >= 0 && on_layer_norm) {
        on_layer_norm(cur, static_cast<uint32_t>(il));
    }
    return weight ? lm_ggml_mul(ctx, cur, weight) : cur;
}

lm_ggml_tensor * GraphBuilder::rope(lm_ggml_tensor * x, float freq_base, float freq_scale,
                                    lm_ggml_tensor * freq_factors) {
    // No YaRN: ext_factor 0, attn_factor 1 (beta values are then unused).
    return lm_ggml_rope_ext(ctx, x, positions(), freq_factors, static_cast<int>(hp.n_rot), hp.rope_type,
                            static_cast<int>(hp.n_ctx_train), freq_base, freq_scale, 0.0f, 1.0f, 32.0f, 1.0f);
}

lm_ggml_tensor * GraphBuilder::linear(lm_ggml_tensor * x, lm_ggml_tensor * weight, lm_ggml_tensor * bias) {
    lm_ggml_tensor * cur = lm_ggml_mul_mat(ctx, weight, x);
    return bias ? lm_ggml_add(ctx, cur, bias) : cur;
}

std::array<lm_ggml_tensor *, 3> GraphBuilder::qkv(lm_ggml_tensor * x, const LayerWeights & l, bool biases) {
    std::array<lm_ggml_tensor *, 3> out = {lm_ggml_mul_mat(ctx, l.wq, x), lm_ggml_mul_mat(ctx, l.wk, x),
                                           lm_ggml_mul_mat(ctx, l.wv, x)};
    for (lm_ggml_tensor * t : out) {
        lm_ggml_build_forward_expand(gf, t);
    }
    if (biases) {
        const std::array<lm_ggml_tensor *, 3> b = {l.bq, l.bk, l.bv};
        for (size_t i = 0; i < out.size(); ++i) {
            out[i] = b[i] ? lm_ggml_add(ctx, out[i], b[i]) : out[i];
        }
    }
    return out;
}

lm_ggml_tensor * GraphBuilder::attention(uint32_t il, lm_ggml_tensor * q, lm_ggml_tensor * k, lm_ggml_tensor * v,
                                         lm_ggml_tensor * mask, float kq_scale, lm_ggml_tensor * wo,
                                         lm_ggml_tensor * bo) {
    const int64_t n_tokens = batch.n_tokens;
    const int64_t n_kv = batch.n_kv;
    const int64_t n_ctx = kv_.size();
    const int64_t n_head = hp.n_head;
    const int64_t n_head_kv = hp.n_head_kv;
    const int64_t hd_k = hp.n_embd_head_k;
    const int64_t hd_v = hp.n_embd_head_v;
    const int64_t n_embd_k_gqa = hd_k * n_head_kv;
    const int64_t n_embd_v_gqa = hd_v * n_head_kv;
    lm_ggml_tensor * k_cache = kv_.k(il); // (n_embd_k_gqa*n_ctx)
    lm_ggml_tensor * v_cache =
        kv_.v(il); // (n_ctx*n_embd_v_gqa): by cell with flash_attn, else row c holds channel c of every cell

    // Expanded together so the scheduler keeps them in one split.
    lm_ggml_build_forward_expand(gf, q);
    lm_ggml_build_forward_expand(gf, k);
    lm_ggml_build_forward_expand(gf, v);

    // Store: K rows at cells kv_head.., V columns at cells kv_head..
    lm_ggml_tensor * k_dst = lm_ggml_view_1d(ctx, k_cache, n_tokens * n_embd_k_gqa,
                                             lm_ggml_row_size(k_cache->type, n_embd_k_gqa) * batch.kv_head);
    lm_ggml_tensor * k_store = lm_ggml_cpy(ctx, k, k_dst); // a view of k_dst
    lm_ggml_build_forward_expand(gf, k_store);
    const size_t k_cell = lm_ggml_row_size(k_cache->type, n_embd_k_gqa);
    lm_ggml_tensor * qp = lm_ggml_permute(ctx, q, 0, 2, 1, 3); // (hd_k, n_tokens, n_head)
    lm_ggml_tensor * kc = lm_ggml_view_3d(ctx, k_cache, hd_k, n_kv, n_head_kv, k_cell,
                                          lm_ggml_row_size(k_cache->type, hd_k), 0); // (hd_k, n_kv, n_head_kv)
    if (flash_attn) {
        // V rows by cell, like K
        const size_t v_cell = lm_ggml_row_size(v_cache->type, n_embd_v_gqa);
        lm_ggml_tensor * v_dst = lm_ggml_view_1d(ctx, v_cache, n_tokens * n_embd_v_gqa, v_cell * batch.kv_head);
        lm_ggml_tensor * v_store = lm_ggml_cpy(ctx, v, v_dst); // v: (n_embd_v_gqa, n_tokens)
        lm_ggml_build_forward_expand(gf, v_store);
        kv_stores.insert(kv_stores.end(), {{k_dst, k_cell}, {k_store, k_cell}, {v_dst, v_cell}, {v_store, v_cell}});
        lm_ggml_tensor * vc = lm_ggml_view_3d(ctx, v_cache, hd_v, n_kv, n_head_kv, v_cell,
                                              lm_ggml_row_size(v_cache->type, hd_v), 0); // (hd_v, n_kv, n_head_kv)
        lm_ggml_tensor * out =
            lm_ggml_flash_attn_ext(ctx, qp, kc, vc, mask, kq_scale, 0.0f, 0.0f); // (hd_v, n_head, n_tokens)
        lm_ggml_flash_attn_ext_set_prec(out, LM_GGML_PREC_F32);
        lm_ggml_tensor * cur = lm_ggml_reshape_2d(ctx, out, hd_v * n_head, n_tokens); // (hd_v*n_head, n_tokens)
        lm_ggml_build_forward_expand(gf, cur);
        return linear(cur, wo, bo); // (n_embd, n_tokens)
    }
    const size_t v_es = lm_ggml_element_size(v_cache);
    lm_ggml_tensor * v_dst = lm_ggml_view_2d(ctx, v_cache, n_tokens, n_embd_v_gqa, n_ctx * v_es,
                                             batch.kv_head * v_es); // (n_tokens, n_embd_v_gqa)
    lm_ggml_tensor * v_t =
        lm_ggml_transpose(ctx, lm_ggml_reshape_2d(ctx, v, n_embd_v_gqa, n_tokens)); // (n_tokens, n_embd_v_gqa)
    lm_ggml_tensor * v_store = lm_ggml_cpy(ctx, v_t, v_dst);                        // a view of v_dst
    lm_ggml_build_forward_expand(gf, v_store);
    kv_stores.insert(kv_stores.end(), {{k_dst, k_cell}, {k_store, k_cell}, {v_dst, v_es}, {v_store, v_es}});

    lm_ggml_tensor * kq = lm_ggml_mul_mat(ctx, kc, qp); // (n_kv, n_tokens, n_head)
    lm_ggml_mul_mat_set_prec(kq, LM_GGML_PREC_F32);
    if (hp.f_attn_logit_softcapping > 0.0f) {
        kq = lm_ggml_scale(ctx, kq, 1.0f / hp.f_attn_logit_softcapping);
        kq = lm_ggml_tanh(ctx, kq);
        kq = lm_ggml_scale(ctx, kq, hp.f_attn_logit_softcapping);
    }
    kq = lm_ggml_soft_max_ext(ctx, kq, mask, kq_scale, 0.0f);

    lm_ggml_tensor * vc = lm_ggml_view_3d(ctx, v_cache, n_kv, hd_v, n_head_kv, v_es * n_ctx, v_es * n_ctx * hd_v,
                                          0);                                     // (n_kv, hd_v, n_head_kv)
    lm_ggml_tensor * kqv = lm_ggml_mul_mat(ctx, vc, kq);                          // (hd_v, n_tokens, n_head)
    lm_ggml_tensor * merged = lm_ggml_permute(ctx, kqv, 0, 2, 1, 3);              // (hd_v, n_head, n_tokens)
    lm_ggml_tensor * cur = lm_ggml_cont_2d(ctx, merged, hd_v * n_head, n_tokens); // (hd_v*n_head, n_tokens)
    lm_ggml_build_forward_expand(gf, cur);
    return linear(cur, wo, bo); // (n_embd, n_tokens)
}

lm_ggml_tensor * GraphBuilder::ffn(lm_ggml_tensor * x, lm_ggml_tensor * up, lm_ggml_tensor * gate,
                                   lm_ggml_tensor * down, FfnAct act) {
    lm_ggml_tensor * u = lm_ggml_mul_mat(ctx, up, x);   // (n_ff, T)
    lm_ggml_tensor * g = lm_ggml_mul_mat(ctx, gate, x); // (n_ff, T)
    lm_ggml_build_forward_expand(gf, u);                // both products first, next to each other (see qkv)
    lm_ggml_build_forward_expand(gf, g);
    g = act == FfnAct::SILU ? lm_ggml_silu(ctx, g) : lm_ggml_gelu(ctx, g);
    return lm_ggml_mul_mat(ctx, down, lm_ggml_mul(ctx, g, u)); // (n_embd, T)
}

lm_ggml_tensor * GraphBuilder::select_outputs(lm_ggml_tensor * x) {
    if (batch.n_outputs == batch.n_tokens) {
        return x;
    }
    if (in.out_ids == nullptr) {
        in.out_ids = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, batch.n_outputs); // (n_outputs)
        lm_ggml_set_name(in.out_ids, "inp_out_ids");
        lm_ggml_set_input(in.out_ids);
    }
    return lm_ggml_get_rows(ctx, x, in.out_ids); // (ne0, n_outputs)
}

} // namespace lmllm

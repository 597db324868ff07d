#include "kv_cache.h"

#include <algorithm>

#include "ggml-alloc.h"

namespace lmllm {

Result<std::unique_ptr<KvCache>> KvCache::create(const Model::Impl & m, uint32_t n_ctx, lm_ggml_type type_k,
                                                 lm_ggml_type type_v) {
    const HParams & hp = m.hp;
    if (lm_ggml_blck_size(type_k) != 1 && (hp.n_embd_head_k % lm_ggml_blck_size(type_k)) != 0) {
        return Status::error(std::string("K cache type ") + lm_ggml_type_name(type_k) + " does not divide the head size");
    }
    if (lm_ggml_blck_size(type_v) != 1) {
        // V is stored transposed: element-wise writes need a plain type.
        return Status::error(std::string("V cache type ") + lm_ggml_type_name(type_v) + " is not supported (use f16 or f32)");
    }
    std::unique_ptr<KvCache> kv(new KvCache());
    kv->size_ = n_ctx;
    kv->k_.resize(hp.n_layer);
    kv->v_.resize(hp.n_layer);

    // One context (and buffer) per placement.
    const Placement places[2] = {Placement::CPU, Placement::DEVICE};
    for (Placement where : places) {
        std::vector<uint32_t> layers;
        for (uint32_t il = 0; il < hp.n_layer; il++) {
            if (m.layer_placement(il) == where) {
                layers.push_back(il);
            }
        }
        if (layers.empty()) {
            continue;
        }
        lm_ggml_init_params ip = {2 * layers.size() * lm_ggml_tensor_overhead(), nullptr, /*no_alloc =*/true};
        lm_ggml_context * ctx = lm_ggml_init(ip);
        if (ctx == nullptr) {
            return Status::error("cannot create the KV cache context");
        }
        kv->ctxs_.push_back(ctx);
        const int64_t n_embd_k_gqa = int64_t(hp.n_embd_head_k) * hp.n_head_kv;
        const int64_t n_embd_v_gqa = int64_t(hp.n_embd_head_v) * hp.n_head_kv;
        for (uint32_t il : layers) {
            kv->k_[il] = lm_ggml_new_tensor_1d(ctx, type_k, n_embd_k_gqa * n_ctx);
            kv->v_[il] = lm_ggml_new_tensor_1d(ctx, type_v, n_embd_v_gqa * n_ctx);
            lm_ggml_format_name(kv->k_[il], "cache_k_l%u", il);
            lm_ggml_format_name(kv->v_[il], "cache_v_l%u", il);
        }
        lm_ggml_backend_dev_t dev = where == Placement::CPU ? m.cpu_dev : m.dev;
        lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx, lm_ggml_backend_dev_buffer_type(dev));
        if (buf == nullptr) {
            return Status::error(std::string("cannot allocate the KV cache (") + std::to_string(n_ctx) + " cells) on " +
                                 lm_ggml_backend_dev_name(dev));
        }
        kv->buffers_.push_back(buf);
    }
    kv->clear();
    return kv;
}

KvCache::~KvCache() {
    for (lm_ggml_backend_buffer_t b : buffers_) {
        lm_ggml_backend_buffer_free(b);
    }
    for (lm_ggml_context * c : ctxs_) {
        lm_ggml_free(c);
    }
}

void KvCache::clear() {
    // Unused cells are masked out, but their V still meets a zero weight in
    // the product: zeros keep 0 * v finite.
    for (lm_ggml_backend_buffer_t b : buffers_) {
        lm_ggml_backend_buffer_clear(b, 0);
    }
    used_ = 0;
}

uint32_t KvCache::n_kv_for(uint32_t n_new) const {
    const uint32_t need = used_ + n_new;
    const uint32_t padded = (need + 31) / 32 * 32;
    return std::min(size_, std::max(padded, 32u));
}

size_t KvCache::total_bytes() const {
    size_t n = 0;
    for (lm_ggml_backend_buffer_t b : buffers_) {
        n += lm_ggml_backend_buffer_get_size(b);
    }
    return n;
}

} // namespace lmllm

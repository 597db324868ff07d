#include "kv_cache.h"

#include <algorithm>

#include "ggml-alloc.h"

namespace lmllm {

Result<std::unique_ptr<KvCache>> KvCache::create(const Model::Impl & m, uint32_t n_ctx, lm_ggml_type type_k,
                                                 lm_ggml_type type_v,
                                                 const std::vector<lm_ggml_backend_dev_t> & layer_dev) {
    const HParams & hp = m.hp;
    if (lm_ggml_blck_size(type_k) != 1 && (hp.n_embd_head_k % lm_ggml_blck_size(type_k)) != 0) {
        return Status::error(std::string("K cache type ") + lm_ggml_type_name(type_k) +
                             " does not divide the head size");
    }
    if (lm_ggml_blck_size(type_v) != 1) {
        // V is stored transposed: element-wise writes need a plain type.
        return Status::error(std::string("V cache type ") + lm_ggml_type_name(type_v) +
                             " is not supported (use f16 or f32)");
    }
    std::unique_ptr<KvCache> kv(new KvCache());
    kv->size_ = n_ctx;
    kv->k_.resize(hp.n_layer);
    kv->v_.resize(hp.n_layer);

    if (layer_dev.size() != hp.n_layer) {
        return Status::error("KV cache: one device per layer expected");
    }
    // One context (and buffer) per device, in the order of first use.
    std::vector<lm_ggml_backend_dev_t> devices;
    for (lm_ggml_backend_dev_t d : layer_dev) {
        if (std::find(devices.begin(), devices.end(), d) == devices.end()) {
            devices.push_back(d);
        }
    }
    for (lm_ggml_backend_dev_t dev : devices) {
        std::vector<uint32_t> layers;
        for (uint32_t il = 0; il < hp.n_layer; il++) {
            if (layer_dev[il] == dev) {
                layers.push_back(il);
            }
        }
        if (layers.empty()) {
            continue;
        }
        // room first: a push_back that throws after the handle exists would leak it
        kv->ctxs_.reserve(kv->ctxs_.size() + 1);
        kv->buffers_.reserve(kv->buffers_.size() + 1);
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
        lm_ggml_backend_buffer_t buf =
            lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx, lm_ggml_backend_dev_buffer_type(dev));
        if (buf == nullptr) {
            return Status::error(std::string("cannot allocate the KV cache (") + std::to_string(n_ctx) + " cells) on " +
                                 lm_ggml_backend_dev_name(dev));
        }
        kv->buffers_.push_back(buf);
    }
    kv->clear();
    return kv;
}

std::vector<lm_ggml_backend_dev_t> KvCache::layer_devices(const Model::Impl & m, uint32_t n_ctx, lm_ggml_type type_k,
                                                          lm_ggml_type type_v, bool flash_attn) {
    std::vector<lm_ggml_backend_dev_t> out(m.hp.n_layer, m.cpu_dev);
    for (lm_ggml_backend_dev_t d : m.devs) {
        if (device_can_hold(d, m.hp, n_ctx, type_k, type_v, flash_attn)) {
            for (uint32_t il = 0; il < m.hp.n_layer; il++) {
                out[il] = m.layer_device(il) == d ? d : out[il];
            }
        }
    }
    return out;
}

bool KvCache::device_can_hold(lm_ggml_backend_dev_t dev, const HParams & hp, uint32_t n_ctx, lm_ggml_type type_k,
                              lm_ggml_type type_v, bool flash_attn) {
    lm_ggml_init_params ip = {32 * lm_ggml_tensor_overhead(), nullptr, /*no_alloc =*/true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    if (ctx == nullptr) {
        return false;
    }
    // The same views and ops graph.cpp builds, for a batch of 2 over 32 cells.
    const int64_t T = 2, n_kv = std::min<int64_t>(32, n_ctx), hd_k = hp.n_embd_head_k, hd_v = hp.n_embd_head_v;
    const int64_t n_k = hd_k * hp.n_head_kv, n_v = hd_v * hp.n_head_kv;
    lm_ggml_tensor * kc = lm_ggml_new_tensor_1d(ctx, type_k, n_k * n_ctx);
    lm_ggml_tensor * vc = lm_ggml_new_tensor_1d(ctx, type_v, n_v * n_ctx);
    lm_ggml_tensor * k = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, hd_k, hp.n_head_kv, T);
    lm_ggml_tensor * v = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_v, T);
    lm_ggml_tensor * q = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, hd_k, hp.n_head, T);
    const size_t v_es = lm_ggml_element_size(vc);
    lm_ggml_tensor * ops[4];
    ops[0] = lm_ggml_cpy(ctx, k, lm_ggml_view_1d(ctx, kc, T * n_k, 0));
    lm_ggml_tensor * kv3 = lm_ggml_view_3d(ctx, kc, hd_k, n_kv, hp.n_head_kv, lm_ggml_row_size(type_k, n_k),
                                           lm_ggml_row_size(type_k, hd_k), 0);
    lm_ggml_tensor * qp = lm_ggml_permute(ctx, q, 0, 2, 1, 3);
    if (flash_attn) {
        ops[1] = lm_ggml_cpy(ctx, v, lm_ggml_view_1d(ctx, vc, T * n_v, 0));
        lm_ggml_tensor * vr3 = lm_ggml_view_3d(ctx, vc, hd_v, n_kv, hp.n_head_kv, lm_ggml_row_size(type_v, n_v),
                                               lm_ggml_row_size(type_v, hd_v), 0);
        lm_ggml_tensor * mask = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_kv, LM_GGML_PAD(T, LM_GGML_KQ_MASK_PAD));
        ops[2] = lm_ggml_flash_attn_ext(ctx, qp, kv3, vr3, mask, 1.0f, 0.0f, 0.0f);
        ops[3] = ops[2];
    } else {
        ops[1] = lm_ggml_cpy(ctx, lm_ggml_transpose(ctx, v), lm_ggml_view_2d(ctx, vc, T, n_v, n_ctx * v_es, 0));
        ops[2] = lm_ggml_mul_mat(ctx, kv3, qp);
        lm_ggml_tensor * vv3 = lm_ggml_view_3d(ctx, vc, n_kv, hd_v, hp.n_head_kv, v_es * n_ctx, v_es * n_ctx * hd_v, 0);
        ops[3] = lm_ggml_mul_mat(ctx, vv3, ops[2]);
    }
    bool ok = true;
    for (lm_ggml_tensor * op : ops) {
        ok = ok && lm_ggml_backend_dev_supports_op(dev, op);
    }
    lm_ggml_free(ctx);
    return ok;
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

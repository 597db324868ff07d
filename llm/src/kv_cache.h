#pragma once
// The KV cache of one sequence: per layer, K rows by position and V either
// by position too (flash attention) or transposed (one row of n_ctx per
// channel, so the separate V.P product reads V as a matrix without a copy);
// the layout is the graph's views (graph.cpp), the cache is one flat tensor
// per layer. Cells 0..used-1 hold positions 0..used-1.

#include <cstdint>
#include <memory>
#include <vector>

#include "ggml-backend.h"
#include "ggml.h"
#include "lmllm/status.h"
#include "model_impl.h"

namespace lmllm {

class KvCache {
public:
    // Allocates the cache of layer il on layer_dev[il] (one buffer per device).
    static Result<std::unique_ptr<KvCache>> create(const Model::Impl & model, uint32_t n_ctx, lm_ggml_type type_k,
                                                   lm_ggml_type type_v,
                                                   const std::vector<lm_ggml_backend_dev_t> & layer_dev);

    // Whether dev can run the ops that touch the cache directly (the K/V
    // stores and the attention ops over cache views: FLASH_ATTN_EXT, or the
    // two products). A cache on a device that cannot would leave those ops
    // with no backend at all.
    // The device of each layer's cache, as llama.cpp's offload_kqv: its
    // layer's device when that device can hold it (device_can_hold), else
    // the CPU.
    static std::vector<lm_ggml_backend_dev_t> layer_devices(const Model::Impl & model, uint32_t n_ctx,
                                                            lm_ggml_type type_k, lm_ggml_type type_v, bool flash_attn);
    static bool device_can_hold(lm_ggml_backend_dev_t dev, const HParams & hp, uint32_t n_ctx, lm_ggml_type type_k,
                                lm_ggml_type type_v, bool flash_attn);
    ~KvCache();
    KvCache(const KvCache &) = delete;
    KvCache & operator=(const KvCache &) = delete;

    lm_ggml_tensor * k(uint32_t il) const { return k_[il]; } // (n_embd_k_gqa*n_ctx)
    lm_ggml_tensor * v(uint32_t il) const { return v_[il]; } // (n_ctx*n_embd_v_gqa), transposed

    uint32_t size() const { return size_; }
    uint32_t used() const { return used_; }
    void set_used(uint32_t n) { used_ = n; }
    void clear();

    // Cells attention looks at when n_new tokens are appended: the used ones
    // rounded up to a multiple of 32 (fewer masked columns to skip).
    uint32_t n_kv_for(uint32_t n_new) const;
    size_t total_bytes() const;

private:
    KvCache() = default;
    uint32_t size_ = 0;
    uint32_t used_ = 0;
    std::vector<lm_ggml_tensor *> k_, v_;
    std::vector<lm_ggml_context *> ctxs_;
    std::vector<lm_ggml_backend_buffer_t> buffers_;
};

} // namespace lmllm

// Context setup (backends, KV cache, scheduler reserved for the largest
// batch) and the decode loop.

#include <algorithm>
#include <string>

#include "arch.h"
#include "context_impl.h"
#include "ggml-cpu.h"

namespace lmllm {

Status Context::Impl::init(const ContextParams & p) {
    params = p;
    const HParams & hp = m.hp;
    // FLASH_ATTN_EXT applies a logit softcap before the scale, these models after it
    params.flash_attn = p.flash_attn && hp.f_attn_logit_softcapping <= 0.0f;
    const uint32_t n_ctx = p.n_ctx == 0 ? hp.n_ctx_train : p.n_ctx;
    n_batch = std::max<uint32_t>(1, std::min(p.n_batch == 0 ? n_ctx : p.n_batch, n_ctx));
    params.n_ctx = n_ctx;
    params.n_batch = n_batch;
    params.n_threads = std::max(1, p.n_threads);

    backend_cpu = lm_ggml_backend_dev_init(m.cpu_dev, nullptr);
    if (backend_cpu == nullptr) {
        return Status::error("cannot start the CPU backend");
    }
    lm_ggml_backend_cpu_set_n_threads(backend_cpu, params.n_threads);
    backend_devs.reserve(m.devs.size());
    for (lm_ggml_backend_dev_t d : m.devs) {
        lm_ggml_backend_t be = lm_ggml_backend_dev_init(d, nullptr);
        if (be == nullptr) {
            return Status::error(std::string("cannot start a backend on ") + lm_ggml_backend_dev_name(d));
        }
        backend_devs.push_back(be);
    }

    // Like llama.cpp's offload_kqv: each offloaded layer's cache goes with it
    // when its device can run attention over it, else to the CPU.
    auto kv_r = KvCache::create(m, n_ctx, p.type_k, p.type_v,
                                KvCache::layer_devices(m, n_ctx, p.type_k, p.type_v, params.flash_attn));
    if (!kv_r.ok()) {
        return kv_r.status();
    }
    kv = std::move(kv_r.value());

    // Nodes per layer stay under ~70 for every architecture here.
    max_nodes = static_cast<int32_t>(std::max<uint32_t>(1024, hp.n_layer * 96 + 256));
    graph_buf.resize(lm_ggml_tensor_overhead() * size_t(max_nodes) +
                     lm_ggml_graph_overhead_custom(size_t(max_nodes), false));

    std::vector<lm_ggml_backend_t> backends = backend_devs;
    backends.push_back(backend_cpu); // the CPU runs what others cannot: always last
    sched = lm_ggml_backend_sched_new(backends.data(), nullptr, static_cast<int>(backends.size()), size_t(max_nodes),
                                      false);
    if (sched == nullptr) {
        return Status::error("cannot create the backend scheduler");
    }

    // Reserve compute memory for the largest batch against a full cache.
    BatchLayout worst;
    worst.n_tokens = static_cast<int32_t>(n_batch);
    worst.n_outputs = p.all_logits ? worst.n_tokens : 1;
    worst.n_kv = static_cast<int32_t>(n_ctx);
    worst.kv_head = 0;
    BuiltGraph g = build(worst);
    if (g.gf == nullptr || !lm_ggml_backend_sched_reserve(sched, g.gf)) {
        return Status::error("cannot reserve compute buffers for a batch of " + std::to_string(n_batch) + " tokens");
    }
    return {};
}

Status Context::Impl::decode(const std::vector<Token> & tokens) {
    const uint32_t n_vocab = m.hp.n_vocab;
    if (tokens.empty()) {
        return Status::error("decode: no tokens");
    }
    for (Token t : tokens) {
        if (t < 0 || static_cast<uint32_t>(t) >= n_vocab) {
            return Status::error("decode: token id " + std::to_string(t) + " is out of range [0, " +
                                 std::to_string(n_vocab) + ")");
        }
    }
    const uint32_t n = static_cast<uint32_t>(tokens.size());
    const uint32_t n_ctx = kv->size();
    used_before = kv->used();
    if (tokens.size() > n_ctx || n > n_ctx - used_before) {
        std::string msg = "prompt of " + std::to_string(tokens.size()) + " tokens does not fit in the context of " +
                          std::to_string(n_ctx);
        if (used_before > 0) {
            msg += " (" + std::to_string(used_before) + " positions already used)";
        }
        return Status::error(msg);
    }

    const bool all = params.all_logits;
    logit_rows = 0;
    logits.resize(size_t(all ? n : 1) * n_vocab);
    for (uint32_t off = 0; off < n; off += n_batch) {
        const uint32_t nb = std::min(n_batch, n - off);
        const bool last = off + nb == n;
        const int32_t n_out = all ? static_cast<int32_t>(nb) : 1;
        float * dst = all ? logits.data() + size_t(off) * n_vocab : (last ? logits.data() : nullptr);
        Status s = run_batch(tokens.data() + off, static_cast<int32_t>(nb), n_out, dst);
        if (!s.ok()) {
            kv->set_used(used_before); // cells past used are ignored: the cache is as before
            return s;
        }
        kv->set_used(kv->used() + nb);
    }
    logit_rows = all ? static_cast<int32_t>(n) : 1;
    logit_first = static_cast<int32_t>(n) - logit_rows;
    return {};
}

} // namespace lmllm

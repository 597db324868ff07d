// Context: a KV cache, a scheduler over the model's devices (CPU last) and
// the decode loop that splits input into n_batch chunks, builds each
// chunk's graph, fills its inputs and reads back logits.

#include "lmllm/context.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "arch.h"
#include "context_impl.h"
#include "ggml-cpu.h"

namespace lmllm {
namespace {

// Points the graph's KV stores at cells kv_head.. instead of the cells it was
// last run for; everything else in the graph is independent of kv_head.
void move_kv_stores(BuiltGraph & g, int32_t kv_head) {
    const int64_t cells = static_cast<int64_t>(kv_head) - g.layout.kv_head;
    for (const KvStoreView & s : g.kv_stores) {
        const int64_t bytes = cells * static_cast<int64_t>(s.bytes_per_cell);
        s.t->data = static_cast<char *>(s.t->data) + bytes;
        s.t->view_offs = static_cast<size_t>(static_cast<int64_t>(s.t->view_offs) + bytes);
    }
    g.layout.kv_head = kv_head;
}

} // namespace

Context::Impl::~Impl() {
    if (graph_ctx != nullptr) {
        lm_ggml_free(graph_ctx);
    }
    if (sched != nullptr) {
        lm_ggml_backend_sched_free(sched);
    }
    kv.reset();
    for (lm_ggml_backend_t be : backend_devs) {
        lm_ggml_backend_free(be);
    }
    if (backend_cpu != nullptr) {
        lm_ggml_backend_free(backend_cpu);
    }
}

BuiltGraph Context::Impl::build(const BatchLayout & layout) {
    if (graph_ctx != nullptr) {
        lm_ggml_free(graph_ctx);
        graph_ctx = nullptr;
    }
    lm_ggml_init_params ip = {graph_buf.size(), graph_buf.data(), /*no_alloc =*/true};
    graph_ctx = lm_ggml_init(ip);
    BuiltGraph g;
    if (graph_ctx == nullptr) {
        return g;
    }
    g.gf = lm_ggml_new_graph_custom(graph_ctx, max_nodes, false);
    GraphBuilder b(m, *kv, graph_ctx, g.gf, layout);
    b.flash_attn = params.flash_attn;
    if (!backend_devs.empty()) {
        // Small batches (or no layer on the CPU): keep each offloaded layer's
        // norm on its device (the scheduler would leave it with the previous
        // layer's device).
        const bool pin = layout.n_tokens < 32 || m.layer_device(0) != m.cpu_dev;
        b.on_layer_norm = [this, pin](lm_ggml_tensor * t, uint32_t il) {
            lm_ggml_backend_t be = pin ? backend_of(m.layer_device(il)) : nullptr;
            if (be != nullptr && lm_ggml_backend_supports_op(be, t)) {
                lm_ggml_backend_sched_set_tensor_backend(sched, t, be);
            }
        };
    }
    g.logits = m.arch->build_graph(b);
    lm_ggml_set_name(g.logits, "result_output");
    lm_ggml_set_output(g.logits);
    lm_ggml_build_forward_expand(g.gf, g.logits);
    g.in = b.in;
    g.layout = layout;
    g.kv_stores = std::move(b.kv_stores);
    return g;
}

lm_ggml_backend_t Context::Impl::backend_of(lm_ggml_backend_dev_t dev) const {
    for (size_t i = 0; i < m.devs.size() && i < backend_devs.size(); i++) {
        if (m.devs[i] == dev) {
            return backend_devs[i];
        }
    }
    return nullptr;
}

void Context::Impl::set_inputs(const BuiltGraph & g, const BatchLayout & layout, const Token * tokens) {
    const int32_t T = layout.n_tokens;
    lm_ggml_backend_tensor_set(g.in.tokens, tokens, 0, sizeof(int32_t) * T);
    if (g.in.pos != nullptr) {
        std::vector<int32_t> pos(T);
        for (int32_t i = 0; i < T; i++) {
            pos[i] = layout.kv_head + i;
        }
        lm_ggml_backend_tensor_set(g.in.pos, pos.data(), 0, sizeof(int32_t) * T);
    }
    // Causal mask: token j (position kv_head + j) sees cells 0..kv_head + j;
    // with a sliding window only the last n_swa of them. Padding rows: -inf.
    for (int swa = 0; swa < 2; swa++) {
        lm_ggml_tensor * mt = swa ? g.in.mask_swa : g.in.mask;
        if (mt == nullptr) {
            continue;
        }
        const int64_t n_kv = mt->ne[0];
        const int64_t rows = mt->ne[1];
        mask_buf.assign(static_cast<size_t>(n_kv * rows), -INFINITY);
        for (int32_t j = 0; j < T; j++) {
            const int64_t p = layout.kv_head + j;
            for (int64_t i = 0; i <= p && i < n_kv; i++) {
                if (!swa || p - i < static_cast<int64_t>(m.hp.n_swa)) {
                    mask_buf[static_cast<size_t>(j * n_kv + i)] = 0.0f;
                }
            }
        }
        lm_ggml_backend_tensor_set(mt, mask_buf.data(), 0, lm_ggml_nbytes(mt));
    }
    if (g.in.out_ids != nullptr) {
        std::vector<int32_t> ids(layout.n_outputs);
        for (int32_t r = 0; r < layout.n_outputs; r++) {
            ids[r] = T - layout.n_outputs + r;
        }
        lm_ggml_backend_tensor_set(g.in.out_ids, ids.data(), 0, sizeof(int32_t) * ids.size());
    }
}

Status Context::Impl::run_batch(const Token * tokens, int32_t n_tokens, int32_t n_outputs, float * logits_out) {
    BatchLayout layout;
    layout.n_tokens = n_tokens;
    layout.n_outputs = n_outputs;
    layout.n_kv = static_cast<int32_t>(kv->n_kv_for(static_cast<uint32_t>(n_tokens)));
    layout.kv_head = static_cast<int32_t>(kv->used());

    if (can_reuse(layout)) {
        move_kv_stores(last, layout.kv_head);
    } else {
        last = BuiltGraph{};
        lm_ggml_backend_sched_reset(sched);
        BuiltGraph g = build(layout);
        if (g.gf == nullptr) {
            return Status::error("cannot create the graph context");
        }
        if (!lm_ggml_backend_sched_alloc_graph(sched, g.gf)) {
            return Status::error("cannot allocate the compute graph for " + std::to_string(n_tokens) + " tokens");
        }
        last = std::move(g);
    }
    set_inputs(last, layout, tokens);
    const lm_ggml_status st = lm_ggml_backend_sched_graph_compute(sched, last.gf);
    if (st != LM_GGML_STATUS_SUCCESS) {
        last = BuiltGraph{};
        return Status::error("graph compute failed (status " + std::to_string(static_cast<int>(st)) + ")");
    }
    if (logits_out != nullptr) {
        lm_ggml_backend_tensor_get(last.logits, logits_out, 0, sizeof(float) * size_t(n_outputs) * m.hp.n_vocab);
    }
    return {};
}

// Only the CPU runs the graph: a device backend may keep state (captured
// graphs, copies) tied to the tensors' addresses, so it rebuilds every batch.
bool Context::Impl::can_reuse(const BatchLayout & layout) const {
    const BatchLayout & was = last.layout;
    return last.gf != nullptr && backend_devs.empty() && was.n_tokens == layout.n_tokens &&
           was.n_outputs == layout.n_outputs && was.n_kv == layout.n_kv;
}

Result<std::unique_ptr<Context>> Context::create(const Model & model, const ContextParams & params) {
    try {
        auto impl = std::make_unique<Impl>(model);
        Status s = impl->init(params);
        if (!s.ok()) {
            return s;
        }
        return std::unique_ptr<Context>(new Context(std::move(impl)));
    } catch (const std::bad_alloc &) {
        return Status::error("out of memory while creating the context");
    }
}

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::~Context() = default;

Status Context::decode(const std::vector<Token> & tokens) {
    try {
        return impl_->decode(tokens);
    } catch (const std::bad_alloc &) {
        impl_->kv->set_used(impl_->used_before);
        impl_->logit_rows = 0;
        return Status::error("out of memory while decoding");
    }
}

const float * Context::logits() const { return logits(-1); }

const float * Context::logits(int32_t i) const {
    const Impl & c = *impl_;
    if (c.logit_rows == 0) {
        return nullptr;
    }
    // Rows hold the last logit_rows tokens of the last decode call.
    const int32_t idx = i < 0 ? c.logit_rows + i : i - c.logit_first;
    if (idx < 0 || idx >= c.logit_rows) {
        return nullptr;
    }
    return c.logits.data() + size_t(idx) * c.m.hp.n_vocab;
}

int32_t Context::n_vocab() const { return static_cast<int32_t>(impl_->m.hp.n_vocab); }
uint32_t Context::n_past() const { return impl_->kv->used(); }
uint32_t Context::n_ctx() const { return impl_->kv->size(); }

void Context::clear() {
    impl_->kv->clear();
    impl_->logit_rows = 0;
}

void Context::set_n_threads(int32_t n) {
    impl_->params.n_threads = std::max(1, n);
    lm_ggml_backend_cpu_set_n_threads(impl_->backend_cpu, impl_->params.n_threads);
}

} // namespace lmllm

// Scheduler + graph allocator cost on a transformer-shaped graph.
//
// The graph has SmolLM2-135M's shapes: 30 llama layers, n_embd 576, 9 query
// heads of 64 (3 KV heads), n_ff 1536, 32 tokens, attention over the batch
// itself (no KV cache, no output head): 30 nodes a layer, ~900 nodes.
// Weights are F32 in a WEIGHTS buffer; the 30 layers' weight tensors are
// distinct tensors aliasing one layer's storage (the scheduler only looks at
// where a tensor lives, never at its values), which keeps the benchmark at
// ~14 MB instead of ~420 MB.
//
// Cases:
//   cpu         one CPU backend, weights on the CPU;
//   cpu_refdev  {REFDEV, CPU}, weights on REFDEV: the matrix products, adds
//               and copies run on REFDEV; norms, RoPE, softmax, SiLU and the
//               non-contiguous attention products fall back to the CPU, so the
//               graph ping-pongs (~7 splits a layer).
// Benchmarks:
//   BM_SchedAlloc    sched_reset + sched_alloc_graph of a freshly built graph
//                    with the structure of the previous one (steady state of
//                    an inference loop: split, then place with the known plan);
//   BM_SchedReserve  sched_reserve (split + plan from scratch + buffers);
//   BM_BuildGraph    building the graph alone (context), for scale.
// Counters: compute_bytes = planned compute buffers (all backends),
// naive_bytes = sum of every tensor the graph places (intermediates, inputs,
// copies) without reuse, splits, inputs (tensors copied between backends), nodes.

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

namespace {

constexpr int kLayers = 30, kEmbd = 576, kHead = 9, kHeadKV = 3, kHeadDim = 64, kFF = 1536, kTokens = 32;

struct LayerWeights {
    lm_ggml_tensor *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *wgate, *wup, *wdown;
};

// Backends and weights of one case, created once.
struct Setup {
    lm_ggml_backend_t cpu = nullptr, ref = nullptr;
    lm_ggml_context * wctx = nullptr;
    lm_ggml_backend_buffer_t wbuf = nullptr;
    std::vector<LayerWeights> layers;
    lm_ggml_tensor * out_norm = nullptr;
    bool ok = false;

    explicit Setup(bool with_ref) {
        cpu = lm_ggml_backend_cpu_init();
        if (with_ref) {
            lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR);
            lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_name("REFDEV0");
            ref = dev ? lm_ggml_backend_dev_init(dev, nullptr) : nullptr;
            if (ref == nullptr) {
                std::fprintf(stderr, "sched_bench: REFDEV plugin not found in %s\n", LMGGML_PLUGIN_DIR);
                return;
            }
        }
        lm_ggml_backend_t home = with_ref ? ref : cpu;
        lm_ggml_init_params p{lm_ggml_tensor_overhead() * (kLayers * 9 + 4), nullptr, true};
        wctx = lm_ggml_init(p);
        auto mk = [&](int64_t a, int64_t b) {
            return b ? lm_ggml_new_tensor_2d(wctx, LM_GGML_TYPE_F32, a, b)
                     : lm_ggml_new_tensor_1d(wctx, LM_GGML_TYPE_F32, a);
        };
        for (int l = 0; l < kLayers; l++) {
            LayerWeights w{};
            w.attn_norm = mk(kEmbd, 0);
            w.wq = mk(kEmbd, kEmbd);
            w.wk = mk(kEmbd, kHeadKV * kHeadDim);
            w.wv = mk(kEmbd, kHeadKV * kHeadDim);
            w.wo = mk(kEmbd, kEmbd);
            w.ffn_norm = mk(kEmbd, 0);
            w.wgate = mk(kEmbd, kFF);
            w.wup = mk(kEmbd, kFF);
            w.wdown = mk(kFF, kEmbd);
            layers.push_back(w);
        }
        out_norm = mk(kEmbd, 0);
        // one layer's worth of storage, shared by every layer's tensors
        lm_ggml_tensor * const * first = &layers[0].attn_norm;
        size_t bytes = lm_ggml_backend_get_alignment(home) * 16 + lm_ggml_nbytes(out_norm);
        for (int k = 0; k < 9; k++) bytes += lm_ggml_nbytes(first[k]) + lm_ggml_backend_get_alignment(home);
        wbuf = lm_ggml_backend_alloc_buffer(home, bytes);
        if (wbuf == nullptr) return;
        lm_ggml_backend_buffer_set_usage(wbuf, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        char * base = static_cast<char *>(lm_ggml_backend_buffer_get_base(wbuf));
        const size_t align = lm_ggml_backend_get_alignment(home);
        for (int l = 0; l < kLayers; l++) {
            lm_ggml_tensor * const * t = &layers[(size_t) l].attn_norm;
            size_t off = 0;
            for (int k = 0; k < 9; k++) {
                lm_ggml_backend_tensor_alloc(wbuf, t[k], base + off);
                off += (lm_ggml_nbytes(t[k]) + align - 1) / align * align;
            }
            if (l == 0) lm_ggml_backend_tensor_alloc(wbuf, out_norm, base + off);
        }
        ok = true;
    }
    ~Setup() {
        lm_ggml_backend_buffer_free(wbuf);
        lm_ggml_free(wctx);
        lm_ggml_backend_free(ref);
        lm_ggml_backend_free(cpu);
    }
};

// Builds the llama-shaped graph in a context over `mem`.
struct Graph {
    std::vector<uint8_t> mem;
    lm_ggml_context * ctx = nullptr;
    lm_ggml_cgraph * gf = nullptr;

    Graph() : mem(lm_ggml_tensor_overhead() * 2048 + lm_ggml_graph_overhead_custom(2048, false)) {}
    ~Graph() { lm_ggml_free(ctx); }

    void build(const Setup & s) {
        lm_ggml_free(ctx);
        lm_ggml_init_params p{mem.size(), mem.data(), true};
        ctx = lm_ggml_init(p);
        lm_ggml_tensor * inp = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, kEmbd, kTokens);
        lm_ggml_tensor * pos = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, kTokens);
        lm_ggml_tensor * mask = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, kTokens, kTokens);
        lm_ggml_set_input(inp);
        lm_ggml_set_input(pos);
        lm_ggml_set_input(mask);
        const float kq_scale = 1.0f / std::sqrt((float) kHeadDim);
        lm_ggml_tensor * x = inp;
        for (const LayerWeights & w : s.layers) {
            lm_ggml_tensor * cur = lm_ggml_mul(ctx, lm_ggml_rms_norm(ctx, x, 1e-5f), w.attn_norm);
            lm_ggml_tensor * q = lm_ggml_reshape_3d(ctx, lm_ggml_mul_mat(ctx, w.wq, cur), kHeadDim, kHead, kTokens);
            lm_ggml_tensor * k = lm_ggml_reshape_3d(ctx, lm_ggml_mul_mat(ctx, w.wk, cur), kHeadDim, kHeadKV, kTokens);
            lm_ggml_tensor * v = lm_ggml_reshape_3d(ctx, lm_ggml_mul_mat(ctx, w.wv, cur), kHeadDim, kHeadKV, kTokens);
            q = lm_ggml_rope_ext(ctx, q, pos, nullptr, kHeadDim, 0, 8192, 100000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
            k = lm_ggml_rope_ext(ctx, k, pos, nullptr, kHeadDim, 0, 8192, 100000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
            q = lm_ggml_permute(ctx, q, 0, 2, 1, 3);          // (hd, T, H)
            k = lm_ggml_permute(ctx, k, 0, 2, 1, 3);          // (hd, T, Hkv)
            lm_ggml_tensor * kq = lm_ggml_mul_mat(ctx, k, q); // (T, T, H)
            kq = lm_ggml_soft_max_ext(ctx, kq, mask, kq_scale, 0.0f);
            v = lm_ggml_cont(ctx, lm_ggml_permute(ctx, v, 1, 2, 0, 3)); // (T, hd, Hkv)
            lm_ggml_tensor * kqv = lm_ggml_mul_mat(ctx, v, kq);         // (hd, T, H)
            cur = lm_ggml_cont_2d(ctx, lm_ggml_permute(ctx, kqv, 0, 2, 1, 3), kEmbd, kTokens);
            cur = lm_ggml_mul_mat(ctx, w.wo, cur);
            lm_ggml_tensor * ffn_inp = lm_ggml_add(ctx, cur, x);
            cur = lm_ggml_mul(ctx, lm_ggml_rms_norm(ctx, ffn_inp, 1e-5f), w.ffn_norm);
            lm_ggml_tensor * up = lm_ggml_mul_mat(ctx, w.wup, cur);
            lm_ggml_tensor * gate = lm_ggml_silu(ctx, lm_ggml_mul_mat(ctx, w.wgate, cur));
            cur = lm_ggml_mul_mat(ctx, w.wdown, lm_ggml_mul(ctx, gate, up));
            x = lm_ggml_add(ctx, cur, ffn_inp);
        }
        lm_ggml_tensor * out = lm_ggml_mul(ctx, lm_ggml_rms_norm(ctx, x, 1e-5f), s.out_norm);
        lm_ggml_set_output(out);
        gf = lm_ggml_new_graph_custom(ctx, 2048, false);
        lm_ggml_build_forward_expand(gf, out);
    }
};

lm_ggml_backend_sched_t make_sched(const Setup & s) {
    lm_ggml_backend_t list[2] = {s.ref, s.cpu};
    return s.ref ? lm_ggml_backend_sched_new(list, nullptr, 2, 2048, false)
                 : lm_ggml_backend_sched_new(&list[1], nullptr, 1, 2048, false);
}

// every distinct non-view tensor the scheduler placed in a compute buffer
size_t naive_bytes(lm_ggml_cgraph * gf) {
    std::set<const lm_ggml_tensor *> seen;
    size_t total = 0;
    auto add = [&](lm_ggml_tensor * t) {
        if (t == nullptr || t->view_src != nullptr || t->buffer == nullptr || !seen.insert(t).second) return;
        if (lm_ggml_backend_buffer_get_usage(t->buffer) != LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE) return;
        total += lm_ggml_nbytes(t);
    };
    for (int i = 0; i < lm_ggml_graph_n_nodes(gf); i++) {
        lm_ggml_tensor * n = lm_ggml_graph_node(gf, i);
        add(n);
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) add(n->src[j]);
    }
    return total;
}

void report(benchmark::State & state, const Setup & s, lm_ggml_backend_sched_t sched, lm_ggml_cgraph * gf) {
    size_t planned = lm_ggml_backend_sched_get_buffer_size(sched, s.cpu);
    if (s.ref) planned += lm_ggml_backend_sched_get_buffer_size(sched, s.ref);
    state.counters["compute_bytes"] = (double) planned;
    state.counters["naive_bytes"] = (double) naive_bytes(gf);
    state.counters["splits"] = lm_ggml_backend_sched_get_n_splits(sched);
    state.counters["inputs"] = lm_ggml_backend_sched_get_n_inputs(sched);
    state.counters["nodes"] = lm_ggml_graph_n_nodes(gf);
}

void BM_SchedAlloc(benchmark::State & state, bool with_ref) {
    Setup s(with_ref);
    if (!s.ok) {
        state.SkipWithError("setup failed");
        return;
    }
    lm_ggml_backend_sched_t sched = make_sched(s);
    Graph g;
    for (auto _ : state) {
        state.PauseTiming();
        g.build(s);
        state.ResumeTiming();
        lm_ggml_backend_sched_reset(sched);
        if (!lm_ggml_backend_sched_alloc_graph(sched, g.gf)) {
            state.SkipWithError("sched_alloc_graph failed");
            break;
        }
    }
    report(state, s, sched, g.gf);
    lm_ggml_backend_sched_free(sched);
}

void BM_SchedReserve(benchmark::State & state, bool with_ref) {
    Setup s(with_ref);
    if (!s.ok) {
        state.SkipWithError("setup failed");
        return;
    }
    Graph g;
    g.build(s); // reserve leaves the graph as it found it: one graph serves every iteration
    for (auto _ : state) {
        state.PauseTiming();
        lm_ggml_backend_sched_t sched = make_sched(s); // fresh: plans and allocates from scratch
        state.ResumeTiming();
        const bool ok = lm_ggml_backend_sched_reserve(sched, g.gf);
        state.PauseTiming();
        lm_ggml_backend_sched_free(sched);
        state.ResumeTiming();
        if (!ok) {
            state.SkipWithError("sched_reserve failed");
            break;
        }
    }
}

void BM_BuildGraph(benchmark::State & state) {
    Setup s(false);
    Graph g;
    for (auto _ : state) {
        g.build(s);
        benchmark::DoNotOptimize(g.gf);
    }
    state.counters["nodes"] = lm_ggml_graph_n_nodes(g.gf);
}

BENCHMARK_CAPTURE(BM_SchedAlloc, cpu, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SchedAlloc, cpu_refdev, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SchedReserve, cpu, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SchedReserve, cpu_refdev, true)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BuildGraph)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();

// CPU matmul kernels (src/cpu/arch) through the public graph API, with the
// roofline of this machine measured in the same run.
//
// Roofline:
//   BM_StreamRead     reading a 96 MiB buffer (SmolLM2-135M Q4_1's weights
//                     are ~96 MB per token) with AVX-512 (else AVX2) loads: GB/s
//   BM_PeakVnni       independent vpdpbusd zmm chains (without VNNI: the AVX2
//                     vpmaddubsw + vpmaddwd pair): int8 GOP/s (2 per MAC)
//   BM_PeakFma        independent vfmadd zmm (else ymm) chains: GFLOP/s
// Kernels (one MUL_MAT graph per case, a persistent threadpool):
//   BM_MulMat/<type>/K/M/N       one product: GFLOP/s and weight GB/s; weights
//                                hot in cache except M 49152 (from DRAM)
//                                (<type>_x8: weights in the CPU_REPACK buffer,
//                                repacked where the CPU's level has an x8
//                                kernel for the type: Q4_0/Q4_1/Q5_0/Q5_1/IQ4_NL
//                                from AVX2, also Q8_0 at AVX-512 VNNI;
//                                q8_0[_x8]_head: Gemma 3 270M's 178 MB output
//                                head, past the L3 share of hosts with a
//                                large shared L3)
//   BM_Gen/<types>/layers        every matmul of a SmolLM2-135M token (30 layers
//                                x q,k,v,o,gate,up,down + the output head),
//                                N = 1: tokens/s and weight GB/s, to compare
//                                with BM_StreamRead (_x8: the Q4_1 layers
//                                repacked, the Q8_0 head too at AVX-512 VNNI)
//   BM_GenLayers/q4_1_x8/split|merged  a token's 210 layer matmuls (Q4_1
//                                repacked, no head), or one matrix of the same
//                                bytes: weight GB/s, what many small nodes cost
//   BM_Prompt/<types>/N          the layer matmuls for N prompt tokens: GFLOP/s
//   BM_SoftMax/threads           a prompt's attention softmax (512 x 512 x 9,
//                                causal F16 mask): GB/s beside BM_StreamRead
//   BM_NodeOverhead              211 tiny nodes (a token's matmul count): the
//                                graph runtime's cost per node (barriers), the
//                                floor under BM_Gen with several threads
// Every benchmark reports mean/median/stddev and min/max over repetitions:
// read times from the _min rows and rates from the _max rows.
// The kernel level is the process's: run with LMGGML_CPU_ISA=scalar|avx2|
// avx512|avx512_vnni|amx to measure a lower one (docs/PERF.md).

#include <benchmark/benchmark.h>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 warns inside its avx512 intrinsic headers (masked builtins' undefined operands)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

namespace {

constexpr int kEmbd = 576, kFF = 1536, kKV = 192, kVocab = 49152, kLayers = 30;

// ---------------------------------------------------------------- roofline
constexpr size_t kStreamBytes = 96u << 20;
constexpr size_t kHugePage = 2u << 20;

__attribute__((target("avx512f"))) int64_t read_all_avx512(const char * p, size_t n) {
    __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
    for (size_t i = 0; i < n; i += 256) {
        a = _mm512_add_epi32(a, _mm512_load_si512(p + i));
        b = _mm512_add_epi32(b, _mm512_load_si512(p + i + 64));
        c = _mm512_add_epi32(c, _mm512_load_si512(p + i + 128));
        d = _mm512_add_epi32(d, _mm512_load_si512(p + i + 192));
    }
    return _mm512_reduce_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a, b), _mm512_add_epi32(c, d)));
}

__attribute__((target("avx2"))) int64_t read_all_avx2(const char * p, size_t n) {
    __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
    for (size_t i = 0; i < n; i += 128) {
        a = _mm256_add_epi32(a, _mm256_load_si256((const __m256i *) (p + i)));
        b = _mm256_add_epi32(b, _mm256_load_si256((const __m256i *) (p + i + 32)));
        c = _mm256_add_epi32(c, _mm256_load_si256((const __m256i *) (p + i + 64)));
        d = _mm256_add_epi32(d, _mm256_load_si256((const __m256i *) (p + i + 96)));
    }
    const __m256i s = _mm256_add_epi32(_mm256_add_epi32(a, b), _mm256_add_epi32(c, d));
    alignas(32) int32_t v[8];
    _mm256_store_si256((__m256i *) v, s);
    return (int64_t) v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
}

// the widest loads this CPU has (both saturate the memory bus; the wide one is the kernels' own)
int64_t read_all(const char * p, size_t n) {
    return __builtin_cpu_supports("avx512f") ? read_all_avx512(p, n) : read_all_avx2(p, n);
}

// Runs fn(thread index) on `threads` threads (fresh ones: spawning costs
// ~0.1 ms, under 2 % of every case here) and waits for all of them.
template <typename Fn> void on_threads(int threads, Fn fn) {
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(fn, t);
    fn(0);
    for (std::thread & th : pool) th.join();
}

// range: threads; each reads its share of the 96 MiB, on 2 MiB transparent
// huge pages like the CPU backend's weight buffers (with 4 KiB pages the
// same read measured about 10 % slower here, which would flatter the
// kernels' share of it).
void BM_StreamRead(benchmark::State & st) {
    if (!__builtin_cpu_supports("avx2")) {
        st.SkipWithError("no AVX2");
        return;
    }
    const int nth = (int) st.range(0);
    const size_t n = kStreamBytes / (size_t) nth;
    std::vector<char *> bufs((size_t) nth);
    on_threads(nth, [&](int t) { // first touch by the reading thread
        bufs[(size_t) t] = static_cast<char *>(std::aligned_alloc(kHugePage, n));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        (void) madvise(bufs[(size_t) t], n, MADV_HUGEPAGE); // advice: failure keeps small pages
#endif
        std::memset(bufs[(size_t) t], 1, n);
    });
    for (auto _ : st) {
        on_threads(nth, [&](int t) { benchmark::DoNotOptimize(read_all(bufs[(size_t) t], n)); });
    }
    st.SetBytesProcessed((int64_t) st.iterations() * (int64_t) kStreamBytes);
    for (char * p : bufs) std::free(p);
}

constexpr int kChains = 12; // > latency x ports, so throughput bound

__attribute__((target("avx512f,avx512vnni"))) int vnni_loop(int64_t iters) {
    __m512i acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(i);
    __m512i x = _mm512_set1_epi32(0x01010101), y = _mm512_set1_epi32(0x02020202);
    for (int64_t it = 0; it < iters; ++it) {
        for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], x, y);
        __asm__ volatile("" : "+v"(x), "+v"(y)); // keep the operands opaque
    }
    __m512i s = acc[0];
    for (int i = 1; i < kChains; ++i) s = _mm512_add_epi32(s, acc[i]);
    return _mm512_reduce_add_epi32(s);
}

__attribute__((target("avx512f,fma"))) float fma_loop(int64_t iters) {
    __m512 acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps((float) i);
    __m512 x = _mm512_set1_ps(1.0001f), y = _mm512_set1_ps(0.999f);
    for (int64_t it = 0; it < iters; ++it) {
        for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
        __asm__ volatile("" : "+v"(x), "+v"(y));
    }
    __m512 s = acc[0];
    for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
    return _mm512_reduce_add_ps(s);
}

// AVX2 (no VNNI): vpmaddubsw + vpmaddwd, the pair the AVX2 int8 kernels use; 32 MACs per pair
__attribute__((target("avx2"))) int maddubs_loop(int64_t iters) {
    __m256i acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_epi32(i);
    __m256i x = _mm256_set1_epi32(0x01010101), y = _mm256_set1_epi32(0x02020202);
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t it = 0; it < iters; ++it) {
        for (int i = 0; i < kChains; ++i) {
            acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), ones));
        }
        __asm__ volatile("" : "+x"(x), "+x"(y));
    }
    __m256i s = acc[0];
    for (int i = 1; i < kChains; ++i) s = _mm256_add_epi32(s, acc[i]);
    return _mm256_extract_epi32(s, 0);
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(int64_t iters) {
    __m256 acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps((float) i);
    __m256 x = _mm256_set1_ps(1.0001f), y = _mm256_set1_ps(0.999f);
    for (int64_t it = 0; it < iters; ++it) {
        for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
        __asm__ volatile("" : "+x"(x), "+x"(y));
    }
    __m256 s = acc[0];
    for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
    return _mm256_cvtss_f32(s);
}

constexpr int64_t kPeakIters = 1 << 20;

// range: threads, each running the whole loop
void BM_PeakVnni(benchmark::State & st) {
    const bool vnni = __builtin_cpu_supports("avx512vnni");
    if (!vnni && !__builtin_cpu_supports("avx2")) {
        st.SkipWithError("no AVX2");
        return;
    }
    const int nth = (int) st.range(0);
    if (vnni) {
        for (auto _ : st) on_threads(nth, [](int) { benchmark::DoNotOptimize(vnni_loop(kPeakIters)); });
    } else {
        for (auto _ : st) on_threads(nth, [](int) { benchmark::DoNotOptimize(maddubs_loop(kPeakIters)); });
    }
    st.SetLabel(vnni ? "vpdpbusd zmm" : "vpmaddubsw+vpmaddwd ymm");
    const double macs = vnni ? 64 : 32;
    st.counters["GOPS"] = benchmark::Counter((double) st.iterations() * nth * kPeakIters * kChains * macs * 2 * 1e-9,
                                             benchmark::Counter::kIsRate);
}

void BM_PeakFma(benchmark::State & st) {
    const bool wide = __builtin_cpu_supports("avx512f");
    if (!wide && !__builtin_cpu_supports("fma")) {
        st.SkipWithError("no FMA");
        return;
    }
    const int nth = (int) st.range(0);
    if (wide) {
        for (auto _ : st) on_threads(nth, [](int) { benchmark::DoNotOptimize(fma_loop(kPeakIters)); });
    } else {
        for (auto _ : st) on_threads(nth, [](int) { benchmark::DoNotOptimize(fma_loop_avx2(kPeakIters)); });
    }
    st.SetLabel(wide ? "zmm" : "ymm");
    st.counters["GFLOPS"] =
        benchmark::Counter((double) st.iterations() * nth * kPeakIters * kChains * (wide ? 16 : 8) * 2 * 1e-9,
                           benchmark::Counter::kIsRate);
}

// ---------------------------------------------------------------- matmul graphs
// The CPU's buffer type for repacked weights (CPU_REPACK), or NULL.
lm_ggml_backend_buffer_type_t repack_buft() {
    lm_ggml_backend_reg_t reg = lm_ggml_backend_cpu_reg();
    auto get = (lm_ggml_backend_dev_get_extra_bufts_t) lm_ggml_backend_reg_get_proc_address(
        reg, "lm_ggml_backend_dev_get_extra_bufts");
    lm_ggml_backend_buffer_type_t * list = get ? get(lm_ggml_backend_reg_dev_get(reg, 0)) : nullptr;
    return list != nullptr ? list[0] : nullptr;
}

// A context with every weight (random values, quantized), the activations,
// and a graph of MUL_MAT nodes, computed on a persistent threadpool. With a
// weight buffer type the weights live in one buffer of it, as a model's do
// (CPU or CPU_REPACK: the same allocator, huge pages included).
struct Graph {
    lm_ggml_context * ctx = nullptr;
    lm_ggml_context * wctx = nullptr; // weights, when they go to wbuft
    lm_ggml_backend_buffer_type_t wbuft = nullptr;
    lm_ggml_backend_buffer_t wbuf = nullptr;
    std::vector<std::pair<lm_ggml_tensor *, std::vector<uint8_t>>> pending; // weight bytes to upload
    lm_ggml_cgraph * gf = nullptr;
    lm_ggml_threadpool * pool = nullptr;
    lm_ggml_cplan plan{};
    std::vector<uint8_t> work;
    double flops = 0, weight_bytes = 0;

    Graph(size_t mem, int n_threads, lm_ggml_backend_buffer_type_t weight_buft = nullptr) : wbuft(weight_buft) {
        lm_ggml_init_params ip = {mem, nullptr, false};
        ctx = lm_ggml_init(ip);
        if (wbuft != nullptr) {
            lm_ggml_init_params wp = {4096 * lm_ggml_tensor_overhead(), nullptr, true};
            wctx = lm_ggml_init(wp);
        }
        gf = lm_ggml_new_graph_custom(ctx, 2048, false);
        lm_ggml_threadpool_params tp = lm_ggml_threadpool_params_default(n_threads);
        pool = lm_ggml_threadpool_new(&tp);
    }
    ~Graph() {
        lm_ggml_threadpool_free(pool);
        if (wbuf != nullptr) lm_ggml_backend_buffer_free(wbuf);
        if (wctx != nullptr) lm_ggml_free(wctx);
        lm_ggml_free(ctx);
    }
    Graph(const Graph &) = delete;
    Graph & operator=(const Graph &) = delete;

    lm_ggml_tensor * weights(lm_ggml_type type, int64_t k, int64_t m) {
        lm_ggml_tensor * w =
            wctx != nullptr ? lm_ggml_new_tensor_2d(wctx, type, k, m) : lm_ggml_new_tensor_2d(ctx, type, k, m);
        std::vector<uint8_t> staged;
        if (wctx != nullptr) {
            staged.resize(lm_ggml_nbytes(w));
            w->data = staged.data(); // filled below, uploaded by finish()
        }
        std::vector<float> src((size_t) (k * m));
        uint32_t s = 12345u + (uint32_t) (k * 7 + m);
        for (float & v : src) {
            s = s * 1664525u + 1013904223u;
            v = (float) ((int32_t) s >> 8) * (1.0f / 8388608.0f);
        }
        if (type == LM_GGML_TYPE_F32) {
            std::memcpy(w->data, src.data(), src.size() * sizeof(float));
        } else if (type == LM_GGML_TYPE_F16) {
            lm_ggml_fp32_to_fp16_row(src.data(), (lm_ggml_fp16_t *) w->data, k * m);
        } else {
            lm_ggml_quantize_chunk(type, src.data(), w->data, 0, m, k, nullptr);
        }
        weight_bytes += (double) lm_ggml_nbytes(w);
        if (wctx != nullptr) {
            w->data = nullptr;
            pending.emplace_back(w, std::move(staged));
        }
        return w;
    }

    lm_ggml_tensor * input(int64_t k, int64_t n) {
        lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, k, n);
        auto * p = static_cast<float *>(x->data);
        for (int64_t i = 0; i < k * n; ++i) p[i] = (float) ((i * 37) % 101 - 50) / 50.0f;
        return x;
    }

    void mul_mat(lm_ggml_tensor * w, lm_ggml_tensor * x) {
        lm_ggml_build_forward_expand(gf, lm_ggml_mul_mat(ctx, w, x));
        flops += 2.0 * (double) w->ne[0] * (double) w->ne[1] * (double) x->ne[1];
    }

    // false when the weight buffer cannot be allocated
    bool finish(int n_threads) {
        if (wctx != nullptr) {
            wbuf = lm_ggml_backend_alloc_ctx_tensors_from_buft(wctx, wbuft);
            if (wbuf == nullptr) return false;
            for (auto & [t, bytes] : pending) lm_ggml_backend_tensor_set(t, bytes.data(), 0, bytes.size());
            pending.clear();
        }
        plan = lm_ggml_graph_plan(gf, n_threads, pool);
        work.resize(plan.work_size + 64);
        plan.work_data = work.data();
        return true;
    }

    bool compute() { return lm_ggml_graph_compute(gf, &plan) == LM_GGML_STATUS_SUCCESS; }
};

void report(benchmark::State & st, const Graph & g) {
    st.counters["GFLOPS"] = benchmark::Counter((double) st.iterations() * g.flops * 1e-9, benchmark::Counter::kIsRate);
    st.counters["weight_GBps"] =
        benchmark::Counter((double) st.iterations() * g.weight_bytes * 1e-9, benchmark::Counter::kIsRate);
}

void run(benchmark::State & st, Graph & g) {
    for (auto _ : st) {
        if (!g.compute()) {
            st.SkipWithError("graph compute failed");
            return;
        }
    }
    report(st, g);
}

// Builds the graph's weights in a CPU_REPACK buffer when repacked; false
// (with the benchmark skipped) when this CPU has none or allocation fails.
bool finish(benchmark::State & st, Graph & g, int nth) {
    if (!g.finish(nth)) {
        st.SkipWithError("cannot allocate the weight buffer");
        return false;
    }
    return true;
}

// range: type, K, M, N, threads; repacked: weights in the CPU_REPACK buffer type
void BM_MulMat(benchmark::State & st, bool repacked) {
    const auto type = (lm_ggml_type) st.range(0);
    const int64_t K = st.range(1), M = st.range(2), N = st.range(3);
    const int nth = (int) st.range(4);
    if (repacked && repack_buft() == nullptr) {
        st.SkipWithError("no CPU_REPACK buffer type on this CPU");
        return;
    }
    Graph g((size_t) (K * M * 4 + K * N * 4 + M * N * 4) + (64u << 20), nth,
            repacked ? repack_buft() : lm_ggml_backend_cpu_buffer_type());
    g.mul_mat(g.weights(type, K, M), g.input(K, N));
    if (finish(st, g, nth)) run(st, g);
}

// One layer's matmuls of SmolLM2-135M (q k v o, gate, up, down), weights of type t,
// on activations xe (kEmbd rows) and xf (kFF rows).
void layer_matmuls(Graph & g, lm_ggml_type t, lm_ggml_tensor * xe, lm_ggml_tensor * xf) {
    for (int64_t m : {kEmbd, kKV, kKV, kEmbd}) g.mul_mat(g.weights(t, kEmbd, m), xe); // q k v o
    g.mul_mat(g.weights(t, kEmbd, kFF), xe);                                          // gate
    g.mul_mat(g.weights(t, kEmbd, kFF), xe);                                          // up
    g.mul_mat(g.weights(t, kFF, kEmbd), xf);                                          // down
}

// A token's matmuls: layer weights of type lt, output head of type ht; range: threads.
// N = 1 activations; tokens/s = 1 / time.
void BM_Gen(benchmark::State & st, lm_ggml_type lt, lm_ggml_type ht, bool repacked) {
    const int nth = (int) st.range(0);
    if (repacked && repack_buft() == nullptr) {
        st.SkipWithError("no CPU_REPACK buffer type on this CPU");
        return;
    }
    Graph g(200u << 20, nth, repacked ? repack_buft() : lm_ggml_backend_cpu_buffer_type());
    lm_ggml_tensor * xe = g.input(kEmbd, 1);
    lm_ggml_tensor * xf = g.input(kFF, 1);
    for (int l = 0; l < kLayers; ++l) layer_matmuls(g, lt, xe, xf);
    g.mul_mat(g.weights(ht, kEmbd, kVocab), xe); // output head (tied embeddings)
    if (!finish(st, g, nth)) return;
    run(st, g);
    st.counters["tok_per_s"] = benchmark::Counter((double) st.iterations(), benchmark::Counter::kIsRate);
}

// The 210 layer matmuls of a token (Q4_1 repacked, no head) as the model has
// them, or merged into one matrix of the same bytes (K = 576, 184320 rows):
// the same bytes streamed through the same kernel, so the ratio of the two
// is what splitting the weights into a token's many small nodes costs;
// range: threads.
void BM_GenLayers(benchmark::State & st, bool merged) {
    const int nth = (int) st.range(0);
    if (repack_buft() == nullptr) {
        st.SkipWithError("no CPU_REPACK buffer type on this CPU");
        return;
    }
    Graph g(200u << 20, nth, repack_buft());
    lm_ggml_tensor * xe = g.input(kEmbd, 1);
    lm_ggml_tensor * xf = g.input(kFF, 1);
    if (merged) {
        // per layer: q, o 2 x kEmbd rows, k, v 2 x kKV, gate, up 2 x kFF, and
        // down (kEmbd rows of K = kFF) as kFF rows of K = kEmbd
        g.mul_mat(g.weights(LM_GGML_TYPE_Q4_1, kEmbd, (int64_t) kLayers * (2 * kEmbd + 2 * kKV + 3 * kFF)), xe);
    } else {
        for (int l = 0; l < kLayers; ++l) layer_matmuls(g, LM_GGML_TYPE_Q4_1, xe, xf);
    }
    if (!finish(st, g, nth)) return;
    run(st, g);
}

// The layer matmuls for N prompt tokens over `layers` layers; range: N, threads.
void BM_Prompt(benchmark::State & st, lm_ggml_type lt) {
    constexpr int kPromptLayers = 2; // compute bound: more layers add time, not information
    const int64_t N = st.range(0);
    const int nth = (int) st.range(1);
    Graph g((size_t) (N * kFF * 4 * 2 + N * kEmbd * 4 * 8) * kPromptLayers + (64u << 20), nth);
    lm_ggml_tensor * xe = g.input(kEmbd, N);
    lm_ggml_tensor * xf = g.input(kFF, N);
    for (int l = 0; l < kPromptLayers; ++l) layer_matmuls(g, lt, xe, xf);
    if (!finish(st, g, nth)) return;
    run(st, g);
}

// Attention-shaped softmax: a prompt's KQ (512 keys x 512 queries x 9 heads)
// with a causal F16 mask; range: threads. GB/s counts the F32 rows read and
// written once, to compare with BM_StreamRead.
void BM_SoftMax(benchmark::State & st) {
    constexpr int64_t kKeys = 512, kQueries = 512, kHeads = 9;
    const int nth = (int) st.range(0);
    Graph g(64u << 20, nth);
    lm_ggml_tensor * kq = lm_ggml_new_tensor_3d(g.ctx, LM_GGML_TYPE_F32, kKeys, kQueries, kHeads);
    auto * p = static_cast<float *>(kq->data);
    for (int64_t i = 0; i < lm_ggml_nelements(kq); ++i) p[i] = (float) ((i * 37) % 101 - 50) / 10.0f;
    lm_ggml_tensor * mask = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F16, kKeys, kQueries);
    auto * m = static_cast<lm_ggml_fp16_t *>(mask->data);
    for (int64_t q = 0; q < kQueries; ++q) {
        for (int64_t k = 0; k < kKeys; ++k) m[q * kKeys + k] = lm_ggml_fp32_to_fp16(k <= q ? 0.0f : -INFINITY);
    }
    lm_ggml_build_forward_expand(g.gf, lm_ggml_soft_max_ext(g.ctx, kq, mask, 0.125f, 0.0f));
    if (!finish(st, g, nth)) return;
    for (auto _ : st) {
        if (!g.compute()) {
            st.SkipWithError("graph compute failed");
            return;
        }
    }
    st.counters["GBps"] = benchmark::Counter((double) st.iterations() * 2.0 * (double) lm_ggml_nbytes(kq) * 1e-9,
                                             benchmark::Counter::kIsRate);
}

// range: threads. One SCALE of 64 floats per node, chained.
void BM_NodeOverhead(benchmark::State & st) {
    constexpr int kNodes = kLayers * 7 + 1;
    const int nth = (int) st.range(0);
    Graph g(16u << 20, nth);
    lm_ggml_tensor * x = g.input(64, 1);
    for (int i = 0; i < kNodes; ++i) x = lm_ggml_scale(g.ctx, x, 1.0f);
    lm_ggml_build_forward_expand(g.gf, x);
    if (!finish(st, g, nth)) return;
    for (auto _ : st) {
        if (!g.compute()) {
            st.SkipWithError("graph compute failed");
            return;
        }
    }
    st.counters["us_per_node"] = benchmark::Counter((double) st.iterations() * kNodes * 1e-6,
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

double min_of(const std::vector<double> & v) { return *std::min_element(v.begin(), v.end()); }
double max_of(const std::vector<double> & v) { return *std::max_element(v.begin(), v.end()); }

void register_all() {
    for (auto fn : {std::make_pair("BM_StreamRead", BM_StreamRead), std::make_pair("BM_PeakVnni", BM_PeakVnni),
                    std::make_pair("BM_PeakFma", BM_PeakFma)}) {
        benchmark::RegisterBenchmark(fn.first, fn.second)
            ->Arg(1)
            ->Arg(2)
            ->ArgNames({"threads"})
            ->UseRealTime()
            ->ComputeStatistics("min", min_of)
            ->ComputeStatistics("max", max_of);
    }

    struct Shape {
        int64_t k, m, n;
    };
    // {kFF, 128, 1}: generation with the weights in L2, the kernel's arithmetic limit;
    // {kFF, kVocab, 1}: weights larger than the L3 (47-151 MB), the kernel
    // streaming from DRAM, to read beside BM_StreamRead
    const Shape shapes[] = {{kEmbd, kFF, 1},  {kFF, kEmbd, 1},   {kFF, 128, 1},
                            {kFF, kVocab, 1}, {kEmbd, kFF, 512}, {kFF, kEmbd, 512}};
    // the types of the K-quant models' files beside the ones of the default model (the K-quants
    // and IQ4_XS only on shapes whose rows are whole 256-value super-blocks)
    for (lm_ggml_type t : {LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_F16, LM_GGML_TYPE_Q5_0,
                           LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_IQ4_NL,
                           LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_IQ4_XS}) {
        for (const Shape & s : shapes) {
            if (s.k % lm_ggml_blck_size(t) != 0) continue;
            for (bool x8 : {false, true}) {
                const bool has_x8 = t == LM_GGML_TYPE_Q4_0 || t == LM_GGML_TYPE_Q4_1 || t == LM_GGML_TYPE_Q5_0 ||
                                    t == LM_GGML_TYPE_Q5_1 || t == LM_GGML_TYPE_Q8_0 || t == LM_GGML_TYPE_IQ4_NL;
                if (x8 && !has_x8) continue; // the types with an x8 layout
                const std::string name = std::string("BM_MulMat/") + lm_ggml_type_name(t) + (x8 ? "_x8" : "");
                auto * b = benchmark::RegisterBenchmark(name.c_str(), BM_MulMat, x8);
                for (int nth : {1, 2}) b->Args({(int64_t) t, s.k, s.m, s.n, nth});
                b->ArgNames({"type", "K", "M", "N", "threads"})
                    ->UseRealTime()
                    ->ComputeStatistics("min", min_of)
                    ->ComputeStatistics("max", max_of);
            }
        }
    }
    // Gemma 3 270M's output head (Q8_0, 640 x 262144, 178 MB): the largest
    // stream of a token in the issue-29 models, past any L3 share
    for (bool x8 : {false, true}) {
        auto * b = benchmark::RegisterBenchmark(x8 ? "BM_MulMat/q8_0_x8_head" : "BM_MulMat/q8_0_head", BM_MulMat, x8);
        for (int nth : {1, 2}) b->Args({(int64_t) LM_GGML_TYPE_Q8_0, 640, 262144, 1, nth});
        b->ArgNames({"type", "K", "M", "N", "threads"})
            ->UseRealTime()
            ->ComputeStatistics("min", min_of)
            ->ComputeStatistics("max", max_of);
    }
    // attention-shaped F16 product: K cache (64 x 512 tokens) x 512 queries
    benchmark::RegisterBenchmark("BM_MulMat/f16_attn", BM_MulMat, false)
        ->Args({(int64_t) LM_GGML_TYPE_F16, 64, 512, 512, 1})
        ->Args({(int64_t) LM_GGML_TYPE_F16, 64, 512, 512, 2})
        ->ArgNames({"type", "K", "M", "N", "threads"})
        ->UseRealTime()
        ->ComputeStatistics("min", min_of)
        ->ComputeStatistics("max", max_of);

    benchmark::RegisterBenchmark("BM_NodeOverhead", BM_NodeOverhead)
        ->Arg(1)
        ->Arg(2)
        ->ArgNames({"threads"})
        ->UseRealTime()
        ->ComputeStatistics("min", min_of)
        ->ComputeStatistics("max", max_of);
    benchmark::RegisterBenchmark("BM_SoftMax", BM_SoftMax)
        ->Arg(1)
        ->Arg(2)
        ->ArgNames({"threads"})
        ->UseRealTime()
        ->ComputeStatistics("min", min_of)
        ->ComputeStatistics("max", max_of);
    for (bool x8 : {false, true}) {
        const std::string sfx = x8 ? "_x8" : "";
        benchmark::RegisterBenchmark(("BM_Gen/q4_1+q8_0_head" + sfx).c_str(), BM_Gen, LM_GGML_TYPE_Q4_1,
                                     LM_GGML_TYPE_Q8_0, x8)
            ->Arg(1)
            ->Arg(2)
            ->ArgNames({"threads"})
            ->UseRealTime()
            ->ComputeStatistics("min", min_of)
            ->ComputeStatistics("max", max_of);
        benchmark::RegisterBenchmark(("BM_Gen/q8_0" + sfx).c_str(), BM_Gen, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q8_0, x8)
            ->Arg(1)
            ->Arg(2)
            ->ArgNames({"threads"})
            ->UseRealTime()
            ->ComputeStatistics("min", min_of)
            ->ComputeStatistics("max", max_of);
    }
    for (bool merged : {false, true}) {
        benchmark::RegisterBenchmark(merged ? "BM_GenLayers/q4_1_x8/merged" : "BM_GenLayers/q4_1_x8/split",
                                     BM_GenLayers, merged)
            ->Arg(1)
            ->Arg(2)
            ->ArgNames({"threads"})
            ->UseRealTime()
            ->ComputeStatistics("min", min_of)
            ->ComputeStatistics("max", max_of);
    }
    for (lm_ggml_type t : {LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q8_0}) {
        const std::string name = std::string("BM_Prompt/") + lm_ggml_type_name(t);
        benchmark::RegisterBenchmark(name.c_str(), BM_Prompt, t)
            ->Args({512, 1})
            ->Args({512, 2})
            ->ArgNames({"N", "threads"})
            ->UseRealTime()
            ->ComputeStatistics("min", min_of)
            ->ComputeStatistics("max", max_of);
    }
}

} // namespace

int main(int argc, char ** argv) {
    lm_ggml_cpu_init();
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

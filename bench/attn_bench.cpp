// Flash attention over a long F16 KV cache, in SmolLM2-135M's shape (head
// size 64, 9 query heads on 3 KV heads), laid out as the runner keeps it: one
// cache row per position holding every KV head, K and V viewed per head.
//   BM_AttnGen/depth/threads     one query row (a generated token) over depth
//                                keys, in 30 layers' caches so that they
//                                stream from memory as at generation (94 MB at
//                                depth 4096): GB/s of K and V read
//   BM_AttnGenDram/depth/threads the same in 128 layers (400 MB at depth
//                                4096), past any L3 share of a large shared
//                                L3 (the 30 layers partly stay there): the
//                                cache from DRAM, as in the model, where the
//                                weights stream through the L3 in between
//   BM_AttnGenGemmaDram/...      the same in Gemma 3's shape, 96 layers (403 MB)
//   BM_AttnGenHot/depth/1        one layer (3 MB at depth 4096): the cache in
//                                L2/L3, what the kernels do without DRAM
//   BM_AttnGenGemma/...          the same in Gemma 3 270M's shape (below), 12
//                                layers: a 50 MB cache
//   BM_AttnGenGemmaHot/...       one layer (4 MB): the kernels' own speed, the
//                                cache in L2/L3
//   BM_AttnGenD128Hot/depth/1    one layer in Llama 3 8B's shape (head size
//                                128, 32 query heads on 8 KV heads): 4 MB
//                                at depth 1024
//   BM_AttnPrompt/depth/threads  512 query rows after depth keys, causal mask,
//                                one layer: GFLOP/s (2 * 2 * D flops per
//                                visible key, head and row)
//   BM_AttnPromptGemma/...       the same in Gemma 3 270M's shape (head size
//                                256, 4 query heads on 1 KV head): a global
//                                layer's prompt over a long cache
// The kernel level is the process's: LMGGML_CPU_ISA=avx2 runs the AVX2 kernels
// on an AVX-512 machine, to compare the two side by side.
#include <benchmark/benchmark.h>

#include <sys/mman.h>

#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"

namespace {

struct Shape {
    int64_t D, heads, kv_heads;
};
constexpr Shape kSmolLM2{64, 9, 3}, kGemma3{256, 4, 1}, kD128{128, 32, 8};

struct Attn {
    void * buf = nullptr;
    lm_ggml_context * ctx = nullptr;
    lm_ggml_cgraph * gf = nullptr;
    double kv_bytes = 0, flops = 0;

    Attn(Shape sh, int64_t depth, int64_t n_q, int layers) {
        const int64_t kD = sh.D, kHeads = sh.heads, kKvHeads = sh.kv_heads;
        const int64_t n_kv = depth + n_q;
        const size_t kv = (size_t) (kD * kKvHeads * n_kv) * 2;
        const size_t mem = (size_t) layers * (2 * kv + (size_t) (kD * kHeads * n_q) * 8) +
                           (size_t) (n_kv * (n_q + 64)) * 2 + (64u << 20);
        // on transparent huge pages, as the runner's CPU buffers are (with
        // 4 KiB pages every 4 KiB of cache costs a TLB miss)
        const size_t huge = 2u << 20;
        buf = std::aligned_alloc(huge, (mem + huge - 1) / huge * huge);
        if (buf == nullptr) return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        (void) madvise(buf, (mem + huge - 1) / huge * huge, MADV_HUGEPAGE);
#endif
        lm_ggml_init_params ip = {mem, buf, false};
        ctx = lm_ggml_init(ip);
        if (ctx == nullptr) return;
        gf = lm_ggml_new_graph_custom(ctx, 4096, false);
        // causal over the last n_q keys, padded as the runner pads it
        lm_ggml_tensor * mask =
            lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, n_kv, LM_GGML_PAD(n_q, LM_GGML_KQ_MASK_PAD));
        auto * m = static_cast<lm_ggml_fp16_t *>(mask->data);
        for (int64_t i = 0; i < mask->ne[1]; ++i)
            for (int64_t j = 0; j < n_kv; ++j)
                m[i * n_kv + j] = lm_ggml_fp32_to_fp16(j <= depth + i ? 0.0f : -INFINITY);
        for (int l = 0; l < layers; ++l) {
            lm_ggml_tensor * q = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, kD, n_q, kHeads);
            lm_ggml_tensor * kc = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, kD * kKvHeads, n_kv);
            lm_ggml_tensor * vc = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, kD * kKvHeads, n_kv);
            auto * qp = static_cast<float *>(q->data);
            for (int64_t i = 0; i < lm_ggml_nelements(q); ++i) qp[i] = (float) ((i * 37 + l) % 101 - 50) / 50.0f;
            for (lm_ggml_tensor * c : {kc, vc}) {
                auto * h = static_cast<lm_ggml_fp16_t *>(c->data);
                for (int64_t i = 0; i < lm_ggml_nelements(c); ++i)
                    h[i] = lm_ggml_fp32_to_fp16((float) ((i * 29) % 97 - 48) / 48.0f);
            }
            const size_t row = kc->nb[1];
            lm_ggml_tensor * k = lm_ggml_view_3d(ctx, kc, kD, n_kv, kKvHeads, row, kD * 2, 0);
            lm_ggml_tensor * v = lm_ggml_view_3d(ctx, vc, kD, n_kv, kKvHeads, row, kD * 2, 0);
            lm_ggml_build_forward_expand(
                gf, lm_ggml_flash_attn_ext(ctx, q, k, v, mask, 1.0f / std::sqrt((float) kD), 0.0f, 0.0f));
        }
        kv_bytes = (double) layers * 2.0 * (double) kv;
        const double visible = (double) n_q * (double) depth + (double) n_q * (double) (n_q + 1) / 2.0;
        flops = (double) layers * 4.0 * kD * kHeads * visible;
    }
    ~Attn() {
        if (ctx != nullptr) lm_ggml_free(ctx);
        std::free(buf);
    }
};

void run(benchmark::State & st, Shape sh, int64_t n_q, int layers) {
    const int64_t depth = st.range(0);
    const int nth = (int) st.range(1);
    Attn a(sh, depth, n_q, layers);
    if (a.ctx == nullptr) {
        st.SkipWithError("cannot allocate");
        return;
    }
    // planned once: lm_ggml_graph_compute_with_ctx would take a new work buffer from ctx per call
    lm_ggml_cplan plan = lm_ggml_graph_plan(a.gf, nth, nullptr);
    std::vector<uint8_t> work(plan.work_size);
    plan.work_data = work.data();
    for (auto _ : st) {
        if (lm_ggml_graph_compute(a.gf, &plan) != LM_GGML_STATUS_SUCCESS) {
            st.SkipWithError("graph compute failed");
            return;
        }
    }
    st.counters["GBps"] = benchmark::Counter((double) st.iterations() * a.kv_bytes * 1e-9, benchmark::Counter::kIsRate);
    st.counters["GFLOPs"] = benchmark::Counter((double) st.iterations() * a.flops * 1e-9, benchmark::Counter::kIsRate);
}

void BM_AttnGen(benchmark::State & st) { run(st, kSmolLM2, 1, 30); }
void BM_AttnGenDram(benchmark::State & st) { run(st, kSmolLM2, 1, 128); }
void BM_AttnGenGemmaDram(benchmark::State & st) { run(st, kGemma3, 1, 96); }
void BM_AttnGenGemma(benchmark::State & st) { run(st, kGemma3, 1, 12); }
void BM_AttnGenGemmaHot(benchmark::State & st) { run(st, kGemma3, 1, 1); }
void BM_AttnGenHot(benchmark::State & st) { run(st, kSmolLM2, 1, 1); }
void BM_AttnGenD128Hot(benchmark::State & st) { run(st, kD128, 1, 1); }
void BM_AttnPrompt(benchmark::State & st) { run(st, kSmolLM2, 512, 1); }
void BM_AttnPromptGemma(benchmark::State & st) { run(st, kGemma3, 512, 1); }

} // namespace

BENCHMARK(BM_AttnGen)->ArgsProduct({{4096}, {1, 2}})->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK(BM_AttnGenDram)->ArgsProduct({{4096}, {1, 2}})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttnGenGemmaDram)->ArgsProduct({{4096}, {1, 2}})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttnGenGemma)->ArgsProduct({{4096}, {1, 2}})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttnGenGemmaHot)->ArgsProduct({{4096}, {1}})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttnGenHot)->ArgsProduct({{4096, 512}, {1}})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttnGenD128Hot)->ArgsProduct({{1024}, {1}})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttnPrompt)->ArgsProduct({{4096}, {1, 2}})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttnPromptGemma)->ArgsProduct({{4096}, {1, 2}})->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();

// The Gemm microkernels alone, per kernel level: one panel of 32 weight rows
// times 512 packed activation columns (a prompt's product, without the
// activation packing and panel repacking that BM_MulMat of bench_kernels
// also times), for every level this CPU runs, side by side in one process.
// BM_PanelFromX8: the panel of 32 rows packed from repacked (x8) weights,
// as MUL_MAT does once per panel of a prompt: the level's own packer, or the
// portable x8::pack_panel where the level has none. Links the static
// library (kernels.h is internal).
//
//   ./bench/bench_internal_gemm --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one line)
//
// Read the _min rows of CPU time: the host is shared, and a time slice lost
// to another tenant does not count against the thread's CPU time.

#include <benchmark/benchmark.h>

#include "cpu/arch/kernels.h"
#include "cpu/arch/layouts.h"
#include "cpu/arch/x8.h"
#include "ggml.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

namespace arch = lmggml::cpu::arch;

constexpr int64_t kRows = arch::layout::kPanelRows;
constexpr int64_t kCols = 512;

// 64-byte aligned bytes
struct Buffer {
    std::vector<uint8_t> bytes;
    uint8_t * data;
    explicit Buffer(size_t n) : bytes(n + 64), data(bytes.data() + (64 - (uintptr_t) bytes.data() % 64) % 64) {}
};

// kRows rows of k uniform values in [-1, 1), quantized to type
std::vector<uint8_t> random_rows(lm_ggml_type type, int64_t k, std::mt19937 & rng) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> x((size_t) (kRows * k));
    for (float & v : x) v = u(rng);
    std::vector<uint8_t> w(lm_ggml_row_size(type, k) * kRows);
    lm_ggml_quantize_chunk(type, x.data(), w.data(), 0, kRows, k, nullptr);
    return w;
}

void BM_GemmCompute(benchmark::State & state, arch::Isa isa, lm_ggml_type type, int64_t k) {
    const arch::KernelSet * ks = arch::kernels_for(isa);
    const arch::Gemm * gm = ks != nullptr ? ks->gemm[type] : nullptr;
    if (gm == nullptr) {
        state.SkipWithError("this level has no Gemm for the type, or the CPU lacks the level");
        return;
    }
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const size_t row_bytes = lm_ggml_row_size(type, k);
    const std::vector<uint8_t> w = random_rows(type, k, rng);
    Buffer panel(gm->panel_size(k));
    gm->pack_panel(w.data(), row_bytes, kRows, k, panel.data);
    const size_t lda = arch::layout::pad64(gm->act_size(k));
    Buffer act(lda * kCols);
    std::vector<float> a((size_t) k);
    for (int64_t j = 0; j < kCols; ++j) {
        for (float & v : a) v = u(rng);
        gm->pack_act(a.data(), act.data + j * lda, k);
    }
    std::vector<float> dst((size_t) (kRows * kCols));
    for (auto _ : state) {
        gm->compute(panel.data, kRows, k, act.data, lda, kCols, dst.data(), kRows);
        benchmark::DoNotOptimize(dst.data());
        benchmark::ClobberMemory();
    }
    state.counters["GMAC/s"] = benchmark::Counter((double) (kRows * kCols * k) * 1e-9 * (double) state.iterations(),
                                                  benchmark::Counter::kIsRate);
}

void BM_PanelFromX8(benchmark::State & state, arch::Isa isa, lm_ggml_type type, int64_t k) {
    const arch::KernelSet * ks = arch::kernels_for(isa);
    namespace x8 = lmggml::cpu::arch::x8;
    x8::Format f;
    if (ks == nullptr || !x8::format_of(type, &f)) {
        state.SkipWithError("the CPU lacks the level, or the type has no x8 layout");
        return;
    }
    const arch::X8PanelPacker own = ks->x8_pack_panel[type];
    std::mt19937 rng(7);
    const size_t row_bytes = lm_ggml_row_size(type, k);
    const std::vector<uint8_t> w = random_rows(type, k, rng);
    const size_t group_bytes = arch::layout::kX8Rows * row_bytes;
    Buffer groups(group_bytes * (kRows / arch::layout::kX8Rows));
    for (int64_t g = 0; g < kRows / arch::layout::kX8Rows; ++g) {
        x8::pack_group(f, k, w.data() + g * group_bytes, row_bytes, groups.data + g * group_bytes);
    }
    Buffer panel(arch::layout::gemm_q_panel_size(k));
    for (auto _ : state) {
        if (own != nullptr) {
            own(k, groups.data, group_bytes, kRows, panel.data);
        } else {
            x8::pack_panel(type, k, groups.data, group_bytes, kRows, panel.data);
        }
        benchmark::DoNotOptimize(panel.data);
        benchmark::ClobberMemory();
    }
    state.SetLabel(own != nullptr ? "own" : "x8::pack_panel");
    state.SetBytesProcessed((int64_t) (group_bytes * (kRows / arch::layout::kX8Rows)) * state.iterations());
}

int register_all() {
    const lm_ggml_type types[] = {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q8_0,  LM_GGML_TYPE_IQ4_NL,
                                  LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_IQ4_XS};
    for (int i = 1; i < arch::kIsaCount; ++i) {
        const auto isa = (arch::Isa) i;
        if (arch::kernels_for(isa) == nullptr) continue;
        for (lm_ggml_type t : types) {
            for (int64_t k : {768, 1536}) { // multiples of the K-quants' 256
                const std::string name = std::string("BM_GemmCompute/") + lm_ggml_type_name(t) + "/" +
                                         arch::isa_name(isa) + "/k:" + std::to_string(k);
                benchmark::RegisterBenchmark(name.c_str(), BM_GemmCompute, isa, t, k)
                    ->Unit(benchmark::kMicrosecond)
                    ->ComputeStatistics(
                        "min", [](const std::vector<double> & v) { return *std::min_element(v.begin(), v.end()); });
            }
        }
    }
    for (int i = 0; i < arch::kIsaCount; ++i) {
        const auto isa = (arch::Isa) i;
        if (arch::kernels_for(isa) == nullptr) continue;
        for (lm_ggml_type t :
             {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_IQ4_NL}) {
            const std::string name =
                std::string("BM_PanelFromX8/") + lm_ggml_type_name(t) + "/" + arch::isa_name(isa) + "/k:1536";
            benchmark::RegisterBenchmark(name.c_str(), BM_PanelFromX8, isa, t, int64_t{1536})
                ->Unit(benchmark::kMicrosecond)
                ->ComputeStatistics(
                    "min", [](const std::vector<double> & v) { return *std::min_element(v.begin(), v.end()); });
        }
    }
    return 0;
}

const int registered = register_all();

} // namespace

BENCHMARK_MAIN();

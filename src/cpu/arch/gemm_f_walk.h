#pragma once
// How the F32/F16 Gemm walks one panel (layouts.h "Gemm (F32, F16)"),
// shared by the x86 kernels (x86/gemm_f_impl.h) and the ARM64 ones
// (arm/gemm_f_neon.cpp): chunks of k steps that stay in cache while every
// column passes over them; per chunk, tiles of near-equal width (7 columns:
// 4 + 3, not 6 + 1: a narrow tile has too few accumulators to cover the FMA
// latency), and per tile every row group over the same columns, so their
// activations stay in L1. The tiles themselves are the per-ISA code; this
// header only calls them (static: each ISA file keeps its own copy).

#include <cstddef>
#include <cstdint>

namespace lmggml::cpu::arch::gemm_f {

// A tile: rows 0..rows-1 from p (the panel + its first row) x the columns
// of act, k steps [k0, k1); first: start from zero, else add to dst.
using TileFn = void (*)(const float * p, int64_t rows, int64_t k0, int64_t k1, const char * act, size_t lda,
                        float * dst, size_t ldd, bool first);

// rows: the panel's real rows; grows rows per tile; fns[c - 1] takes c
// columns, c <= ncols; chunk: k steps per pass.
static inline void walk(const float * panel, int64_t rows, int64_t grows, int64_t ncols, const TileFn * fns, int64_t k,
                        int64_t chunk, const char * act, size_t lda, int64_t n, float * dst, size_t ldd) {
    for (int64_t k0 = 0; k0 < k; k0 += chunk) {
        const int64_t k1 = k - k0 < chunk ? k : k0 + chunk;
        const bool first = k0 == 0;
        const int64_t ntiles = (n + ncols - 1) / ncols;
        for (int64_t t = 0, j = 0, nc = 0; t < ntiles; ++t, j += nc) {
            nc = (n - j + ntiles - t - 1) / (ntiles - t);
            for (int64_t r0 = 0; r0 < rows; r0 += grows) {
                fns[nc - 1](panel + r0, rows - r0 < grows ? rows - r0 : grows, k0, k1, act + j * lda, lda,
                            dst + j * ldd + r0, ldd, first);
            }
        }
    }
}

} // namespace lmggml::cpu::arch::gemm_f

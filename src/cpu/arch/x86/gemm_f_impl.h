#pragma once
// Gemm for F32 and F16 weights (layouts.h: a panel of 32 weight rows stored
// k-major, times activation columns) written once over an F32 vector policy
// (simd_f32.h): gemm_f_avx2.cpp instantiates it with F32x8, gemm_f_avx512.cpp
// with F32x16. The panel packer is 8 wide at both levels (it writes the same
// bytes). Everything has internal linkage. Twins: ref::gemm_pack_* /
// ref::gemm_compute_f.
//
// A tile is kR vectors of rows x kN columns: each step of k is kR panel
// loads, kN broadcasts and kR kN FMAs into kR kN accumulators; kAcc (the
// registers left for accumulators: 12 of 16 ymm, 16 of 32 zmm) bounds kR kN.
// Every dst element is one chain of FMAs over k in order, so the tiling and
// the chunking of k do not change results.

#include "simd_f32.h"

#include "../gemm_f_walk.h"
#include "../kernels.h"
#include "../layouts.h"

#include <immintrin.h>

#include <array>
#include <cstring>
#include <type_traits>
#include <utility>

namespace lmggml::cpu::arch::x86 {
namespace {

// ---------------------------------------------------------------- packing
void pack_act_f32(const float * x, void * act, int64_t k) { std::memcpy(act, x, (size_t) k * sizeof(float)); }

// rounded through F16, as the activations ggml converts for F16 weights
template <class P> void pack_act_f16(const float * x, void * vact, int64_t k) {
    auto * out = static_cast<float *>(vact);
    int64_t i = 0;
    for (; i + P::kLanes <= k; i += P::kLanes) P::store(out + i, P::round_f16(P::load(x + i)));
    if (i < k) P::store_n(out + i, k - i, P::round_f16(P::load_n(x + i, k - i)));
}

// Values kk..kk+7 of one weight row as floats.
template <bool kHalf> static inline __m256 load8(const char * row, int64_t kk) {
    if constexpr (kHalf) {
        return F32x8::load_f16(reinterpret_cast<const uint16_t *>(row) + kk);
    } else {
        return F32x8::load(reinterpret_cast<const float *>(row) + kk);
    }
}

// Values kk..kk+n-1 (n < 8), zeros after them; the row may end at the last
// readable byte.
template <bool kHalf> static inline __m256 load_part(const char * row, int64_t kk, int64_t n) {
    if constexpr (kHalf) {
        return F32x8::load_f16_n(reinterpret_cast<const uint16_t *>(row) + kk, n);
    } else {
        return F32x8::load_n(reinterpret_cast<const float *>(row) + kk, n);
    }
}

// 8 rows x 8 steps of k at a time, transposed in registers, so the panel is
// written in order, a k step (128 bytes) at a time. The edges (rows past m,
// k % 8) take a slower path that keeps the common block free of branches.
template <bool kHalf> void pack_panel(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    using layout::kPanelRows;
    auto * panel = static_cast<float *>(vpanel);
    const char * rows = static_cast<const char *>(w);
    for (int64_t kk = 0; kk < k; kk += 8) {
        const int64_t nk = k - kk < 8 ? k - kk : 8;
        for (int64_t i0 = 0; i0 < kPanelRows; i0 += 8) {
            float * out = panel + kk * kPanelRows + i0;
            __m256 v[8];
            if (nk == 8 && i0 + 8 <= m) {
#pragma GCC unroll 8
                for (int t = 0; t < 8; ++t) v[t] = load8<kHalf>(rows + (i0 + t) * ldw, kk);
                transpose8(v);
#pragma GCC unroll 8
                for (int t = 0; t < 8; ++t) _mm256_storeu_ps(out + t * kPanelRows, v[t]);
                continue;
            }
            for (int t = 0; t < 8; ++t) {
                const int64_t i = i0 + t;
                v[t] = i >= m    ? _mm256_setzero_ps()
                       : nk == 8 ? load8<kHalf>(rows + i * ldw, kk)
                                 : load_part<kHalf>(rows + i * ldw, kk, nk);
            }
            transpose8(v);
            for (int64_t t = 0; t < nk; ++t) _mm256_storeu_ps(out + t * kPanelRows, v[t]);
        }
    }
}

void pack_panel_f32(const void * w, size_t ldw, int64_t m, int64_t k, void * p) { pack_panel<false>(w, ldw, m, k, p); }
void pack_panel_f16(const void * w, size_t ldw, int64_t m, int64_t k, void * p) { pack_panel<true>(w, ldw, m, k, p); }

// ---------------------------------------------------------------- microkernel
using gemm_f::TileFn;

// kR vectors of rows (p = the panel + the tile's first row; rows = how many
// are real, 1..kR lanes) x kN columns, k steps [k0, k1); first: start from
// zero. Partial sums wait in dst between chunks of k; rows of dst past
// `rows` are neither read nor written.
template <class P, int kR, int kN>
void tile(const float * p, int64_t rows, int64_t k0, int64_t k1, const char * act, size_t lda, float * dst, size_t ldd,
          bool first) {
    using V = typename P::V;
    constexpr int L = P::kLanes;
    const float * x[kN];
    for (int j = 0; j < kN; ++j) x[j] = reinterpret_cast<const float *>(act + j * lda);
    // masked moves only for a partial tile: they are slow on AMD
    const bool full = rows >= kR * L;
    typename P::Mask mk[kR];
    for (int r = 0; r < kR; ++r) mk[r] = P::mask(rows - L * r);
    // The unroll pragmas let GCC keep acc in registers (without them it
    // stores the accumulators to the stack on every step of k).
    V acc[kN][kR];
#pragma GCC unroll 16
    for (int i = 0; i < kR * kN; ++i) {
        const float * d = dst + (i / kR) * ldd + L * (i % kR);
        acc[i / kR][i % kR] = first ? P::zero() : full ? P::load(d) : P::load(d, mk[i % kR]);
    }
    for (int64_t kk = k0; kk < k1; ++kk) {
        V w[kR];
#pragma GCC unroll 4
        for (int r = 0; r < kR; ++r) w[r] = P::load(p + kk * layout::kPanelRows + L * r);
#pragma GCC unroll 16
        for (int j = 0; j < kN; ++j) {
            const V b = P::broadcast(x[j] + kk);
#pragma GCC unroll 4
            for (int r = 0; r < kR; ++r) acc[j][r] = P::fmadd(w[r], b, acc[j][r]);
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < kR * kN; ++i) {
        float * d = dst + (i / kR) * ldd + L * (i % kR);
        if (full) {
            P::store(d, acc[i / kR][i % kR]);
        } else {
            P::store(d, mk[i % kR], acc[i / kR][i % kR]);
        }
    }
}

// tile<P, kR, 1..kMax>, indexed by columns - 1
template <class P, int kR, int... I>
constexpr std::array<TileFn, sizeof...(I)> tiles(std::integer_sequence<int, I...>) {
    return {{&tile<P, kR, I + 1>...}};
}

// kChunk steps of k per pass over the columns: the panel chunk
// (kChunk x 128 bytes) stays in cache while every column passes over it.
template <class P, int64_t kChunk, int kAcc>
void compute(const void * vpanel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst,
             size_t ldd) {
    constexpr int L = P::kLanes;
    static constexpr auto kTiles1 = tiles<P, 1>(std::make_integer_sequence<int, kAcc>{});
    static constexpr auto kTiles2 = tiles<P, 2>(std::make_integer_sequence<int, kAcc / 2>{});
    const auto * panel = static_cast<const float *>(vpanel);
    const auto * a = static_cast<const char *>(act);
    const int64_t rows = m < layout::kPanelRows ? m : layout::kPanelRows;
    // one vector of rows when they fit in it (twice the columns per tile), else two
    const bool one = rows <= L;
    const int64_t grows = one ? L : 2 * L; // rows per tile
    const int64_t ncols = one ? kAcc : kAcc / 2;
    const TileFn * fns = one ? kTiles1.data() : kTiles2.data();
    gemm_f::walk(panel, rows, grows, ncols, fns, k, kChunk, a, lda, n, dst, ldd);
}

template <class P, int64_t kChunk, int kAcc> constexpr Gemm gemm_f32() {
    return {layout::kPanelRows,        layout::gemm_f_act_size, pack_act_f32,
            layout::gemm_f_panel_size, pack_panel_f32,          compute<P, kChunk, kAcc>};
}

template <class P, int64_t kChunk, int kAcc> constexpr Gemm gemm_f16() {
    return {layout::kPanelRows,        layout::gemm_f_act_size, pack_act_f16<P>,
            layout::gemm_f_panel_size, pack_panel_f16,          compute<P, kChunk, kAcc>};
}

} // namespace
} // namespace lmggml::cpu::arch::x86

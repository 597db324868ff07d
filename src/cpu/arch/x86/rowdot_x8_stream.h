#pragma once
// The loop over 8-row groups shared by the RowDotX8 kernels of every x86
// level (rowdot_x8_avx2.cpp, rowdot_x8_vnni.cpp), with the weights'
// software prefetch. Included only by files built with AVX2 or higher
// flags; everything has internal linkage.

#include "../kernels.h"
#include "../layouts.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

// Weights stream once per token: keep loads in flight ahead of the math,
// 4 KiB ahead, each cache line exactly once. A running line pointer does
// that; prefetching every line of each unit (144 or 160 bytes, so a fifth
// of the lines twice) read 5-10 % slower from DRAM, and one prefetch per
// unit (skipping lines) or every other line was slower than none (-8 %,
// -40 %: the hardware prefetcher loses the stream). None at all: -20 %.
constexpr size_t kX8PrefetchBytes = kWeightPrefetchBytes;

// Prefetches every line up to end + kX8PrefetchBytes not yet asked for;
// *next is the next line to ask for.
static inline void prefetch_to(const uint8_t ** next, const uint8_t * end) {
    while (*next < end + kX8PrefetchBytes) {
        _mm_prefetch((const char *) *next, _MM_HINT_T0);
        *next += 64;
    }
}

// dst[8 g + r] for every group g: Group(w, nb, act, &pf) returns the 8 rows'
// products of the group at w (kUnitBytes per block); pf is the next line to
// prefetch (groups follow one another in memory).
template <__m256 (*Group)(const uint8_t *, int64_t, const uint8_t *, const uint8_t **), size_t kUnitBytes>
void x8_dot_groups(int64_t k, int64_t groups, const void * w, const void * act, float * dst) {
    const int64_t nb = k / layout::kQK;
    const auto * x = static_cast<const uint8_t *>(w);
    // the first 4 KiB are left to the demand loads
    const uint8_t * pf =
        reinterpret_cast<const uint8_t *>(reinterpret_cast<uintptr_t>(x + kX8PrefetchBytes) & ~(uintptr_t) 63);
    for (int64_t g = 0; g < groups; ++g) {
        _mm256_storeu_ps(dst + g * layout::kX8Rows,
                         Group(x + g * nb * kUnitBytes, nb, static_cast<const uint8_t *>(act), &pf));
    }
}

// values 4t..4t+3 of the activation block at q, in every 32-bit lane
static inline __m256i x8_chunk(const uint8_t * q, int t) {
    int32_t v;
    std::memcpy(&v, q + 4 * t, sizeof(v));
    return _mm256_set1_epi32(v);
}

} // namespace
} // namespace lmggml::cpu::arch::x86

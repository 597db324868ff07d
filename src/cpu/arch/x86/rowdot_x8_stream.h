#pragma once
// The loop over 8-row groups shared by the RowDotX8 kernels of every x86
// level (rowdot_x8_avx2.cpp, rowdot_x8_vnni.cpp), with the weights'
// software prefetch. Included only by files built with AVX2 or higher
// flags; everything has internal linkage.

#include "simd_avx2.h"

#include "../kernels.h"
#include "../layouts.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

// Weights stream once per token: keep loads in flight ahead of the math,
// kX8PrefetchBytes ahead, each cache line exactly once. A running line pointer does
// that; prefetching every line of each unit (144 or 160 bytes, so a fifth
// of the lines twice) read 5-10 % slower from DRAM, and one prefetch per
// unit (skipping lines) or every other line was slower than none (-8 %,
// -40 %: the hardware prefetcher loses the stream). None at all: -20 %.
// The AVX-512 kernels fetch 8 KiB ahead: on the Intel AMX host (session
// 27, three alternated rounds of `lmggml bench`) SmolLM2 Q4_1 generation at
// 1 thread went 222-246 -> 258-267 t/s, the Q8_0-heavy Q6_K file 131-153
// -> 132-162, Gemma 3 (its 178 MB head from DRAM) 65-72 -> 62-66, within
// its noise; 16 KiB was no better than 8. The AVX2 kernels keep the 4 KiB
// measured on the AVX2-only host.
#if defined(__AVX512F__)
constexpr size_t kX8PrefetchBytes = 2 * kWeightPrefetchBytes;
// Besides, each line is asked into L1 1 KiB ahead: the demand loads then
// find it there instead of waiting on L2 (session 28, four alternated rounds
// of `lmggml bench` at 1 thread: Gemma 3 64.9 -> 70.2 t/s, the Q6_K file
// 154.7 -> 157.0; 512 and 2048 bytes ahead did no better).
constexpr size_t kX8NearBytes = 1024;
#else
constexpr size_t kX8PrefetchBytes = kWeightPrefetchBytes;
constexpr size_t kX8NearBytes = 0; // none: not measured on an AVX2 host
#endif

// Prefetches every line up to end + kX8PrefetchBytes not yet asked for (and
// into L1 the line kX8NearBytes ahead, where that is not 0); *next is the
// next line to ask for.
static inline void prefetch_to(const uint8_t ** next, const uint8_t * end) {
    while (*next < end + kX8PrefetchBytes) {
        prefetch_stream((const char *) *next);
        if constexpr (kX8NearBytes > 0) {
            _mm_prefetch((const char *) *next - kX8PrefetchBytes + kX8NearBytes, _MM_HINT_T0);
        }
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
    // the first kWeightPrefetchBytes are asked for by MUL_MAT (prefetch_start), the
    // rest up to kX8PrefetchBytes left to the hardware prefetcher
    const uint8_t * pf =
        reinterpret_cast<const uint8_t *>(reinterpret_cast<uintptr_t>(x + kX8PrefetchBytes) & ~(uintptr_t) 63);
    for (int64_t g = 0; g < groups; ++g) {
        _mm256_storeu_ps(dst + g * layout::kX8Rows,
                         Group(x + g * nb * kUnitBytes, nb, static_cast<const uint8_t *>(act), &pf));
    }
}

// What the activation row's s holds (layouts.h "RowDotX8"): q4_0 -8 d
// sum(q); q4_1 (Q4_1, Q5_1) q8_1's s; off16 (Q5_0) / off128 (Q8_0, IQ4_NL)
// the int32 16 / 128 * sum(q).
enum class X8Act { q4_0, q4_1, off16, off128 };

// The activation row, byte for byte as the twin's x8::pack_act_*: the
// levels of every block, then d and s of every block.
template <X8Act kKind> void x8_pack_act(const float * x, void * vact, int64_t k) {
    const int64_t nb = k / layout::kQK;
    auto * out = static_cast<uint8_t *>(vact);
    auto * d = reinterpret_cast<float *>(out + nb * 32);
    float * s = d + nb;
    for (int64_t b = 0; b < nb; ++b) {
        alignas(32) int8_t q[32];
        int sum;
        const float dq = quantize_block_avx2(x + b * layout::kQK, q, &sum);
        std::memcpy(out + b * 32, q, 32);
        d[b] = from_f16(to_f16(dq));
        if constexpr (kKind == X8Act::q4_1) s[b] = from_f16(to_f16(dq * (float) sum));
        if constexpr (kKind == X8Act::q4_0) s[b] = -8.0f * d[b] * (float) sum;
        if constexpr (kKind == X8Act::off16 || kKind == X8Act::off128) {
            const int32_t c = (kKind == X8Act::off16 ? 16 : 128) * sum;
            std::memcpy(&s[b], &c, sizeof(c));
        }
    }
    const size_t used = (size_t) nb * (32 + 8);
    std::memset(out + used, 0, layout::rowdot_x8_act_size(k) - used);
}

// values 4t..4t+3 of the activation block at q, in every 32-bit lane
static inline __m256i x8_chunk(const uint8_t * q, int t) {
    int32_t v;
    std::memcpy(&v, q + 4 * t, sizeof(v));
    return _mm256_set1_epi32(v);
}

// The fifth bits of a Q5 chunk t's values, 16 where set: lo for values
// 4t..4t+3 (qh byte t / 2), hi for 16 + 4t.. (byte 2 + t / 2), bits
// 4 (t % 2) .. + 3 of that byte.
struct Q5High {     // rowdot_x8_vnni.cpp tests the bits with a mask, rowdot_x8_avx2.cpp with a compare
    __m256i rep[4]; // vpshufb indices: byte i of every lane's qh in its 4 bytes
    __m256i bits[2];
    Q5High() {
        for (int i = 0; i < 4; ++i) {
            // within each 128-bit half, lane j's bytes start at 4 j
            rep[i] =
                _mm256_add_epi8(_mm256_set1_epi8((char) i), _mm256_setr_epi32(0, 0x04040404, 0x08080808, 0x0C0C0C0C, 0,
                                                                              0x04040404, 0x08080808, 0x0C0C0C0C));
        }
        bits[0] = _mm256_set1_epi32(0x08040201);
        bits[1] = _mm256_set1_epi32((int) 0x80402010u);
    }
};

} // namespace
} // namespace lmggml::cpu::arch::x86

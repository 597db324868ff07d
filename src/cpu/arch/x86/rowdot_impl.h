#pragma once
// Helpers of the x86 RowDot kernels (rowdot_*_avx2.cpp, rowdot_*_vnni.cpp):
// block loads that never read past a row, the AVX2 driver that dots rows 4
// at a time, and the K-quant scale unpacking. Internal linkage only (see
// simd_avx2.h): each per-ISA file gets its own copy.
#include "simd_avx2.h"
#include "simd_avx512.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

// The 32-value block formats of the Q5 / IQ4_NL RowDots (rowdot_q5_*.cpp):
// block bytes and where qh and qs start in a block.
enum class Q5Fmt { q5_0, q5_1, iq4_nl };
template <Q5Fmt F> constexpr int kQ5Block = F == Q5Fmt::q5_0 ? 22 : F == Q5Fmt::q5_1 ? 24 : 18;
template <Q5Fmt F> constexpr int kQ5Qh = F == Q5Fmt::q5_0 ? 2 : 4; // offset of qh in a block
template <Q5Fmt F> constexpr int kQ5Qs = F == Q5Fmt::iq4_nl ? 2 : kQ5Qh<F> + 4;

static inline int32_t load32(const uint8_t * p) {
    int32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

static inline int32_t load16(const uint8_t * p) {
    uint16_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

// 16 bytes of block i at p, or zeros when i >= n (past the row's end)
static inline __m128i load_qs(const uint8_t * p, int i, int n) {
    return i < n ? _mm_loadu_si128((const __m128i *) p) : _mm_setzero_si128();
}

static inline __m256i pair(__m128i lo, __m128i hi) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

// 16 bytes: the scales of sub-blocks 0..7, then their mins (6 bits each,
// the K-quant scale layout of 12 bytes)
static inline __m128i scales_mins(const uint8_t * s) {
    uint32_t u[3];
    std::memcpy(u, s, sizeof(u));
    const uint32_t sc03 = u[0] & 0x3f3f3f3fu;
    const uint32_t mn03 = u[1] & 0x3f3f3f3fu;
    const uint32_t sc47 = (u[2] & 0x0f0f0f0fu) | (((u[0] >> 6) & 0x03030303u) << 4);
    const uint32_t mn47 = ((u[2] >> 4) & 0x0f0f0f0fu) | (((u[1] >> 6) & 0x03030303u) << 4);
    return _mm_set_epi32((int) mn47, (int) mn03, (int) sc47, (int) sc03);
}

// AVX2 rows one after another (Row: 8 lanes to add up, from nb blocks of
// kValues values); their sums are reduced 4 at a time.
template <int64_t kValues, __m256 (*Row)(const uint8_t *, int64_t, const uint8_t *)>
static void dot_rows_by4(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    const auto * x = static_cast<const uint8_t *>(w);
    const auto * a = static_cast<const uint8_t *>(act);
    const int64_t nb = k / kValues;
    int64_t r = 0;
    for (; r + 4 <= m; r += 4) {
        const __m256 v[4] = {Row(x + r * ldw, nb, a), Row(x + (r + 1) * ldw, nb, a), Row(x + (r + 2) * ldw, nb, a),
                             Row(x + (r + 3) * ldw, nb, a)};
        _mm_storeu_ps(dst + r, hsum8x4(v));
    }
    for (; r < m; ++r) {
        const __m256 v[4] = {Row(x + r * ldw, nb, a), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
        dst[r] = _mm_cvtss_f32(hsum8x4(v));
    }
}

#if defined(__AVX512F__)
// The same for AVX-512 rows (Row: 16 lanes to add up), reduced 4 at a time
// by hsum16x4: at K 1536 a Q4_K row is 6 super-blocks, and reducing each
// row's accumulators alone cost about a tenth of the time.
template <int64_t kValues, __m512 (*Row)(const uint8_t *, int64_t, const uint8_t *)>
static void dot_rows_by4_zmm(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    const auto * x = static_cast<const uint8_t *>(w);
    const auto * a = static_cast<const uint8_t *>(act);
    const int64_t nb = k / kValues;
    const __m512 z = _mm512_setzero_ps();
    int64_t r = 0;
    for (; r + 4 <= m; r += 4) {
        // a braced list is evaluated in order, function arguments are not: GCC
        // went from the 4th row back to the 1st, against the weights' prefetch
        // (generation 5-10 % slower from DRAM)
        const __m512 v[4] = {Row(x + r * ldw, nb, a), Row(x + (r + 1) * ldw, nb, a), Row(x + (r + 2) * ldw, nb, a),
                             Row(x + (r + 3) * ldw, nb, a)};
        _mm_storeu_ps(dst + r, hsum16x4(v[0], v[1], v[2], v[3]));
    }
    for (; r < m; ++r) dst[r] = _mm_cvtss_f32(hsum16x4(Row(x + r * ldw, nb, a), z, z, z));
}
#endif

} // namespace
} // namespace lmggml::cpu::arch::x86

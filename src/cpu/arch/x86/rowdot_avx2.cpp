// AVX2 matrix x vector on ggml's block formats (RowDot, layouts.h) for
// Q4_0, Q4_1 and Q8_0 weights: generation on CPUs without AVX-512.
//
// Same packed activation rows as the VNNI kernels (rowdot_pack.h); a 256-bit
// vector covers half of a 64-byte group, i.e. 2 blocks, and lane l of it
// belongs to block l / 4 (Q4) or to one block (Q8_0), so the packed per-lane
// scales line up. maddubs multiplies unsigned weights by signed activations;
// Q8_0's signed weights go through the sign trick (|w| times sign(w) * y),
// because the +128 offset of the VNNI kernel would saturate maddubs' int16
// pair sums. Block scales of a whole group are converted with one vcvtph2ps
// and spread over the lanes by permutes. Twins: ref::rowdot_*.
#if defined(__x86_64__) || defined(__i386__)

#include "rowdot_impl.h"
#include "rowdot_pack.h"
#include "simd_avx2.h"
#include "x86.h"

#include "../layouts.h"

#include <immintrin.h>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

// Weight rows stream from memory once per token: prefetching ahead keeps
// loads in flight while the row's arithmetic runs. With the faster kernels
// 4 KiB ahead beat 2 KiB (+3-8 % generation; 1 KiB -8 %, 8 KiB the same).
constexpr int64_t kPrefetchBytes = kWeightPrefetchBytes;

// ---------------------------------------------------------------- Q4_0 / Q4_1
// One group of n <= 4 blocks at x (the packed row is zero past the row, so
// missing blocks only need zero weights and scales, never a read).
template <bool kMin, int kBlock, int kQs, int n>
static inline void group_q4(const uint8_t * x, const uint8_t * act, __m256 * acc, __m256 * accm) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i ones = _mm256_set1_epi16(1);
    // F16 d (and m for Q4_1, else 2 level bytes, unused) of the 4 blocks,
    // ordered so that block 2h + i sits in 128-bit lane i: the per-lane
    // scales are then in-lane shuffles (vpermilps), not vpermps, whose
    // cross-lane port was this loop's bottleneck on Zen 3
    const __m128i hdr = _mm_setr_epi32(load32(x), n > 2 ? load32(x + 2 * kBlock) : 0, n > 1 ? load32(x + kBlock) : 0,
                                       n > 3 ? load32(x + 3 * kBlock) : 0);
    const __m256 dm = _mm256_cvtph_ps(hdr); // d0 m0 d2 m2 | d1 m1 d3 m3
    // Q4_1: one multiply by the row's d0 s0 d2 s2 | d1 s1 d3 s3 gives every
    // block's d * dy (even lanes) and m * s (odd lanes, summed in accm)
    __m256 ds = dm;
    if constexpr (kMin) {
        ds = _mm256_mul_ps(dm, _mm256_load_ps((const float *) (act + 256)));
        *accm = _mm256_add_ps(*accm, ds);
    }
    for (int h = 0; h < (n + 1) / 2; ++h) { // a half without blocks adds nothing
        const uint8_t * q = x + 2 * h * kBlock + kQs;
        const __m256i v = pair(load_qs(q, 2 * h, n), load_qs(q + kBlock, 2 * h + 1, n));
        const __m256i lo = _mm256_and_si256(v, low4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
        // pair sums of both halves stay within int16: 2 * 2 * 15 * 127
        const __m256i p16 =
            _mm256_add_epi16(_mm256_maddubs_epi16(lo, _mm256_load_si256((const __m256i *) (act + 32 * h))),
                             _mm256_maddubs_epi16(hi, _mm256_load_si256((const __m256i *) (act + 64 + 32 * h))));
        __m256i p = _mm256_madd_epi16(p16, ones);
        if constexpr (!kMin) p = _mm256_sub_epi32(p, _mm256_load_si256((const __m256i *) (act + 192 + 32 * h)));
        // lanes of block 2h, then of block 2h + 1
        const __m256 dx = h == 0 ? _mm256_permute_ps(ds, 0x00) : _mm256_permute_ps(ds, 0xAA);
        if constexpr (kMin) {
            *acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), dx, *acc);
        } else {
            const __m256 dy = _mm256_load_ps((const float *) (act + 128 + 32 * h));
            *acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(dx, dy), *acc);
        }
    }
}

template <bool kMin> __m256 dot_row_q4(const uint8_t * x, int64_t nb, const uint8_t * act) {
    constexpr int kBlock = kMin ? 20 : 18;
    constexpr int kQs = kMin ? 4 : 2;
    __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 4 <= nb; b += 4, x += 4 * kBlock, act += kQ4GroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        group_q4<kMin, kBlock, kQs, 4>(x, act, &acc, &accm);
    }
    switch (nb - b) { // the row's last, partial group
        case 1: group_q4<kMin, kBlock, kQs, 1>(x, act, &acc, &accm); break;
        case 2: group_q4<kMin, kBlock, kQs, 2>(x, act, &acc, &accm); break;
        case 3: group_q4<kMin, kBlock, kQs, 3>(x, act, &acc, &accm); break;
        default: break;
    }
    // accm's even lanes hold d * dy products, not minimum terms
    return _mm256_add_ps(acc, _mm256_blend_ps(_mm256_setzero_ps(), accm, 0xAA));
}

// ---------------------------------------------------------------- Q8_0
// One group of n <= 2 blocks (34 bytes: F16 d, 32 int8 levels); block h adds
// into acc[h]: one FMA chain per block, as a single chain of latency 4 per
// block would bound the loop.
template <int n> static inline void group_q8(const uint8_t * x, const uint8_t * act, __m256 * acc) {
    // d0 d1 repeated over all lanes: each block's scale is then an in-lane shuffle
    const __m256 d = _mm256_cvtph_ps(_mm_set1_epi32(load16(x) | (n > 1 ? load16(x + 34) << 16 : 0)));
    for (int h = 0; h < n; ++h) {
        const __m256i w = _mm256_loadu_si256((const __m256i *) (x + 34 * h + 2));
        const __m256i y = _mm256_load_si256((const __m256i *) (act + 32 * h));
        const __m256i p = dot4_i8(w, y); // y: activation levels within +-127
        const __m256 dx = h == 0 ? _mm256_permute_ps(d, 0x00) : _mm256_permute_ps(d, 0x55);
        const __m256 dy = _mm256_load_ps((const float *) (act + 64 + 32 * h));
        acc[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(dx, dy), acc[h]);
    }
}

__m256 dot_row_q8(const uint8_t * x, int64_t nb, const uint8_t * act) {
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2, x += 68, act += kQ8GroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        group_q8<2>(x, act, acc);
    }
    if (b < nb) group_q8<1>(x, act, acc);
    return _mm256_add_ps(acc[0], acc[1]);
}

const RowDot kQ4_0 = {rowdot_q4_size, rowdot_pack_q4<false>, dot_rows_by4<kQK, dot_row_q4<false>>};
const RowDot kQ4_1 = {rowdot_q4_size, rowdot_pack_q4<true>, dot_rows_by4<kQK, dot_row_q4<true>>};
const RowDot kQ8_0 = {rowdot_q8_size, rowdot_pack_q8, dot_rows_by4<kQK, dot_row_q8>};

} // namespace

void fill_avx2_rowdot(KernelSet & k) {
    k.rowdot[LM_GGML_TYPE_Q4_0] = &kQ4_0;
    k.rowdot[LM_GGML_TYPE_Q4_1] = &kQ4_1;
    k.rowdot[LM_GGML_TYPE_Q8_0] = &kQ8_0;
}

} // namespace lmggml::cpu::arch::x86

#endif

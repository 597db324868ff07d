// AVX2 matrix x vector (RowDot, layouts.h) for Q2_K .. Q6_K and IQ4_XS weights, on
// the activation rows every level shares (ref::rowdot_pack_q4_K / _q6_K,
// packed here by rowdot_pack.h's vectorized twins of those and of _iq4_xs): generation on
// CPUs without AVX-512.
//
// Q4_K: 32 qs bytes at a time; their low and high nibbles are sub-blocks
// 2c and 2c + 1, whose activations the packed row keeps 64 bytes apart. One
// maddubs each (pair sums up to 2 * 15 * 127) and one vpmaddwd against the
// sub-block's 16-bit scale give int32 sums of scale * dot; the mins times
// the activation's sub-block sums take one more vpmaddwd per super-block.
// Q5_K: the same, with bit s of the 32 qh bytes moved to bit 4 of
// sub-block s's levels (0..31: pair sums up to 2 * 31 * 127).
//
// Q6_K: a half's 32 qh bytes and 64 ql bytes give four vectors of levels
// 0..63 in value order (the high bits moved to bits 4-5 by 16-bit shifts
// that keep them inside their byte); one maddubs each (pair sums up to
// 2 * 63 * 127, within int16) against Q8_K's levels, then vpmaddwd by the
// signed scale of each 16-value group (128-bit lane i: group 2j + i of
// quarter j). The -32 offset comes out once per super-block as
// 32 * scale * Q8_K's bsums.
//
// IQ4_XS: 32 qs bytes at a time are sub-blocks 2c (128-bit lane 0) and
// 2c + 1 (lane 1); vpshufb maps their nibbles to the table's signed levels
// (-127..113), which the sign trick multiplies by the activation
// (maddubs of |level| and the activation with the level's sign: pair sums
// up to 2 * 127 * 127, so one vpmaddwd by 1 per maddubs). The 6-bit scales
// times d and the activation's per-sub-block d make 8 floats per
// super-block, spread over each chunk's lanes by vpermps.
// Twins: ref::rowdot_q2_K .. ref::rowdot_q6_K, ref::rowdot_iq4_xs.
#if defined(__x86_64__) || defined(__i386__)

#include "rowdot_impl.h"
#include "rowdot_pack.h"
#include "simd_avx2.h"
#include "x86.h"

#include "../layouts.h"
#include "../../../quant/q_iq4_tq.h"
#include "../../../quant/quants.h"

#include <immintrin.h>

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

// Weight rows stream from memory once per token (see rowdot_avx2.cpp).
constexpr int64_t kPrefetchBytes = kWeightPrefetchBytes;

// vpshufb index that repeats 16-bit element e0 over 128-bit lane 0 and e1 over lane 1
static inline __m256i word_index(int e0, int e1) {
    return _mm256_set_m128i(_mm_set1_epi16((short) (2 * e1 | (2 * e1 + 1) << 8)),
                            _mm_set1_epi16((short) (2 * e0 | (2 * e0 + 1) << 8)));
}

// ---------------------------------------------------------------- Q4_K, Q5_K
// Q5_K's bit b of each qh byte as bit 4 of the byte: 16-bit shifts by at
// most 4, so bit 4 of each byte comes from bit b of the same byte
template <int b> static inline __m256i fifth_bit(__m256i qh) {
    const __m256i bit4 = _mm256_set1_epi8(0x10);
    if constexpr (b <= 4) {
        return _mm256_and_si256(_mm256_slli_epi16(qh, 4 - b), bit4);
    } else {
        return _mm256_and_si256(_mm256_srli_epi16(qh, b - 4), bit4);
    }
}

// qs bytes 32c..32c+31 against the packed row: low nibbles are sub-block
// 2c (activation bytes 128 (c / 2) + 32 (c % 2)), high ones 2c + 1 (64 on);
// kFifth: Q5_K, whose qh bits 2c and 2c + 1 are their levels' bit 4
template <int c, bool kFifth>
static inline __m256i chunk_k4(const uint8_t * qs, __m256i qh, const uint8_t * act, __m256i sc) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i v = _mm256_loadu_si256((const __m256i *) (qs + 32 * c));
    __m256i wlo = _mm256_and_si256(v, low4);
    __m256i whi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
    if constexpr (kFifth) {
        wlo = _mm256_or_si256(wlo, fifth_bit<2 * c>(qh));
        whi = _mm256_or_si256(whi, fifth_bit<2 * c + 1>(qh));
    }
    const uint8_t * a = act + 128 * (c / 2) + 32 * (c % 2);
    const __m256i plo = _mm256_maddubs_epi16(wlo, _mm256_load_si256((const __m256i *) a));
    const __m256i phi = _mm256_maddubs_epi16(whi, _mm256_load_si256((const __m256i *) (a + 64)));
    return _mm256_add_epi32(_mm256_madd_epi16(plo, _mm256_shuffle_epi8(sc, word_index(2 * c, 2 * c))),
                            _mm256_madd_epi16(phi, _mm256_shuffle_epi8(sc, word_index(2 * c + 1, 2 * c + 1))));
}

template <class Block> __m256 dot_row_k4(const uint8_t * x, int64_t nb, const uint8_t * act) {
    constexpr bool kFifth = std::is_same_v<Block, lm_block_q5_K>;
    __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b, x += sizeof(Block), act += kKGroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        prefetch_stream((const char *) x + kPrefetchBytes + 64);
        if constexpr (kFifth) prefetch_stream((const char *) x + kPrefetchBytes + 128); // 176 bytes: 4 lines
        prefetch_stream((const char *) x + kPrefetchBytes + sizeof(Block) - 1);
        const auto * blk = reinterpret_cast<const Block *>(x);
        const __m128i sm = scales_mins(blk->scales);
        const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm)); // 16-bit scales 0..7 per lane
        __m256i qh = _mm256_setzero_si256();
        if constexpr (kFifth) qh = _mm256_loadu_si256((const __m256i *) blk->qh);
        __m256i t =
            _mm256_add_epi32(chunk_k4<0, kFifth>(blk->qs, qh, act, sc), chunk_k4<1, kFifth>(blk->qs, qh, act, sc));
        t = _mm256_add_epi32(
            t, _mm256_add_epi32(chunk_k4<2, kFifth>(blk->qs, qh, act, sc), chunk_k4<3, kFifth>(blk->qs, qh, act, sc)));
        // mins (int32 lanes with a zero upper half) times the sub-block sums
        // (|sum| <= 32 * 127: their lower half is the value as int16)
        const __m256i m = _mm256_madd_epi16(_mm256_cvtepu8_epi32(_mm_srli_si128(sm, 8)),
                                            _mm256_load_si256((const __m256i *) (act + 256)));
        float dy;
        std::memcpy(&dy, act + 288, sizeof(dy));
        const __m128 dd = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(load32(x))), _mm_set1_ps(dy)); // d, dmin
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(t), _mm256_broadcastss_ps(dd), acc);
        accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(m), _mm256_broadcastss_ps(_mm_movehdup_ps(dd)), accm);
    }
    return _mm256_sub_ps(acc, accm);
}

// ---------------------------------------------------------------- Q6_K
// Quarter j (values 32j..32j+31) of a half: low nibbles of ql bytes 0..31
// (j = 0) or 32..63 (j = 1), high nibbles of the same (j = 2, 3); bits
// 2j, 2j + 1 of the qh bytes. sc: the half's 8 scales as int16 per lane.
template <int j>
static inline __m256i quarter_q6_K(__m256i l0, __m256i l1, __m256i hq, const uint8_t * act, __m256i sc) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i bits45 = _mm256_set1_epi8(0x30);
    const __m256i l = j % 2 == 0 ? l0 : l1;
    const __m256i nib = _mm256_and_si256(j < 2 ? l : _mm256_srli_epi16(l, 4), low4);
    // bits 2j, 2j + 1 to bits 4, 5: the shifted-in bits of the neighbouring byte fall outside 0x30
    __m256i h;
    if constexpr (j < 2) {
        h = _mm256_slli_epi16(hq, 4 - 2 * j);
    } else if constexpr (j == 2) {
        h = hq;
    } else {
        h = _mm256_srli_epi16(hq, 2);
    }
    const __m256i w = _mm256_or_si256(nib, _mm256_and_si256(h, bits45));
    const __m256i p = _mm256_maddubs_epi16(w, _mm256_load_si256((const __m256i *) (act + 32 * j)));
    return _mm256_madd_epi16(p, _mm256_shuffle_epi8(sc, word_index(2 * j, 2 * j + 1)));
}

__m256 dot_row_q6_K(const uint8_t * x, int64_t nb, const uint8_t * act) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b, x += sizeof(lm_block_q6_K), act += kK6GroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        prefetch_stream((const char *) x + kPrefetchBytes + 64);
        prefetch_stream((const char *) x + kPrefetchBytes + 128);
        prefetch_stream((const char *) x + kPrefetchBytes + sizeof(lm_block_q6_K) - 1);
        const auto * blk = reinterpret_cast<const lm_block_q6_K *>(x);
        const __m128i sc8 = _mm_loadu_si128((const __m128i *) blk->scales);
        __m256i t = _mm256_setzero_si256();
        for (int n = 0; n < 2; ++n) {
            const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(n == 0 ? sc8 : _mm_srli_si128(sc8, 8)));
            const __m256i l0 = _mm256_loadu_si256((const __m256i *) (blk->ql + 64 * n));
            const __m256i l1 = _mm256_loadu_si256((const __m256i *) (blk->ql + 64 * n + 32));
            const __m256i hq = _mm256_loadu_si256((const __m256i *) (blk->qh + 32 * n));
            const uint8_t * a = act + 128 * n;
            t = _mm256_add_epi32(
                t, _mm256_add_epi32(quarter_q6_K<0>(l0, l1, hq, a, sc), quarter_q6_K<1>(l0, l1, hq, a, sc)));
            t = _mm256_add_epi32(
                t, _mm256_add_epi32(quarter_q6_K<2>(l0, l1, hq, a, sc), quarter_q6_K<3>(l0, l1, hq, a, sc)));
        }
        // the levels' +32: 32 * sum over groups of scale * bsum
        const __m256i c0 =
            _mm256_mullo_epi32(_mm256_cvtepi8_epi32(sc8), _mm256_load_si256((const __m256i *) (act + 256)));
        const __m256i c1 = _mm256_mullo_epi32(_mm256_cvtepi8_epi32(_mm_srli_si128(sc8, 8)),
                                              _mm256_load_si256((const __m256i *) (act + 288)));
        t = _mm256_sub_epi32(t, _mm256_slli_epi32(_mm256_add_epi32(c0, c1), 5));
        float dy;
        std::memcpy(&dy, act + 320, sizeof(dy));
        const float d = from_f16((uint16_t) load16(x + offsetof(lm_block_q6_K, d)));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(t), _mm256_set1_ps(d * dy), acc);
    }
    return acc;
}

// ---------------------------------------------------------------- Q2_K, Q3_K
// On Q6_K's activation rows. Quarter j of half n (values 128n + 32j ..) has
// its 2 low bits at 2j of qs[32n + l]; levels 0..3 (Q3_K: + 4 where bit
// 4n + j of hmask[l] is set, 0..7, the -4 taken out once per super-block
// through the bsums) go through maddubs and vpmaddwd by the 16-value
// groups' scales as Q6_K's.

// the 16 signed 6-bit scales of a q3_K super-block, as int8: 4 low bits
// (bytes 0-7 low nibbles, then high nibbles), 2 high bits at 2 (g / 4) of
// byte 8 + g % 4
static inline __m128i scales_q3_K(const uint8_t * p) {
    // two loads, not a copy to the stack: a 16-byte load of 12 stored bytes stalls
    const __m128i a = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *) p), _mm_cvtsi32_si128(load32(p + 8)));
    const __m128i m4 = _mm_set1_epi8(0x0F), m3 = _mm_set1_epi8(3);
    const __m128i lo = _mm_unpacklo_epi64(_mm_and_si128(a, m4), _mm_and_si128(_mm_srli_epi16(a, 4), m4));
    const __m128i rep = _mm_shuffle_epi8(a, _mm_setr_epi8(8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11));
    __m128i hi = _mm_and_si128(rep, m3);
    hi = _mm_blend_epi32(hi, _mm_and_si128(_mm_srli_epi16(rep, 2), m3), 0x2);
    hi = _mm_blend_epi32(hi, _mm_and_si128(_mm_srli_epi16(rep, 4), m3), 0x4);
    hi = _mm_blend_epi32(hi, _mm_and_si128(_mm_srli_epi16(rep, 6), m3), 0x8);
    return _mm_sub_epi8(_mm_or_si128(lo, _mm_slli_epi16(hi, 4)), _mm_set1_epi8(32));
}

// quarters 0..3 of half n against the packed row; sc: the half's 8 scales
// as int16 per lane; hm: the hmask bytes (Q3_K)
template <bool kQ3, int n> static inline __m256i half_k23(__m256i q, __m256i hm, const uint8_t * act, __m256i sc) {
    const __m256i three = _mm256_set1_epi8(3);
    __m256i t = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        __m256i w = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), three);
        if constexpr (kQ3) { // bit 4n + j of each hmask byte to bit 2 (16-bit shifts by at most 5 keep it in its byte)
            const int sh = 4 * n + j;
            const __m256i h = sh >= 2 ? _mm256_srli_epi16(hm, sh - 2) : _mm256_slli_epi16(hm, 2 - sh);
            w = _mm256_or_si256(w, _mm256_and_si256(h, _mm256_set1_epi8(4)));
        }
        const __m256i p = _mm256_maddubs_epi16(w, _mm256_load_si256((const __m256i *) (act + 128 * n + 32 * j)));
        t = _mm256_add_epi32(t, _mm256_madd_epi16(p, _mm256_shuffle_epi8(sc, word_index(2 * j, 2 * j + 1))));
    }
    return t;
}

// the 8 scales of half n (int8 in sc8's bytes 8n..8n+7) as int16 in both lanes
template <bool kSigned> static inline __m256i half_scales(__m128i sc8, int n) {
    const __m128i h = n == 0 ? sc8 : _mm_srli_si128(sc8, 8);
    return _mm256_broadcastsi128_si256(kSigned ? _mm_cvtepi8_epi16(h) : _mm_cvtepu8_epi16(h));
}

// sum over the 16 groups of sc8[g] * the activation's bsums[g]
template <bool kSigned> static inline __m256i scaled_bsums(__m128i sc8, const uint8_t * act) {
    const auto widen = [](__m128i v) { return kSigned ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v); };
    return _mm256_add_epi32(
        _mm256_mullo_epi32(widen(sc8), _mm256_load_si256((const __m256i *) (act + 256))),
        _mm256_mullo_epi32(widen(_mm_srli_si128(sc8, 8)), _mm256_load_si256((const __m256i *) (act + 288))));
}

__m256 dot_row_q3_K(const uint8_t * x, int64_t nb, const uint8_t * act) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b, x += sizeof(lm_block_q3_K), act += kK6GroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        prefetch_stream((const char *) x + kPrefetchBytes + 64);
        prefetch_stream((const char *) x + kPrefetchBytes + sizeof(lm_block_q3_K) - 1);
        const auto * blk = reinterpret_cast<const lm_block_q3_K *>(x);
        const __m128i sc8 = scales_q3_K(blk->scales);
        const __m256i hm = _mm256_loadu_si256((const __m256i *) blk->hmask);
        __m256i t = _mm256_add_epi32(
            half_k23<true, 0>(_mm256_loadu_si256((const __m256i *) blk->qs), hm, act, half_scales<true>(sc8, 0)),
            half_k23<true, 1>(_mm256_loadu_si256((const __m256i *) (blk->qs + 32)), hm, act,
                              half_scales<true>(sc8, 1)));
        t = _mm256_sub_epi32(t, _mm256_slli_epi32(scaled_bsums<true>(sc8, act), 2)); // the levels' + 4
        float dy;
        std::memcpy(&dy, act + 320, sizeof(dy));
        const float d = from_f16((uint16_t) load16(x + offsetof(lm_block_q3_K, d)));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(t), _mm256_set1_ps(d * dy), acc);
    }
    return acc;
}

__m256 dot_row_q2_K(const uint8_t * x, int64_t nb, const uint8_t * act) {
    __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b, x += sizeof(lm_block_q2_K), act += kK6GroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        prefetch_stream((const char *) x + kPrefetchBytes + sizeof(lm_block_q2_K) - 1);
        const auto * blk = reinterpret_cast<const lm_block_q2_K *>(x);
        const __m128i s = _mm_loadu_si128((const __m128i *) blk->scales);
        const __m128i sc8 = _mm_and_si128(s, _mm_set1_epi8(0x0F));
        const __m128i mn8 = _mm_and_si128(_mm_srli_epi16(s, 4), _mm_set1_epi8(0x0F));
        const __m256i none = _mm256_setzero_si256();
        const __m256i t = _mm256_add_epi32(
            half_k23<false, 0>(_mm256_loadu_si256((const __m256i *) blk->qs), none, act, half_scales<false>(sc8, 0)),
            half_k23<false, 1>(_mm256_loadu_si256((const __m256i *) (blk->qs + 32)), none, act,
                               half_scales<false>(sc8, 1)));
        float dy;
        std::memcpy(&dy, act + 320, sizeof(dy));
        const float d = from_f16((uint16_t) load16(x + offsetof(lm_block_q2_K, d)));
        const float dmin = from_f16((uint16_t) load16(x + offsetof(lm_block_q2_K, dmin)));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(t), _mm256_set1_ps(d * dy), acc);
        accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(scaled_bsums<false>(mn8, act)), _mm256_set1_ps(dmin * dy), accm);
    }
    return _mm256_sub_ps(acc, accm);
}

// ---------------------------------------------------------------- IQ4_XS
// qs bytes 32c..32c+31 against the packed row (ref::rowdot_pack_iq4_xs):
// low nibbles at activation bytes 128 (c / 2) + 32 (c % 2), high ones 64 on;
// int32 lanes 0-3 sum sub-block 2c, lanes 4-7 sub-block 2c + 1
template <int c> static inline __m256i chunk_iq4_xs(const uint8_t * qs, const uint8_t * act, __m256i lut) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i v = _mm256_loadu_si256((const __m256i *) (qs + 32 * c));
    const uint8_t * a = act + 128 * (c / 2) + 32 * (c % 2);
    const __m256i lo = _mm256_shuffle_epi8(lut, _mm256_and_si256(v, low4));
    const __m256i hi = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4));
    return _mm256_add_epi32(dot4_i8(lo, _mm256_load_si256((const __m256i *) a)),
                            dot4_i8(hi, _mm256_load_si256((const __m256i *) (a + 64))));
}

__m256 dot_row_iq4_xs(const uint8_t * x, int64_t nb, const uint8_t * act) {
    const __m256i lut = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_quant_kvalues_iq4nl));
    // sub-block s: scales_l bits 4s..4s+3 to bits 0-3, scales_h (bits 16 + 2s of
    // the header's first word) to bits 4-5
    const __m256i shl = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    const __m256i shh = _mm256_setr_epi32(12, 14, 16, 18, 20, 22, 24, 26);
    const auto spread = [](int s) { return _mm256_setr_epi32(s, s, s, s, s + 1, s + 1, s + 1, s + 1); };
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b, x += sizeof(lm_block_iq4_xs), act += kIQ4XSGroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        prefetch_stream((const char *) x + kPrefetchBytes + 64);
        prefetch_stream((const char *) x + kPrefetchBytes + sizeof(lm_block_iq4_xs) - 1);
        const int32_t w0 = load32(x), w1 = load32(x + 4); // d and scales_h; scales_l
        const __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(w1), shl), _mm256_set1_epi32(0x0F));
        const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(w0), shh), _mm256_set1_epi32(0x30));
        const __m256i sc = _mm256_sub_epi32(_mm256_or_si256(lo, hi), _mm256_set1_epi32(32));
        const __m256 dd =
            _mm256_mul_ps(_mm256_set1_ps(from_f16((uint16_t) w0)), _mm256_load_ps((const float *) (act + 384)));
        const __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(sc), dd);
        const uint8_t * qs = x + 8;
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(chunk_iq4_xs<0>(qs, act, lut)),
                               _mm256_permutevar8x32_ps(f, spread(0)), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(chunk_iq4_xs<1>(qs, act, lut)),
                               _mm256_permutevar8x32_ps(f, spread(2)), acc1);
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(chunk_iq4_xs<2>(qs, act, lut)),
                               _mm256_permutevar8x32_ps(f, spread(4)), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(chunk_iq4_xs<3>(qs, act, lut)),
                               _mm256_permutevar8x32_ps(f, spread(6)), acc1);
    }
    return _mm256_add_ps(acc0, acc1);
}

const RowDot kQ4_K = {rowdot_k_size, rowdot_pack_q4_K_avx2, dot_rows_by4<kQKK, dot_row_k4<lm_block_q4_K>>};
const RowDot kQ5_K = {rowdot_k_size, rowdot_pack_q4_K_avx2, dot_rows_by4<kQKK, dot_row_k4<lm_block_q5_K>>};
const RowDot kQ6_K = {rowdot_k6_size, rowdot_pack_q6_K_avx2, dot_rows_by4<kQKK, dot_row_q6_K>};
const RowDot kQ2_K = {rowdot_k6_size, rowdot_pack_q6_K_avx2, dot_rows_by4<kQKK, dot_row_q2_K>};
const RowDot kQ3_K = {rowdot_k6_size, rowdot_pack_q6_K_avx2, dot_rows_by4<kQKK, dot_row_q3_K>};
const RowDot kIQ4_XS = {rowdot_iq4_xs_size, rowdot_pack_iq4_xs_avx2, dot_rows_by4<kQKK, dot_row_iq4_xs>};

} // namespace

void fill_avx2_rowdot_k(KernelSet & k) {
    k.rowdot[LM_GGML_TYPE_Q4_K] = &kQ4_K;
    k.rowdot[LM_GGML_TYPE_Q5_K] = &kQ5_K;
    k.rowdot[LM_GGML_TYPE_Q6_K] = &kQ6_K;
    k.rowdot[LM_GGML_TYPE_Q2_K] = &kQ2_K;
    k.rowdot[LM_GGML_TYPE_Q3_K] = &kQ3_K;
    k.rowdot[LM_GGML_TYPE_IQ4_XS] = &kIQ4_XS;
}

} // namespace lmggml::cpu::arch::x86

#endif

// AVX-512 VNNI matrix x vector (RowDot, layouts.h) for Q2_K .. Q6_K and
// IQ4_XS weights.
//
// With 512-bit instructions in flight only ports 0 and 5 take vector uops,
// so at 1 thread (weights in cache, or one core against DRAM) these loops
// run at their vector uop count / 2 cycles per super-block: each step
// below is what cut that count (session 27, hot rows at K 1536: Q2_K 11.4
// -> 16.2, Q3_K 10.5 -> 17.6, Q4_K 24.8 -> 29.2, Q5_K 17.6 -> 29.6, Q6_K
// 29.7 -> 32-35 GB/s; the first two and Q5_K were AVX2 kernels before).
// Common to all: scale-weighted sums by vpdpwssd (a multiply and an add in
// one), the activation's int32 bsums used as int16 word pairs (each below
// 2^15: the value, then its sign) against zero-extended scales, broadcast
// loads instead of shuffles, vpternlogd to join bit fields.
//
// Q4_K / Q5_K (row_k45): a super-block's 128 qs bytes are two 64-byte
// loads; their low and high nibbles are four vectors that the packed
// activation row (reordered Q8_K, ref::rowdot_pack_q4_K, shared by every
// level) lines up with, so one vpdpbusd each gives per-lane sums of two
// sub-blocks (lanes 0-7 and 8-15). Q5_K's fifth bits: the 32 qh bytes in
// both 256-bit halves, one 16-bit shift per vector to bit 4. The 6-bit
// scales and mins come out by two vpmultishiftqb; the four sum vectors (at
// most 4 * 31 * 128 a lane) are packed to int16 and vpdpwssd multiplies
// them by the scales, spread over their words by vpermb. The products go
// to one F32 accumulator (times d * dy), the mins times the sub-block sums
// of the activation to another (times dmin * dy).
//
// Q6_K: the 64 bytes of each half's low nibbles and the 32 qh bytes
// (repeated in both 256-bit halves, shifted per half) give four vectors of
// unsigned levels 0..63 in value order, one vpdpbusd each against the Q8_K
// levels; lane i of vector t belongs to 16-value group 4t + i / 4; the
// vectors are packed to int16 (at most 4 * 63 * 128) and vpdpwssd
// multiplies them by their signed scales, spread by vpermw; the -32 offset
// comes out once per super-block as 32 * scale * Q8_K's bsums. Q2_K / Q3_K:
// the same shape, see row_k23.
//
// IQ4_XS: each 64-byte half of qs (sub-blocks 4h..4h+3) is two vectors,
// the low nibbles and the high ones (shifted down by 4); vpermb on a
// 64-byte table of the 16 levels + 128 repeated 4 times maps them to
// unsigned levels without masking (index bits 4 and 5 select a copy), and
// vpdpbusd, started from the packed row's c (-128 * the lane's levels),
// gives lane l of half h the signed sum of sub-block 4h + l / 4. The 6-bit
// scales come out as 8 int32 lanes by per-lane shifts of the header, times
// d and the activation's per-sub-block d in float, spread over the lanes by
// vpermps into one F32 fma per half.
// Twins: ref::rowdot_q2_K .. ref::rowdot_q6_K, ref::rowdot_iq4_xs.
#if defined(__x86_64__) || defined(__i386__)

#include "rowdot_impl.h"
#include "rowdot_pack.h"
#include "x86.h"

#include "../layouts.h"
#include "../../../quant/q_iq4_tq.h"
#include "../../../quant/quants.h"

#include <immintrin.h>

#include <cstring>
#include <type_traits>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

// Weight rows stream once per token from memory (see rowdot_vnni.cpp).
constexpr int64_t kPrefetchBytes = 2048;

static inline float from_f16_scalar(lm_half h) {
    uint16_t u;
    std::memcpy(&u, &h, sizeof(u));
    return _cvtsh_ss(u);
}

// vpermb indices that spread Q4_K's 6-bit scales (the zero-extended
// scales_mins: bytes 0-7, 16 a zero byte) over the int16 words of
// packs(p0, p1) (v 0) and packs(p2, p3) (v 1): word w of 128-bit block k
// holds lane 4k + w % 4 of p(2v + w / 4), whose sub-block is t % 2 + 4 (t / 2),
// + 2 in lanes 8-15.
struct Q4KScaleIdx {
    alignas(64) uint8_t b[2][64];
};
constexpr Q4KScaleIdx make_q4_K_scale_idx() {
    Q4KScaleIdx s{};
    for (int v = 0; v < 2; ++v) {
        for (int k = 0; k < 4; ++k) {
            for (int w = 0; w < 8; ++w) {
                const int t = 2 * v + w / 4;
                s.b[v][16 * k + 2 * w] = (uint8_t) (t % 2 + 4 * (t / 2) + (k >= 2 ? 2 : 0));
                s.b[v][16 * k + 2 * w + 1] = 16;
            }
        }
    }
    return s;
}
constexpr Q4KScaleIdx kQ4KScaleIdx = make_q4_K_scale_idx();

// The 16 six-bit fields of the K-quants' 12-byte scale layouts as bytes,
// by two vpmultishiftqb: one picks 8 bits at a bit offset of the first 8
// bytes for each output byte, the other of bytes 8-11 (repeated, so an
// offset 4 below a field wraps round and puts it at bits 4-5); a per-byte
// bit mask selects between them and an and by 0x3F clears the rest. 4
// vector instructions where the SSE unpacking took 17-22, in loops bound
// by their vector uops.
struct SixBitFields {
    __m128i from_q, from_d, pick_q; // offsets into bytes 0-7 / 8-11; the bits taken from the first
};

static inline __m128i six_bit_fields(const uint8_t * p, const SixBitFields & f) {
    int64_t q;
    std::memcpy(&q, p, sizeof(q));
    const __m128i a = _mm_multishift_epi64_epi8(f.from_q, _mm_set1_epi64x(q));
    const __m128i b = _mm_multishift_epi64_epi8(f.from_d, _mm_set1_epi32(load32(p + 8)));
    return _mm_and_si128(_mm_ternarylogic_epi32(f.pick_q, a, b, 0xCA), _mm_set1_epi8(0x3F)); // pick_q ? a : b
}

static SixBitFields six_bit_fields_from(const uint8_t (&q)[16], const uint8_t (&d)[16], const uint8_t (&pick)[16]) {
    return {_mm_loadu_si128((const __m128i *) q), _mm_loadu_si128((const __m128i *) d),
            _mm_loadu_si128((const __m128i *) pick)};
}

// Q4_K / Q5_K: bytes 0-7 the scales, 8-15 the mins (scales_mins' order). Field
// j < 4 is bits 8j (mins: 32 + 8j) of the first 8 bytes; j >= 4 has its low 4
// bits at 8 (j - 4) of bytes 8-11 (mins: + 4) and its top 2 at 8 (j - 4) + 6
// of the first 8 (mins: 32 + that).
static SixBitFields q4_K_fields() {
    uint8_t q[16], d[16], pick[16];
    for (int i = 0; i < 16; ++i) {
        const int j = i % 8, base = i < 8 ? 0 : 32;
        q[i] = (uint8_t) (j < 4 ? base + 8 * j : base + 8 * (j - 4) + 2);
        d[i] = (uint8_t) (j < 4 ? 0 : 8 * (j - 4) + (i < 8 ? 0 : 4));
        pick[i] = (uint8_t) (j < 4 ? 0xFF : 0x30); // j >= 4: its top 2 bits from the first 8 bytes
    }
    return six_bit_fields_from(q, d, pick);
}

// Q3_K (unsigned, 32 above the scale): scale g's low 4 bits at 8 (g % 8) + 4
// (g / 8) of the first 8 bytes, its high 2 at 8 (g % 4) + 2 (g / 4) of bytes 8-11.
static SixBitFields q3_K_fields() {
    uint8_t q[16], d[16], pick[16];
    for (int g = 0; g < 16; ++g) {
        q[g] = (uint8_t) (8 * (g % 8) + 4 * (g / 8));
        d[g] = (uint8_t) ((8 * (g % 4) + 2 * (g / 4) + 60) % 64);
        pick[g] = 0x0F;
    }
    return six_bit_fields_from(q, d, pick);
}

// Q5_K's fifth bits: vector t (qs bytes 64 (t / 2) .., low nibbles for even t) takes bit
// 2 (2 (t / 2)) + t % 2 of qh[l] in its lower 256 bits, that + 2 in the upper; 16-bit
// shifts by these counts (left for t < 2, right after) move it to bit 4 of its byte.
struct Q5KShifts {
    __m512i s[4];
    Q5KShifts() {
        const auto half = [](int lo, int hi) {
            return _mm512_inserti64x4(_mm512_set1_epi16((short) lo), _mm256_set1_epi16((short) hi), 1);
        };
        s[0] = half(4, 2); // bits 0, 2: left
        s[1] = half(3, 1); // bits 1, 3: left
        s[2] = half(0, 2); // bits 4, 6: right
        s[3] = half(1, 3); // bits 5, 7: right
    }
};

// Q4_K (kQ5 false) and Q5_K: the levels of vector t, 0..15 (0..31)
template <bool kQ5> static inline __m512i k45_levels(__m512i v, __m512i qh, const Q5KShifts & sh, int t) {
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i nib = t % 2 == 0 ? v : _mm512_srli_epi16(v, 4);
    if constexpr (!kQ5) {
        return _mm512_and_si512(nib, low4);
    } else {
        const __m512i h = t < 2 ? _mm512_sllv_epi16(qh, sh.s[t]) : _mm512_srlv_epi16(qh, sh.s[t]);
        // bits 0-3 from the nibble, 4 from qh (low4 ? nibble : h), 5-7 cleared
        return _mm512_and_si512(_mm512_ternarylogic_epi32(low4, nib, h, 0xCA), _mm512_set1_epi8(0x1F));
    }
}

template <bool kQ5> __m512 row_k45(const uint8_t * x, int64_t nb, const uint8_t * act) {
    using Block = std::conditional_t<kQ5, lm_block_q5_K, lm_block_q4_K>;
    // lanes 0-7 / 8-15 of vector t's sums are sub-blocks t % 2 + 4 (t / 2) and that + 2; each
    // is at most 4 * 31 * 128 in magnitude, so the four are packed to int16 and vpdpwssd
    // multiplies them by their scales (two packs and two vpdpwssd for four vpmulld)
    static const SixBitFields sel = q4_K_fields();
    static const Q5KShifts sh;
    const __m512i s01_idx = _mm512_load_si512(kQ4KScaleIdx.b[0]);
    const __m512i s23_idx = _mm512_load_si512(kQ4KScaleIdx.b[1]);
    const __m512i z = _mm512_setzero_si512();
    __m512 acc = _mm512_setzero_ps();
    __m256 accm = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b, x += sizeof(Block), act += kKGroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        prefetch_stream((const char *) x + kPrefetchBytes + 64);
        prefetch_stream((const char *) x + kPrefetchBytes + sizeof(Block) - 1);
        const auto * blk = reinterpret_cast<const Block *>(x);
        const __m512i v0 = _mm512_loadu_si512(blk->qs);
        const __m512i v1 = _mm512_loadu_si512(blk->qs + 64);
        __m512i qh = z;
        if constexpr (kQ5) qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) blk->qh));
        const __m512i p0 = _mm512_dpbusd_epi32(z, k45_levels<kQ5>(v0, qh, sh, 0), _mm512_load_si512(act));
        const __m512i p1 = _mm512_dpbusd_epi32(z, k45_levels<kQ5>(v0, qh, sh, 1), _mm512_load_si512(act + 64));
        const __m512i p2 = _mm512_dpbusd_epi32(z, k45_levels<kQ5>(v1, qh, sh, 2), _mm512_load_si512(act + 128));
        const __m512i p3 = _mm512_dpbusd_epi32(z, k45_levels<kQ5>(v1, qh, sh, 3), _mm512_load_si512(act + 192));
        const __m128i smb = six_bit_fields(blk->scales, sel);
        const __m512i sm = _mm512_zextsi128_si512(smb);
        const __m512i t =
            _mm512_dpwssd_epi32(_mm512_madd_epi16(_mm512_packs_epi32(p0, p1), _mm512_permutexvar_epi8(s01_idx, sm)),
                                _mm512_packs_epi32(p2, p3), _mm512_permutexvar_epi8(s23_idx, sm));
        float dy;
        std::memcpy(&dy, act + 288, sizeof(dy));
        int32_t dm16;
        std::memcpy(&dm16, x, sizeof(dm16)); // d, dmin (F16)
        const __m128 dd = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(dm16)), _mm_set1_ps(dy));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t), _mm512_broadcastss_ps(dd), acc);
        // the sub-block sums are int32 below 2^15 in magnitude: as int16 words, each
        // value then its sign, so vpdpwssd against a zero-extended min multiplies them
        const __m256i m = _mm256_dpwssd_epi32(_mm256_setzero_si256(), _mm256_cvtepu8_epi32(_mm_srli_si128(smb, 8)),
                                              _mm256_load_si256((const __m256i *) (act + 256)));
        accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(m),
                               _mm256_permutexvar_ps(_mm256_set1_epi32(1), _mm256_castps128_ps256(dd)), accm);
    }
    return _mm512_sub_ps(acc, _mm512_zextps256_ps512(accm));
}

// vpermw indices that spread Q6_K's 16 scales (sign-extended to int16) over
// the words of packs(p(2n), p(2n + 1)): word w of 128-bit block k holds lane
// 4k + w % 4 of p(t), t = 2n + w / 4, whose 16-value group is 4t + k.
struct Q6KScaleIdx {
    alignas(64) uint16_t w[2][32];
};
constexpr Q6KScaleIdx make_q6_K_scale_idx() {
    Q6KScaleIdx s{};
    for (int n = 0; n < 2; ++n) {
        for (int k = 0; k < 4; ++k) {
            for (int w = 0; w < 8; ++w) s.w[n][8 * k + w] = (uint16_t) (4 * (2 * n + w / 4) + k);
        }
    }
    return s;
}
constexpr Q6KScaleIdx kQ6KScaleIdx = make_q6_K_scale_idx();

__m512 row_q6_K(const uint8_t * x, int64_t nb, const uint8_t * act) {
    const __m512i s_idx[2] = {_mm512_load_si512(kQ6KScaleIdx.w[0]), _mm512_load_si512(kQ6KScaleIdx.w[1])};
    // per 16-bit word of the lower / upper 256 bits (quarters 0, 1 and 2, 3 of a half): the
    // shifts that move the qh bits of the low nibbles (left) and high ones (right) to bits 4-5
    const __m512i shl = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
    const __m512i shr = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i low6 = _mm512_set1_epi8(0x3F);
    const __m512i z = _mm512_setzero_si512();
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b, x += sizeof(lm_block_q6_K), act += kK6GroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        prefetch_stream((const char *) x + kPrefetchBytes + 64);
        prefetch_stream((const char *) x + kPrefetchBytes + 128);
        prefetch_stream((const char *) x + kPrefetchBytes + 192);
        const auto * blk = reinterpret_cast<const lm_block_q6_K *>(x);
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) blk->scales));
        // the -32 offset once per super-block: t starts at -32 * scale * bsums (int32
        // below 2^15: as int16 words, each value then its sign)
        __m512i t = _mm512_dpwssd_epi32(
            z, _mm512_cvtepu16_epi32(_mm256_slli_epi16(_mm256_sub_epi16(_mm256_setzero_si256(), sc16), 5)),
            _mm512_load_si512(act + 256));
        for (int n = 0; n < 2; ++n) {
            const __m512i l = _mm512_loadu_si512(blk->ql + 64 * n);
            // a broadcast load: no shuffle uop in a loop bound by vector uops
            const __m512i hn = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) (blk->qh + 32 * n)));
            // levels: bits 0-3 from the nibble, 4-5 from qh (low4 ? nibble : qh), then 6-7 cleared
            const __m512i w0 =
                _mm512_and_si512(_mm512_ternarylogic_epi32(low4, l, _mm512_sllv_epi16(hn, shl), 0xCA), low6);
            const __m512i w1 = _mm512_and_si512(
                _mm512_ternarylogic_epi32(low4, _mm512_srli_epi16(l, 4), _mm512_srlv_epi16(hn, shr), 0xCA), low6);
            const __m512i p0 = _mm512_dpbusd_epi32(z, w0, _mm512_load_si512(act + 128 * n));
            const __m512i p1 = _mm512_dpbusd_epi32(z, w1, _mm512_load_si512(act + 128 * n + 64));
            // each lane at most 4 * 63 * 128: int16 words, times their scales by vpdpwssd
            t = _mm512_dpwssd_epi32(t, _mm512_packs_epi32(p0, p1),
                                    _mm512_permutexvar_epi16(s_idx[n], _mm512_castsi256_si512(sc16)));
        }
        float dy;
        std::memcpy(&dy, act + 320, sizeof(dy));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t), _mm512_set1_ps(from_f16_scalar(blk->d) * dy), acc);
    }
    return acc;
}

// Q2_K and Q3_K on Q6_K's activation rows and scale spreading: vector t of
// a super-block (t = 2n + h) holds values 64t..64t+63 in order, so lane i
// belongs to 16-value group 4t + i / 4 as in row_q6_K. Quarters 2h and
// 2h + 1 of half n sit at bits 4h and 4h + 2 of qs[32n + l]: the half's 32
// qs bytes repeated in both 256-bit halves, one vpsrlvw by 4h (lower) and
// 4h + 2 (upper) and a mask by 3 give the 64 levels 0..3. Q3_K: the third
// bit (bit 4n + 2h or 4n + 2h + 1 of hmask[l], the 32 hmask bytes repeated
// likewise) by vptestmb into a byte mask that adds 4 (levels 0..7; the -4
// comes out once per super-block as 4 * scale * bsums). Q2_K: the unsigned
// scales, and the mins times bsums into a second accumulator (times dmin).
struct K23Bits {
    __m512i shift[2]; // per 16-bit word: 4h in the lower 256 bits, 4h + 2 in the upper
    __m512i hbit[4];  // Q3_K: per byte, the hmask bit of vector t's quarter
    K23Bits() {
        for (int h = 0; h < 2; ++h) {
            shift[h] =
                _mm512_inserti64x4(_mm512_set1_epi16((short) (4 * h)), _mm256_set1_epi16((short) (4 * h + 2)), 1);
        }
        for (int t = 0; t < 4; ++t) {
            const int b = 4 * (t / 2) + 2 * (t % 2);
            hbit[t] = _mm512_inserti64x4(_mm512_set1_epi8((char) (1 << b)), _mm256_set1_epi8((char) (1 << (b + 1))), 1);
        }
    }
};

template <bool kQ3> __m512 row_k23(const uint8_t * x, int64_t nb, const uint8_t * act) {
    using Block = std::conditional_t<kQ3, lm_block_q3_K, lm_block_q2_K>;
    static const K23Bits bits;
    static const SixBitFields sel = q3_K_fields();
    const __m512i s_idx[2] = {_mm512_load_si512(kQ6KScaleIdx.w[0]), _mm512_load_si512(kQ6KScaleIdx.w[1])};
    const __m512i three = _mm512_set1_epi8(3);
    const __m512i four = _mm512_set1_epi8(4);
    const __m512i z = _mm512_setzero_si512();
    __m512 acc = _mm512_setzero_ps(), accm = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b, x += sizeof(Block), act += kK6GroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        prefetch_stream((const char *) x + kPrefetchBytes + 64);
        prefetch_stream((const char *) x + kPrefetchBytes + sizeof(Block) - 1);
        const auto * blk = reinterpret_cast<const Block *>(x);
        // bsums are int32 below 2^15 in magnitude: as int16 words, each value then its
        // sign, so vpdpwssd against a zero-extended word multiplies by the value
        const __m512i bsums = _mm512_load_si512(act + 256);
        float dy;
        std::memcpy(&dy, act + 320, sizeof(dy));
        __m512i t, hm = z;
        __m256i sc16;
        __m512 dd; // lane 0: d * dy (Q2_K lane 1: dmin * dy)
        if constexpr (kQ3) {
            sc16 = _mm256_cvtepi8_epi16(_mm_sub_epi8(six_bit_fields(blk->scales, sel), _mm_set1_epi8(32)));
            hm = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) blk->hmask));
            // the levels' -4, once per super-block: t starts at -4 * scale * bsums
            t = _mm512_dpwssd_epi32(z, _mm512_cvtepu16_epi32(_mm256_mullo_epi16(sc16, _mm256_set1_epi16(-4))), bsums);
            dd = _mm512_set1_ps(from_f16_scalar(blk->d) * dy);
        } else {
            const __m128i s = _mm_loadu_si128((const __m128i *) blk->scales);
            sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(s, _mm_set1_epi8(0x0F)));
            const __m512i mins = _mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(s, 4), _mm_set1_epi8(0x0F)));
            int32_t dm16;
            std::memcpy(&dm16, &blk->d, sizeof(dm16)); // d, dmin (F16)
            dd = _mm512_castps128_ps512(_mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(dm16)), _mm_set1_ps(dy)));
            accm = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpwssd_epi32(z, mins, bsums)),
                                   _mm512_permutexvar_ps(_mm512_set1_epi32(1), dd), accm);
            t = z;
        }
        for (int n = 0; n < 2; ++n) {
            // a broadcast load: no shuffle uop in a loop bound by vector uops
            const __m512i qn = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) (blk->qs + 32 * n)));
            __m512i p[2];
            for (int h = 0; h < 2; ++h) {
                __m512i w = _mm512_and_si512(_mm512_srlv_epi16(qn, bits.shift[h]), three);
                if constexpr (kQ3)
                    w = _mm512_mask_add_epi8(w, _mm512_test_epi8_mask(hm, bits.hbit[2 * n + h]), w, four);
                p[h] = _mm512_dpbusd_epi32(z, w, _mm512_load_si512(act + 128 * n + 64 * h));
            }
            // each lane at most 4 * 7 * 128: int16 words, times their scales by vpdpwssd
            t = _mm512_dpwssd_epi32(t, _mm512_packs_epi32(p[0], p[1]),
                                    _mm512_permutexvar_epi16(s_idx[n], _mm512_castsi256_si512(sc16)));
        }
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t), _mm512_broadcastss_ps(_mm512_castps512_ps128(dd)), acc);
    }
    return _mm512_sub_ps(acc, accm);
}

__m512 row_iq4_xs(const uint8_t * x, int64_t nb, const uint8_t * act) {
    // the 16 levels + 128 (unsigned) 4 times: a vpermb table for a nibble with any 2 bits above it
    const __m512i lut =
        _mm512_xor_si512(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) lm_quant_kvalues_iq4nl)),
                         _mm512_set1_epi8((char) 0x80));
    // lane l of half h: sub-block 4h + l / 4
    const __m512i i0 = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    const __m512i i1 = _mm512_add_epi32(i0, _mm512_set1_epi32(4));
    // sub-block s: scales_l bits 4s..4s+3 to bits 0-3; scales_h (bits 16 + 2s of the
    // header's first word) to bits 4-5
    const __m256i shl = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    const __m256i shh = _mm256_setr_epi32(12, 14, 16, 18, 20, 22, 24, 26);
    __m512 acc0 = _mm512_setzero_ps();
    __m512 acc1 = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b, x += sizeof(lm_block_iq4_xs), act += kIQ4XSGroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        prefetch_stream((const char *) x + kPrefetchBytes + 64);
        prefetch_stream((const char *) x + kPrefetchBytes + 128);
        const __m512i v0 = _mm512_loadu_si512(x + 8);
        const __m512i v1 = _mm512_loadu_si512(x + 72);
        __m512i p0 =
            _mm512_dpbusd_epi32(_mm512_load_si512(act + 256), _mm512_permutexvar_epi8(v0, lut), _mm512_load_si512(act));
        p0 = _mm512_dpbusd_epi32(p0, _mm512_permutexvar_epi8(_mm512_srli_epi16(v0, 4), lut),
                                 _mm512_load_si512(act + 64));
        __m512i p1 = _mm512_dpbusd_epi32(_mm512_load_si512(act + 320), _mm512_permutexvar_epi8(v1, lut),
                                         _mm512_load_si512(act + 128));
        p1 = _mm512_dpbusd_epi32(p1, _mm512_permutexvar_epi8(_mm512_srli_epi16(v1, 4), lut),
                                 _mm512_load_si512(act + 192));
        int32_t w0, w1;
        std::memcpy(&w0, x, sizeof(w0));     // d, scales_h
        std::memcpy(&w1, x + 4, sizeof(w1)); // scales_l
        const __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(w1), shl), _mm256_set1_epi32(0x0F));
        const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(w0), shh), _mm256_set1_epi32(0x30));
        const __m256i sc = _mm256_sub_epi32(_mm256_or_si256(lo, hi), _mm256_set1_epi32(32));
        const __m256 dd =
            _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss((uint16_t) w0)), _mm256_load_ps((const float *) (act + 384)));
        const __m512 f = _mm512_castps256_ps512(_mm256_mul_ps(_mm256_cvtepi32_ps(sc), dd));
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p0), _mm512_permutexvar_ps(i0, f), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p1), _mm512_permutexvar_ps(i1, f), acc1);
    }
    return _mm512_add_ps(acc0, acc1);
}

const RowDot kQ4_K = {rowdot_k_size, rowdot_pack_q4_K_avx2, dot_rows_by4_zmm<kQKK, row_k45<false>>};
const RowDot kQ5_K = {rowdot_k_size, rowdot_pack_q4_K_avx2, dot_rows_by4_zmm<kQKK, row_k45<true>>};
const RowDot kQ6_K = {rowdot_k6_size, rowdot_pack_q6_K_avx2, dot_rows_by4_zmm<kQKK, row_q6_K>};
const RowDot kIQ4_XS = {rowdot_iq4_xs_size, rowdot_pack_iq4_xs_avx2, dot_rows_by4_zmm<kQKK, row_iq4_xs>};
const RowDot kQ2_K = {rowdot_k6_size, rowdot_pack_q6_K_avx2, dot_rows_by4_zmm<kQKK, row_k23<false>>};
const RowDot kQ3_K = {rowdot_k6_size, rowdot_pack_q6_K_avx2, dot_rows_by4_zmm<kQKK, row_k23<true>>};

} // namespace

void fill_vnni_rowdot_k(KernelSet & k) {
    k.rowdot[LM_GGML_TYPE_Q4_K] = &kQ4_K;
    k.rowdot[LM_GGML_TYPE_Q5_K] = &kQ5_K;
    k.rowdot[LM_GGML_TYPE_Q6_K] = &kQ6_K;
    k.rowdot[LM_GGML_TYPE_IQ4_XS] = &kIQ4_XS;
    k.rowdot[LM_GGML_TYPE_Q2_K] = &kQ2_K;
    k.rowdot[LM_GGML_TYPE_Q3_K] = &kQ3_K;
}

} // namespace lmggml::cpu::arch::x86

#endif

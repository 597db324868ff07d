// AVX2 matrix x vector (RowDot, layouts.h) for Q5_0, Q5_1 and IQ4_NL
// weights, on the Q4_0 / Q4_1 activation rows: generation on CPUs without
// AVX-512.
//
// As rowdot_avx2.cpp's Q4 kernel: a 256-bit vector holds the nibbles of two
// blocks (128-bit lane i: block 2h + i of the group's half h), lined up with
// the packed row's lo / hi bytes, and a group's F16 scales are converted at
// once. Q5: vpshufb spreads each block's 32 qh bits over the bytes, a test
// against one bit per byte adds 16 where the fifth bit is set; with levels
// 0..31 the maddubs pair sums of lo and hi still add up within int16
// (4 * 31 * 127), and Q5_0's offset comes out as 2 cy. IQ4_NL: vpshufb maps
// the nibbles to the signed levels (-127..113), multiplied by the sign trick
// |w| * (sign(w) y) as Q8_0's kernel does; those pair sums (up to
// 2 * 127 * 127) are widened before lo and hi are added, and no cy is needed.
// Twins: ref::rowdot_q5_0, _q5_1, _iq4_nl.
#if defined(__x86_64__) || defined(__i386__)

#include "rowdot_impl.h"
#include "rowdot_pack.h"
#include "simd_avx2.h"
#include "x86.h"

#include "../layouts.h"
#include "../../../quant/q_iq4_tq.h"

#include <immintrin.h>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

using Fmt = Q5Fmt;

// Weight rows stream from memory once per token (see rowdot_avx2.cpp).
constexpr int64_t kPrefetchBytes = kWeightPrefetchBytes;

// 0x10 in byte j of 128-bit lane i where bit j (lo) / bit 16 + j (hi) of
// the qh word of that lane's block is set
static inline void fifth_bits(int32_t qh0, int32_t qh1, __m256i * lo, __m256i * hi) {
    const __m256i h = pair(_mm_cvtsi32_si128(qh0), _mm_cvtsi32_si128(qh1));
    const __m256i ilo = _mm256_set_epi64x(0x0101010101010101, 0, 0x0101010101010101, 0);
    const __m256i ihi =
        _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0303030303030303, 0x0202020202020202);
    const __m256i bit = _mm256_set1_epi64x((long long) 0x8040201008040201ULL);
    const __m256i s16 = _mm256_set1_epi8(0x10);
    *lo = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(h, ilo), bit), bit), s16);
    *hi = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(h, ihi), bit), bit), s16);
}

// One group of n <= 4 blocks at x (the packed row is zero past the row, so
// missing blocks only need zero weights and scales, never a read). Half h
// adds into acc[h], two FMA chains.
template <Fmt F, int n> static inline void group(const uint8_t * x, const uint8_t * act, __m256 * acc, __m256 * accm) {
    constexpr bool kMin = F == Fmt::q5_1;
    constexpr int kB = kQ5Block<F>;
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i ones = _mm256_set1_epi16(1);
    // F16 d (and m for Q5_1, else 2 other bytes, unused) of blocks 0 2 | 1 3,
    // so that each half's scales are in-lane shuffles (see rowdot_avx2.cpp)
    const __m128i hdr = _mm_setr_epi32(load32(x), n > 2 ? load32(x + 2 * kB) : 0, n > 1 ? load32(x + kB) : 0,
                                       n > 3 ? load32(x + 3 * kB) : 0);
    const __m256 dm = _mm256_cvtph_ps(hdr); // d0 m0 d2 m2 | d1 m1 d3 m3
    __m256 ds = dm;
    if constexpr (kMin) { // every block's d * dy (even lanes) and m * s (odd lanes, summed in accm)
        ds = _mm256_mul_ps(dm, _mm256_load_ps((const float *) (act + 256)));
        *accm = _mm256_add_ps(*accm, ds);
    }
    for (int h = 0; h < (n + 1) / 2; ++h) { // a half without blocks adds nothing
        const uint8_t * b0 = x + 2 * h * kB;
        const __m256i v = pair(load_qs(b0 + kQ5Qs<F>, 2 * h, n), load_qs(b0 + kB + kQ5Qs<F>, 2 * h + 1, n));
        __m256i lo = _mm256_and_si256(v, low4);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
        const __m256i ylo = _mm256_load_si256((const __m256i *) (act + 32 * h));
        const __m256i yhi = _mm256_load_si256((const __m256i *) (act + 64 + 32 * h));
        __m256i p;
        if constexpr (F == Fmt::iq4_nl) {
            const __m256i lut = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_quant_kvalues_iq4nl));
            lo = _mm256_shuffle_epi8(lut, lo);
            hi = _mm256_shuffle_epi8(lut, hi);
            const __m256i plo = _mm256_maddubs_epi16(_mm256_abs_epi8(lo), _mm256_sign_epi8(ylo, lo));
            const __m256i phi = _mm256_maddubs_epi16(_mm256_abs_epi8(hi), _mm256_sign_epi8(yhi, hi));
            p = _mm256_add_epi32(_mm256_madd_epi16(plo, ones), _mm256_madd_epi16(phi, ones));
        } else {
            __m256i flo, fhi;
            fifth_bits(2 * h < n ? load32(b0 + kQ5Qh<F>) : 0, 2 * h + 1 < n ? load32(b0 + kB + kQ5Qh<F>) : 0, &flo,
                       &fhi);
            lo = _mm256_or_si256(lo, flo);
            hi = _mm256_or_si256(hi, fhi);
            p = _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(lo, ylo), _mm256_maddubs_epi16(hi, yhi)), ones);
            if constexpr (F == Fmt::q5_0) {
                p = _mm256_sub_epi32(p,
                                     _mm256_slli_epi32(_mm256_load_si256((const __m256i *) (act + 192 + 32 * h)), 1));
            }
        }
        // lanes of block 2h, then of block 2h + 1
        const __m256 dx = h == 0 ? _mm256_permute_ps(ds, 0x00) : _mm256_permute_ps(ds, 0xAA);
        if constexpr (kMin) {
            acc[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), dx, acc[h]);
        } else {
            const __m256 dy = _mm256_load_ps((const float *) (act + 128 + 32 * h));
            acc[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(dx, dy), acc[h]);
        }
    }
}

template <Fmt F> __m256 dot_row(const uint8_t * x, int64_t nb, const uint8_t * act) {
    constexpr int64_t kGroup = 4 * kQ5Block<F>;
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    __m256 accm = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 4 <= nb; b += 4, x += kGroup, act += kQ4GroupBytes) {
        // a group spans two cache lines at most (72..96 bytes)
        prefetch_stream((const char *) x + kPrefetchBytes);
        prefetch_stream((const char *) x + kPrefetchBytes + kGroup - 1);
        group<F, 4>(x, act, acc, &accm);
    }
    switch (nb - b) { // the row's last, partial group
        case 1: group<F, 1>(x, act, acc, &accm); break;
        case 2: group<F, 2>(x, act, acc, &accm); break;
        case 3: group<F, 3>(x, act, acc, &accm); break;
        default: break;
    }
    const __m256 sum = _mm256_add_ps(acc[0], acc[1]);
    if constexpr (F == Fmt::q5_1) {
        // accm's even lanes hold d * dy products, not minimum terms
        return _mm256_add_ps(sum, _mm256_blend_ps(_mm256_setzero_ps(), accm, 0xAA));
    }
    return sum;
}

const RowDot kQ5_0 = {rowdot_q4_size, rowdot_pack_q4<false>, dot_rows_by4<kQK, dot_row<Fmt::q5_0>>};
const RowDot kQ5_1 = {rowdot_q4_size, rowdot_pack_q4<true>, dot_rows_by4<kQK, dot_row<Fmt::q5_1>>};
const RowDot kIQ4_NL = {rowdot_q4_size, rowdot_pack_q4<false>, dot_rows_by4<kQK, dot_row<Fmt::iq4_nl>>};

} // namespace

void fill_avx2_rowdot_q5(KernelSet & k) {
    k.rowdot[LM_GGML_TYPE_Q5_0] = &kQ5_0;
    k.rowdot[LM_GGML_TYPE_Q5_1] = &kQ5_1;
    k.rowdot[LM_GGML_TYPE_IQ4_NL] = &kIQ4_NL;
}

} // namespace lmggml::cpu::arch::x86

#endif

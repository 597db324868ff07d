// AVX-512 VNNI matrix x vector on weights repacked 8 rows at a time
// (RowDotX8, layouts.h): Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and IQ4_NL. As in the
// AVX2 kernels (rowdot_x8_avx2.cpp), lane r of every 256-bit vector is row r
// of the group, so a block's scales are one F16 load for all 8 rows and no
// horizontal sums are needed; each 4-value chunk of the activation is
// broadcast to all lanes. vpdpbusd multiplies unsigned weight levels by the
// signed activation:
//   Q4_0/1  the nibble (one vpdpbusd where AVX2 needs vpmaddubsw + an int16
//           add: hot rows 41 -> 43 GB/s, generation within noise to +3 %)
//   Q8_0    the signed byte + 128 (xor 0x80)
//   IQ4_NL  the table's level + 128 (vpshufb on the nibble)
//   Q5_0/1  the nibble + 16 where the row's qh bit is set: per chunk, one
//           vpshufb spreads the qh byte holding the chunk's 4 bits over the
//           lane's 4 bytes and one byte test against 1, 2, 4, 8 (<< 4 for
//           odd chunks) picks the bytes that get 16 (masked add)
// The offset the unsigned levels carry (128, or 16 for Q5_0) comes out
// exactly as the int32 offset * sum(q) of the activation row
// (x8::pack_act_off*); Q4_0's -8 as d * s (s = -8 dy sum(q), a float), and
// Q4_1 / Q5_1 add m * s. Each unit starts its sums from zero, so units
// overlap in the out-of-order window instead of chaining vpdpbusd
// latencies. Level loads are unaligned: a group is 32-byte aligned only when
// its rows have an even number of blocks. Twins: ref::kRowDotX8Q4_0, _Q4_1,
// _Q5_0, _Q5_1, _Q8_0, _IQ4_NL.
#if defined(__x86_64__) || defined(__i386__)

#include "rowdot_x8_stream.h"
#include "x86.h"

#include "../layouts.h"
#include "../x8.h"
#include "../../../quant/q_iq4_tq.h"

#include <immintrin.h>

#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

enum class Fmt { q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl };

// m * s (the activation's s) per block: Q4_1 / Q5_1's minimum; d * s: Q4_0's
// -8 dy sum(q) as a float; else the int32 offset * sum(q)
template <Fmt F> constexpr bool kMin = F == Fmt::q4_1 || F == Fmt::q5_1;
template <Fmt F> constexpr bool kFloatOffset = F == Fmt::q4_0;
template <Fmt F> constexpr bool kQ5 = F == Fmt::q5_0 || F == Fmt::q5_1;
template <Fmt F> constexpr int kFields = kMin<F> ? 2 : 1;
template <Fmt F> constexpr int kChunks = F == Fmt::q8_0 ? 8 : kQ5<F> ? 5 : 4;
template <Fmt F> constexpr size_t kUnit = (size_t) kX8Rows *(2 * kFields<F> + 4 * kChunks<F>);
template <Fmt F> constexpr bool kAlternate = !kMin<F>; // units an odd number of 16-byte halves (x8.h)

template <Fmt F, bool kLast>
static inline void unit(const uint8_t * w, const uint8_t * q, float dy, const float * s, const Q5High & h, __m256i lut,
                        __m256 * acc, __m256 * accm) {
    const uint8_t * hdr = w + (kLast ? 32 * kChunks<F> : 0);
    const uint8_t * lv = w + (kLast ? 0 : 16 * kFields<F>);
    __m256i p0 = _mm256_setzero_si256(), p1 = _mm256_setzero_si256();
    if constexpr (F == Fmt::q8_0) {
        const __m256i flip = _mm256_set1_epi8((char) 0x80);
        for (int t = 0; t < 8; t += 2) {
            const __m256i v0 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (lv + 32 * t)), flip);
            const __m256i v1 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (lv + 32 * t + 32)), flip);
            p0 = _mm256_dpbusd_epi32(p0, v0, x8_chunk(q, t));
            p1 = _mm256_dpbusd_epi32(p1, v1, x8_chunk(q, t + 1));
        }
    } else {
        const uint8_t * qs = lv + (kQ5<F> ? 32 : 0);
        const __m256i low4 = _mm256_set1_epi8(0x0F);
        __m256i qh = _mm256_setzero_si256();
        if constexpr (kQ5<F>) qh = _mm256_loadu_si256((const __m256i *) lv);
        for (int t = 0; t < 4; ++t) {
            const __m256i v = _mm256_loadu_si256((const __m256i *) (qs + 32 * t));
            __m256i lo = _mm256_and_si256(v, low4);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
            if constexpr (kQ5<F>) {
                const __m256i sixteen = _mm256_set1_epi8(16);
                const __mmask32 ml = _mm256_test_epi8_mask(_mm256_shuffle_epi8(qh, h.rep[t / 2]), h.bits[t % 2]);
                const __mmask32 mh = _mm256_test_epi8_mask(_mm256_shuffle_epi8(qh, h.rep[2 + t / 2]), h.bits[t % 2]);
                lo = _mm256_mask_add_epi8(lo, ml, lo, sixteen);
                hi = _mm256_mask_add_epi8(hi, mh, hi, sixteen);
            } else if constexpr (F == Fmt::iq4_nl) {
                lo = _mm256_shuffle_epi8(lut, lo);
                hi = _mm256_shuffle_epi8(lut, hi);
            }
            p0 = _mm256_dpbusd_epi32(p0, lo, x8_chunk(q, t));
            p1 = _mm256_dpbusd_epi32(p1, hi, x8_chunk(q, t + 4));
        }
    }
    __m256i p = _mm256_add_epi32(p0, p1);
    if constexpr (!kMin<F> && !kFloatOffset<F>) { // offset * sum(q), an int32 in s
        int32_t c;
        std::memcpy(&c, s, sizeof(c));
        p = _mm256_sub_epi32(p, _mm256_set1_epi32(c));
    }
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) hdr));
    *acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(d, _mm256_set1_ps(dy)), *acc);
    if constexpr (kMin<F>) {
        *accm =
            _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (hdr + 16))), _mm256_set1_ps(*s), *accm);
    }
    if constexpr (kFloatOffset<F>) *accm = _mm256_fmadd_ps(d, _mm256_set1_ps(*s), *accm);
}

template <Fmt F> __m256 dot_group(const uint8_t * w, int64_t nb, const uint8_t * act, const uint8_t ** pf) {
    static const Q5High h;
    const __m256i lut =
        _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_quant_kvalues_iq4nl)),
                         _mm256_set1_epi8((char) 0x80));
    const float * dy = reinterpret_cast<const float *>(act + nb * 32);
    const float * sy = dy + nb;
    __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2, w += 2 * kUnit<F>) {
        prefetch_to(pf, w + 2 * kUnit<F>);
        unit<F, kAlternate<F>>(w, act + 32 * b, dy[b], sy + b, h, lut, &acc, &accm);
        unit<F, false>(w + kUnit<F>, act + 32 * (b + 1), dy[b + 1], sy + b + 1, h, lut, &acc, &accm);
    }
    if (b < nb) unit<F, kAlternate<F>>(w, act + 32 * b, dy[b], sy + b, h, lut, &acc, &accm);
    return _mm256_add_ps(acc, accm);
}

const RowDotX8 kQ4_0 = {rowdot_x8_act_size, x8_pack_act<X8Act::q4_0>,
                        x8_dot_groups<dot_group<Fmt::q4_0>, kUnit<Fmt::q4_0>>};
const RowDotX8 kQ4_1 = {rowdot_x8_act_size, x8_pack_act<X8Act::q4_1>,
                        x8_dot_groups<dot_group<Fmt::q4_1>, kUnit<Fmt::q4_1>>};
const RowDotX8 kQ5_0 = {rowdot_x8_act_size, x8_pack_act<X8Act::off16>,
                        x8_dot_groups<dot_group<Fmt::q5_0>, kUnit<Fmt::q5_0>>};
const RowDotX8 kQ5_1 = {rowdot_x8_act_size, x8_pack_act<X8Act::q4_1>,
                        x8_dot_groups<dot_group<Fmt::q5_1>, kUnit<Fmt::q5_1>>};
const RowDotX8 kQ8_0 = {rowdot_x8_act_size, x8_pack_act<X8Act::off128>,
                        x8_dot_groups<dot_group<Fmt::q8_0>, kUnit<Fmt::q8_0>>};
const RowDotX8 kIQ4_NL = {rowdot_x8_act_size, x8_pack_act<X8Act::off128>,
                          x8_dot_groups<dot_group<Fmt::iq4_nl>, kUnit<Fmt::iq4_nl>>};

} // namespace

void fill_vnni_rowdot_x8(KernelSet & k) {
    k.rowdot_x8[LM_GGML_TYPE_Q4_0] = &kQ4_0;
    k.rowdot_x8[LM_GGML_TYPE_Q4_1] = &kQ4_1;
    k.rowdot_x8[LM_GGML_TYPE_Q5_0] = &kQ5_0;
    k.rowdot_x8[LM_GGML_TYPE_Q5_1] = &kQ5_1;
    k.rowdot_x8[LM_GGML_TYPE_Q8_0] = &kQ8_0;
    k.rowdot_x8[LM_GGML_TYPE_IQ4_NL] = &kIQ4_NL;
}

} // namespace lmggml::cpu::arch::x86

#endif

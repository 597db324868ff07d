// AVX2 matrix x vector on weights repacked 8 rows at a time (RowDotX8,
// layouts.h): Q4_0, Q4_1, Q5_0, Q5_1 and IQ4_NL. Lane r of every vector is row r of the
// group, so a block's scales are one F16 load for all 8 rows and no
// horizontal sums are needed. Each 4-value chunk of the activation is
// broadcast to all lanes by one vpbroadcastd.
// Q4: the 8 maddubs of a block add up in int16 (at most 16 * 15 * 127 =
// 30480), then one madd, one convert and one FMA per block cover 8 rows:
// about half the instructions per weight byte of the row-major kernel
// (rowdot_avx2.cpp).
// Q5_0 / Q5_1: the nibble + 16 where the row's qh bit is set (the bit
// spread over the lane's bytes by vpshufb, as rowdot_x8_vnni.cpp, and
// tested by a compare); levels up to 31 allow 8 products per int16 lane
// (31 * 127 * 8 = 31496), so two madds per block. Q5_0's offset comes out as
// the int32 16 * sum(q) of the activation (X8Act::off16).
// IQ4_NL: the table's signed levels (vpshufb on the nibble) reach -127..113,
// so the VNNI kernel's level + 128 would overflow vpmaddubsw's int16 pairs;
// the sign trick instead multiplies |level| by the activation with the
// level's sign (at most 2 * 127 * 127 = 32258 per pair), one madd per
// maddubs, and needs no offset. Twins: ref::kRowDotX8*.
#if defined(__x86_64__) || defined(__i386__)

#include "rowdot_x8_stream.h"
#include "simd_avx2.h"
#include "x86.h"

#include "../layouts.h"
#include "../x8.h"
#include "../../../quant/q_iq4_tq.h"

#include <immintrin.h>

#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

using Kind = X8Act;

// One unit (block b of the 8 rows) at w; kLast: its header follows the
// levels (even units of Q4_0, x8.h), else it precedes them. The
// level loads are aligned when the group is (always when a row has an even
// number of blocks); unaligned loads keep odd ones correct.
template <Kind kKind, bool kLast>
static inline void unit_q4(const uint8_t * w, const uint8_t * q, float dy, float sy, __m256 * acc, __m256 * accs) {
    constexpr int kFields = kKind == Kind::q4_1 ? 2 : 1;
    const uint8_t * hdr = w + (kLast ? 128 : 0);
    const uint8_t * lv = w + (kLast ? 0 : 16 * kFields);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    __m256i s16 = _mm256_setzero_si256();
    for (int t = 0; t < 4; ++t) {
        const __m256i v = _mm256_loadu_si256((const __m256i *) (lv + 32 * t));
        const __m256i lo = _mm256_and_si256(v, low4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
        s16 = _mm256_add_epi16(s16, _mm256_add_epi16(_mm256_maddubs_epi16(lo, x8_chunk(q, t)),
                                                     _mm256_maddubs_epi16(hi, x8_chunk(q, t + 4))));
    }
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) hdr));
    const __m256 p = _mm256_cvtepi32_ps(_mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
    *acc = _mm256_fmadd_ps(p, _mm256_mul_ps(d, _mm256_set1_ps(dy)), *acc);
    // Q4_1: m * s; Q4_0: d * (-8 dy sum(q)), the nibbles' offset
    const __m256 o = kKind == Kind::q4_1 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (hdr + 16))) : d;
    *accs = _mm256_fmadd_ps(o, _mm256_set1_ps(sy), *accs);
}

// The same for Q5_0 / Q5_1 (kQ5_1): the unit's qh (32 bytes, 4 per row)
// precedes its 128 level bytes; s: the block's entry of the activation's s.
template <bool kQ5_1, bool kLast>
static inline void unit_q5(const uint8_t * w, const uint8_t * q, float dy, const float * s, const Q5High & h,
                           __m256 * acc, __m256 * accs) {
    constexpr int kFields = kQ5_1 ? 2 : 1;
    const uint8_t * hdr = w + (kLast ? 160 : 0);
    const uint8_t * lv = w + (kLast ? 0 : 16 * kFields);
    const __m256i low4 = _mm256_set1_epi8(0x0F), sixteen = _mm256_set1_epi8(16);
    const __m256i qh = _mm256_loadu_si256((const __m256i *) lv);
    // 16 in the bytes whose fifth bit (bits[b] of qh's bytes spread by rep[i]) is set
    const auto high = [&](int i, int b) {
        const __m256i spread = _mm256_and_si256(_mm256_shuffle_epi8(qh, h.rep[i]), h.bits[b]);
        return _mm256_and_si256(_mm256_cmpeq_epi8(spread, h.bits[b]), sixteen);
    };
    __m256i p = _mm256_setzero_si256();
    for (int t0 = 0; t0 < 4; t0 += 2) {
        __m256i s16 = _mm256_setzero_si256();
        for (int t = t0; t < t0 + 2; ++t) {
            const __m256i v = _mm256_loadu_si256((const __m256i *) (lv + 32 + 32 * t));
            const __m256i lo = _mm256_add_epi8(_mm256_and_si256(v, low4), high(t / 2, t % 2));
            const __m256i hi = _mm256_add_epi8(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4), high(2 + t / 2, t % 2));
            s16 = _mm256_add_epi16(s16, _mm256_add_epi16(_mm256_maddubs_epi16(lo, x8_chunk(q, t)),
                                                         _mm256_maddubs_epi16(hi, x8_chunk(q, t + 4))));
        }
        p = _mm256_add_epi32(p, _mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
    }
    if constexpr (!kQ5_1) { // 16 * sum(q), an int32 in s
        int32_t c;
        std::memcpy(&c, s, sizeof(c));
        p = _mm256_sub_epi32(p, _mm256_set1_epi32(c));
    }
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) hdr));
    *acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(d, _mm256_set1_ps(dy)), *acc);
    if constexpr (kQ5_1) { // m * s
        *accs =
            _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (hdr + 16))), _mm256_set1_ps(*s), *accs);
    }
}

// The same for IQ4_NL (units as Q4_0's); lut: the 16 levels in each 128-bit half.
template <bool kLast>
static inline void unit_iq4(const uint8_t * w, const uint8_t * q, float dy, __m256i lut, __m256 * acc) {
    const uint8_t * hdr = w + (kLast ? 128 : 0);
    const uint8_t * lv = w + (kLast ? 0 : 16);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    __m256i p0 = _mm256_setzero_si256(), p1 = _mm256_setzero_si256();
    for (int t = 0; t < 4; ++t) {
        const __m256i v = _mm256_loadu_si256((const __m256i *) (lv + 32 * t));
        const __m256i lo = _mm256_shuffle_epi8(lut, _mm256_and_si256(v, low4));
        const __m256i hi = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4));
        p0 = _mm256_add_epi32(p0, dot4_i8(lo, x8_chunk(q, t)));
        p1 = _mm256_add_epi32(p1, dot4_i8(hi, x8_chunk(q, t + 4)));
    }
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) hdr));
    *acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(p0, p1)), _mm256_mul_ps(d, _mm256_set1_ps(dy)), *acc);
}

__m256 dot_group_iq4(const uint8_t * w, int64_t nb, const uint8_t * act, const uint8_t ** pf) {
    constexpr int kUnit = 144;
    const __m256i lut = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_quant_kvalues_iq4nl));
    const float * dy = reinterpret_cast<const float *>(act + nb * 32);
    __m256 acc = _mm256_setzero_ps(), acc2 = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2, w += 2 * kUnit) {
        prefetch_to(pf, w + 2 * kUnit);
        unit_iq4<true>(w, act + 32 * b, dy[b], lut, &acc);
        unit_iq4<false>(w + kUnit, act + 32 * (b + 1), dy[b + 1], lut, &acc2);
    }
    if (b < nb) unit_iq4<true>(w, act + 32 * b, dy[b], lut, &acc);
    return _mm256_add_ps(acc, acc2);
}

template <bool kQ5_1> __m256 dot_group_q5(const uint8_t * w, int64_t nb, const uint8_t * act, const uint8_t ** pf) {
    static const Q5High h;
    constexpr bool kAlt = !kQ5_1;
    constexpr int kUnit = kQ5_1 ? 192 : 176;
    const float * dy = reinterpret_cast<const float *>(act + nb * 32);
    const float * sy = dy + nb;
    __m256 acc = _mm256_setzero_ps(), accs = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2, w += 2 * kUnit) {
        prefetch_to(pf, w + 2 * kUnit);
        unit_q5<kQ5_1, kAlt>(w, act + 32 * b, dy[b], sy + b, h, &acc, &accs);
        unit_q5<kQ5_1, false>(w + kUnit, act + 32 * (b + 1), dy[b + 1], sy + b + 1, h, &acc, &accs);
    }
    if (b < nb) unit_q5<kQ5_1, kAlt>(w, act + 32 * b, dy[b], sy + b, h, &acc, &accs);
    return _mm256_add_ps(acc, accs);
}

// pf: the next line to prefetch (groups follow one another in memory)
template <Kind kKind> __m256 dot_group_q4(const uint8_t * w, int64_t nb, const uint8_t * act, const uint8_t ** pf) {
    constexpr bool kAlt = kKind == Kind::q4_0;
    constexpr int kUnit = kKind == Kind::q4_1 ? 160 : 144;
    const float * dy = reinterpret_cast<const float *>(act + nb * 32);
    const float * sy = dy + nb;
    __m256 acc = _mm256_setzero_ps(), accs = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2, w += 2 * kUnit) {
        prefetch_to(pf, w + 2 * kUnit);
        unit_q4<kKind, kAlt>(w, act + 32 * b, dy[b], sy[b], &acc, &accs);
        unit_q4<kKind, false>(w + kUnit, act + 32 * (b + 1), dy[b + 1], sy[b + 1], &acc, &accs);
    }
    if (b < nb) unit_q4<kKind, kAlt>(w, act + 32 * b, dy[b], sy[b], &acc, &accs);
    return _mm256_add_ps(acc, accs);
}

// Gemm panels (layouts.h) from x8 groups, byte for byte as x8::pack_panel,
// whose baseline loops widen the F16 headers and split the nibbles one byte
// at a time (x8::pack_panel was 4.4 % of a SmolLM2 Q4_1 prompt at the amx
// level, IQ4_NL's table lookup 5 % of an IQ4_XS one): per unit, a chunk's
// levels to the panel's unsigned bytes in vectors (Q5: the fifth bit as
// the RowDot kernel spreads it, IQ4_NL: the level + 128 by vpshufb, Q8_0:
// + 128), the rows' F16 d (and m) widened by vcvtph2ps.
template <lm_ggml_type kType> struct PanelFmt {
    static constexpr bool kQ5 = kType == LM_GGML_TYPE_Q5_0 || kType == LM_GGML_TYPE_Q5_1;
    static constexpr int kFields = kType == LM_GGML_TYPE_Q4_1 || kType == LM_GGML_TYPE_Q5_1 ? 2 : 1;
    static constexpr int kChunks = kType == LM_GGML_TYPE_Q8_0 ? 8 : kQ5 ? 5 : 4;
    static constexpr size_t kUnit = kX8Rows * (2 * kFields + 4 * kChunks);
    static constexpr bool kAlternate = kFields == 1; // x8.h: odd 16-byte halves, header after the levels in even units
};

template <lm_ggml_type kType>
void pack_panel_x8(int64_t k, const void * vgroups, size_t group_bytes, int64_t m, void * vpanel) {
    using F = PanelFmt<kType>;
    static const Q5High h;
    constexpr int64_t kGroups = kPanelRows / kGroupRows; // 16-row groups per panel
    const auto * groups = static_cast<const uint8_t *>(vgroups);
    auto * panel = static_cast<uint8_t *>(vpanel);
    const int64_t units = m / kX8Rows;
    const __m256i lut =
        _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_quant_kvalues_iq4nl)),
                         _mm256_set1_epi8((char) 0x80));
    const __m256i low4 = _mm256_set1_epi8(0x0F), flip = _mm256_set1_epi8((char) 0x80);
    const __m256i sixteen = _mm256_set1_epi8(16);
    for (int64_t b = 0; b < k / kQK; ++b) {
        for (int64_t u = 0; u < 2 * kGroups; ++u) {
            uint8_t * pb = panel + (b * kGroups + u / 2) * kPanelBlockBytes + 32 * (u % 2); // this half's bytes
            auto * d = reinterpret_cast<float *>(pb + kPanelScaleOffset);
            auto * mn = reinterpret_cast<float *>(pb + kPanelMinOffset);
            if (u >= units) { // rows past the matrix: zeros, as the twin
                for (int t = 0; t < 8; ++t) _mm256_storeu_si256((__m256i *) (pb + 64 * t), _mm256_setzero_si256());
                _mm256_storeu_ps(d, _mm256_setzero_ps());
                _mm256_storeu_ps(mn, _mm256_setzero_ps());
                continue;
            }
            const uint8_t * unit = groups + u * group_bytes + b * F::kUnit;
            // x8.h's header_offset / levels_offset, not called here: their
            // inline copies built with AVX2 flags could serve baseline callers
            const bool last = F::kAlternate && b % 2 == 0; // the header after the levels
            const uint8_t * hdr = unit + (last ? 32 * F::kChunks : 0);
            const uint8_t * lv = unit + (last ? 0 : 16 * F::kFields);
            _mm256_storeu_ps(d, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) hdr)));
            _mm256_storeu_ps(mn, F::kFields == 2 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (hdr + 16)))
                                                 : _mm256_setzero_ps());
            if constexpr (kType == LM_GGML_TYPE_Q8_0) {
                for (int t = 0; t < 8; ++t) {
                    const __m256i v = _mm256_loadu_si256((const __m256i *) (lv + 32 * t));
                    _mm256_storeu_si256((__m256i *) (pb + 64 * t), _mm256_xor_si256(v, flip));
                }
                continue;
            }
            const __m256i qh = F::kQ5 ? _mm256_loadu_si256((const __m256i *) lv) : _mm256_setzero_si256();
            // 16 in the bytes whose fifth bit (bits[b] of qh's bytes spread by rep[i]) is set
            const auto high = [&](int i, int bit) {
                const __m256i spread = _mm256_and_si256(_mm256_shuffle_epi8(qh, h.rep[i]), h.bits[bit]);
                return _mm256_and_si256(_mm256_cmpeq_epi8(spread, h.bits[bit]), sixteen);
            };
            for (int t = 0; t < 4; ++t) {
                const __m256i v = _mm256_loadu_si256((const __m256i *) (lv + (F::kQ5 ? 32 : 0) + 32 * t));
                __m256i lo = _mm256_and_si256(v, low4);
                __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
                if constexpr (F::kQ5) {
                    lo = _mm256_or_si256(lo, high(t / 2, t % 2));
                    hi = _mm256_or_si256(hi, high(2 + t / 2, t % 2));
                } else if constexpr (kType == LM_GGML_TYPE_IQ4_NL) { // the level + 128
                    lo = _mm256_shuffle_epi8(lut, lo);
                    hi = _mm256_shuffle_epi8(lut, hi);
                }
                _mm256_storeu_si256((__m256i *) (pb + 64 * t), lo);
                _mm256_storeu_si256((__m256i *) (pb + 64 * (t + 4)), hi);
            }
        }
    }
}

const RowDotX8 kQ4_0 = {rowdot_x8_act_size, x8_pack_act<X8Act::q4_0>, x8_dot_groups<dot_group_q4<Kind::q4_0>, 144>};
const RowDotX8 kQ4_1 = {rowdot_x8_act_size, x8_pack_act<X8Act::q4_1>, x8_dot_groups<dot_group_q4<Kind::q4_1>, 160>};
const RowDotX8 kQ5_0 = {rowdot_x8_act_size, x8_pack_act<X8Act::off16>, x8_dot_groups<dot_group_q5<false>, 176>};
const RowDotX8 kQ5_1 = {rowdot_x8_act_size, x8_pack_act<X8Act::q4_1>, x8_dot_groups<dot_group_q5<true>, 192>};
// the activation's s (128 sum(q)) is not read: signed levels need no offset
const RowDotX8 kIQ4_NL = {rowdot_x8_act_size, x8_pack_act<X8Act::off128>, x8_dot_groups<dot_group_iq4, 144>};

} // namespace

void fill_avx2_rowdot_x8(KernelSet & k) {
    k.rowdot_x8[LM_GGML_TYPE_Q4_0] = &kQ4_0;
    k.rowdot_x8[LM_GGML_TYPE_Q4_1] = &kQ4_1;
    k.rowdot_x8[LM_GGML_TYPE_Q5_0] = &kQ5_0;
    k.rowdot_x8[LM_GGML_TYPE_Q5_1] = &kQ5_1;
    k.rowdot_x8[LM_GGML_TYPE_IQ4_NL] = &kIQ4_NL;
    // also Q8_0's, whose x8 layout starts at AVX-512 VNNI
    k.x8_pack_panel[LM_GGML_TYPE_Q4_0] = pack_panel_x8<LM_GGML_TYPE_Q4_0>;
    k.x8_pack_panel[LM_GGML_TYPE_Q4_1] = pack_panel_x8<LM_GGML_TYPE_Q4_1>;
    k.x8_pack_panel[LM_GGML_TYPE_Q5_0] = pack_panel_x8<LM_GGML_TYPE_Q5_0>;
    k.x8_pack_panel[LM_GGML_TYPE_Q5_1] = pack_panel_x8<LM_GGML_TYPE_Q5_1>;
    k.x8_pack_panel[LM_GGML_TYPE_Q8_0] = pack_panel_x8<LM_GGML_TYPE_Q8_0>;
    k.x8_pack_panel[LM_GGML_TYPE_IQ4_NL] = pack_panel_x8<LM_GGML_TYPE_IQ4_NL>;
}

} // namespace lmggml::cpu::arch::x86

#endif

// AVX-512 VNNI + VBMI matrix x vector (RowDot, layouts.h) for Q5_0, Q5_1
// and IQ4_NL weights, on the Q4_0 / Q4_1 activation rows.
//
// As rowdot_vnni.cpp's Q4 kernel: a group of 4 blocks (88, 96 or 72 bytes)
// is loaded, vpermt2b gathers the nibbles into one vector (lane l: block
// l / 4) and the F16 scales into another. Q5: two more vpermt2b bring each
// value's qh byte to its position and a byte test against that value's bit
// adds 16 where the fifth bit is set. IQ4_NL: vpshufb maps each nibble to
// its level + 128 (unsigned for vpdpbusd). The packed row's cy (8 * the sum
// of a lane's 8 values) removes the offset: 2 cy for Q5_0 (levels - 16),
// 16 cy for IQ4_NL (- 128). Twins: ref::rowdot_q5_0, _q5_1, _iq4_nl.
#if defined(__x86_64__) || defined(__i386__)

#include "rowdot_impl.h"
#include "rowdot_pack.h"
#include "x86.h"

#include "../layouts.h"
#include "../../../quant/q_iq4_tq.h"

#include <immintrin.h>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

using Fmt = Q5Fmt;

// Byte p of the nibble vector: block p / 16, qs byte p % 16. hl / hh: the
// qh byte holding the fifth bit of value p % 16 / of value 16 + p % 16 of
// block p / 16; bit: that bit's mask. dm as rowdot_vnni.cpp's Q4Index.
struct Index {
    alignas(64) uint8_t nib[64];
    alignas(64) uint8_t dm[64];
    alignas(64) uint8_t hl[64];
    alignas(64) uint8_t hh[64];
    alignas(64) uint8_t bit[64];
    constexpr Index(int block, int qh, int qs) : nib{}, dm{}, hl{}, hh{}, bit{} {
        for (int p = 0; p < 64; ++p) {
            nib[p] = (uint8_t) (block * (p / 16) + qs + p % 16);
            hl[p] = (uint8_t) (block * (p / 16) + qh + (p % 16) / 8);
            hh[p] = (uint8_t) (block * (p / 16) + qh + 2 + (p % 16) / 8);
            bit[p] = (uint8_t) (1u << (p % 8));
        }
        for (int l = 0; l < 16; ++l) {
            dm[2 * l] = (uint8_t) (block * (l / 4));
            dm[2 * l + 1] = (uint8_t) (block * (l / 4) + 1);
            dm[32 + 2 * l] = (uint8_t) (block * (l / 4) + 2);
            dm[32 + 2 * l + 1] = (uint8_t) (block * (l / 4) + 3);
        }
    }
};
template <Fmt F> constexpr Index kIndex(kQ5Block<F>, kQ5Qh<F>, kQ5Qs<F>);

// Weight rows stream once per token from memory (see rowdot_vnni.cpp).
constexpr int64_t kPrefetchBytes = 2048;

static inline __mmask64 bytes_mask(int64_t n) { return n >= 64 ? ~(__mmask64) 0 : (((__mmask64) 1 << n) - 1); }

// The group's bytes: t0 = the first 64, t1 = the rest; a partial last group
// is loaded under masks, so nothing past the row is read.
template <int kGroupBytes> static inline void load_group(const uint8_t * p, int64_t left, __m512i * t0, __m512i * t1) {
    static_assert(kGroupBytes == 72 || kGroupBytes == 88 || kGroupBytes == 96, "IQ4_NL, Q5_0, Q5_1 groups");
    if (left >= kGroupBytes) {
        *t0 = _mm512_loadu_si512(p);
        if constexpr (kGroupBytes - 64 == 32) {
            *t1 = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) (p + 64)));
        } else if constexpr (kGroupBytes - 64 == 8) {
            *t1 = _mm512_castsi128_si512(_mm_loadl_epi64((const __m128i *) (p + 64)));
        } else { // Q5_0's 24 bytes: 16 + 8
            const __m128i a = _mm_loadu_si128((const __m128i *) (p + 64));
            const __m128i b = _mm_loadl_epi64((const __m128i *) (p + 80));
            *t1 = _mm512_castsi256_si512(_mm256_set_m128i(b, a));
        }
    } else {
        *t0 = _mm512_maskz_loadu_epi8(bytes_mask(left), p);
        *t1 = left > 64 ? _mm512_maskz_loadu_epi8(bytes_mask(left - 64), p + 64) : _mm512_setzero_si512();
    }
}

template <Fmt F> float dot_row(const uint8_t * x, int64_t nb, const uint8_t * act) {
    constexpr bool kMin = F == Fmt::q5_1;
    constexpr int64_t kB = kQ5Block<F>;
    const Index & ix = kIndex<F>;
    const __m512i inib = _mm512_load_si512(ix.nib);
    const __m512i idm = _mm512_load_si512(ix.dm);
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    __m512 acc = _mm512_setzero_ps();
    __m512 accm = _mm512_setzero_ps();
    // IQ4_NL: its 16 levels + 128 in every 128-bit lane, for vpshufb
    const __m512i lut =
        _mm512_xor_si512(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) lm_quant_kvalues_iq4nl)),
                         _mm512_set1_epi8((char) 0x80));
    for (int64_t b = 0; b < nb; b += 4, x += 4 * kB, act += kQ4GroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        __m512i t0, t1;
        load_group<4 * kB>(x, (nb - b) * kB, &t0, &t1);
        const __m512i nib = _mm512_permutex2var_epi8(t0, inib, t1);
        const __m512i dm = _mm512_permutex2var_epi8(t0, idm, t1);
        __m512i lo = _mm512_and_si512(nib, low4);
        __m512i hi = _mm512_and_si512(_mm512_srli_epi16(nib, 4), low4);
        if constexpr (F == Fmt::iq4_nl) {
            lo = _mm512_shuffle_epi8(lut, lo);
            hi = _mm512_shuffle_epi8(lut, hi);
        } else {
            const __m512i bit = _mm512_load_si512(ix.bit);
            const __m512i s16 = _mm512_set1_epi8(16);
            const __m512i hl = _mm512_permutex2var_epi8(t0, _mm512_load_si512(ix.hl), t1);
            const __m512i hh = _mm512_permutex2var_epi8(t0, _mm512_load_si512(ix.hh), t1);
            lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(hl, bit), lo, s16);
            hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(hh, bit), hi, s16);
        }
        __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, _mm512_load_si512(act));
        p = _mm512_dpbusd_epi32(p, hi, _mm512_load_si512(act + 64));
        if constexpr (F == Fmt::q5_0) p = _mm512_sub_epi32(p, _mm512_slli_epi32(_mm512_load_si512(act + 192), 1));
        if constexpr (F == Fmt::iq4_nl) p = _mm512_sub_epi32(p, _mm512_slli_epi32(_mm512_load_si512(act + 192), 4));
        const __m512 dx = _mm512_cvtph_ps(_mm512_castsi512_si256(dm));
        acc =
            _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dx, _mm512_load_ps((const float *) (act + 128))), acc);
        if constexpr (kMin) {
            const __m512 mx = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(dm, 1));
            accm = _mm512_fmadd_ps(mx, _mm512_load_ps((const float *) (act + 192)), accm);
        }
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc, accm));
}

template <Fmt F> void dot_rows(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    for (int64_t r = 0; r < m; ++r) {
        dst[r] = dot_row<F>(static_cast<const uint8_t *>(w) + r * ldw, k / kQK, static_cast<const uint8_t *>(act));
    }
}

const RowDot kQ5_0 = {rowdot_q4_size, rowdot_pack_q4<false>, dot_rows<Fmt::q5_0>};
const RowDot kQ5_1 = {rowdot_q4_size, rowdot_pack_q4<true>, dot_rows<Fmt::q5_1>};
const RowDot kIQ4_NL = {rowdot_q4_size, rowdot_pack_q4<false>, dot_rows<Fmt::iq4_nl>};

} // namespace

void fill_vnni_rowdot_q5(KernelSet & k) {
    k.rowdot[LM_GGML_TYPE_Q5_0] = &kQ5_0;
    k.rowdot[LM_GGML_TYPE_Q5_1] = &kQ5_1;
    k.rowdot[LM_GGML_TYPE_IQ4_NL] = &kIQ4_NL;
}

} // namespace lmggml::cpu::arch::x86

#endif

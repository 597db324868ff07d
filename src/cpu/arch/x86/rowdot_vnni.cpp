// AVX-512 VNNI + VBMI matrix x vector on ggml's block formats (RowDot,
// layouts.h) for Q4_0, Q4_1 and Q8_0 weights.
//
// A weight row is read in groups of whole blocks (4 x 20 bytes for Q4_1):
// one 64-byte load plus the group's remaining bytes, then vpermt2b gathers
// the nibbles into one vector and the F16 scales, each repeated for the
// lanes of its block, into another. The activation row was packed once so
// that its bytes line up with those vectors (lo / hi halves, per-lane
// scales), leaving per group two vpdpbusd, one convert and two FMAs, with
// a single horizontal sum per row. Twins: ref::rowdot_*.
#if defined(__x86_64__) || defined(__i386__)

#include "rowdot_pack.h"
#include "simd_avx2.h"
#include "x86.h"

#include "../layouts.h"
#include "../../../quant/quants.h"

#include <immintrin.h>

#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

// ---------------------------------------------------------------- index vectors
// Byte p of the nibble vector: block p / 16, qs byte p % 16.
// Scale vector: F16 of block l / 4 for lanes l = 0..15 (32 bytes), then for
// Q4_1 the minimum the same way (32 bytes).
struct Q4Index {
    alignas(64) uint8_t nib[64];
    alignas(64) uint8_t dm[64];
    constexpr Q4Index(int block_bytes, int qs_offset, int m_offset) : nib{}, dm{} {
        for (int p = 0; p < 64; ++p) nib[p] = (uint8_t) (block_bytes * (p / 16) + qs_offset + p % 16);
        for (int l = 0; l < 16; ++l) {
            dm[2 * l] = (uint8_t) (block_bytes * (l / 4));
            dm[2 * l + 1] = (uint8_t) (block_bytes * (l / 4) + 1);
            dm[32 + 2 * l] = (uint8_t) (block_bytes * (l / 4) + m_offset);
            dm[32 + 2 * l + 1] = (uint8_t) (block_bytes * (l / 4) + m_offset + 1);
        }
    }
};
constexpr Q4Index kQ4_0Index(18, 2, 0);
constexpr Q4Index kQ4_1Index(20, 4, 2);

// Q8_0: byte p of the level vector: block p / 32, qs byte p % 32; scale of block l / 8.
struct Q8Index {
    alignas(64) uint8_t q[64];
    alignas(64) uint8_t d[64];
    constexpr Q8Index() : q{}, d{} {
        for (int p = 0; p < 64; ++p) q[p] = (uint8_t) (34 * (p / 32) + 2 + p % 32);
        for (int l = 0; l < 16; ++l) {
            d[2 * l] = (uint8_t) (34 * (l / 8));
            d[2 * l + 1] = (uint8_t) (34 * (l / 8) + 1);
        }
        for (int p = 32; p < 64; ++p) d[p] = 0;
    }
};
constexpr Q8Index kQ8Index;

// Weight rows stream from memory once per token: prefetching this far ahead
// lets the loads overlap the arithmetic (the hardware prefetcher alone
// leaves the kernel stalled on memory about half the time).
constexpr int64_t kPrefetchBytes = 2048;

static inline __mmask64 bytes_mask(int64_t n) { return n >= 64 ? ~(__mmask64) 0 : (((__mmask64) 1 << n) - 1); }

// The bytes of one group: t0 = its first 64 bytes, t1 = the rest (byte 64 on).
// A partial last group is loaded under a mask, so nothing past the row is read.
template <int kGroupBytes> static inline void load_group(const uint8_t * p, int64_t left, __m512i * t0, __m512i * t1) {
    static_assert(kGroupBytes > 64 && kGroupBytes <= 80, "one load plus at most 16 bytes");
    if (left >= kGroupBytes) {
        *t0 = _mm512_loadu_si512(p);
        if constexpr (kGroupBytes - 64 > 8) {
            *t1 = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *) (p + 64)));
        } else if constexpr (kGroupBytes - 64 > 4) {
            *t1 = _mm512_castsi128_si512(_mm_loadl_epi64((const __m128i *) (p + 64)));
        } else {
            int32_t v;
            std::memcpy(&v, p + 64, sizeof(v));
            *t1 = _mm512_castsi128_si512(_mm_cvtsi32_si128(v));
        }
    } else {
        *t0 = _mm512_maskz_loadu_epi8(bytes_mask(left), p); // less than a group: < 64 bytes here
        *t1 = _mm512_setzero_si512();
    }
}

// ---------------------------------------------------------------- Q4_0 / Q4_1
template <bool kMin> float dot_row_q4(const uint8_t * x, int64_t nb, const uint8_t * act, const Q4Index & ix) {
    constexpr int64_t kBlock = kMin ? 20 : 18;
    const __m512i inib = _mm512_load_si512(ix.nib);
    const __m512i idm = _mm512_load_si512(ix.dm);
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    __m512 acc = _mm512_setzero_ps();
    __m512 accm = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b += 4, x += 4 * kBlock, act += kQ4GroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        __m512i t0, t1;
        load_group<4 * kBlock>(x, (nb - b) * kBlock, &t0, &t1);
        const __m512i nib = _mm512_permutex2var_epi8(t0, inib, t1);
        const __m512i dm = _mm512_permutex2var_epi8(t0, idm, t1);
        const __m512i lo = _mm512_and_si512(nib, low4);
        const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(nib, 4), low4);
        __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, _mm512_load_si512(act));
        p = _mm512_dpbusd_epi32(p, hi, _mm512_load_si512(act + 64));
        if constexpr (!kMin) p = _mm512_sub_epi32(p, _mm512_load_si512(act + 192));
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

template <bool kMin> void dot_rows_q4(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    const Q4Index & ix = kMin ? kQ4_1Index : kQ4_0Index;
    for (int64_t r = 0; r < m; ++r) {
        dst[r] =
            dot_row_q4<kMin>(static_cast<const uint8_t *>(w) + r * ldw, k / kQK, static_cast<const uint8_t *>(act), ix);
    }
}

// ---------------------------------------------------------------- Q8_0
float dot_row_q8(const uint8_t * x, int64_t nb, const uint8_t * act) {
    const __m512i iq = _mm512_load_si512(kQ8Index.q);
    const __m512i id = _mm512_load_si512(kQ8Index.d);
    const __m512i bias = _mm512_set1_epi8((char) 0x80);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b += 2, x += 68, act += kQ8GroupBytes) {
        prefetch_stream((const char *) x + kPrefetchBytes);
        __m512i t0, t1;
        load_group<68>(x, (nb - b) * 34, &t0, &t1);
        // levels + 128 are unsigned; cy takes 128 * sum(y) back out
        const __m512i q = _mm512_xor_si512(_mm512_permutex2var_epi8(t0, iq, t1), bias);
        const __m512i p = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), q, _mm512_load_si512(act)),
                                           _mm512_load_si512(act + 128));
        const __m512 dx = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutex2var_epi8(t0, id, t1)));
        acc =
            _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dx, _mm512_load_ps((const float *) (act + 64))), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

void dot_rows_q8(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    for (int64_t r = 0; r < m; ++r) {
        dst[r] = dot_row_q8(static_cast<const uint8_t *>(w) + r * ldw, k / kQK, static_cast<const uint8_t *>(act));
    }
}

const RowDot kQ4_0 = {rowdot_q4_size, rowdot_pack_q4<false>, dot_rows_q4<false>};
const RowDot kQ4_1 = {rowdot_q4_size, rowdot_pack_q4<true>, dot_rows_q4<true>};
const RowDot kQ8_0 = {rowdot_q8_size, rowdot_pack_q8, dot_rows_q8};

} // namespace

void fill_vnni_rowdot(KernelSet & k) {
    k.rowdot[LM_GGML_TYPE_Q4_0] = &kQ4_0;
    k.rowdot[LM_GGML_TYPE_Q4_1] = &kQ4_1;
    k.rowdot[LM_GGML_TYPE_Q8_0] = &kQ8_0;
}

} // namespace lmggml::cpu::arch::x86

#endif

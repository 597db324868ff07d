#pragma once
// Packing for the int8 Gemm of the K-quants (layouts.h, "Gemm (K-quants)"),
// shared by the AVX2 and AVX-512 VNNI files: the activation rows (one int8
// scale per 32-value sub-block, 16 for Q6_K, the scalar twin's bytes) and
// the decoders the panel packers call. Uses AVX2 only; internal linkage
// (each per-ISA file keeps its own copy).
#include "simd_avx2.h"

#include "../layouts.h"
#include "../../../quant/q_iq4_tq.h"
#include "../../../quant/quants.h"

#include <limits>

namespace lmggml::cpu::arch::x86 {
namespace {

// ---------------------------------------------------------------- activations
// layout::act_block_q8 on kV (16 or 32) values: vectorized where the block's
// max |x| is finite and nonzero (the same IEEE divide, multiply and
// round-half-even, so the same bytes), the scalar code otherwise (zeros,
// NaN, Inf). *sum = sum of the levels.
template <int kV> static inline float act_block_q8_avx2(const float * x, int8_t * q, int * sum) {
    static_assert(kV == 16 || kV == 32, "16 or 32 values per block");
    const __m256i abs = _mm256_set1_epi32(0x7fffffff);
    __m256 v[kV / 8];
    __m256i m = _mm256_setzero_si256();
    for (int u = 0; u < kV / 8; ++u) {
        v[u] = _mm256_loadu_ps(x + 8 * u);
        m = _mm256_max_epi32(m, _mm256_and_si256(_mm256_castps_si256(v[u]), abs));
    }
    const float amax = hmax8_abs_bits(m); // a NaN sorts above every other value
    if (!(amax > 0.0f && amax <= std::numeric_limits<float>::max())) {
        const float d = layout::act_block_q8(x, kV, q);
        int s = 0;
        for (int i = 0; i < kV; ++i) s += q[i];
        *sum = s;
        return d;
    }
    const __m256 mul = _mm256_set1_ps(127.0f / amax);
    __m256i iq[kV / 8];
    for (int u = 0; u < kV / 8; ++u) iq[u] = _mm256_cvtps_epi32(_mm256_mul_ps(v[u], mul)); // half to even
    if constexpr (kV == 32) {
        *sum = hsum8_i32(_mm256_add_epi32(_mm256_add_epi32(iq[0], iq[1]), _mm256_add_epi32(iq[2], iq[3])));
        store_levels32(iq, q);
    } else {
        *sum = hsum8_i32(_mm256_add_epi32(iq[0], iq[1]));
        // dwords come out as values 0-3, 8-11, 4-7, 12-15
        const __m256i p = _mm256_packs_epi32(iq[0], iq[1]);
        const __m128i b = _mm_packs_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
        _mm_storeu_si128((__m128i *) q, _mm_shuffle_epi32(b, 0xD8));
    }
    return amax / 127.0f;
}

// kV = 32: d = the sub-block's d, s = d * sum of the sub-block, c = 0;
// kV = 16: d = the group's d, s = 0 (kS, Q2_K's minimum: d * sum), c = 32 *
// sum of the group (the levels' offset of Q2_K, Q3_K, Q6_K).
// kOff (kV = 32, IQ4_XS: 128): s = 0, c = kOff * sum of the sub-block
template <int kV, int kOff = 0, bool kS = kV == 32 && kOff == 0>
void pack_act_k(const float * x, void * vact, int64_t k) {
    const int64_t nb = k / kV;
    auto * q = static_cast<int8_t *>(vact);
    auto * d = reinterpret_cast<float *>(q + k);
    auto * s = d + nb;
    auto * c = reinterpret_cast<int32_t *>(s + nb);
    // one d per sub-block (layouts.h), the scalar twin's bytes exactly
    for (int64_t b = 0; b < nb; ++b) {
        int sum;
        d[b] = act_block_q8_avx2<kV>(x + b * kV, q + b * kV, &sum);
        s[b] = kS ? d[b] * (float) sum : 0.0f;
        c[b] = kV == 32 ? kOff * sum : 32 * sum;
    }
}

// ---------------------------------------------------------------- panels
// Decoders: block b (sub-block b % 8, or Q6_K's group b % 16, of super-block
// b / 8 or b / 16) of a weight row -> its unsigned levels in value order
// (out, 32 bytes, aligned), scale and minimum.

// 6-bit scale and min of sub-block j (0..7) of a q4_K / q5_K super-block
static inline void k4_scale_min(const uint8_t * q, int j, int * sc, int * m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// sub-block g of a q4_K / q5_K super-block: values 32g.. are the low (g even)
// or high (g odd) nibbles of qs[32 (g / 2) ..]
static inline __m256i k4_nibbles(const uint8_t * qs, int g) {
    const __m256i q = _mm256_loadu_si256((const __m256i *) (qs + 32 * (g / 2)));
    return _mm256_and_si256(_mm256_srli_epi16(q, 4 * (g % 2)), _mm256_set1_epi8(0x0F));
}

struct DecodeQ4_K {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q4_K *>(row)[b / 8];
        const int g = (int) (b % 8);
        int sc, mn;
        k4_scale_min(x.scales, g, &sc, &mn);
        _mm256_store_si256((__m256i *) out, k4_nibbles(x.qs, g));
        *d = from_f16(x.d) * (float) sc;
        *m = -from_f16(x.dmin) * (float) mn;
    }
};

struct DecodeQ5_K {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q5_K *>(row)[b / 8];
        const int g = (int) (b % 8);
        int sc, mn;
        k4_scale_min(x.scales, g, &sc, &mn);
        // the 5th bit of value 32g + l is bit g of qh[l]
        const __m256i h =
            _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256((const __m256i *) x.qh), g), _mm256_set1_epi8(1));
        _mm256_store_si256((__m256i *) out, _mm256_or_si256(k4_nibbles(x.qs, g), _mm256_slli_epi16(h, 4)));
        *d = from_f16(x.d) * (float) sc;
        *m = -from_f16(x.dmin) * (float) mn;
    }
};

// group grp (16 values, 0..15) of a q6_K super-block: value e = 128c + 32s + l
// has 4 low bits in ql[64c + 32(s & 1) + l] (nibble s >> 1) and 2 high bits
// (2s) in qh[32c + l]; the level is value + 32, 0..63 (16 bytes out)
struct DecodeQ6_K {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q6_K *>(row)[b / 16];
        const int grp = (int) (b % 16);
        const int c = grp / 8, s = (grp % 8) / 2, l0 = 16 * (grp % 2);
        const __m128i lo = _mm_loadu_si128((const __m128i *) (x.ql + 64 * c + 32 * (s & 1) + l0));
        const __m128i hi = _mm_loadu_si128((const __m128i *) (x.qh + 32 * c + l0));
        const __m128i low = _mm_and_si128(_mm_srli_epi16(lo, 4 * (s >> 1)), _mm_set1_epi8(0x0F));
        const __m128i top = _mm_and_si128(_mm_srli_epi16(hi, 2 * s), _mm_set1_epi8(3));
        _mm_store_si128((__m128i *) out, _mm_or_si128(low, _mm_slli_epi16(top, 4)));
        *d = from_f16(x.d) * (float) x.scales[grp];
        *m = 0.0f;
    }
};

// group grp (16 values) of a q2_K / q3_K super-block: value e = 128c + 32s + l
// has 2 low bits (2s) in qs[32c + l] (q3_K: the third at 4c + s of
// hmask[l], the value 4 lower where clear); the level is value + 32
template <bool kQ3> static inline __m128i k23_levels(const uint8_t * qs, const uint8_t * hmask, int grp) {
    const int c = grp / 8, s = (grp % 8) / 2, l0 = 16 * (grp % 2);
    const __m128i q = _mm_loadu_si128((const __m128i *) (qs + 32 * c + l0));
    __m128i v = _mm_and_si128(_mm_srli_epi16(q, 2 * s), _mm_set1_epi8(3));
    if constexpr (kQ3) {
        const __m128i h = _mm_loadu_si128((const __m128i *) (hmask + l0));
        v = _mm_or_si128(v, _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(h, 4 * c + s), _mm_set1_epi8(1)), 2));
        return _mm_add_epi8(v, _mm_set1_epi8(28)); // value + 4 in 0..7, + 28
    }
    return _mm_add_epi8(v, _mm_set1_epi8(32));
}

struct DecodeQ2_K {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q2_K *>(row)[b / 16];
        const int grp = (int) (b % 16);
        _mm_store_si128((__m128i *) out, k23_levels<false>(x.qs, nullptr, grp));
        *d = from_f16(x.d) * (float) (x.scales[grp] & 0xF);
        *m = -from_f16(x.dmin) * (float) (x.scales[grp] >> 4);
    }
};

struct DecodeQ3_K {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q3_K *>(row)[b / 16];
        const int grp = (int) (b % 16);
        _mm_store_si128((__m128i *) out, k23_levels<true>(x.qs, x.hmask, grp));
        // the signed 6-bit scale: 4 low bits, then 2 high bits from scales[8 + grp % 4]
        const int lo = grp < 8 ? (x.scales[grp] & 0xF) : (x.scales[grp - 8] >> 4);
        const int sc = (lo | (((x.scales[8 + grp % 4] >> (2 * (grp / 4))) & 3) << 4)) - 32;
        *d = from_f16(x.d) * (float) sc;
        *m = 0.0f;
    }
};

// sub-block g of an IQ4_XS super-block: each nibble's level + 128 (unsigned)
struct DecodeIQ4_XS {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_iq4_xs *>(row)[b / 8];
        const int g = (int) (b % 8);
        const __m128i lut =
            _mm_xor_si128(_mm_loadu_si128((const __m128i *) lm_quant_kvalues_iq4nl), _mm_set1_epi8((char) 0x80));
        const __m128i q = _mm_loadu_si128((const __m128i *) (x.qs + 16 * g));
        const __m256i nib = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(0x0F));
        _mm256_store_si256((__m256i *) out, _mm256_shuffle_epi8(_mm256_set_m128i(lut, lut), nib));
        *d = from_f16(x.d) * (float) lm_quant_iq4_xs_scale(&x, g);
        *m = 0.0f;
    }
};

} // namespace
} // namespace lmggml::cpu::arch::x86

#pragma once
// Row dots of IQ4_NL (x q8_0), IQ4_XS, TQ1_0, TQ2_0 (x q8_K) on 256-bit
// vectors, over the same unsigned-by-signed byte policy as qdot_impl.h:
// qdot_iq4_avx2.cpp instantiates it with maddubs + madd, qdot_iq4_vnni.cpp
// with vpdpbusd. Everything has internal linkage (see simd_avx2.h).
// Twins: lm_cpu_q::vec_dot_iq4_nl_q8_0 etc. (src/cpu/kernels/q_dot_iq4.cpp).
//
// The IQ4 levels are signed (-127..113) and so are the activations
// (-128..127), so products are formed as |y| * (x * sign(y)): |y| <= 128 fits
// an unsigned byte and x * sign(y) never overflows, and a pair of such
// products stays within maddubs' int16 (2 * 128 * 127 < 32768). (The usual
// |x| * (y * sign(x)) would turn y = -128, which q8_K produces for every
// block's largest value, into -128 again.)

#include "simd_avx2.h"

#include "../../../quant/quants.h"
#include "../../../quant/q_iq4_tq.h"

#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

// 16 bytes of nibbles -> 32 IQ4 levels (values of the low nibbles, then of the high ones)
static inline __m256i iq4_levels32(const uint8_t * qs) {
    const __m256i table = _mm256_broadcastsi128_si256(
        _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113));
    const __m128i t = _mm_loadu_si128((const __m128i *) qs);
    const __m256i n = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0F));
    return _mm256_shuffle_epi8(table, n);
}

// Byte-wise x * 3 mod 256 (the base-3 digit shift of tq1_0).
static inline __m256i triple_u8(__m256i x) { return _mm256_add_epi8(x, _mm256_add_epi8(x, x)); }

// Byte-wise floor(3 * x / 256): the leading trit of each tq1_0 byte.
static inline __m256i leading_trit(__m256i x) {
    const __m256i three = _mm256_set1_epi16(3);
    const __m256i lo = _mm256_srli_epi16(_mm256_mullo_epi16(_mm256_and_si256(x, _mm256_set1_epi16(0x00FF)), three), 8);
    const __m256i hi =
        _mm256_and_si256(_mm256_mullo_epi16(_mm256_srli_epi16(x, 8), three), _mm256_set1_epi16((short) 0xFF00));
    return _mm256_or_si256(lo, hi);
}

static inline int sum_bsums(const lm_block_q8_K & y) {
    const __m256i b = _mm256_loadu_si256((const __m256i *) y.bsums);
    return hsum8_i32(_mm256_madd_epi16(b, _mm256_set1_epi16(1)));
}

// P::dot(u, s): 8 int32 sums of 4 products of unsigned u by signed s bytes.
template <class P> struct IqTq {
    // signed levels x times signed activations y, 8 int32 partial sums
    static __m256i dot_signed(__m256i x, __m256i y) { return P::dot(_mm256_sign_epi8(y, y), _mm256_sign_epi8(x, y)); }

    static void iq4_nl(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_iq4_nl *>(vx);
        const auto * y = static_cast<const lm_block_q8_0 *>(vy);
        __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int i = 0; i < n / LM_QK4_NL; ++i) {
            const __m256i p = dot_signed(iq4_levels32(x[i].qs), _mm256_loadu_si256((const __m256i *) y[i].qs));
            acc[i & 1] =
                _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(from_f16(x[i].d) * from_f16(y[i].d)), acc[i & 1]);
        }
        *s = hsum8(_mm256_add_ps(acc[0], acc[1]));
    }

    static void iq4_xs(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_iq4_xs *>(vx);
        const auto * y = static_cast<const lm_block_q8_K *>(vy);
        float sum = 0.0f;
        for (int i = 0; i < n / LM_QK_K; ++i) {
            __m256i acc = _mm256_setzero_si256();
            for (int ib = 0; ib < LM_QK_K / 32; ++ib) {
                const int ls =
                    (((x[i].scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((x[i].scales_h >> (2 * ib)) & 3) << 4)) - 32;
                const __m256i p = dot_signed(iq4_levels32(x[i].qs + 16 * ib),
                                             _mm256_loadu_si256((const __m256i *) (y[i].qs + 32 * ib)));
                acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(p, _mm256_set1_epi32(ls)));
            }
            sum += from_f16(x[i].d) * y[i].d * (float) hsum8_i32(acc);
        }
        *s = sum;
    }

    static void tq1_0(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_tq1_0 *>(vx);
        const auto * y = static_cast<const lm_block_q8_K *>(vy);
        float sum = 0.0f;
        for (int i = 0; i < n / LM_QK_K; ++i) {
            const int8_t * q8 = y[i].qs;
            __m256i acc = _mm256_setzero_si256();
            // bytes 0..31: trit t of byte m is value m + 32 t
            __m256i v = _mm256_loadu_si256((const __m256i *) x[i].qs);
            for (int t = 0; t < 5; ++t, v = triple_u8(v)) {
                acc =
                    _mm256_add_epi32(acc, P::dot(leading_trit(v), _mm256_loadu_si256((const __m256i *) (q8 + 32 * t))));
            }
            // bytes 32..47: trit t of byte m is value 160 + 16 t + m; two trits per vector
            const __m128i b = _mm_loadu_si128((const __m128i *) (x[i].qs + 32));
            __m256i w = _mm256_set_m128i(_mm_add_epi8(b, _mm_add_epi8(b, b)), b); // trits 0 | 1
            acc = _mm256_add_epi32(acc, P::dot(leading_trit(w), _mm256_loadu_si256((const __m256i *) (q8 + 160))));
            w = triple_u8(triple_u8(w)); // trits 2 | 3
            acc = _mm256_add_epi32(acc, P::dot(leading_trit(w), _mm256_loadu_si256((const __m256i *) (q8 + 192))));
            w = triple_u8(triple_u8(w)); // trit 4 | (unused)
            // qh: trit t of byte j is value 240 + 4 t + j; lane 4t + j gets qh[j] * 3^t
            uint32_t qh;
            std::memcpy(&qh, x[i].qh, sizeof(qh));
            const __m128i h = _mm_set1_epi32((int) qh);
            const __m128i pw = _mm_setr_epi16(1, 1, 3, 3, 9, 9, 27, 27);
            const __m128i hl =
                _mm_and_si128(_mm_mullo_epi16(_mm_and_si128(h, _mm_set1_epi16(0x00FF)), pw), _mm_set1_epi16(0x00FF));
            const __m128i hh = _mm_slli_epi16(_mm_mullo_epi16(_mm_srli_epi16(h, 8), pw), 8);
            w = _mm256_set_m128i(_mm_or_si128(hl, hh), _mm256_castsi256_si128(w)); // trit 4 of 32..47 | qh
            acc = _mm256_add_epi32(acc, P::dot(leading_trit(w), _mm256_loadu_si256((const __m256i *) (q8 + 224))));
            sum += from_f16(x[i].d) * y[i].d * (float) (hsum8_i32(acc) - sum_bsums(y[i]));
        }
        *s = sum;
    }

    static void tq2_0(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_tq2_0 *>(vx);
        const auto * y = static_cast<const lm_block_q8_K *>(vy);
        const __m256i three = _mm256_set1_epi8(3);
        float sum = 0.0f;
        for (int i = 0; i < n / LM_QK_K; ++i) {
            __m256i acc = _mm256_setzero_si256();
            for (int c = 0; c < 2; ++c) {
                const __m256i q = _mm256_loadu_si256((const __m256i *) (x[i].qs + 32 * c));
                for (int sh = 0; sh < 4; ++sh) {
                    const __m256i t = _mm256_and_si256(_mm256_srli_epi16(q, 2 * sh), three);
                    const __m256i a = _mm256_loadu_si256((const __m256i *) (y[i].qs + 128 * c + 32 * sh));
                    acc = _mm256_add_epi32(acc, P::dot(t, a));
                }
            }
            sum += from_f16(x[i].d) * y[i].d * (float) (hsum8_i32(acc) - sum_bsums(y[i]));
        }
        *s = sum;
    }
};

} // namespace
} // namespace lmggml::cpu::arch::x86

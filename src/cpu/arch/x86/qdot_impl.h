#pragma once
// ggml-format row dots (weight block row x vec_dot_type row) on 256-bit
// vectors, written once over a policy that multiplies unsigned by signed
// bytes: qdot_avx2.cpp instantiates it with maddubs + madd, qdot_vnni.cpp
// with vpdpbusd. Everything here has internal linkage (see simd_avx2.h).
// Twins: lm_cpu_q::vec_dot_* (q_dot_legacy.cpp, q_dot_k.cpp).

#include "simd_avx2.h"

#include "../../../quant/quants.h"

#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

constexpr int kLegacyQK = 32;

// 16 bytes of nibbles -> 32 levels (low nibbles, then high nibbles)
static inline __m256i nibbles32(const uint8_t * qs) {
    const __m128i t = _mm_loadu_si128((const __m128i *) qs);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0F));
}

// 32 bits (little endian in 4 bytes) -> byte j = 0x10 where bit j is set
static inline __m256i fifth_bits32(const uint8_t * qh) {
    uint32_t bits;
    std::memcpy(&bits, qh, sizeof(bits));
    __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int) bits),
                                    _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
    const __m256i bit = _mm256_set1_epi64x((long long) 0x8040201008040201ULL);
    v = _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
    return _mm256_and_si256(v, _mm256_set1_epi8(0x10));
}

// P::dot(u, s): 8 int32 sums of 4 products of unsigned u by signed s bytes.
// P::dot_offset(u, s, o): the same for (u - o) with o a broadcast byte.
template <class P> struct Legacy {
    static void q4_0(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_q4_0 *>(vx);
        const auto * y = static_cast<const lm_block_q8_0 *>(vy);
        const __m256i off = _mm256_set1_epi8(8);
        __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int i = 0; i < n / kLegacyQK; ++i) {
            const __m256i p = P::dot_offset(nibbles32(x[i].qs), _mm256_loadu_si256((const __m256i *) y[i].qs), off);
            acc[i & 1] =
                _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(from_f16(x[i].d) * from_f16(y[i].d)), acc[i & 1]);
        }
        *s = hsum8(_mm256_add_ps(acc[0], acc[1]));
    }

    static void q4_1(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_q4_1 *>(vx);
        const auto * y = static_cast<const lm_block_q8_1 *>(vy);
        __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        float mins = 0.0f;
        for (int i = 0; i < n / kLegacyQK; ++i) {
            const __m256i p = P::dot(nibbles32(x[i].qs), _mm256_loadu_si256((const __m256i *) y[i].qs));
            acc[i & 1] =
                _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(from_f16(x[i].d) * from_f16(y[i].d)), acc[i & 1]);
            mins += from_f16(x[i].m) * from_f16(y[i].s);
        }
        *s = hsum8(_mm256_add_ps(acc[0], acc[1])) + mins;
    }

    static void q5_0(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_q5_0 *>(vx);
        const auto * y = static_cast<const lm_block_q8_0 *>(vy);
        const __m256i off = _mm256_set1_epi8(16);
        __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int i = 0; i < n / kLegacyQK; ++i) {
            const __m256i q = _mm256_or_si256(nibbles32(x[i].qs), fifth_bits32(x[i].qh));
            const __m256i p = P::dot_offset(q, _mm256_loadu_si256((const __m256i *) y[i].qs), off);
            acc[i & 1] =
                _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(from_f16(x[i].d) * from_f16(y[i].d)), acc[i & 1]);
        }
        *s = hsum8(_mm256_add_ps(acc[0], acc[1]));
    }

    static void q5_1(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_q5_1 *>(vx);
        const auto * y = static_cast<const lm_block_q8_1 *>(vy);
        __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        float mins = 0.0f;
        for (int i = 0; i < n / kLegacyQK; ++i) {
            const __m256i q = _mm256_or_si256(nibbles32(x[i].qs), fifth_bits32(x[i].qh));
            const __m256i p = P::dot(q, _mm256_loadu_si256((const __m256i *) y[i].qs));
            acc[i & 1] =
                _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(from_f16(x[i].d) * from_f16(y[i].d)), acc[i & 1]);
            mins += from_f16(x[i].m) * from_f16(y[i].s);
        }
        *s = hsum8(_mm256_add_ps(acc[0], acc[1])) + mins;
    }

    // signed x signed: |x| times y with x's sign
    static void q8_0(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_q8_0 *>(vx);
        const auto * y = static_cast<const lm_block_q8_0 *>(vy);
        __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int i = 0; i < n / kLegacyQK; ++i) {
            const __m256i qx = _mm256_loadu_si256((const __m256i *) x[i].qs);
            const __m256i qy = _mm256_loadu_si256((const __m256i *) y[i].qs);
            const __m256i p = P::dot(_mm256_sign_epi8(qx, qx), _mm256_sign_epi8(qy, qx));
            acc[i & 1] =
                _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(from_f16(x[i].d) * from_f16(y[i].d)), acc[i & 1]);
        }
        *s = hsum8(_mm256_add_ps(acc[0], acc[1]));
    }
};

} // namespace
} // namespace lmggml::cpu::arch::x86

#pragma once
// Activation packing of the RowDot kernels (layouts.h, "RowDot rows"),
// shared by the AVX2 and AVX-512 VNNI files: both read the same packed row.
// Static: each per-ISA file gets its own copy built with its own flags.
#include "gemm_k_pack.h"
#include "simd_avx2.h"

#include "../layouts.h"

#include <cstring>

namespace lmggml::cpu::arch::x86 {

using namespace layout;

template <bool kMin> static void rowdot_pack_q4(const float * x, void * vact, int64_t k) {
    const int64_t nb = k / kQK;
    auto * out = static_cast<uint8_t *>(vact);
    std::memset(out, 0, rowdot_q4_size(k));
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t * g = out + (b / 4) * kQ4GroupBytes;
        const int bi = (int) (b % 4);
        alignas(32) int8_t q[32];
        int sum;
        const float d = quantize_block_avx2(x + b * kQK, q, &sum);
        const float dr = from_f16(to_f16(d));
        std::memcpy(g + 16 * bi, q, 16);
        std::memcpy(g + 64 + 16 * bi, q + 16, 16);
        const float s = from_f16(to_f16(d * (float) sum));
        const float s4 = s / 4;
        if constexpr (kMin) {
            const int slot = 2 * ((bi % 2) * 2 + bi / 2); // d0 s0 d2 s2 d1 s1 d3 s3
            reinterpret_cast<float *>(g + 256)[slot] = dr;
            reinterpret_cast<float *>(g + 256)[slot + 1] = s;
        }
        for (int j = 0; j < 4; ++j) {
            const int l = 4 * bi + j;
            reinterpret_cast<float *>(g + 128)[l] = dr;
            if constexpr (kMin) {
                reinterpret_cast<float *>(g + 192)[l] = s4;
            } else {
                int s = 0;
                for (int i = 0; i < 4; ++i) s += q[4 * j + i] + q[16 + 4 * j + i];
                reinterpret_cast<int32_t *>(g + 192)[l] = 8 * s;
            }
        }
    }
}

[[maybe_unused]] static void rowdot_pack_q8(const float * x, void * vact, int64_t k) {
    const int64_t nb = k / kQK;
    auto * out = static_cast<uint8_t *>(vact);
    std::memset(out, 0, rowdot_q8_size(k));
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t * g = out + (b / 2) * kQ8GroupBytes;
        const int bi = (int) (b % 2);
        auto * q = reinterpret_cast<int8_t *>(g + 32 * bi);
        int sum;
        const float dr = from_f16(to_f16(quantize_block_avx2(x + b * kQK, q, &sum)));
        for (int j = 0; j < 8; ++j) {
            const int l = 8 * bi + j;
            reinterpret_cast<float *>(g + 64)[l] = dr;
            reinterpret_cast<int32_t *>(g + 128)[l] = 128 * (q[4 * j] + q[4 * j + 1] + q[4 * j + 2] + q[4 * j + 3]);
        }
    }
}

// Q4_K and Q6_K rows byte for byte as ref::rowdot_pack_q4_K / _q6_K, with
// the vectorized Q8_K quantizer (the reference's integers and scale).
[[maybe_unused]] static void rowdot_pack_q4_K_avx2(const float * x, void * vact, int64_t k) {
    auto * out = static_cast<uint8_t *>(vact);
    std::memset(out, 0, rowdot_k_size(k));
    for (int64_t sb = 0; sb < k / kQKK; ++sb) {
        alignas(32) int8_t q[kQKK];
        int16_t bsums[16];
        float d;
        quantize_q8K_block_avx2(x + sb * kQKK, q, bsums, &d);
        uint8_t * g = out + sb * kKGroupBytes;
        for (int s = 0; s < 8; ++s) { // sub-block s: vector s % 2 + 2 (s / 4), its half (s / 2) % 2
            std::memcpy(g + 64 * (s % 2 + 2 * (s / 4)) + 32 * ((s / 2) % 2), q + 32 * s, 32);
            reinterpret_cast<int32_t *>(g + 256)[s] = bsums[2 * s] + bsums[2 * s + 1];
        }
        std::memcpy(g + 288, &d, sizeof(d));
    }
}

[[maybe_unused]] static void rowdot_pack_q6_K_avx2(const float * x, void * vact, int64_t k) {
    auto * out = static_cast<uint8_t *>(vact);
    std::memset(out, 0, rowdot_k6_size(k));
    for (int64_t sb = 0; sb < k / kQKK; ++sb) {
        int16_t bsums[16];
        float d;
        uint8_t * g = out + sb * kK6GroupBytes;
        quantize_q8K_block_avx2(x + sb * kQKK, reinterpret_cast<int8_t *>(g), bsums, &d);
        for (int j = 0; j < 16; ++j) reinterpret_cast<int32_t *>(g + 256)[j] = bsums[j];
        std::memcpy(g + 320, &d, sizeof(d));
    }
}

// IQ4_XS rows byte for byte as ref::rowdot_pack_iq4_xs, with the
// vectorized per-sub-block quantizer (gemm_k_pack.h)
[[maybe_unused]] static void rowdot_pack_iq4_xs_avx2(const float * x, void * vact, int64_t k) {
    auto * out = static_cast<uint8_t *>(vact);
    std::memset(out, 0, rowdot_iq4_xs_size(k));
    const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
    for (int64_t sb = 0; sb < k / kQKK; ++sb) {
        uint8_t * g = out + sb * kIQ4XSGroupBytes;
        auto * dy = reinterpret_cast<float *>(g + 384);
        for (int s = 0; s < 8; ++s) {
            alignas(32) int8_t q[32];
            int sum;
            dy[s] = act_block_q8_avx2<32>(x + sb * kQKK + 32 * s, q, &sum);
            std::memcpy(g + 128 * (s / 4) + 16 * (s % 4), q, 16);
            std::memcpy(g + 128 * (s / 4) + 64 + 16 * (s % 4), q + 16, 16);
        }
        // c: -128 * the sum of the 4 lo and 4 hi levels of each 32-bit lane
        for (int h = 0; h < 2; ++h) {
            for (int j = 0; j < 2; ++j) {
                const uint8_t * lo = g + 128 * h + 32 * j;
                const __m256i n =
                    _mm256_add_epi16(_mm256_maddubs_epi16(ones8, _mm256_loadu_si256((const __m256i *) lo)),
                                     _mm256_maddubs_epi16(ones8, _mm256_loadu_si256((const __m256i *) (lo + 64))));
                const __m256i c = _mm256_mullo_epi32(_mm256_madd_epi16(n, ones16), _mm256_set1_epi32(-128));
                _mm256_storeu_si256((__m256i *) (g + 256 + 64 * h + 32 * j), c);
            }
        }
    }
}

} // namespace lmggml::cpu::arch::x86

#pragma once
// Packing for the int8 Gemm of the 32-value block types (layouts.h), shared
// by the AVX2 and AVX-512 VNNI files: the activation rows (levels, d, s and
// the offset correction c) and the block decoders the panel packers call.
// Uses AVX2 only; internal linkage (each per-ISA file keeps its own copy).
#include "qdot_impl.h"

#include "../layouts.h"
#include "../../../quant/q_iq4_tq.h"

#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

// ---------------------------------------------------------------- activations
template <int kOffset, bool kMin> static void gemm_pack_act(const float * x, void * vact, int64_t k) {
    const int64_t nb = k / kQK;
    auto * q = static_cast<int8_t *>(vact);
    auto * d = reinterpret_cast<float *>(q + k);
    auto * s = d + nb;
    auto * c = reinterpret_cast<int32_t *>(s + nb);
    for (int64_t b = 0; b < nb; ++b) {
        int sum;
        const float db = quantize_block_avx2(x + b * kQK, q + b * kQK, &sum);
        d[b] = from_f16(to_f16(db));
        s[b] = kMin ? from_f16(to_f16(db * (float) sum)) : 0.0f;
        c[b] = kOffset * sum;
    }
}

// ---------------------------------------------------------------- panels
// Decoders: block b of a weight row -> 32 unsigned levels in value order (out), scale, minimum.
struct DecodeQ4_0 {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q4_0 *>(row)[b];
        _mm256_store_si256((__m256i *) out, nibbles32(x.qs));
        *d = from_f16(x.d);
        *m = 0.0f;
    }
};
struct DecodeQ4_1 {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q4_1 *>(row)[b];
        _mm256_store_si256((__m256i *) out, nibbles32(x.qs));
        *d = from_f16(x.d);
        *m = from_f16(x.m);
    }
};
struct DecodeQ5_0 {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q5_0 *>(row)[b];
        _mm256_store_si256((__m256i *) out, _mm256_or_si256(nibbles32(x.qs), fifth_bits32(x.qh)));
        *d = from_f16(x.d);
        *m = 0.0f;
    }
};
struct DecodeQ5_1 {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q5_1 *>(row)[b];
        _mm256_store_si256((__m256i *) out, _mm256_or_si256(nibbles32(x.qs), fifth_bits32(x.qh)));
        *d = from_f16(x.d);
        *m = from_f16(x.m);
    }
};
struct DecodeIQ4_NL { // levels + 128, unsigned (Q8_0's activation rows take 128 * sum back out)
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_iq4_nl *>(row)[b];
        const __m128i lut =
            _mm_xor_si128(_mm_loadu_si128((const __m128i *) lm_quant_kvalues_iq4nl), _mm_set1_epi8((char) 0x80));
        const __m256i nib = nibbles32(x.qs);
        _mm256_store_si256((__m256i *) out, _mm256_shuffle_epi8(_mm256_set_m128i(lut, lut), nib));
        *d = from_f16(x.d);
        *m = 0.0f;
    }
};
struct DecodeQ8_0 {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q8_0 *>(row)[b];
        const __m256i q = _mm256_loadu_si256((const __m256i *) x.qs);
        _mm256_store_si256((__m256i *) out, _mm256_xor_si256(q, _mm256_set1_epi8((char) 0x80)));
        *d = from_f16(x.d);
        *m = 0.0f;
    }
};

} // namespace
} // namespace lmggml::cpu::arch::x86

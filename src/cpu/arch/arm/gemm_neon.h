#pragma once
// Pieces shared by the ARM64 int8 Gemm files (gemm_dotprod.cpp,
// gemm_i8mm.cpp) on the shared layouts (layouts.h "Gemm (block types)" and
// "Gemm (K-quants)"): activation row fields, and the panel packer with NEON
// block decoders (the scalar twins' K-quant packers decode every 256-value
// super-block once per sub-block, which under a prompt costs more than the
// products). Same bytes as ref::gemm_pack_panel_*; the tests compare.
// Internal linkage only: each per-level file keeps its own copy.
#if defined(__aarch64__)

#include "simd_neon.h"

#include "../layouts.h"
#include "../../../quant/q_iq4_tq.h"
#include "../../../quant/quants.h"

#include <cstddef>
#include <cstring>

namespace lmggml::cpu::arch::arm {
namespace {

constexpr int64_t kGemmGroups = layout::kPanelRows / layout::kGroupRows;

// One activation row's fields (layouts.h): q[k], then d, s, c per block of kV values.
struct ActRow {
    const int8_t * q;
    const float * d;
    const float * s;
    const int32_t * c;
};

template <int kV> static inline ActRow act_row(const void * act, size_t lda, int64_t j, int64_t k) {
    ActRow r;
    r.q = static_cast<const int8_t *>(act) + j * lda;
    r.d = reinterpret_cast<const float *>(r.q + k);
    r.s = r.d + k / kV;
    r.c = reinterpret_cast<const int32_t *>(r.s + k / kV);
    return r;
}

// ---------------------------------------------------------------- block decoders
// Block b of a weight row -> 32 unsigned levels in value order (out), scale
// d, minimum m (layouts.h "Gemm (block types)"). Blocks may sit at odd
// addresses: their F16 fields are copied out.
static inline float f16_at(const void * p) {
    uint16_t h;
    std::memcpy(&h, p, sizeof(h));
    return from_f16(h);
}

// Q4_0 / Q4_1 levels 0..15: value j the low nibble of qs[j], value j + 16 its high one
static inline void q4_levels(const uint8_t * qs, uint8_t * out) {
    const uint8x16_t q = vld1q_u8(qs);
    vst1q_u8(out, vandq_u8(q, vdupq_n_u8(0x0F)));
    vst1q_u8(out + 16, vshrq_n_u8(q, 4));
}

struct DecodeQ4_0 {
    static constexpr int kV = 32;
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto * x = static_cast<const uint8_t *>(row) + b * (int64_t) sizeof(lm_block_q4_0);
        q4_levels(x + offsetof(lm_block_q4_0, qs), out);
        *d = f16_at(x + offsetof(lm_block_q4_0, d));
        *m = 0.0f;
    }
};

struct DecodeQ4_1 {
    static constexpr int kV = 32;
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto * x = static_cast<const uint8_t *>(row) + b * (int64_t) sizeof(lm_block_q4_1);
        q4_levels(x + offsetof(lm_block_q4_1, qs), out);
        *d = f16_at(x + offsetof(lm_block_q4_1, d));
        *m = f16_at(x + offsetof(lm_block_q4_1, m));
    }
};

// Q5_0 / Q5_1 levels 0..31: nibbles of qs, 5th bit j of the 32-bit qh for value j
static inline void q5_levels(const uint8_t * qh, const uint8_t * qs, uint8_t * out) {
    static constexpr uint8_t kByte[32] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                          2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3};
    static constexpr uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    uint32_t h;
    std::memcpy(&h, qh, sizeof(h));
    const uint8x16_t tab = vreinterpretq_u8_u32(vdupq_n_u32(h));
    const uint8x16_t bit = vld1q_u8(kBit), five = vdupq_n_u8(0x10);
    const uint8x16_t h0 = vandq_u8(vtstq_u8(vqtbl1q_u8(tab, vld1q_u8(kByte)), bit), five);
    const uint8x16_t h1 = vandq_u8(vtstq_u8(vqtbl1q_u8(tab, vld1q_u8(kByte + 16)), bit), five);
    const uint8x16_t q = vld1q_u8(qs);
    vst1q_u8(out, vorrq_u8(vandq_u8(q, vdupq_n_u8(0x0F)), h0));
    vst1q_u8(out + 16, vorrq_u8(vshrq_n_u8(q, 4), h1));
}

struct DecodeQ5_0 {
    static constexpr int kV = 32;
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto * x = static_cast<const uint8_t *>(row) + b * (int64_t) sizeof(lm_block_q5_0);
        q5_levels(x + offsetof(lm_block_q5_0, qh), x + offsetof(lm_block_q5_0, qs), out);
        *d = f16_at(x + offsetof(lm_block_q5_0, d));
        *m = 0.0f;
    }
};

struct DecodeQ5_1 {
    static constexpr int kV = 32;
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto * x = static_cast<const uint8_t *>(row) + b * (int64_t) sizeof(lm_block_q5_1);
        q5_levels(x + offsetof(lm_block_q5_1, qh), x + offsetof(lm_block_q5_1, qs), out);
        *d = f16_at(x + offsetof(lm_block_q5_1, d));
        *m = f16_at(x + offsetof(lm_block_q5_1, m));
    }
};

// Q8_0: levels + 128 (unsigned; the activation's c takes 128 * sum back out)
struct DecodeQ8_0 {
    static constexpr int kV = 32;
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto * x = static_cast<const uint8_t *>(row) + b * (int64_t) sizeof(lm_block_q8_0);
        const uint8_t * qs = x + offsetof(lm_block_q8_0, qs);
        vst1q_u8(out, veorq_u8(vld1q_u8(qs), vdupq_n_u8(0x80)));
        vst1q_u8(out + 16, veorq_u8(vld1q_u8(qs + 16), vdupq_n_u8(0x80)));
        *d = f16_at(x + offsetof(lm_block_q8_0, d));
        *m = 0.0f;
    }
};

// IQ4_NL and IQ4_XS: 16 bytes of nibbles (value j low, j + 16 high) to each
// nibble's level + 128
static inline void iq4_levels(const uint8_t * qs, uint8_t * out) {
    const uint8x16_t lut = veorq_u8(vreinterpretq_u8_s8(vld1q_s8(lm_quant_kvalues_iq4nl)), vdupq_n_u8(0x80));
    const uint8x16_t q = vld1q_u8(qs);
    vst1q_u8(out, vqtbl1q_u8(lut, vandq_u8(q, vdupq_n_u8(0x0F))));
    vst1q_u8(out + 16, vqtbl1q_u8(lut, vshrq_n_u8(q, 4)));
}

struct DecodeIQ4_NL {
    static constexpr int kV = 32;
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto * x = static_cast<const uint8_t *>(row) + b * (int64_t) sizeof(lm_block_iq4_nl);
        iq4_levels(x + offsetof(lm_block_iq4_nl, qs), out);
        *d = f16_at(x + offsetof(lm_block_iq4_nl, d));
        *m = 0.0f;
    }
};

// ---------------------------------------------------------------- K-quant decoders
// Block b (a 32-value sub-block, Q6_K: 16-value group) of a weight row ->
// kV unsigned levels in value order (out), scale d, minimum m (layouts.h).

// 6-bit scale and min of sub-block j (0..7) of a Q4_K / Q5_K super-block
static inline void k4_scale_min(const uint8_t * q, int j, int * sc, int * mn) {
    if (j < 4) {
        *sc = q[j] & 63;
        *mn = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// sub-block j's 4-bit levels: the low (j even) or high nibbles of qs[32 (j / 2) ..]
static inline void k4_nibbles(const uint8_t * qs, int j, uint8x16_t * lo, uint8x16_t * hi) {
    const int8x16_t shift = vdupq_n_s8((int8_t) (-4 * (j % 2)));
    const uint8x16_t nib = vdupq_n_u8(0x0F);
    *lo = vandq_u8(vshlq_u8(vld1q_u8(qs + 32 * (j / 2)), shift), nib);
    *hi = vandq_u8(vshlq_u8(vld1q_u8(qs + 32 * (j / 2) + 16), shift), nib);
}

struct DecodeQ4_K {
    static constexpr int kV = 32;
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q4_K *>(row)[b / 8];
        const int j = (int) (b % 8);
        int sc, mn;
        k4_scale_min(x.scales, j, &sc, &mn);
        uint8x16_t lo, hi;
        k4_nibbles(x.qs, j, &lo, &hi);
        vst1q_u8(out, lo);
        vst1q_u8(out + 16, hi);
        *d = from_f16(x.d) * (float) sc;
        *m = -from_f16(x.dmin) * (float) mn;
    }
};

struct DecodeQ5_K {
    static constexpr int kV = 32;
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q5_K *>(row)[b / 8];
        const int j = (int) (b % 8);
        int sc, mn;
        k4_scale_min(x.scales, j, &sc, &mn);
        uint8x16_t lo, hi;
        k4_nibbles(x.qs, j, &lo, &hi);
        // the 5th bit of value 32j + l is bit j of qh[l]
        const int8x16_t shift = vdupq_n_s8((int8_t) -j);
        const uint8x16_t one = vdupq_n_u8(1);
        const uint8x16_t h0 = vandq_u8(vshlq_u8(vld1q_u8(x.qh), shift), one);
        const uint8x16_t h1 = vandq_u8(vshlq_u8(vld1q_u8(x.qh + 16), shift), one);
        vst1q_u8(out, vorrq_u8(lo, vshlq_n_u8(h0, 4)));
        vst1q_u8(out + 16, vorrq_u8(hi, vshlq_n_u8(h1, 4)));
        *d = from_f16(x.d) * (float) sc;
        *m = -from_f16(x.dmin) * (float) mn;
    }
};

// group grp (16 values) of a Q6_K super-block: value 128c + 32s + l has its
// 4 low bits in ql[64c + 32(s & 1) + l] (nibble s >> 1) and its 2 high bits
// in qh[32c + l] (bits 2s); the level is the value + 32, 0..63
struct DecodeQ6_K {
    static constexpr int kV = 16;
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q6_K *>(row)[b / 16];
        const int grp = (int) (b % 16);
        const int c = grp / 8, s = (grp % 8) / 2, l0 = 16 * (grp % 2);
        const uint8x16_t lo = vld1q_u8(x.ql + 64 * c + 32 * (s & 1) + l0);
        const uint8x16_t hi = vld1q_u8(x.qh + 32 * c + l0);
        const uint8x16_t low = vandq_u8(vshlq_u8(lo, vdupq_n_s8((int8_t) (-4 * (s >> 1)))), vdupq_n_u8(0x0F));
        const uint8x16_t top = vandq_u8(vshlq_u8(hi, vdupq_n_s8((int8_t) (-2 * s))), vdupq_n_u8(3));
        vst1q_u8(out, vorrq_u8(low, vshlq_n_u8(top, 4)));
        *d = from_f16(x.d) * (float) x.scales[grp];
        *m = 0.0f;
    }
};

// group grp (16 values) of a Q2_K / Q3_K super-block: value 128c + 32s + l
// has its 2 low bits at 2s of qs[32c + l] (Q3_K: the third at 4c + s of
// hmask[l], the value 4 lower where clear); the level is the value + 32
template <bool kQ3> static inline uint8x16_t k23_levels(const uint8_t * qs, const uint8_t * hmask, int grp) {
    const int c = grp / 8, s = (grp % 8) / 2, l0 = 16 * (grp % 2);
    const uint8x16_t v = vandq_u8(vshlq_u8(vld1q_u8(qs + 32 * c + l0), vdupq_n_s8((int8_t) (-2 * s))), vdupq_n_u8(3));
    if constexpr (kQ3) {
        const uint8x16_t h =
            vandq_u8(vshlq_u8(vld1q_u8(hmask + l0), vdupq_n_s8((int8_t) (-(4 * c + s)))), vdupq_n_u8(1));
        return vaddq_u8(vorrq_u8(v, vshlq_n_u8(h, 2)), vdupq_n_u8(28)); // value + 4 in 0..7, + 28
    }
    return vaddq_u8(v, vdupq_n_u8(32));
}

struct DecodeQ2_K {
    static constexpr int kV = 16;
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q2_K *>(row)[b / 16];
        const int grp = (int) (b % 16);
        vst1q_u8(out, k23_levels<false>(x.qs, nullptr, grp));
        *d = from_f16(x.d) * (float) (x.scales[grp] & 0xF);
        *m = -from_f16(x.dmin) * (float) (x.scales[grp] >> 4);
    }
};

struct DecodeQ3_K {
    static constexpr int kV = 16;
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q3_K *>(row)[b / 16];
        const int grp = (int) (b % 16);
        vst1q_u8(out, k23_levels<true>(x.qs, x.hmask, grp));
        // the signed 6-bit scale: 4 low bits, then 2 high bits from scales[8 + grp % 4]
        const int lo = grp < 8 ? (x.scales[grp] & 0xF) : (x.scales[grp - 8] >> 4);
        const int sc = (lo | (((x.scales[8 + grp % 4] >> (2 * (grp / 4))) & 3) << 4)) - 32;
        *d = from_f16(x.d) * (float) sc;
        *m = 0.0f;
    }
};

// sub-block j of an IQ4_XS super-block: each nibble's level + 128 (unsigned)
struct DecodeIQ4_XS {
    static constexpr int kV = 32;
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_iq4_xs *>(row)[b / 8];
        const int j = (int) (b % 8);
        iq4_levels(x.qs + 16 * j, out);
        *d = from_f16(x.d) * (float) lm_quant_iq4_xs_scale(&x, j);
        *m = 0.0f;
    }
};

// ---------------------------------------------------------------- panel packer
// Panels of every type with a decoder above. Each 16-row group's rows are decoded into tmp (row r at kV r), then 4x4
// blocks of 32-bit lanes are transposed so that vector t's lane r holds
// values 4t..4t+3 of row r.
template <class Decode> void pack_panel_neon(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    constexpr int kV = Decode::kV;
    constexpr size_t kBlock = layout::panel_block_bytes<kV>();
    auto * panel = static_cast<uint8_t *>(vpanel);
    alignas(16) uint8_t tmp[layout::kGroupRows * kV];
    for (int64_t b = 0; b < k / kV; ++b) {
        for (int64_t g = 0; g < kGemmGroups; ++g) {
            uint8_t * pb = panel + (b * kGemmGroups + g) * (int64_t) kBlock;
            auto * d = reinterpret_cast<float *>(pb + 16 * kV);
            const int64_t has = m - g * layout::kGroupRows; // rows of this group that exist
            for (int64_t r = 0; r < layout::kGroupRows; ++r) {
                if (r < has) {
                    Decode::run(static_cast<const char *>(w) + (g * layout::kGroupRows + r) * ldw, b, tmp + kV * r,
                                &d[r], &d[16 + r]);
                } else {
                    std::memset(tmp + kV * r, 0, kV);
                    d[r] = 0.0f;
                    d[16 + r] = 0.0f;
                }
            }
            for (int t4 = 0; t4 < kV / 16; ++t4) {
                for (int h = 0; h < 4; ++h) { // rows 4h..4h+3
                    const uint8_t * src = tmp + kV * 4 * h + 16 * t4;
                    const uint32x4_t r0 = vreinterpretq_u32_u8(vld1q_u8(src));
                    const uint32x4_t r1 = vreinterpretq_u32_u8(vld1q_u8(src + kV));
                    const uint32x4_t r2 = vreinterpretq_u32_u8(vld1q_u8(src + 2 * kV));
                    const uint32x4_t r3 = vreinterpretq_u32_u8(vld1q_u8(src + 3 * kV));
                    const uint64x2_t a = vreinterpretq_u64_u32(vtrn1q_u32(r0, r1));
                    const uint64x2_t e = vreinterpretq_u64_u32(vtrn2q_u32(r0, r1));
                    const uint64x2_t c = vreinterpretq_u64_u32(vtrn1q_u32(r2, r3));
                    const uint64x2_t f = vreinterpretq_u64_u32(vtrn2q_u32(r2, r3));
                    uint8_t * dst = pb + 64 * 4 * t4 + 16 * h;
                    vst1q_u8(dst, vreinterpretq_u8_u64(vtrn1q_u64(a, c)));
                    vst1q_u8(dst + 64, vreinterpretq_u8_u64(vtrn1q_u64(e, f)));
                    vst1q_u8(dst + 128, vreinterpretq_u8_u64(vtrn2q_u64(a, c)));
                    vst1q_u8(dst + 192, vreinterpretq_u8_u64(vtrn2q_u64(e, f)));
                }
            }
        }
    }
}

} // namespace
} // namespace lmggml::cpu::arch::arm

#endif

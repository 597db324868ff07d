#pragma once
// Decoding of the grid I-quant blocks into integers, written once for the
// dequantizers and the CPU dot products: value e of a block is
//     d * kScale<T> * m[e / 16] * w[e]
// with int8 levels w (grid magnitude with its sign; for IQ1 8 * grid +- 1,
// the delta folded in) and odd group multipliers m = 2 * scale + 1.
#include "q_iq.h"
#include "q_iq_grids.h"
#include "q_search.h" // half_to_f32

#include <cstring>

namespace lm_quant::iq {

struct Unpacked {
    float d;
    int16_t m[LM_QK_K / 16];
    int8_t w[LM_QK_K];
};

// the constant factor of each format's value formula
template <typename Block> inline constexpr float kScale = 0.125f;
template <> inline constexpr float kScale<lm_block_iq3_xxs> = 0.25f;
template <> inline constexpr float kScale<lm_block_iq3_s> = 1.0f;

// 8 values from a grid entry and 8 sign bits
inline void put8(int8_t * w, uint64_t entry, uint8_t signs) {
    for (int j = 0; j < 8; ++j) {
        const int v = grid_byte(entry, j);
        w[j] = (int8_t) ((signs >> j) & 1 ? -v : v);
    }
}
// 4 values from a 32-bit grid entry and the sign bits 0..3 of `signs`
inline void put4(int8_t * w, uint32_t entry, unsigned signs) {
    for (int j = 0; j < 4; ++j) {
        const int v = (int) ((entry >> (8 * j)) & 0xFF);
        w[j] = (int8_t) ((signs >> j) & 1 ? -v : v);
    }
}
inline uint32_t load_u32(const void * p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

inline void unpack(const lm_block_iq2_xxs & b, Unpacked & u) {
    u.d = half_to_f32(b.d);
    const auto * q = reinterpret_cast<const uint8_t *>(b.qs);
    for (int ib = 0; ib < 8; ++ib) {
        const uint32_t idx = load_u32(q + 8 * ib), aux = load_u32(q + 8 * ib + 4);
        u.m[2 * ib] = u.m[2 * ib + 1] = (int16_t) (2 * (aux >> 28) + 1);
        for (int l = 0; l < 4; ++l) {
            put8(u.w + 32 * ib + 8 * l, iq2xxs_grid[(idx >> (8 * l)) & 0xFF], ksigns_iq2xs[(aux >> (7 * l)) & 127]);
        }
    }
}

inline void unpack(const lm_block_iq2_xs & b, Unpacked & u) {
    u.d = half_to_f32(b.d);
    for (int g = 0; g < 16; ++g) u.m[g] = (int16_t) (2 * ((b.scales[g / 2] >> (4 * (g % 2))) & 0xF) + 1);
    for (int k = 0; k < 32; ++k) put8(u.w + 8 * k, iq2xs_grid[b.qs[k] & 511], ksigns_iq2xs[b.qs[k] >> 9]);
}

inline void unpack(const lm_block_iq2_s & b, Unpacked & u) {
    u.d = half_to_f32(b.d);
    for (int g = 0; g < 16; ++g) u.m[g] = (int16_t) (2 * ((b.scales[g / 2] >> (4 * (g % 2))) & 0xF) + 1);
    for (int k = 0; k < 32; ++k) {
        const int idx = b.qs[k] | (((b.qh[k / 4] >> (2 * (k % 4))) & 3) << 8);
        put8(u.w + 8 * k, iq2s_grid[idx], b.qs[32 + k]);
    }
}

inline void unpack(const lm_block_iq3_xxs & b, Unpacked & u) {
    u.d = half_to_f32(b.d);
    for (int ib = 0; ib < 8; ++ib) {
        const uint32_t aux = load_u32(b.qs + 64 + 4 * ib);
        u.m[2 * ib] = u.m[2 * ib + 1] = (int16_t) (2 * (aux >> 28) + 1);
        for (int l = 0; l < 4; ++l) {
            const unsigned s = ksigns_iq2xs[(aux >> (7 * l)) & 127];
            put4(u.w + 32 * ib + 8 * l, iq3xxs_grid[b.qs[8 * ib + 2 * l]], s);
            put4(u.w + 32 * ib + 8 * l + 4, iq3xxs_grid[b.qs[8 * ib + 2 * l + 1]], s >> 4);
        }
    }
}

inline void unpack(const lm_block_iq3_s & b, Unpacked & u) {
    u.d = half_to_f32(b.d);
    for (int ib = 0; ib < 8; ++ib) {
        u.m[2 * ib] = u.m[2 * ib + 1] = (int16_t) (2 * ((b.scales[ib / 2] >> (4 * (ib % 2))) & 0xF) + 1);
        for (int k = 0; k < 8; ++k) { // groups of 4 values: index bit 8 is bit k of qh[ib]
            const int idx = b.qs[8 * ib + k] | (((b.qh[ib] >> k) & 1) << 8);
            const unsigned s = b.signs[4 * ib + k / 2] >> (4 * (k % 2));
            put4(u.w + 32 * ib + 4 * k, iq3s_grid[idx], s);
        }
    }
}

// IQ1 levels: 8 * grid value + the delta's sign (the delta is 1/8)
inline void put8_iq1(int8_t * w, uint64_t entry, int delta_sign) {
    for (int j = 0; j < 8; ++j) w[j] = (int8_t) (8 * (int8_t) grid_byte(entry, j) + delta_sign);
}

inline void unpack(const lm_block_iq1_s & b, Unpacked & u) {
    u.d = half_to_f32(b.d);
    for (int ib = 0; ib < 8; ++ib) {
        const unsigned h = b.qh[ib];
        u.m[2 * ib] = u.m[2 * ib + 1] = (int16_t) (2 * ((h >> 12) & 7) + 1);
        const int ds = (h & 0x8000) ? -1 : 1;
        for (int l = 0; l < 4; ++l) {
            put8_iq1(u.w + 32 * ib + 8 * l, iq1s_grid[b.qs[4 * ib + l] | (((h >> (3 * l)) & 7) << 8)], ds);
        }
    }
}

inline uint16_t iq1_m_word(const lm_block_iq1_m & b, int i) {
    return (uint16_t) (b.scales[2 * i] | (b.scales[2 * i + 1] << 8));
}

// the fp16 d of an IQ1_M block, from the top nibbles of its four scale words
inline uint16_t iq1_m_d_bits(const lm_block_iq1_m & b) {
    uint16_t h = 0;
    for (int i = 0; i < 4; ++i) h |= (uint16_t) ((iq1_m_word(b, i) >> 12) << (4 * i));
    return h;
}

inline void unpack(const lm_block_iq1_m & b, Unpacked & u) {
    u.d = half_to_f32(iq1_m_d_bits(b));
    for (int g = 0; g < 16; ++g) u.m[g] = (int16_t) (2 * ((iq1_m_word(b, g / 4) >> (3 * (g % 4))) & 7) + 1);
    for (int k = 0; k < 32; ++k) { // group of 8: 3 index bits and the delta sign in a nibble of qh
        const unsigned nib = (b.qh[k / 2] >> (4 * (k % 2))) & 0xF;
        put8_iq1(u.w + 8 * k, iq1s_grid[b.qs[k] | ((nib & 7) << 8)], (nib & 8) ? -1 : 1);
    }
}

} // namespace lm_quant::iq

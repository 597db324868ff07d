#pragma once
// Unpacking of K-quant super-blocks into plain integer levels in value order
// (value e of the block -> q[e]), shared by the dequantizers and the CPU dot
// products so the bit layouts are written down exactly once.

#include "quants.h"

#include <cstdint>

namespace lm_quant {

// q2_K: q[e] in 0..3; scale nibble = scales[e/16] & 0xF, min nibble = scales[e/16] >> 4
inline void unpack_q2_K(const lm_block_q2_K & b, uint8_t * q) {
    for (int e = 0; e < LM_QK_K; ++e) {
        const int c = e / 128, s = (e / 32) % 4, l = e % 32;
        q[e] = (uint8_t) ((b.qs[32 * c + l] >> (2 * s)) & 3);
    }
}

// q3_K signed 6-bit scale j (0..15), in -32..31
inline int q3_K_scale(const uint8_t * scales, int j) {
    const int lo = j < 8 ? (scales[j] & 0xF) : (scales[j - 8] >> 4);
    const int hi = (scales[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (lo | (hi << 4)) - 32;
}

// q3_K: q[e] in -4..3 (the level is 4 lower when its hmask bit is clear); sc[j] per 16 values
inline void unpack_q3_K(const lm_block_q3_K & b, int8_t * q, int * sc) {
    for (int e = 0; e < LM_QK_K; ++e) {
        const int c = e / 128, s = (e / 32) % 4, l = e % 32;
        const int low = (b.qs[32 * c + l] >> (2 * s)) & 3;
        const bool high = (b.hmask[l] >> (e / 32)) & 1;
        q[e] = (int8_t) (low - (high ? 0 : 4));
    }
    for (int j = 0; j < LM_QK_K / 16; ++j) sc[j] = q3_K_scale(b.scales, j);
}

// q4_K / q5_K: 4 low bits of value e; values 64c..64c+31 use the low nibbles of
// qs[32c..32c+31], values 64c+32..64c+63 the high nibbles.
inline int k4_low_bits(const uint8_t * qs, int e) {
    const int c = e / 64, w = e % 64;
    return w < 32 ? (qs[32 * c + w] & 0xF) : (qs[32 * c + w - 32] >> 4);
}

// q4_K: q[e] in 0..15; sub-block e/32 has 6-bit scale sc and min m
inline void unpack_q4_K(const lm_block_q4_K & b, uint8_t * q) {
    for (int e = 0; e < LM_QK_K; ++e) q[e] = (uint8_t) k4_low_bits(b.qs, e);
}

// q5_K: q[e] in 0..31; the 5th bit of value e is bit e/32 of qh[e % 32]
inline void unpack_q5_K(const lm_block_q5_K & b, uint8_t * q) {
    for (int e = 0; e < LM_QK_K; ++e) {
        const int high = (b.qh[e % 32] >> (e / 32)) & 1;
        q[e] = (uint8_t) (k4_low_bits(b.qs, e) | (high << 4));
    }
}

// q6_K: q[e] in -32..31; scale b.scales[e/16]
inline void unpack_q6_K(const lm_block_q6_K & b, int8_t * q) {
    for (int e = 0; e < LM_QK_K; ++e) {
        const int c = e / 128, s = (e / 32) % 4, l = e % 32;
        const int low = (b.ql[64 * c + 32 * (s & 1) + l] >> (4 * (s >> 1))) & 0xF;
        const int high = (b.qh[32 * c + l] >> (2 * s)) & 3;
        q[e] = (int8_t) ((low | (high << 4)) - 32);
    }
}

} // namespace lm_quant

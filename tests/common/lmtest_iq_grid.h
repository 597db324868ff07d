#pragma once
// Test-side grid I-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
// IQ1_M): byte layouts, random valid blocks and double-precision decoders
// written from the GGUF format description (ggml-common.h), with the
// test-side grid tables (lmtest_iq_grids.h), not the library's. Header-only,
// for the internal_* suites too.
//
// All 256-value super-blocks; "d" is an f16, sign bit j of a byte flips value j.
//   IQ2_XXS (66):  d | 8 x (4 grid index bytes, u32: 4 x 7 sign bits, the 8th
//                  making an even count, scale s in bits 28..31);
//                  value = d * (0.5 + s) / 4 * iq2xxs_grid byte
//   IQ2_XS (74):   d | 32 x u16 (9-bit index | 7 sign bits << 9) | 8 scale
//                  bytes (nibble per 16 values) ; as IQ2_XXS with iq2xs_grid
//   IQ2_S (82):    d | 32 index bytes | 32 sign bytes | 8 qh (2 high index
//                  bits per group of 8) | 8 scale bytes ; iq2s_grid (10 bits)
//   IQ3_XXS (98):  d | 64 index bytes (groups of 4) | 8 x u32 as IQ2_XXS ;
//                  value = d * (0.5 + s) / 2 * iq3xxs_grid byte
//   IQ3_S (110):   d | 64 index bytes | 8 qh (9th index bit per group of 4) |
//                  32 sign bytes | 4 scale bytes (nibble per 32 values) ;
//                  value = d * (1 + 2 s) * iq3s_grid byte
//   IQ1_S (50):    d | 32 index bytes | 8 x u16 (4 x 3 high index bits, scale
//                  s in bits 12..14, delta sign bit 15) ;
//                  value = d * (2 s + 1) * (g +- 1/8), g the int8 iq1s_grid byte
//   IQ1_M (56):    32 index bytes | 16 qh (per group of 8 a nibble: 3 high
//                  index bits, delta sign bit 3) | 4 x u16: four 3-bit scales
//                  (per 16 values) and, in the top nibbles, the 4 nibbles of d

#include "ggml.h"
#include "lmtest_iq_grids.h"
#include "lmtest_rng.h"

#include <cmath>
#include <cstdint>

namespace lmtest::iqgrid {

inline bool handles(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_IQ2_XXS:
        case LM_GGML_TYPE_IQ2_XS:
        case LM_GGML_TYPE_IQ2_S:
        case LM_GGML_TYPE_IQ3_XXS:
        case LM_GGML_TYPE_IQ3_S:
        case LM_GGML_TYPE_IQ1_S:
        case LM_GGML_TYPE_IQ1_M: return true;
        default: return false;
    }
}

inline size_t block_bytes(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_IQ2_XXS: return 66;
        case LM_GGML_TYPE_IQ2_XS: return 74;
        case LM_GGML_TYPE_IQ2_S: return 82;
        case LM_GGML_TYPE_IQ3_XXS: return 98;
        case LM_GGML_TYPE_IQ3_S: return 110;
        case LM_GGML_TYPE_IQ1_S: return 50;
        case LM_GGML_TYPE_IQ1_M: return 56;
        default: return 0;
    }
}

inline uint16_t u16(const uint8_t * p) { return (uint16_t) (p[0] | (p[1] << 8)); }
inline uint32_t u32(const uint8_t * p) {
    return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}
// IEEE binary16 bits -> double
inline double h2d(uint16_t h) {
    const int e = (h >> 10) & 31, m = h & 1023;
    const double v = e == 0    ? std::ldexp((double) m, -24)
                     : e == 31 ? INFINITY
                               : std::ldexp((double) (m + 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}
// a normal double in f16 range -> nearest-below binary16 bits (exactness is not needed)
inline uint16_t d2h(double v) {
    const uint16_t s = v < 0 ? 0x8000 : 0;
    v = std::fabs(v);
    int e;
    const double f = std::frexp(v, &e); // v = f * 2^e, f in [0.5, 1)
    return (uint16_t) (s | ((e + 14) << 10) | ((int) ((f * 2 - 1) * 1024) & 1023));
}
inline double gbyte(uint64_t e, int j) { return (double) ((e >> (8 * j)) & 0xFF); }
inline double gsigned(uint64_t e, int j) { return (double) (int8_t) ((e >> (8 * j)) & 0xFF); }
inline double sgn(unsigned bits, int j) { return (bits >> j) & 1 ? -1.0 : 1.0; }
inline unsigned even8(unsigned s7) { return s7 | ((unsigned) (__builtin_popcount(s7) & 1) << 7); }

// Decodes one block into 256 values.
inline void dequantize_block(lm_ggml_type t, const uint8_t * b, double * y) {
    switch (t) {
        case LM_GGML_TYPE_IQ2_XXS: {
            const double d = h2d(u16(b));
            for (int ib = 0; ib < 8; ++ib) {
                const uint8_t * q = b + 2 + 8 * ib;
                const uint32_t aux = u32(q + 4);
                const double db = d * (0.5 + (aux >> 28)) * 0.25;
                for (int l = 0; l < 4; ++l) {
                    const unsigned s = even8((aux >> (7 * l)) & 127);
                    for (int j = 0; j < 8; ++j) *y++ = db * gbyte(iq2xxs_grid[q[l]], j) * sgn(s, j);
                }
            }
            break;
        }
        case LM_GGML_TYPE_IQ2_XS: {
            const double d = h2d(u16(b));
            for (int k = 0; k < 32; ++k) {
                const uint16_t v = u16(b + 2 + 2 * k);
                const int sc = (b[66 + k / 4] >> (4 * ((k / 2) % 2))) & 0xF;
                for (int j = 0; j < 8; ++j)
                    *y++ = d * (0.5 + sc) * 0.25 * gbyte(iq2xs_grid[v & 511], j) * sgn(even8(v >> 9), j);
            }
            break;
        }
        case LM_GGML_TYPE_IQ2_S: {
            const double d = h2d(u16(b));
            for (int k = 0; k < 32; ++k) {
                const int idx = b[2 + k] | (((b[66 + k / 4] >> (2 * (k % 4))) & 3) << 8);
                const int sc = (b[74 + k / 4] >> (4 * ((k / 2) % 2))) & 0xF;
                for (int j = 0; j < 8; ++j) *y++ = d * (0.5 + sc) * 0.25 * gbyte(iq2s_grid[idx], j) * sgn(b[34 + k], j);
            }
            break;
        }
        case LM_GGML_TYPE_IQ3_XXS: {
            const double d = h2d(u16(b));
            for (int ib = 0; ib < 8; ++ib) {
                const uint32_t aux = u32(b + 66 + 4 * ib);
                const double db = d * (0.5 + (aux >> 28)) * 0.5;
                for (int l = 0; l < 4; ++l) {
                    const unsigned s = even8((aux >> (7 * l)) & 127);
                    for (int j = 0; j < 8; ++j)
                        *y++ = db * gbyte(iq3xxs_grid[b[2 + 8 * ib + 2 * l + j / 4]], j % 4) * sgn(s, j);
                }
            }
            break;
        }
        case LM_GGML_TYPE_IQ3_S: {
            const double d = h2d(u16(b));
            for (int e = 0; e < 256; ++e) {
                const int k = e / 4, ib = e / 32;
                const int idx = b[2 + k] | (((b[66 + k / 8] >> (k % 8)) & 1) << 8);
                const int sc = (b[106 + ib / 2] >> (4 * (ib % 2))) & 0xF;
                *y++ = d * (1 + 2 * sc) * gbyte(iq3s_grid[idx], e % 4) * sgn(b[74 + e / 8], e % 8);
            }
            break;
        }
        case LM_GGML_TYPE_IQ1_S: {
            const double d = h2d(u16(b));
            for (int e = 0; e < 256; ++e) {
                const int k = e / 8;
                const uint16_t h = u16(b + 34 + 2 * (e / 32));
                const int idx = b[2 + k] | (((h >> (3 * (k % 4))) & 7) << 8);
                *y++ =
                    d * (2 * ((h >> 12) & 7) + 1) * (gsigned(iq1s_grid[idx], e % 8) + ((h & 0x8000) ? -0.125 : 0.125));
            }
            break;
        }
        case LM_GGML_TYPE_IQ1_M: {
            const uint16_t sc[4] = {u16(b + 48), u16(b + 50), u16(b + 52), u16(b + 54)};
            const double d =
                h2d((uint16_t) ((sc[0] >> 12) | ((sc[1] >> 8) & 0xF0) | ((sc[2] >> 4) & 0xF00) | (sc[3] & 0xF000)));
            for (int e = 0; e < 256; ++e) {
                const int k = e / 8, g16 = e / 16;
                const int nib = (b[32 + k / 2] >> (4 * (k % 2))) & 0xF;
                const int idx = b[k] | ((nib & 7) << 8);
                const int ls = (sc[g16 / 4] >> (3 * (g16 % 4))) & 7;
                *y++ = d * (2 * ls + 1) * (gsigned(iq1s_grid[idx], e % 8) + ((nib & 8) ? -0.125 : 0.125));
            }
            break;
        }
        default: break;
    }
}

// Random bytes (every index, sign and scale pattern is valid) with a d that
// keeps values modest (|x| <~ 1).
inline void random_block(lm_ggml_type t, Rng & rng, uint8_t * b) {
    const size_t n = block_bytes(t);
    for (size_t i = 0; i < n; ++i) b[i] = (uint8_t) (rng.next() >> 56);
    double d = 0;
    switch (t) {
        case LM_GGML_TYPE_IQ2_XXS:
        case LM_GGML_TYPE_IQ2_XS:
        case LM_GGML_TYPE_IQ2_S: d = rng.uniform(0.002, 0.006); break;
        case LM_GGML_TYPE_IQ3_XXS:
        case LM_GGML_TYPE_IQ3_S: d = rng.uniform(0.001, 0.002); break;
        default: d = rng.uniform(0.02, 0.06); break; // IQ1
    }
    const uint16_t h = d2h(d);
    if (t == LM_GGML_TYPE_IQ1_M) {
        for (int k = 0; k < 4; ++k) b[49 + 2 * k] = (uint8_t) ((b[49 + 2 * k] & 0x0F) | (((h >> (4 * k)) & 0xF) << 4));
    } else {
        b[0] = (uint8_t) (h & 0xFF);
        b[1] = (uint8_t) (h >> 8);
    }
}

} // namespace lmtest::iqgrid

#pragma once
// Test-side IQ4_NL, IQ4_XS, TQ1_0 and TQ2_0: byte layouts, random valid
// blocks and double-precision decoders written from the GGUF format
// description (facts), not from the library. Header-only, so the internal_*
// suites (which do not link lmggml_test_common) can use it too.
//
//   IQ4_NL (18 bytes / 32):  d f16 | qs[16]; value j: d * K[idx], idx the
//                            low nibble of qs[j] (j < 16) or the high nibble of qs[j - 16]
//   IQ4_XS (136 bytes / 256): d f16 | scales_h u16 | scales_l[4] | qs[128];
//                            sub-block s (32 values) has the 6-bit scale
//                            (4 bits of scales_l[s/2] at 4*(s%2)) | (2 bits of
//                            scales_h at 2s) << 4, minus 32; value = d * scale * K[idx]
//                            with the nibbles of qs[16s..16s+15] as in IQ4_NL
//   TQ2_0 (66 bytes / 256):  qs[64] | d f16; value 128c + 32s + m is
//                            d * (((qs[32c + m] >> 2s) & 3) - 1)
//   TQ1_0 (54 bytes / 256):  qs[48] | qh[4] | d f16; a byte b holds the
//                            base-3 digits of b * 3^5 / 256 (rounded up when
//                            written): digit n (0 = leading) is
//                            floor(b * 3^(n+1) / 256) mod 3. Value m + 32n
//                            is digit n of qs[m] (m < 32), value 160 + m + 16n
//                            digit n of qs[32 + m] (m < 16), value 240 + j + 4n
//                            digit n of qh[j] (n < 4); each minus 1, times d.
// K = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}.

#include "ggml.h"
#include "lmtest_rng.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace lmtest::iq4tq {

inline constexpr int kLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

inline bool handles(lm_ggml_type t) {
    return t == LM_GGML_TYPE_IQ4_NL || t == LM_GGML_TYPE_IQ4_XS || t == LM_GGML_TYPE_TQ1_0 || t == LM_GGML_TYPE_TQ2_0;
}

// values per block, bytes per block (0, 0 for other types)
inline void layout(lm_ggml_type t, int64_t * elems, size_t * bytes) {
    switch (t) {
        case LM_GGML_TYPE_IQ4_NL:
            *elems = 32;
            *bytes = 18;
            return;
        case LM_GGML_TYPE_IQ4_XS:
            *elems = 256;
            *bytes = 136;
            return;
        case LM_GGML_TYPE_TQ1_0:
            *elems = 256;
            *bytes = 54;
            return;
        case LM_GGML_TYPE_TQ2_0:
            *elems = 256;
            *bytes = 66;
            return;
        default:
            *elems = 0;
            *bytes = 0;
            return;
    }
}

// IEEE binary16 -> double, from the bit fields
inline double half(const uint8_t * p) {
    const unsigned h = (unsigned) p[0] | ((unsigned) p[1] << 8);
    const int e = (int) ((h >> 10) & 31), f = (int) (h & 1023);
    const double mag = e == 0    ? std::ldexp((double) f, -24)
                       : e == 31 ? (f ? NAN : INFINITY)
                                 : std::ldexp(1024.0 + f, e - 25);
    return (h & 0x8000u) ? -mag : mag;
}

// double -> binary16 bits for positive normal values in [2^-14, 65504]: rounds to nearest
inline uint16_t half_bits(double v) {
    int e;
    const double m = std::frexp(v, &e);                // v = m * 2^e, m in [0.5, 1)
    const long f = std::lround(std::ldexp(m, 11));     // 11 significant bits
    return (uint16_t) (((e + 14) << 10) + (f - 1024)); // a carry into the exponent is still right
}

inline void put_half(uint8_t * p, double v) {
    const uint16_t b = half_bits(v);
    p[0] = (uint8_t) b;
    p[1] = (uint8_t) (b >> 8);
}

inline int tq1_digit(uint8_t b, int n) {
    long p = 1;
    for (int i = 0; i <= n; ++i) p *= 3;
    return (int) (((long) b * p / 256) % 3);
}

inline void dequantize_block(lm_ggml_type t, const uint8_t * b, double * y) {
    switch (t) {
        case LM_GGML_TYPE_IQ4_NL: {
            const double d = half(b);
            for (int j = 0; j < 32; ++j) {
                const int idx = j < 16 ? (b[2 + j] & 15) : (b[2 + j - 16] >> 4);
                y[j] = d * kLevels[idx];
            }
            return;
        }
        case LM_GGML_TYPE_IQ4_XS: {
            const double d = half(b);
            const unsigned sh = (unsigned) b[2] | ((unsigned) b[3] << 8);
            for (int s = 0; s < 8; ++s) {
                const int lo = (b[4 + s / 2] >> (4 * (s % 2))) & 15;
                const int hi = (int) ((sh >> (2 * s)) & 3);
                const int scale = (lo | (hi << 4)) - 32;
                const uint8_t * qs = b + 8 + 16 * s;
                for (int j = 0; j < 32; ++j) {
                    const int idx = j < 16 ? (qs[j] & 15) : (qs[j - 16] >> 4);
                    y[32 * s + j] = d * scale * kLevels[idx];
                }
            }
            return;
        }
        case LM_GGML_TYPE_TQ2_0: {
            const double d = half(b + 64);
            for (int c = 0; c < 2; ++c)
                for (int s = 0; s < 4; ++s)
                    for (int m = 0; m < 32; ++m) y[128 * c + 32 * s + m] = d * (((b[32 * c + m] >> (2 * s)) & 3) - 1);
            return;
        }
        case LM_GGML_TYPE_TQ1_0: {
            const double d = half(b + 52);
            for (int n = 0; n < 5; ++n) {
                for (int m = 0; m < 32; ++m) y[m + 32 * n] = d * (tq1_digit(b[m], n) - 1);
                for (int m = 0; m < 16; ++m) y[160 + m + 16 * n] = d * (tq1_digit(b[32 + m], n) - 1);
            }
            for (int n = 0; n < 4; ++n)
                for (int j = 0; j < 4; ++j) y[240 + j + 4 * n] = d * (tq1_digit(b[48 + j], n) - 1);
            return;
        }
        default: return;
    }
}

// A random valid block with modest values (|x| <~ 1). Random bytes are valid
// for every field except the scale; TQ1_0 bytes are drawn from the 243 that
// a quantizer writes (every digit string of 5 trits), plus qh bytes whose
// last digit is 0.
inline void random_block(lm_ggml_type t, Rng & rng, uint8_t * b) {
    int64_t elems;
    size_t bytes;
    layout(t, &elems, &bytes);
    for (size_t i = 0; i < bytes; ++i) b[i] = (uint8_t) (rng.next() >> 56);
    switch (t) {
        case LM_GGML_TYPE_IQ4_NL: put_half(b, rng.uniform(0.002, 0.008)); break;
        case LM_GGML_TYPE_IQ4_XS: put_half(b, rng.uniform(0.0001, 0.0003)); break;
        case LM_GGML_TYPE_TQ2_0:
            for (int i = 0; i < 64; ++i) { // digit 3 (value 3 - 1 = 2) is not ternary: keep within 0..2
                uint8_t v = 0;
                for (int s = 0; s < 4; ++s) v |= (uint8_t) (rng.int_in(0, 2) << (2 * s));
                b[i] = v;
            }
            put_half(b + 64, rng.uniform(0.05, 1.0));
            break;
        case LM_GGML_TYPE_TQ1_0:
            for (int i = 0; i < 52; ++i) {
                const int ndig = i < 48 ? 5 : 4;
                int q = 0;
                for (int n = 0; n < ndig; ++n) q = q * 3 + (int) rng.int_in(0, 2);
                if (ndig == 4) q *= 3;
                b[i] = (uint8_t) ((q * 256 + 242) / 243);
            }
            put_half(b + 52, rng.uniform(0.05, 1.0));
            break;
        default: break;
    }
}

} // namespace lmtest::iq4tq

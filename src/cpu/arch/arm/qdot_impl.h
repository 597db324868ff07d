#pragma once
// ggml-format row dots (weight block row x vec_dot_type row) and the RowDot
// matrix x vector kernels on 128-bit NEON vectors, written once over a
// policy that accumulates products of signed bytes into 4 int32 lanes:
// qdot_neon.cpp instantiates it with smull/smlal + sadalp (plain ARMv8),
// qdot_dotprod.cpp with sdot (ARMv8.2 dotprod). The products never leave
// int32: a 16-byte dot sums at most 16 * 128 * 127 in magnitude.
// Everything here has internal linkage (see simd_neon.h).
// Twins: lm_cpu_q::vec_dot_* (q_dot_legacy.cpp, q_dot_k.cpp), ref::vec_dot_f*,
// ref::rowdot_* (RowDot rows: layouts.h).
#if defined(__aarch64__)

#include "simd_neon.h"

#include "../kernels.h"
#include "../layouts.h"

#include "../../../quant/quants.h"

namespace lmggml::cpu::arch::arm {
namespace {

constexpr int kQK = 32;

// 16 nibble bytes -> the low nibbles (values 0..15 of the block) and the
// high ones (16..31) as bytes 0..15, minus `offset`
static inline void nibbles(const uint8_t * qs, int8_t offset, int8x16_t * lo, int8x16_t * hi) {
    const uint8x16_t v = vld1q_u8(qs);
    const int8x16_t o = vdupq_n_s8(offset);
    *lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0F))), o);
    *hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(v, 4)), o);
}

// the 5th bits of values 0..15 (qh bytes 0, 1) or 16..31 (bytes 2, 3) of a
// q5_0 / q5_1 block as 0x10 in the value's byte, else 0
static inline uint8x16_t fifth_bits16(const uint8_t * qh2) {
    const uint8x16_t bytes = vcombine_u8(vdup_n_u8(qh2[0]), vdup_n_u8(qh2[1]));
    const uint8x16_t bit = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    return vandq_u8(vtstq_u8(bytes, bit), vdupq_n_u8(0x10));
}

// q5_0 / q5_1 levels: nibbles plus 5th bits, minus `offset`
static inline void levels5(const uint8_t * qs, const uint8_t * qh, int8_t offset, int8x16_t * lo, int8x16_t * hi) {
    const uint8x16_t v = vld1q_u8(qs);
    const int8x16_t o = vdupq_n_s8(offset);
    *lo = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(v, vdupq_n_u8(0x0F)), fifth_bits16(qh))), o);
    *hi = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(v, 4), fifth_bits16(qh + 2))), o);
}

// 6-bit scale and min of sub-block j (0..7) of a q4_K / q5_K block
static inline void scale_min_k4(const uint8_t * q, int j, int * sc, int * m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// P::dot(acc, a, b): acc + the products of a and b's signed bytes, summed
// into 4 int32 lanes (which products land in which lane differs by policy;
// callers only use the sum of all lanes).
template <class P> struct Dots {
    // ------------------------------------------------------------ 32-value blocks
    static void q4_0(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_q4_0 *>(vx);
        const auto * y = static_cast<const lm_block_q8_0 *>(vy);
        float32x4_t acc = vdupq_n_f32(0.0f);
        for (int i = 0; i < n / kQK; ++i) {
            int8x16_t lo, hi;
            nibbles(x[i].qs, 8, &lo, &hi);
            int32x4_t p = P::dot(vdupq_n_s32(0), lo, vld1q_s8(y[i].qs));
            p = P::dot(p, hi, vld1q_s8(y[i].qs + 16));
            acc = vmlaq_n_f32(acc, vcvtq_f32_s32(p), from_f16(x[i].d) * from_f16(y[i].d));
        }
        *s = vaddvq_f32(acc);
    }

    static void q4_1(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_q4_1 *>(vx);
        const auto * y = static_cast<const lm_block_q8_1 *>(vy);
        float32x4_t acc = vdupq_n_f32(0.0f);
        float mins = 0.0f;
        for (int i = 0; i < n / kQK; ++i) {
            int8x16_t lo, hi;
            nibbles(x[i].qs, 0, &lo, &hi);
            int32x4_t p = P::dot(vdupq_n_s32(0), lo, vld1q_s8(y[i].qs));
            p = P::dot(p, hi, vld1q_s8(y[i].qs + 16));
            acc = vmlaq_n_f32(acc, vcvtq_f32_s32(p), from_f16(x[i].d) * from_f16(y[i].d));
            mins += from_f16(x[i].m) * from_f16(y[i].s);
        }
        *s = vaddvq_f32(acc) + mins;
    }

    static void q5_0(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_q5_0 *>(vx);
        const auto * y = static_cast<const lm_block_q8_0 *>(vy);
        float32x4_t acc = vdupq_n_f32(0.0f);
        for (int i = 0; i < n / kQK; ++i) {
            int8x16_t lo, hi;
            levels5(x[i].qs, x[i].qh, 16, &lo, &hi);
            int32x4_t p = P::dot(vdupq_n_s32(0), lo, vld1q_s8(y[i].qs));
            p = P::dot(p, hi, vld1q_s8(y[i].qs + 16));
            acc = vmlaq_n_f32(acc, vcvtq_f32_s32(p), from_f16(x[i].d) * from_f16(y[i].d));
        }
        *s = vaddvq_f32(acc);
    }

    static void q5_1(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_q5_1 *>(vx);
        const auto * y = static_cast<const lm_block_q8_1 *>(vy);
        float32x4_t acc = vdupq_n_f32(0.0f);
        float mins = 0.0f;
        for (int i = 0; i < n / kQK; ++i) {
            int8x16_t lo, hi;
            levels5(x[i].qs, x[i].qh, 0, &lo, &hi);
            int32x4_t p = P::dot(vdupq_n_s32(0), lo, vld1q_s8(y[i].qs));
            p = P::dot(p, hi, vld1q_s8(y[i].qs + 16));
            acc = vmlaq_n_f32(acc, vcvtq_f32_s32(p), from_f16(x[i].d) * from_f16(y[i].d));
            mins += from_f16(x[i].m) * from_f16(y[i].s);
        }
        *s = vaddvq_f32(acc) + mins;
    }

    static void q8_0(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_q8_0 *>(vx);
        const auto * y = static_cast<const lm_block_q8_0 *>(vy);
        float32x4_t acc = vdupq_n_f32(0.0f);
        for (int i = 0; i < n / kQK; ++i) {
            int32x4_t p = P::dot(vdupq_n_s32(0), vld1q_s8(x[i].qs), vld1q_s8(y[i].qs));
            p = P::dot(p, vld1q_s8(x[i].qs + 16), vld1q_s8(y[i].qs + 16));
            acc = vmlaq_n_f32(acc, vcvtq_f32_s32(p), from_f16(x[i].d) * from_f16(y[i].d));
        }
        *s = vaddvq_f32(acc);
    }

    // ------------------------------------------------------------ K-quants
    // q4_K: sub-block 2j is the low nibbles of qs[32j..32j+31], 2j + 1 the
    // high ones; each sub-block's integer dot is scaled in int32.
    // q5_K: the same with 5th bits from qh: bit 2j of qh[l] for value
    // 64j + l, bit 2j + 1 for value 64j + 32 + l.
    template <bool kFive, typename Block>
    static void q45_K(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const Block *>(vx);
        const auto * y = static_cast<const lm_block_q8_K *>(vy);
        float sum = 0.0f;
        for (int i = 0; i < n / LM_QK_K; ++i) {
            int sc[8], mn[8];
            for (int j = 0; j < 8; ++j) scale_min_k4(x[i].scales, j, &sc[j], &mn[j]);
            const int16x8_t bs = vpaddq_s16(vld1q_s16(y[i].bsums), vld1q_s16(y[i].bsums + 8)); // per sub-block
            const int16x8_t mv = {(int16_t) mn[0], (int16_t) mn[1], (int16_t) mn[2], (int16_t) mn[3],
                                  (int16_t) mn[4], (int16_t) mn[5], (int16_t) mn[6], (int16_t) mn[7]};
            const int32_t summs =
                vaddvq_s32(vmull_s16(vget_low_s16(bs), vget_low_s16(mv))) + vaddvq_s32(vmull_high_s16(bs, mv));
            int32x4_t acc = vdupq_n_s32(0);
            uint8x16_t qh[2] = {vdupq_n_u8(0), vdupq_n_u8(0)};
            if constexpr (kFive) {
                qh[0] = vld1q_u8(x[i].qh);
                qh[1] = vld1q_u8(x[i].qh + 16);
            }
            for (int j = 0; j < 4; ++j) {
                const uint8_t * q = x[i].qs + 32 * j;
                const int8_t * q8 = y[i].qs + 64 * j;
                int8x16_t l0, h0, l1, h1;
                nibbles(q, 0, &l0, &h0);
                nibbles(q + 16, 0, &l1, &h1);
                if constexpr (kFive) {
                    const uint8x16_t one = vdupq_n_u8(1);
                    const int8x16_t slo = vdupq_n_s8((int8_t) - (2 * j)), shi = vdupq_n_s8((int8_t) - (2 * j + 1));
                    // bit -> 0x10: ((qh >> s) & 1) << 4
                    auto fifth = [&](uint8x16_t h, int8x16_t sh) {
                        return vreinterpretq_s8_u8(vshlq_n_u8(vandq_u8(vshlq_u8(h, sh), one), 4));
                    };
                    l0 = vorrq_s8(l0, fifth(qh[0], slo));
                    l1 = vorrq_s8(l1, fifth(qh[1], slo));
                    h0 = vorrq_s8(h0, fifth(qh[0], shi));
                    h1 = vorrq_s8(h1, fifth(qh[1], shi));
                }
                const int32x4_t plo = P::dot(P::dot(vdupq_n_s32(0), l0, vld1q_s8(q8)), l1, vld1q_s8(q8 + 16));
                const int32x4_t phi = P::dot(P::dot(vdupq_n_s32(0), h0, vld1q_s8(q8 + 32)), h1, vld1q_s8(q8 + 48));
                acc = vmlaq_n_s32(acc, plo, sc[2 * j]);
                acc = vmlaq_n_s32(acc, phi, sc[2 * j + 1]);
            }
            const float dall = y[i].d * from_f16(x[i].d);
            const float dmin = y[i].d * from_f16(x[i].dmin);
            sum += dall * (float) vaddvq_s32(acc) - dmin * (float) summs;
        }
        *s = sum;
    }

    // q6_K: per 128-value half c and quarter u, values 128c + 32u + l take
    // the low bits from ql (nibble u / 2 of ql[64c + 32(u % 2) + l]) and the
    // high two from bits 2u of qh[32c + l]; one signed scale per 16 values.
    static void q6_K(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const lm_block_q6_K *>(vx);
        const auto * y = static_cast<const lm_block_q8_K *>(vy);
        float sum = 0.0f;
        const uint8x16_t nib = vdupq_n_u8(0x0F), two = vdupq_n_u8(0x03);
        const int8x16_t off = vdupq_n_s8(32);
        for (int i = 0; i < n / LM_QK_K; ++i) {
            int32x4_t acc = vdupq_n_s32(0);
            for (int c = 0; c < 2; ++c) {
                const uint8_t * ql = x[i].ql + 64 * c;
                const uint8_t * qh = x[i].qh + 32 * c;
                const uint8x16_t h[2] = {vld1q_u8(qh), vld1q_u8(qh + 16)};
                for (int u = 0; u < 4; ++u) {
                    const int8_t * q8 = y[i].qs + 128 * c + 32 * u;
                    for (int half = 0; half < 2; ++half) {
                        const uint8x16_t l = vld1q_u8(ql + 32 * (u % 2) + 16 * half);
                        const uint8x16_t lo = u < 2 ? vandq_u8(l, nib) : vshrq_n_u8(l, 4);
                        uint8x16_t hb = h[half];
                        switch (u) { // shifts take immediates
                            case 1: hb = vshrq_n_u8(hb, 2); break;
                            case 2: hb = vshrq_n_u8(hb, 4); break;
                            case 3: hb = vshrq_n_u8(hb, 6); break;
                            default: break;
                        }
                        const int8x16_t q =
                            vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(lo, vshlq_n_u8(vandq_u8(hb, two), 4))), off);
                        const int32x4_t p = P::dot(vdupq_n_s32(0), q, vld1q_s8(q8 + 16 * half));
                        acc = vmlaq_n_s32(acc, p, x[i].scales[8 * c + 2 * u + half]);
                    }
                }
            }
            sum += y[i].d * from_f16(x[i].d) * (float) vaddvq_s32(acc);
        }
        *s = sum;
    }

    // q2_K / q3_K: values 128c + 32u + l have their 2 low bits at 2u of
    // qs[32c + l] (q3_K: the third bit at 4c + u of hmask[l], the value 4
    // lower where it is clear, -4..3); one scale per 16 values (q2_K: 4-bit
    // scale and minimum, the minimum times Q8_K's group sums, as the twin).
    template <bool kQ3, typename Block>
    static void q23_K(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
        const auto * x = static_cast<const Block *>(vx);
        const auto * y = static_cast<const lm_block_q8_K *>(vy);
        float sum = 0.0f;
        const uint8x16_t three = vdupq_n_u8(3), one = vdupq_n_u8(1);
        for (int i = 0; i < n / LM_QK_K; ++i) {
            int sc[16];
            int mins = 0;
            for (int g = 0; g < 16; ++g) {
                if constexpr (kQ3) {
                    const int lo = g < 8 ? (x[i].scales[g] & 0xF) : (x[i].scales[g - 8] >> 4);
                    sc[g] = (lo | (((x[i].scales[8 + g % 4] >> (2 * (g / 4))) & 3) << 4)) - 32;
                } else {
                    sc[g] = x[i].scales[g] & 0xF;
                    mins += (x[i].scales[g] >> 4) * y[i].bsums[g];
                }
            }
            uint8x16_t hm[2] = {one, one};
            if constexpr (kQ3) hm[0] = vld1q_u8(x[i].hmask), hm[1] = vld1q_u8(x[i].hmask + 16);
            int32x4_t acc = vdupq_n_s32(0);
            for (int c = 0; c < 2; ++c) {
                for (int u = 0; u < 4; ++u) {
                    const int8_t * q8 = y[i].qs + 128 * c + 32 * u;
                    for (int half = 0; half < 2; ++half) {
                        const uint8x16_t l = vld1q_u8(x[i].qs + 32 * c + 16 * half);
                        uint8x16_t v = vandq_u8(vshlq_u8(l, vdupq_n_s8((int8_t) (-2 * u))), three);
                        int8x16_t q = vreinterpretq_s8_u8(v);
                        if constexpr (kQ3) {
                            const uint8x16_t h = vandq_u8(vshlq_u8(hm[half], vdupq_n_s8((int8_t) (-(4 * c + u)))), one);
                            v = vorrq_u8(v, vshlq_n_u8(h, 2));
                            q = vsubq_s8(vreinterpretq_s8_u8(v), vdupq_n_s8(4));
                        }
                        const int32x4_t p = P::dot(vdupq_n_s32(0), q, vld1q_s8(q8 + 16 * half));
                        acc = vmlaq_n_s32(acc, p, sc[8 * c + 2 * u + half]);
                    }
                }
            }
            if constexpr (kQ3) {
                sum += y[i].d * from_f16(x[i].d) * (float) vaddvq_s32(acc);
            } else {
                const float dall = y[i].d * from_f16(x[i].d);
                const float dmin = y[i].d * from_f16(x[i].dmin);
                sum += dall * (float) vaddvq_s32(acc) - dmin * (float) mins;
            }
        }
        *s = sum;
    }

    // ------------------------------------------------------------ RowDot rows (layouts.h)
    // The packed rows' per-lane extras (cy, sy, ds) serve the x86 kernels;
    // NEON subtracts the Q4_0 offset from the nibbles and reads one d (and
    // s) per block: lane 4 * bi of dy (and sy, stored as s / 4).
    template <bool kMin> static float row_q4(const uint8_t * x, int64_t nb, const uint8_t * act) {
        constexpr int kBlock = kMin ? 20 : 18;
        constexpr int kQs = kMin ? 4 : 2;
        float32x4_t acc = vdupq_n_f32(0.0f);
        float mins = 0.0f;
        for (int64_t b = 0; b < nb; ++b, x += kBlock) {
            const uint8_t * g = act + (b / 4) * layout::kQ4GroupBytes;
            const int bi = (int) (b % 4);
            int8x16_t lo, hi;
            nibbles(x + kQs, kMin ? 0 : 8, &lo, &hi);
            int32x4_t p = P::dot(vdupq_n_s32(0), lo, vld1q_s8((const int8_t *) g + 16 * bi));
            p = P::dot(p, hi, vld1q_s8((const int8_t *) g + 64 + 16 * bi));
            uint16_t hd;
            std::memcpy(&hd, x, sizeof(hd));
            const float dy = reinterpret_cast<const float *>(g + 128)[4 * bi];
            acc = vmlaq_n_f32(acc, vcvtq_f32_s32(p), from_f16(hd) * dy);
            if constexpr (kMin) {
                uint16_t hm;
                std::memcpy(&hm, x + 2, sizeof(hm));
                mins += from_f16(hm) * (reinterpret_cast<const float *>(g + 192)[4 * bi] * 4.0f);
            }
        }
        return vaddvq_f32(acc) + mins;
    }

    static float row_q8(const uint8_t * x, int64_t nb, const uint8_t * act) {
        float32x4_t acc = vdupq_n_f32(0.0f);
        for (int64_t b = 0; b < nb; ++b, x += 34) {
            const uint8_t * g = act + (b / 2) * layout::kQ8GroupBytes;
            const int bi = (int) (b % 2);
            const auto * a = reinterpret_cast<const int8_t *>(g + 32 * bi);
            const auto * w = reinterpret_cast<const int8_t *>(x + 2);
            int32x4_t p = P::dot(vdupq_n_s32(0), vld1q_s8(w), vld1q_s8(a));
            p = P::dot(p, vld1q_s8(w + 16), vld1q_s8(a + 16));
            uint16_t hd;
            std::memcpy(&hd, x, sizeof(hd));
            acc = vmlaq_n_f32(acc, vcvtq_f32_s32(p), from_f16(hd) * reinterpret_cast<const float *>(g + 64)[8 * bi]);
        }
        return vaddvq_f32(acc);
    }

    template <float (*Row)(const uint8_t *, int64_t, const uint8_t *)>
    static void rows(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
        const auto * x = static_cast<const uint8_t *>(w);
        for (int64_t r = 0; r < m; ++r) dst[r] = Row(x + r * ldw, k / kQK, static_cast<const uint8_t *>(act));
    }
};

} // namespace
} // namespace lmggml::cpu::arch::arm

#endif

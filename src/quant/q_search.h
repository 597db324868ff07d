#pragma once
// Scale searches shared by the block quantizers, and the small numeric helpers
// they are built from. Each search picks per-group scale (and min) and the
// integer levels L[] for n values; the float operation order matches ggml
// v1.4.1 exactly, because the chosen levels (and so the file bytes) depend on
// every rounding step.

#include "quants.h"
#include "../core/ggml-impl.h"

#include <bit>
#include <cmath>
#include <cstdint>

// Files must not depend on whether the compiler fuses a*b+c into one rounding
// (GCC does so by default in C++ once FMA is enabled, e.g. -march=native):
// ggml's reference files and the gguf Python package round every operation.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace lm_quant {

inline constexpr float kGroupMaxEps = 1e-15f; // below this a group counts as all zero

// Round to nearest, ties to even, via the 1.5*2^23 trick: valid for |f| < 2^22,
// which every caller guarantees; never undefined behaviour for other inputs.
inline int nearest_int(float f) {
    const float v = f + 12582912.f;
    const int32_t i = std::bit_cast<int32_t>(v);
    return (i & 0x007fffff) - 0x00400000;
}

// C-style truncation toward zero, without the undefined behaviour of casting
// NaN or out-of-range floats (they give 0; only garbage input produces them).
inline int trunc_int(float f) { return (f > -2147483520.f && f < 2147483520.f) ? static_cast<int>(f) : 0; }

// C roundf (half away from zero) into an int, with the same guard.
inline int round_int(float f) { return trunc_int(std::round(f)); }

inline float half_to_f32(lm_half h) { return LM_GGML_FP16_TO_FP32(h); }
inline lm_half f32_to_half(float f) { return LM_GGML_FP32_TO_FP16(f); }

// Signed levels around zero: L[i] in [0, 2*nmax), value ~ scale * (L[i] - nmax).
// rmse_type 0: scale from the extreme value only; 1 (with qw == NULL: weights
// x^2): least-squares refit over 18 trial scales. Returns the scale.
float make_qx_quants(int n, int nmax, const float * x, int8_t * L, int rmse_type, const float * qw);

// As make_qx_quants for 3-bit, with a coordinate-descent refinement (do_rmse).
float make_q3_quants(int n, int nmax, const float * x, int8_t * L, bool do_rmse);

// Asymmetric levels L[i] in [0, nmax], value ~ scale * L[i] - *the_min.
// Tries nstep+1 scales (rmin + rdelta*is + nmax) / (max - min) and keeps the
// weighted least-squares best (use_mad: absolute instead of squared error).
float make_qkx2_quants(int n, int nmax, const float * x, const float * weights, uint8_t * L, float * the_min,
                       uint8_t * Laux, float rmin, float rdelta, int nstep, bool use_mad);

// As make_qkx2_quants; weights == NULL means x^2, and max <= min counts as flat.
float make_qkx3_quants(int n, int nmax, const float * x, const float * weights, uint8_t * L, float * the_min,
                       uint8_t * Laux, float rmin, float rdelta, int nstep, bool use_mad);

// Non-negative levels L[i] in [0, nmax] for non-negative x (the sub-block
// scales of K-quants), weighted by quant_weights. Returns the scale.
float make_qp_quants(int n, int nmax, const float * x, uint8_t * L, const float * quant_weights);

// 6-bit scale and min j (0..7) of a q4_K/q5_K scales[12] array.
inline void get_scale_min_k4(int j, const uint8_t * q, uint8_t * d, uint8_t * m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t) ((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t) ((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// Inverse of get_scale_min_k4 for 8 (scale, min) pairs of 6 bits.
inline void pack_scale_min_k4(const uint8_t * ls, const uint8_t * lm, uint8_t * scales) {
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            scales[j] = ls[j];
            scales[j + 4] = lm[j];
        } else {
            scales[j + 4] = (uint8_t) ((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
            scales[j - 4] |= (uint8_t) ((ls[j] >> 4) << 6);
            scales[j] |= (uint8_t) ((lm[j] >> 4) << 6);
        }
    }
}

// Packs 256 2-bit levels: byte 32*c + l holds values 128*c + l + 32*s at bits 2*s.
inline void pack_2bit_256(const uint8_t * L, uint8_t * qs) {
    for (int c = 0; c < 2; ++c) {
        const uint8_t * Lc = L + 128 * c;
        for (int l = 0; l < 32; ++l) {
            qs[32 * c + l] = (uint8_t) (Lc[l] | (Lc[l + 32] << 2) | (Lc[l + 64] << 4) | (Lc[l + 96] << 6));
        }
    }
}

} // namespace lm_quant

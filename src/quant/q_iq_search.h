#pragma once
// Shared search steps of the grid I-quant quantizers (q_iq2.cpp, q_iq3.cpp,
// q_iq1.cpp). The model: a sub-block of non-negative magnitudes xval is
// approximated by scale * (2 L + 1), the level vector of each group of
// `dim` values being a point of the grid.
#include "q_iq.h"
#include "q_iq_unpack.h"
#include "../core/ggml-impl.h"

#include <cmath>
#include <cstring>

namespace lm_quant::iq {

// below this a sub-block counts as all zero (q_search.h)
constexpr float kGroupEps = kGroupMaxEps;

// Per-value weights of one super-block: the importance matrix scaled by the
// value's size, or (no imatrix) a fallback of the format.
enum class Fallback { none, x2, sigma_x2 };

inline void block_weights(const float * x, const float * qw, float sigma2, Fallback fb, float * w) {
    for (int i = 0; i < LM_QK_K; ++i) {
        if (qw) {
            w[i] = qw[i] * std::sqrt(sigma2 + x[i] * x[i]);
        } else if (fb == Fallback::sigma_x2) {
            w[i] = 0.25f * sigma2 + x[i] * x[i];
        } else {
            w[i] = x[i] * x[i];
        }
    }
}

inline float sum_squares(const float * x, int n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += x[i] * x[i];
    return s;
}

// Magnitudes and sign bits of 8 values. With `even` the format stores 7 sign
// bits and implies the 8th (an even count of minus signs): an odd count is
// made even by giving the least important value the wrong sign, which the
// fit then sees as a negative magnitude.
inline uint8_t fold_signs(const float * x, const float * w, bool even, float * xval) {
    uint8_t s = 0;
    for (int i = 0; i < 8; ++i) {
        xval[i] = std::fabs(x[i]);
        if (x[i] < 0) s |= (uint8_t) (1u << i);
    }
    if (even && (__builtin_popcount(s) & 1)) {
        int imin = 0;
        for (int i = 1; i < 8; ++i) {
            if (w[i] * x[i] * x[i] < w[imin] * x[imin] * x[imin]) imin = i;
        }
        xval[imin] = -xval[imin];
        s ^= (uint8_t) (1u << imin);
    }
    return s;
}

// Grid point for one group: rounds xval * id to levels; off the grid, the
// neighbour (or, without neighbours, any point) closest to xval at scale
// 1/id under weights w. Writes the point's levels to L, returns its index.
inline int project(const GridMap & g, int nlev, const float * xval, const float * w, float id, uint8_t * L,
                   bool * on_grid) {
    int key = 0;
    for (int i = 0; i < g.dim; ++i) {
        int l = nearest_int(0.5f * (id * xval[i] - 1));
        l = l < 0 ? 0 : (l > nlev - 1 ? nlev - 1 : l);
        key |= l << (g.bits * i);
    }
    int p = g.index_of[key];
    *on_grid = p >= 0;
    if (p < 0) {
        const uint16_t * nb = g.neighbours - p - 1;
        const int count = nb[0];
        const float scale = 1 / id;
        float best = INFINITY;
        p = count ? nb[1] : 0; // kept if every error is NaN (NaN input)
        for (int j = 0; j < (count ? count : g.size); ++j) {
            const int cand = count ? nb[1 + j] : j;
            const uint8_t * lv = g.levels + (size_t) cand * g.dim;
            float d2 = 0;
            for (int i = 0; i < g.dim; ++i) {
                const float diff = scale * (2 * lv[i] + 1) - xval[i];
                d2 += w[i] * diff * diff;
            }
            if (d2 < best) {
                best = d2;
                p = cand;
            }
        }
    }
    std::memcpy(L, g.levels + (size_t) p * g.dim, g.dim);
    return p;
}

struct FitParams {
    int nlev;  // levels per coordinate
    int steps; // trial scales: max / (2 nlev - 1 + s * step), s in -steps..steps
    float step;
};

// Best scale and grid points for a sub-block of n magnitudes (n a multiple
// of g.dim): tries the trial scales, keeps the weighted least-squares best,
// then re-rounds every group at that scale and keeps the result if better.
// Returns the scale (> 0), or 0 for a sub-block that is (nearly) zero.
inline float fit_block(const GridMap & g, const FitParams & p, const float * xval, const float * w, int n,
                       uint16_t * idx) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = std::fmax(max, xval[i]);
    const int ng = n / g.dim;
    for (int k = 0; k < ng; ++k) idx[k] = 0;
    if (max < kGroupEps) return 0;

    uint8_t L[32];
    uint16_t cand[8];
    float waux[32]; // the grid search compares candidates under sqrt(w), as ggml does
    for (int i = 0; i < n; ++i) waux[i] = std::sqrt(w[i]);
    float best_num = 0, best_den = 1; // best objective sumqx^2 / sumq2, kept as a fraction
    bool found = false;
    auto try_scale = [&](float id) {
        bool on;
        float sumqx = 0, sumq2 = 0;
        for (int k = 0; k < ng; ++k) {
            cand[k] = (uint16_t) project(g, p.nlev, xval + g.dim * k, waux + g.dim * k, id, L + g.dim * k, &on);
        }
        for (int i = 0; i < n; ++i) {
            const float q = (float) (2 * L[i] + 1);
            sumqx += w[i] * xval[i] * q;
            sumq2 += w[i] * q * q;
        }
        if (sumqx > 0 && sumq2 > 0 && sumqx * sumqx * best_den > best_num * sumq2) {
            best_num = sumqx * sumqx;
            best_den = sumq2;
            found = true;
            std::memcpy(idx, cand, sizeof(uint16_t) * ng);
            return sumqx / sumq2;
        }
        return -1.0f;
    };
    float scale = 0;
    for (int s = -p.steps; s <= p.steps; ++s) {
        const float r = try_scale((2 * p.nlev - 1 + s * p.step) / max);
        if (r > 0) scale = r;
    }
    if (!found) return 0;
    const float r = try_scale(1 / scale); // round again at the fitted scale
    if (r > 0) scale = r;
    return scale;
}

// Fits the super-block scale d by weighted least squares against the block
// as it decodes (sub-scales, grid points and signs already stored; d read as
// 1): d = sum w x v / sum w v^2. Returns 0 when nothing is left to fit.
template <typename Block> float fit_super_scale(const Block & b, const float * x, const float * w) {
    Unpacked u;
    unpack(b, u);
    double num = 0, den = 0;
    for (int e = 0; e < LM_QK_K; ++e) {
        const double v = (double) kScale<Block> * u.m[e / 16] * u.w[e];
        num += (double) w[e] * x[e] * v;
        den += (double) w[e] * v * v;
    }
    return den > 0 && num > 0 ? (float) (num / den) : 0.0f;
}

// 4-bit sub-scale for multiplier 2 l + 1 of the unit d0
inline int sub_scale(float scale, float d0, int lmax) {
    const int l = nearest_int(0.5f * (scale / d0 - 1));
    return l < 0 ? 0 : (l > lmax ? lmax : l);
}

// Row loop shared by the quantizers: rows of n_per_row values, one
// super-block at a time. Returns the bytes written.
template <typename Block, typename Fn>
size_t quantize_rows_with(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix,
                          Fn one_block) {
    const int64_t nb = n_per_row / LM_QK_K;
    auto * out = static_cast<Block *>(dst);
    for (int64_t r = 0; r < nrow; ++r) {
        for (int64_t i = 0; i < nb; ++i) {
            one_block(src + r * n_per_row + i * LM_QK_K, imatrix ? imatrix + i * LM_QK_K : nullptr, out[r * nb + i]);
        }
    }
    return (size_t) (nrow * nb) * sizeof(Block);
}

} // namespace lm_quant::iq

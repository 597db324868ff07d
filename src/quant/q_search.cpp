// Scale searches for the block quantizers (see q_search.h). Every float
// expression keeps ggml's evaluation order: a different order changes which
// trial scale wins and therefore the bytes written to files.
#include "q_search.h"

#include <algorithm>
#include <cstring>

namespace lm_quant {

namespace {

// weight of value x for make_qx_quants when no importance weights are given
inline float qx_weight(int rmse_type, float x) {
    switch (rmse_type) {
        case 1: return x * x;
        case 2: return 1.0f;
        case 3: return std::fabs(x);
        default: return std::sqrt(std::fabs(x));
    }
}

inline int clamp_int(int v, int lo, int hi) { return std::min(hi, std::max(lo, v)); }

// value with the largest magnitude (the first one on ties) and that magnitude
inline float signed_absmax(int n, const float * x, float * amax_out) {
    float amax = 0.0f, max = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    *amax_out = amax;
    return max;
}

} // namespace

float make_qx_quants(int n, int nmax, const float * x, int8_t * L, int rmse_type, const float * qw) {
    float amax;
    const float max = signed_absmax(n, x, &amax);
    if (amax < kGroupMaxEps) {
        std::memset(L, 0, (size_t) n);
        return 0.0f;
    }
    float iscale = -nmax / max;
    if (rmse_type == 0) {
        for (int i = 0; i < n; ++i) {
            L[i] = (int8_t) (nmax + clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1));
        }
        return 1 / iscale;
    }
    const bool return_early = rmse_type < 0;
    if (return_early) rmse_type = -rmse_type;

    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t) (l + nmax);
        const float w = qw ? qw[i] : qx_weight(rmse_type, x[i]);
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 ? sumlx / suml2 : 0.0f;
    if (return_early) return suml2 > 0 ? 0.5f * (scale + 1 / iscale) : 1 / iscale;

    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
            const float w = qw ? qw[i] : qx_weight(rmse_type, x[i]);
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                L[i] = (int8_t) (nmax + clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1));
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

float make_q3_quants(int n, int nmax, const float * x, int8_t * L, bool do_rmse) {
    float amax;
    const float max = signed_absmax(n, x, &amax);
    if (amax < kGroupMaxEps) {
        std::memset(L, 0, (size_t) n);
        return 0.0f;
    }
    const float iscale = -nmax / max;
    if (!do_rmse) {
        for (int i = 0; i < n; ++i) {
            L[i] = (int8_t) (clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1) + nmax);
        }
        return 1 / iscale;
    }
    // L holds signed levels during the refinement, shifted by nmax at the end
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t) l;
        const float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * L[i];
            if (!(slx > 0)) continue; // (NaN-safe: skip exactly when ggml does)
            float sl2 = suml2 - w * L[i] * L[i];
            const int new_l = clamp_int(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
            if (new_l == L[i]) continue;
            slx += w * x[i] * new_l;
            sl2 += w * new_l * new_l;
            if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                L[i] = (int8_t) new_l;
                sumlx = slx;
                suml2 = sl2;
                ++n_changed;
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; ++i) L[i] = (int8_t) (L[i] + nmax);
    return sumlx / suml2;
}

namespace {

// The shared body of make_qkx2_quants / make_qkx3_quants; they differ only in
// the default weights and in how a flat group is detected.
template <bool kNullWeightsAreSquares>
float make_qkx_impl(int n, int nmax, const float * x, const float * weights, uint8_t * L, float * the_min,
                    uint8_t * Laux, float rmin, float rdelta, int nstep, bool use_mad) {
    auto weight = [&](int i) -> float {
        if constexpr (kNullWeightsAreSquares) {
            return weights ? weights[i] : x[i] * x[i];
        } else {
            return weights[i];
        }
    };
    auto error = [&](float diff) -> float { return use_mad ? std::fabs(diff) : diff * diff; };

    float min = x[0], max = x[0];
    float sum_w = weight(0);
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weight(i);
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    const bool flat = kNullWeightsAreSquares ? (max <= min) : (max == min);
    if (flat) {
        std::memset(L, 0, (size_t) n);
        *the_min = -min;
        return 0.0f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float best_mad = 0;
    for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * (x[i] - min));
        L[i] = (uint8_t) clamp_int(l, 0, nmax);
        const float diff = scale * L[i] + min - x[i];
        best_mad += weight(i) * error(diff);
    }
    if (nstep < 1) {
        *the_min = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const int l = clamp_int(nearest_int(iscale * (x[i] - min)), 0, nmax);
            Laux[i] = (uint8_t) l;
            const float w = weight(i);
            sum_l += w * l;
            sum_l2 += w * l * l;
            sum_xl += w * l * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (!(D > 0)) continue;
        float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
        float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
        if (this_min > 0) {
            this_min = 0;
            this_scale = sum_xl / sum_l2;
        }
        float mad = 0;
        for (int i = 0; i < n; ++i) {
            const float diff = this_scale * Laux[i] + this_min - x[i];
            mad += weight(i) * error(diff);
        }
        if (mad < best_mad) {
            std::memcpy(L, Laux, (size_t) n);
            best_mad = mad;
            scale = this_scale;
            min = this_min;
        }
    }
    *the_min = -min;
    return scale;
}

} // namespace

float make_qkx2_quants(int n, int nmax, const float * x, const float * weights, uint8_t * L, float * the_min,
                       uint8_t * Laux, float rmin, float rdelta, int nstep, bool use_mad) {
    return make_qkx_impl<false>(n, nmax, x, weights, L, the_min, Laux, rmin, rdelta, nstep, use_mad);
}

float make_qkx3_quants(int n, int nmax, const float * x, const float * weights, uint8_t * L, float * the_min,
                       uint8_t * Laux, float rmin, float rdelta, int nstep, bool use_mad) {
    return make_qkx_impl<true>(n, nmax, x, weights, L, the_min, Laux, rmin, rdelta, nstep, use_mad);
}

float make_qp_quants(int n, int nmax, const float * x, uint8_t * L, const float * quant_weights) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = max > x[i] ? max : x[i];
    if (!max) {
        std::memset(L, 0, (size_t) n);
        return 0.0f;
    }
    float iscale = nmax / max;
    for (int i = 0; i < n; ++i) L[i] = (uint8_t) nearest_int(iscale * x[i]);
    const float scale = 1 / iscale;
    float best_mse = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = x[i] - scale * L[i];
        best_mse += quant_weights[i] * diff * diff;
    }
    for (int is = -4; is <= 4; ++is) {
        if (is == 0) continue;
        const float iscale_is = (0.1f * is + nmax) / max;
        const float scale_is = 1 / iscale_is;
        float mse = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::min(nmax, nearest_int(iscale_is * x[i]));
            const float diff = x[i] - scale_is * l;
            mse += quant_weights[i] * diff * diff;
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = std::min(nmax, nearest_int(iscale * x[i]));
        L[i] = (uint8_t) l;
        const float w = quant_weights[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = quant_weights[i];
            float slx = sumlx - w * x[i] * L[i];
            float sl2 = suml2 - w * L[i] * L[i];
            if (!(slx > 0 && sl2 > 0)) continue;
            const int new_l = std::min(nmax, nearest_int(x[i] * sl2 / slx));
            if (new_l == L[i]) continue;
            slx += w * x[i] * new_l;
            sl2 += w * new_l * new_l;
            if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                L[i] = (uint8_t) new_l;
                sumlx = slx;
                suml2 = sl2;
                ++n_changed;
            }
        }
        if (!n_changed) break;
    }
    return sumlx / suml2;
}

} // namespace lm_quant

// IQ4_NL (32-value blocks) and IQ4_XS (256-value super-blocks of eight
// 32-value sub-blocks with 6-bit scales): 4-bit indices into the fixed
// non-linear level table kvalues_iq4nl. The scale search follows ggml v1.4.1's
// float operations step by step so that the chosen indices (the file bytes)
// agree with it.
#include "q_iq4_tq.h"
#include "q_search.h"

#include <cstring>

using namespace lm_quant;

extern const int8_t lm_quant_kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                  1,    13,   25,  38,  53,  69,  89,  113};

namespace {

constexpr int kSub = 32; // values per scale
constexpr const int8_t * kValues = lm_quant_kvalues_iq4nl;

// Index of the level nearest to v (the lower one on a tie); values below the
// first or above the last level clamp. Binary search over the sorted table.
int nearest_level(float v) {
    if (v <= kValues[0]) return 0;
    if (v >= kValues[15]) return 15;
    int lo = 0, hi = 15;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (v < kValues[mid])
            hi = mid;
        else
            lo = mid;
    }
    return v - kValues[hi - 1] < kValues[hi] - v ? hi - 1 : hi;
}

// Weighted least-squares fit of x ~ d * kvalues[L] for L chosen with 1/d = id.
void fit(const float * x, const float * w, float id, float * sumqx, float * sumq2, uint8_t * L) {
    float sx = 0, s2 = 0;
    for (int j = 0; j < kSub; ++j) {
        const int l = nearest_level(id * x[j]);
        if (L) L[j] = (uint8_t) l;
        const float q = kValues[l];
        sx += w[j] * q * x[j];
        s2 += w[j] * q * q;
    }
    *sumqx = sx;
    *sumq2 = s2;
}

// The scale of one 32-value sub-block. ntry < 0: only the extreme-value
// scale, refitted once (the reference path); ntry > 0: also 2*ntry+1 trial
// scales around it, keeping the best weighted fit. Leaves the sub-block's
// indices for the extreme-value scale in L. Returns 0 for an all-zero block.
float sub_block_scale(const float * x, const float * w, int ntry, uint8_t * L) {
    float amax = 0, max = 0;
    for (int j = 0; j < kSub; ++j) {
        const float ax = std::fabs(x[j]);
        if (ax > amax) {
            amax = ax;
            max = x[j];
        }
    }
    if (amax < kGroupMaxEps) {
        std::memset(L, 8, kSub); // kvalues[8] = 1 is the level nearest zero; the scale is 0 anyway
        return 0.0f;
    }
    const float d0 = ntry > 0 ? -max / kValues[0] : max / kValues[0];
    float sumqx, sumq2;
    fit(x, w, 1 / d0, &sumqx, &sumq2, L);
    // zero importance everywhere leaves nothing to fit: keep the extreme-value scale
    float d = sumq2 > 0 ? sumqx / sumq2 : d0;
    float best = d * sumqx;
    for (int itry = -ntry; itry <= ntry; ++itry) {
        fit(x, w, (float) (itry + kValues[0]) / max, &sumqx, &sumq2, nullptr);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

// Importance of each value of a sub-block: qw * sqrt(sigma2 + x^2) with an
// imatrix, x^2 without.
void importance(const float * x, const float * qw, float sigma2, float * w) {
    for (int j = 0; j < kSub; ++j) w[j] = qw ? qw[j] * std::sqrt(sigma2 + x[j] * x[j]) : x[j] * x[j];
}

float mean_square_x2(const float * x, int n) {
    float s = 0;
    for (int j = 0; j < n; ++j) s += x[j] * x[j];
    return s * (2.f / (float) n);
}

// Nibble packing of 32 indices per 16 bytes, as in q4_0.
void pack(const uint8_t * L, uint8_t * qs, int n) {
    for (int i = 0; i < n / kSub; ++i) {
        for (int j = 0; j < 16; ++j) qs[16 * i + j] = (uint8_t) (L[kSub * i + j] | (L[kSub * i + 16 + j] << 4));
    }
}

void quantize_nl_block(const float * x, lm_block_iq4_nl * y, const float * qw, int ntry) {
    float w[kSub];
    uint8_t L[kSub];
    importance(x, qw, mean_square_x2(x, kSub), w);
    const float d = sub_block_scale(x, w, ntry, L);
    y->d = f32_to_half(d);
    if (ntry > 0) { // the trial scales moved d: index again with it
        const float id = d ? 1 / d : 0.0f;
        for (int j = 0; j < kSub; ++j) L[j] = (uint8_t) nearest_level(id * x[j]);
    }
    pack(L, y->qs, kSub);
}

// Sub-block scales are quantized to 6 signed bits of one super-block scale
// (chosen so the largest-magnitude scale maps to -32), then every sub-block
// is indexed again with its quantized scale.
void quantize_xs_block(const float * x, lm_block_iq4_xs * y, const float * qw) {
    constexpr int kNb = LM_QK_K / kSub;
    const float sigma2 = mean_square_x2(x, LM_QK_K);
    float scales[kNb], w[kSub];
    uint8_t L[LM_QK_K];
    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < kNb; ++ib) {
        importance(x + kSub * ib, qw ? qw + kSub * ib : nullptr, sigma2, w);
        scales[ib] = sub_block_scale(x + kSub * ib, w, 7, L + kSub * ib);
        if (std::fabs(scales[ib]) > amax_scale) {
            amax_scale = std::fabs(scales[ib]);
            max_scale = scales[ib];
        }
    }
    const float d = -max_scale / 32;
    const float id = d ? 1 / d : 0.0f;
    y->d = f32_to_half(d);
    y->scales_h = 0;
    std::memset(y->scales_l, 0, sizeof(y->scales_l));
    for (int ib = 0; ib < kNb; ++ib) {
        int l = nearest_int(id * scales[ib]);
        l = l < -32 ? -32 : (l > 31 ? 31 : l);
        const float dl = d * (float) l;
        const float idl = dl ? 1 / dl : 0.0f;
        for (int j = 0; j < kSub; ++j) L[kSub * ib + j] = (uint8_t) nearest_level(idl * x[kSub * ib + j]);
        const int u = l + 32;
        y->scales_l[ib / 2] |= (uint8_t) ((u & 0xF) << (4 * (ib % 2)));
        y->scales_h |= (uint16_t) ((u >> 4) << (2 * ib));
    }
    pack(L, y->qs, LM_QK_K);
}

} // namespace

void lm_quant_quantize_row_iq4_nl_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_iq4_nl *>(vy);
    for (int64_t i = 0; i < k / LM_QK4_NL; ++i) quantize_nl_block(x + LM_QK4_NL * i, y + i, nullptr, -1);
}

void lm_quant_quantize_row_iq4_xs_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_iq4_xs *>(vy);
    for (int64_t i = 0; i < k / LM_QK_K; ++i) quantize_xs_block(x + LM_QK_K * i, y + i, nullptr);
}

void lm_quant_dequantize_row_iq4_nl(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_iq4_nl *>(vx);
    for (int64_t i = 0; i < k / LM_QK4_NL; ++i, y += LM_QK4_NL) {
        const float d = half_to_f32(x[i].d);
        for (int j = 0; j < 16; ++j) {
            y[j] = d * kValues[x[i].qs[j] & 0xF];
            y[j + 16] = d * kValues[x[i].qs[j] >> 4];
        }
    }
}

void lm_quant_dequantize_row_iq4_xs(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_iq4_xs *>(vx);
    for (int64_t i = 0; i < k / LM_QK_K; ++i) {
        const float d = half_to_f32(x[i].d);
        for (int ib = 0; ib < LM_QK_K / kSub; ++ib, y += kSub) {
            const float dl = d * (float) lm_quant_iq4_xs_scale(&x[i], ib);
            const uint8_t * qs = x[i].qs + 16 * ib;
            for (int j = 0; j < 16; ++j) {
                y[j] = dl * kValues[qs[j] & 0xF];
                y[j + 16] = dl * kValues[qs[j] >> 4];
            }
        }
    }
}

size_t lm_quant_rows_iq4_nl(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    const int64_t nb = n_per_row / LM_QK4_NL;
    auto * y = static_cast<lm_block_iq4_nl *>(dst);
    for (int64_t r = 0; r < nrow; ++r, src += n_per_row, y += nb) {
        for (int64_t i = 0; i < nb; ++i) {
            quantize_nl_block(src + LM_QK4_NL * i, y + i, imatrix ? imatrix + LM_QK4_NL * i : nullptr, 7);
        }
    }
    return (size_t) (nrow * nb) * sizeof(lm_block_iq4_nl);
}

size_t lm_quant_rows_iq4_xs(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    const int64_t nb = n_per_row / LM_QK_K;
    auto * y = static_cast<lm_block_iq4_xs *>(dst);
    for (int64_t r = 0; r < nrow; ++r, src += n_per_row, y += nb) {
        for (int64_t i = 0; i < nb; ++i) {
            quantize_xs_block(src + LM_QK_K * i, y + i, imatrix ? imatrix + LM_QK_K * i : nullptr);
        }
    }
    return (size_t) (nrow * nb) * sizeof(lm_block_iq4_xs);
}

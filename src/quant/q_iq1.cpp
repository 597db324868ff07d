// Quantizers of the 1-bit grid I-quants IQ1_S and IQ1_M: values are
// d * m * (g + delta) with g in {-1, 0, 1} from the grid and delta = +-1/8
// (per 32 values in IQ1_S, per 8 in IQ1_M).
//
// With three levels the best split of a sub-block is found exactly: sort the
// values, and every pair of cut points (i1 <= i2) assigns -1 below i1, 0 up
// to i2 and +1 above; prefix sums give each split's least-squares scale and
// error in O(1). The split is then moved to the nearest grid points.
#include "q_iq_search.h"

#include <algorithm>

using namespace lm_quant;
using namespace lm_quant::iq;

namespace {

constexpr int QK = LM_QK_K;
constexpr float kDelta = LM_IQ1S_DELTA;

// level l (0, 1, 2 for -1, 0, +1) with the delta's sign s (+1 / -1)
inline float level_value(int l, int s) { return (float) (l - 1) + (float) s * kDelta; }

struct Split {
    int8_t L[32]; // levels 0..2 per value
    int sign[2];  // delta sign per half (IQ1_S: both the same)
    float scale;
};

// Exact best split of n values (IQ1_S: n = 32, one delta sign; IQ1_M:
// n = 16, a delta sign per half of 8). Returns false for a zero sub-block.
bool best_split(const float * x, const float * w, int n, bool per_half, Split & out) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = std::fmax(max, std::fabs(x[i]));
    if (max < kGroupEps) return false;
    int order[32];
    for (int i = 0; i < n; ++i) order[i] = i;
    // NaN sorts as 0 so the order stays a strict weak one on any input
    auto key = [&](int i) { return std::isnan(x[i]) ? 0.0f : x[i]; };
    std::stable_sort(order, order + n, [&](int a, int b) { return key(a) < key(b); });
    // prefix sums of w x and w over the sorted values, per half
    float sx[2][33] = {}, sw[2][33] = {};
    for (int j = 0; j < n; ++j) {
        const int i = order[j], h = per_half && i >= n / 2;
        for (int hh = 0; hh < 2; ++hh) {
            sx[hh][j + 1] = sx[hh][j] + (hh == h ? w[i] * x[i] : 0.0f);
            sw[hh][j + 1] = sw[hh][j] + (hh == h ? w[i] : 0.0f);
        }
    }
    const int ncombo = per_half ? 4 : 2;
    float best_num = 0, best_den = 1;
    int bi1 = -1, bi2 = -1, bc = 0;
    float bscale = 0;
    for (int i1 = 0; i1 <= n; ++i1) {
        for (int i2 = i1; i2 <= n; ++i2) {
            const int cut[4] = {0, i1, i2, n};
            for (int c = 0; c < ncombo; ++c) {
                float sumqx = 0, sumq2 = 0;
                for (int h = 0; h < 2; ++h) {
                    const int s = per_half ? ((c >> h) & 1 ? -1 : 1) : (c ? -1 : 1);
                    for (int l = 0; l < 3; ++l) {
                        const float q = level_value(l, s);
                        sumqx += q * (sx[h][cut[l + 1]] - sx[h][cut[l]]);
                        sumq2 += q * q * (sw[h][cut[l + 1]] - sw[h][cut[l]]);
                    }
                }
                if (sumq2 > 0 && sumqx * sumqx * best_den > best_num * sumq2) {
                    best_num = sumqx * sumqx;
                    best_den = sumq2;
                    bscale = sumqx / sumq2;
                    bi1 = i1, bi2 = i2, bc = c;
                }
            }
        }
    }
    if (bi1 < 0) return false;
    for (int j = 0; j < n; ++j) out.L[order[j]] = (int8_t) (j < bi1 ? 0 : j < bi2 ? 1 : 2);
    for (int h = 0; h < 2; ++h) out.sign[h] = per_half ? ((bc >> h) & 1 ? -1 : 1) : (bc ? -1 : 1);
    if (bscale < 0) { // the mirror image: levels and delta signs flip
        for (int j = 0; j < n; ++j) out.L[j] = (int8_t) (2 - out.L[j]);
        out.sign[0] = -out.sign[0];
        out.sign[1] = -out.sign[1];
        bscale = -bscale;
    }
    out.scale = bscale;
    return true;
}

// Grid point for the levels of 8 values; off the grid, the candidate with
// the least weighted error at `scale` with delta sign s.
int grid_point(const GridMap & g, const int8_t * L, const float * x, const float * w, float scale, int s, bool * on) {
    int key = 0;
    for (int i = 0; i < 8; ++i) key |= L[i] << (2 * i);
    int p = g.index_of[key];
    *on = p >= 0;
    if (p >= 0) return p;
    const uint16_t * nb = g.neighbours - p - 1;
    const int count = nb[0];
    float best = INFINITY;
    p = count ? nb[1] : 0; // kept if every error is NaN (NaN input)
    for (int j = 0; j < (count ? count : g.size); ++j) {
        const int cand = count ? nb[1 + j] : j;
        const uint8_t * lv = g.levels + (size_t) cand * 8;
        float d2 = 0;
        for (int i = 0; i < 8; ++i) {
            const float diff = scale * level_value(lv[i], s) - x[i];
            d2 += w[i] * diff * diff;
        }
        if (d2 < best) {
            best = d2;
            p = cand;
        }
    }
    return p;
}

// One sub-block of n values: grid points (n / 8), delta signs, scale.
struct Sub {
    uint16_t idx[4];
    int sign[2];
    float scale;
};

void fit_sub(const GridMap & g, const float * x, const float * w, int n, bool per_half, Sub & r) {
    Split sp;
    if (!best_split(x, w, n, per_half, sp)) {
        int8_t zero[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        bool on;
        for (int k = 0; k < n / 8; ++k) r.idx[k] = (uint16_t) grid_point(g, zero, x, w, 0.0f, 1, &on);
        r.sign[0] = r.sign[1] = 1;
        r.scale = 0;
        return;
    }
    bool all_on = true;
    for (int k = 0; k < n / 8; ++k) {
        bool on;
        const int s = sp.sign[per_half ? k : 0];
        r.idx[k] = (uint16_t) grid_point(g, sp.L + 8 * k, x + 8 * k, w + 8 * k, sp.scale, s, &on);
        all_on = all_on && on;
    }
    r.sign[0] = sp.sign[0];
    r.sign[1] = sp.sign[1];
    r.scale = sp.scale;
    if (!all_on) { // the grid moved some levels: refit the scale
        float sumqx = 0, sumq2 = 0;
        for (int k = 0; k < n / 8; ++k) {
            const int s = sp.sign[per_half ? k : 0];
            for (int i = 0; i < 8; ++i) {
                const float q = level_value(g.levels[(size_t) r.idx[k] * 8 + i], s);
                sumqx += w[8 * k + i] * q * x[8 * k + i];
                sumq2 += w[8 * k + i] * q * q;
            }
        }
        if (sumqx > 0 && sumq2 > 0) r.scale = sumqx / sumq2;
    }
}

// ---------------------------------------------------------------- IQ1_S
void block_iq1_s(const GridMap & g, const float * x, const float * qw, lm_block_iq1_s & y) {
    std::memset(&y, 0, sizeof(y));
    float w[QK];
    block_weights(x, qw, 2 * sum_squares(x, QK) / QK, Fallback::x2, w);
    Sub sub[QK / 32];
    float max_scale = 0;
    for (int ib = 0; ib < QK / 32; ++ib) {
        fit_sub(g, x + 32 * ib, w + 32 * ib, 32, false, sub[ib]);
        max_scale = std::fmax(max_scale, sub[ib].scale);
    }
    if (!(max_scale > 0)) return;
    const float d0 = max_scale / 15;
    for (int ib = 0; ib < QK / 32; ++ib) {
        uint16_t h = (uint16_t) (sub_scale(sub[ib].scale, d0, 7) << 12);
        if (sub[ib].sign[0] < 0) h |= 0x8000;
        for (int k = 0; k < 4; ++k) {
            y.qs[4 * ib + k] = (uint8_t) (sub[ib].idx[k] & 255);
            h |= (uint16_t) ((sub[ib].idx[k] >> 8) << (3 * k));
        }
        y.qh[ib] = h;
    }
    y.d = f32_to_half(1.0f);
    y.d = f32_to_half(fit_super_scale(y, x, w));
}

// ---------------------------------------------------------------- IQ1_M
void set_iq1_m_d(lm_block_iq1_m & y, uint16_t bits) {
    for (int i = 0; i < 4; ++i) {
        y.scales[2 * i + 1] = (uint8_t) ((y.scales[2 * i + 1] & 0x0F) | (((bits >> (4 * i)) & 0xF) << 4));
    }
}

void block_iq1_m(const GridMap & g, const float * x, const float * qw, lm_block_iq1_m & y) {
    std::memset(&y, 0, sizeof(y));
    float w[QK];
    block_weights(x, qw, 2 * sum_squares(x, QK) / QK, Fallback::x2, w);
    Sub sub[QK / 16];
    float max_scale = 0;
    for (int ib = 0; ib < QK / 16; ++ib) {
        fit_sub(g, x + 16 * ib, w + 16 * ib, 16, true, sub[ib]);
        max_scale = std::fmax(max_scale, sub[ib].scale);
    }
    if (!(max_scale > 0)) return;
    const float d0 = max_scale / 15;
    uint16_t words[4] = {};
    for (int ib = 0; ib < QK / 16; ++ib) {
        words[ib / 4] |= (uint16_t) (sub_scale(sub[ib].scale, d0, 7) << (3 * (ib % 4)));
        uint8_t h = 0;
        for (int k = 0; k < 2; ++k) {
            y.qs[2 * ib + k] = (uint8_t) (sub[ib].idx[k] & 255);
            h |= (uint8_t) (((sub[ib].idx[k] >> 8) | (sub[ib].sign[k] < 0 ? 8 : 0)) << (4 * k));
        }
        y.qh[ib] = h;
    }
    for (int i = 0; i < 4; ++i) {
        y.scales[2 * i] = (uint8_t) (words[i] & 0xFF);
        y.scales[2 * i + 1] = (uint8_t) (words[i] >> 8);
    }
    set_iq1_m_d(y, f32_to_half(1.0f));
    set_iq1_m_d(y, f32_to_half(fit_super_scale(y, x, w)));
}

template <typename Block, typename Fn>
size_t rows(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix, Fn fn) {
    const GridMap * g = grid_map(Grid::iq1s);
    if (!g) return 0;
    return quantize_rows_with<Block>(src, dst, nrow, n_per_row, imatrix,
                                     [&](const float * x, const float * qw, Block & y) { fn(*g, x, qw, y); });
}

} // namespace

size_t lm_quant_rows_iq1_s(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    if (!imatrix) {
        LM_GGML_LOG_ERROR("quantize_iq1_s: imatrix: iq1_s needs an importance matrix\n");
        return 0;
    }
    return rows<lm_block_iq1_s>(src, dst, nrow, n_per_row, imatrix, block_iq1_s);
}

size_t lm_quant_rows_iq1_m(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    return rows<lm_block_iq1_m>(src, dst, nrow, n_per_row, imatrix, block_iq1_m);
}

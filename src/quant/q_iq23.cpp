// Quantizers of the 2- and 3-bit grid I-quants: IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S. Each super-block: per-value weights, signs folded out,
// a scale and grid points per sub-block (fit_block), 4-bit sub-scales
// relative to the largest, and finally d fitted to the block as it decodes.
#include "q_iq_search.h"

using namespace lm_quant;
using namespace lm_quant::iq;

namespace {

constexpr int QK = LM_QK_K;

// What differs between the five formats.
struct Format {
    Grid grid;
    int sub;         // values per sub-block (one 4-bit scale each)
    bool even_signs; // 7 stored sign bits per 8 values
    FitParams fit;
    float sigma_mult;  // sigma2 = sigma_mult * mean(x^2), used with an imatrix
    Fallback fallback; // weights without an imatrix (none: imatrix required)
};

// Trial ranges as ggml's searches (scale steps of 0.1 for 3 levels, 0.2 for 8).
constexpr Format kIq2xxs{Grid::iq2xxs, 32, true, {3, 9, 0.1f}, 1.0f, Fallback::none};
constexpr Format kIq2xs{Grid::iq2xs, 16, true, {3, 9, 0.1f}, 1.0f, Fallback::none};
constexpr Format kIq2s{Grid::iq2s, 16, false, {3, 9, 0.1f}, 2.0f, Fallback::sigma_x2};
constexpr Format kIq3xxs{Grid::iq3xxs, 32, true, {8, 15, 0.2f}, 2.0f, Fallback::x2};
constexpr Format kIq3s{Grid::iq3s, 32, false, {8, 9, 0.2f}, 2.0f, Fallback::x2};

// The search result of one super-block, before it is packed.
struct Fit {
    uint16_t idx[QK / 4];  // grid point per group (of 8 or 4 values)
    uint8_t signs[QK / 8]; // sign bits per 8 values
    int ls[QK / 16];       // 4-bit sub-scales, per sub-block
    float w[QK];           // weights, for the final fit of d
};

// Returns false for an all-zero super-block.
bool search(const Format & f, const GridMap & g, const float * x, const float * qw, Fit & r) {
    const float sigma2 = f.sigma_mult * sum_squares(x, QK) / QK;
    block_weights(x, qw, sigma2, f.fallback, r.w);
    float xval[QK], scales[QK / 16];
    float max_scale = 0;
    const int nsub = QK / f.sub, per_sub = f.sub / g.dim;
    for (int i = 0; i < QK / 8; ++i) r.signs[i] = fold_signs(x + 8 * i, r.w + 8 * i, f.even_signs, xval + 8 * i);
    for (int s = 0; s < nsub; ++s) {
        scales[s] = fit_block(g, f.fit, xval + f.sub * s, r.w + f.sub * s, f.sub, r.idx + per_sub * s);
        max_scale = std::fmax(max_scale, scales[s]);
    }
    if (!(max_scale > 0)) return false;
    const float d0 = max_scale / 31;
    for (int s = 0; s < nsub; ++s) r.ls[s] = sub_scale(scales[s], d0, 15);
    return true;
}

// Packs r with d = 1, fits d, stores it; all-zero blocks are all zero.
template <typename Block, typename Pack> void finish(Block & y, const float * x, const Fit * r, Pack pack) {
    std::memset(&y, 0, sizeof(y));
    if (!r) return;
    pack(y, *r);
    y.d = f32_to_half(1.0f);
    y.d = f32_to_half(fit_super_scale(y, x, r->w));
}

template <typename Block, typename Pack>
size_t rows(const Format & f, const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix,
            Pack pack) {
    const GridMap * g = grid_map(f.grid);
    if (!g) return 0;
    return quantize_rows_with<Block>(src, dst, nrow, n_per_row, imatrix,
                                     [&](const float * x, const float * qw, Block & y) {
                                         Fit r;
                                         finish(y, x, search(f, *g, x, qw, r) ? &r : nullptr, pack);
                                     });
}

bool need_imatrix(const float * imatrix, const char * name) {
    if (imatrix) return true;
    LM_GGML_LOG_ERROR("quantize_%s: imatrix: %s needs an importance matrix\n", name, name);
    return false;
}

// ---------------------------------------------------------------- packers
void pack_iq2_xxs(lm_block_iq2_xxs & y, const Fit & r) {
    auto * q = reinterpret_cast<uint8_t *>(y.qs);
    for (int ib = 0; ib < QK / 32; ++ib) {
        uint32_t aux = (uint32_t) r.ls[ib] << 28;
        for (int l = 0; l < 4; ++l) {
            q[8 * ib + l] = (uint8_t) r.idx[4 * ib + l];
            aux |= (uint32_t) (r.signs[4 * ib + l] & 127) << (7 * l);
        }
        std::memcpy(q + 8 * ib + 4, &aux, sizeof(aux));
    }
}

void pack_iq2_xs(lm_block_iq2_xs & y, const Fit & r) {
    for (int k = 0; k < QK / 8; ++k) y.qs[k] = (uint16_t) (r.idx[k] | ((r.signs[k] & 127) << 9));
    for (int j = 0; j < QK / 32; ++j) y.scales[j] = (uint8_t) (r.ls[2 * j] | (r.ls[2 * j + 1] << 4));
}

void pack_iq2_s(lm_block_iq2_s & y, const Fit & r) {
    for (int k = 0; k < QK / 8; ++k) {
        y.qs[k] = (uint8_t) (r.idx[k] & 255);
        y.qh[k / 4] |= (uint8_t) ((r.idx[k] >> 8) << (2 * (k % 4)));
        y.qs[QK / 8 + k] = r.signs[k];
    }
    for (int j = 0; j < QK / 32; ++j) y.scales[j] = (uint8_t) (r.ls[2 * j] | (r.ls[2 * j + 1] << 4));
}

void pack_iq3_xxs(lm_block_iq3_xxs & y, const Fit & r) {
    for (int k = 0; k < QK / 4; ++k) y.qs[k] = (uint8_t) r.idx[k];
    for (int ib = 0; ib < QK / 32; ++ib) {
        uint32_t aux = (uint32_t) r.ls[ib] << 28;
        for (int l = 0; l < 4; ++l) aux |= (uint32_t) (r.signs[4 * ib + l] & 127) << (7 * l);
        std::memcpy(y.qs + QK / 4 + 4 * ib, &aux, sizeof(aux));
    }
}

void pack_iq3_s(lm_block_iq3_s & y, const Fit & r) {
    for (int k = 0; k < QK / 4; ++k) {
        y.qs[k] = (uint8_t) (r.idx[k] & 255);
        y.qh[k / 8] |= (uint8_t) ((r.idx[k] >> 8) << (k % 8));
    }
    std::memcpy(y.signs, r.signs, sizeof(y.signs));
    for (int j = 0; j < QK / 64; ++j) y.scales[j] = (uint8_t) (r.ls[2 * j] | (r.ls[2 * j + 1] << 4));
}

} // namespace

size_t lm_quant_rows_iq2_xxs(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    if (!need_imatrix(imatrix, "iq2_xxs")) return 0;
    return rows<lm_block_iq2_xxs>(kIq2xxs, src, dst, nrow, n_per_row, imatrix, pack_iq2_xxs);
}
size_t lm_quant_rows_iq2_xs(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    if (!need_imatrix(imatrix, "iq2_xs")) return 0;
    return rows<lm_block_iq2_xs>(kIq2xs, src, dst, nrow, n_per_row, imatrix, pack_iq2_xs);
}
size_t lm_quant_rows_iq2_s(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    return rows<lm_block_iq2_s>(kIq2s, src, dst, nrow, n_per_row, imatrix, pack_iq2_s);
}
size_t lm_quant_rows_iq3_xxs(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    return rows<lm_block_iq3_xxs>(kIq3xxs, src, dst, nrow, n_per_row, imatrix, pack_iq3_xxs);
}
size_t lm_quant_rows_iq3_s(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    return rows<lm_block_iq3_s>(kIq3s, src, dst, nrow, n_per_row, imatrix, pack_iq3_s);
}

void lm_quant_quantize_row_iq2_s_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) {
    lm_quant_rows_iq2_s(x, y, 1, k, nullptr);
}
void lm_quant_quantize_row_iq3_xxs_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) {
    lm_quant_rows_iq3_xxs(x, y, 1, k, nullptr);
}
void lm_quant_quantize_row_iq3_s_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) {
    lm_quant_rows_iq3_s(x, y, 1, k, nullptr);
}

// q4_K and q5_K: 256-value super-blocks of eight 32-value groups, each with a
// 6-bit scale and a 6-bit min. Bit-exact with ggml v1.4.1's reference and
// importance-weighted quantizers.
#include "q_search.h"
#include "q_unpack.h"

#include <algorithm>
#include <cstring>

using namespace lm_quant;

namespace {

constexpr int QK = LM_QK_K;
constexpr int NG = QK / 32; // groups per super-block

inline int clamp_int(int v, int lo, int hi) { return std::min(hi, std::max(lo, v)); }

// What q4_K and q5_K share: the header (d, dmin, scales) and the search.
struct KHeader {
    lm_half * d;
    lm_half * dmin;
    uint8_t * scales; // [12]
};

// Reference path: per-group search with weights av_x + |x|, then the group
// scales and mins are quantized linearly to 6 bits against their maxima.
void ref_scales(const float * x, int nmax, float rmin, float rdelta, int nstep, uint8_t * L, KHeader h) {
    uint8_t Laux[32];
    float weights[32], mins[NG], scales[NG];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < NG; ++j) {
        const float * xg = x + 32 * j;
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 += xg[l] * xg[l];
        const float av_x = std::sqrt(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xg[l]);
        scales[j] = make_qkx2_quants(32, nmax, xg, weights, L + 32 * j, &mins[j], Laux, rmin, rdelta, nstep, false);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    uint8_t ls[NG], lm[NG];
    for (int j = 0; j < NG; ++j) {
        ls[j] = std::min<uint8_t>(63, (uint8_t) nearest_int(inv_scale * scales[j]));
        lm[j] = std::min<uint8_t>(63, (uint8_t) nearest_int(inv_min * mins[j]));
    }
    pack_scale_min_k4(ls, lm, h.scales);
    *h.d = f32_to_half(max_scale / 63.f);
    *h.dmin = f32_to_half(max_min / 63.f);
}

// Importance path: weighted search per group, then the scales and mins are
// themselves fitted with make_qp_quants (weights: the groups' weight sums).
// cap63: q5_K caps the fitted levels at 63 before packing, q4_K does not.
void imatrix_scales(const float * x, const float * qw_block, int nmax, bool cap63, uint8_t * L, KHeader h) {
    uint8_t Laux[32], Ls[NG], Lm[NG];
    float weights[32], sw[NG], mins[NG], scales[NG];
    float sum_x2 = 0;
    for (int l = 0; l < QK; ++l) sum_x2 += x[l] * x[l];
    const float sigma2 = 2 * sum_x2 / QK;
    const float av_x = std::sqrt(sigma2);
    for (int j = 0; j < NG; ++j) {
        const float * xg = x + 32 * j;
        if (qw_block) {
            const float * qw = qw_block + 32 * j;
            for (int l = 0; l < 32; ++l) weights[l] = qw[l] * std::sqrt(sigma2 + xg[l] * xg[l]);
        } else {
            for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xg[l]);
        }
        float sumw = 0;
        for (int l = 0; l < 32; ++l) sumw += weights[l];
        sw[j] = sumw;
        scales[j] = make_qkx3_quants(32, nmax, xg, weights, L + 32 * j, &mins[j], Laux, -0.9f, 0.05f, 36, false);
    }
    const float d_block = make_qp_quants(NG, 63, scales, Ls, sw);
    const float m_block = make_qp_quants(NG, 63, mins, Lm, sw);
    if (cap63) {
        for (int j = 0; j < NG; ++j) {
            Ls[j] = std::min<uint8_t>(63, Ls[j]);
            Lm[j] = std::min<uint8_t>(63, Lm[j]);
        }
    }
    pack_scale_min_k4(Ls, Lm, h.scales);
    *h.d = f32_to_half(d_block);
    *h.dmin = f32_to_half(m_block);
}

// Final levels 0..nmax from the stored scales; groups with a zero scale keep
// the levels of the search.
void requantize(const float * x, int nmax, uint8_t * L, KHeader h) {
    const float d_all = half_to_f32(*h.d), m_all = half_to_f32(*h.dmin);
    for (int j = 0; j < NG; ++j) {
        uint8_t sc, m;
        get_scale_min_k4(j, h.scales, &sc, &m);
        const float d = d_all * (float) sc;
        if (!d) continue;
        const float dm = m_all * (float) m;
        for (int ii = 0; ii < 32; ++ii) {
            L[32 * j + ii] = (uint8_t) clamp_int(nearest_int((x[32 * j + ii] + dm) / d), 0, nmax);
        }
    }
}

// 4 low bits: values 64c..64c+31 -> low nibbles of qs[32c..], the next 32 -> high nibbles
void pack_low_nibbles(const uint8_t * L, uint8_t * qs) {
    for (int c = 0; c < QK / 64; ++c) {
        for (int l = 0; l < 32; ++l) {
            qs[32 * c + l] = (uint8_t) ((L[64 * c + l] & 0xF) | ((L[64 * c + l + 32] & 0xF) << 4));
        }
    }
}

// 5th bits: value e -> bit e/32 of qh[e % 32]
void pack_q5_high_bits(const uint8_t * L, uint8_t * qh) {
    std::memset(qh, 0, QK / 8);
    for (int e = 0; e < QK; ++e) {
        if (L[e] > 15) qh[e % 32] |= (uint8_t) (1u << (e / 32));
    }
}

void finish_q4_K(const float * x, uint8_t * L, lm_block_q4_K & y) {
    requantize(x, 15, L, {&y.d, &y.dmin, y.scales});
    pack_low_nibbles(L, y.qs);
}

void finish_q5_K(const float * x, uint8_t * L, lm_block_q5_K & y) {
    requantize(x, 31, L, {&y.d, &y.dmin, y.scales});
    pack_q5_high_bits(L, y.qh);
    pack_low_nibbles(L, y.qs);
}

template <typename Block, typename RowFn>
size_t quantize_rows(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix,
                     lm_ggml_from_float_t ref, RowFn one_row) {
    const size_t row_size = sizeof(Block) * (size_t) (n_per_row / QK);
    if (!imatrix) {
        ref(src, dst, nrow * n_per_row);
    } else {
        char * out = static_cast<char *>(dst);
        for (int64_t r = 0; r < nrow; ++r) {
            one_row(src + r * n_per_row, reinterpret_cast<Block *>(out + r * row_size), n_per_row, imatrix);
        }
    }
    return (size_t) nrow * row_size;
}

// dequantize: value = d * sc * q - dmin * m, per 32-value group
template <typename Block, typename Unpack> void dequantize_k(const Block * x, float * y, int64_t k, Unpack unpack) {
    uint8_t q[QK];
    for (int64_t i = 0; i < k / QK; ++i, y += QK) {
        const float d = half_to_f32(x[i].d), min = half_to_f32(x[i].dmin);
        unpack(x[i], q);
        for (int j = 0; j < NG; ++j) {
            uint8_t sc, m;
            get_scale_min_k4(j, x[i].scales, &sc, &m);
            const float d1 = d * (float) sc, m1 = min * (float) m;
            for (int l = 0; l < 32; ++l) y[32 * j + l] = d1 * (float) q[32 * j + l] - m1;
        }
    }
}

} // namespace

// ---------------------------------------------------------------- q4_K
void lm_quant_quantize_row_q4_K_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_q4_K *>(vy);
    uint8_t L[QK];
    for (int64_t i = 0; i < k / QK; ++i, x += QK) {
        ref_scales(x, 15, -1.f, 0.1f, 20, L, {&y[i].d, &y[i].dmin, y[i].scales});
        finish_q4_K(x, L, y[i]);
    }
}

void lm_quant_dequantize_row_q4_K(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    dequantize_k(static_cast<const lm_block_q4_K *>(vx), y, k,
                 [](const lm_block_q4_K & b, uint8_t * q) { unpack_q4_K(b, q); });
}

size_t lm_quant_rows_q4_K(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<lm_block_q4_K>(
        src, dst, nrow, n_per_row, imatrix, lm_quant_quantize_row_q4_K_ref,
        [](const float * x, lm_block_q4_K * y, int64_t n, const float * qw) {
            uint8_t L[QK];
            for (int64_t i = 0; i < n / QK; ++i, x += QK) {
                imatrix_scales(x, qw + QK * i, 15, false, L, {&y[i].d, &y[i].dmin, y[i].scales});
                finish_q4_K(x, L, y[i]);
            }
        });
}

// ---------------------------------------------------------------- q5_K
void lm_quant_quantize_row_q5_K_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_q5_K *>(vy);
    uint8_t L[QK];
    for (int64_t i = 0; i < k / QK; ++i, x += QK) {
        ref_scales(x, 31, -0.5f, 0.1f, 15, L, {&y[i].d, &y[i].dmin, y[i].scales});
        finish_q5_K(x, L, y[i]);
    }
}

void lm_quant_dequantize_row_q5_K(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    dequantize_k(static_cast<const lm_block_q5_K *>(vx), y, k,
                 [](const lm_block_q5_K & b, uint8_t * q) { unpack_q5_K(b, q); });
}

size_t lm_quant_rows_q5_K(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<lm_block_q5_K>(
        src, dst, nrow, n_per_row, imatrix, lm_quant_quantize_row_q5_K_ref,
        [](const float * x, lm_block_q5_K * y, int64_t n, const float * qw) {
            uint8_t L[QK];
            for (int64_t i = 0; i < n / QK; ++i, x += QK) {
                imatrix_scales(x, qw + QK * i, 31, true, L, {&y[i].d, &y[i].dmin, y[i].scales});
                finish_q5_K(x, L, y[i]);
            }
        });
}

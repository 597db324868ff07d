// q2_K and q3_K: 256-value super-blocks of sixteen 16-value groups.
// Bit-exact with ggml v1.4.1's reference and importance-weighted quantizers.
#include "q_search.h"
#include "q_unpack.h"

#include <algorithm>
#include <cstring>

using namespace lm_quant;

namespace {

constexpr int QK = LM_QK_K;
constexpr int NG = QK / 16; // groups per super-block

inline int clamp_int(int v, int lo, int hi) { return std::min(hi, std::max(lo, v)); }

// Final q2_K levels from the stored (fp16) scales; groups whose scale is zero
// keep the levels of the search.
void q2_K_requantize(const float * x, const lm_block_q2_K & y, uint8_t * L) {
    const float d_all = half_to_f32(y.d), m_all = half_to_f32(y.dmin);
    for (int j = 0; j < NG; ++j) {
        const float d = d_all * (float) (y.scales[j] & 0xF);
        if (!d) continue;
        const float dm = m_all * (float) (y.scales[j] >> 4);
        for (int ii = 0; ii < 16; ++ii) {
            L[16 * j + ii] = (uint8_t) clamp_int(nearest_int((x[16 * j + ii] + dm) / d), 0, 3);
        }
    }
}

// q3_K: 16 levels l6[j] in 0..63 -> 12 bytes (low nibbles in 0..7, high pairs in 8..11)
void q3_K_pack_scales(const int * l6, uint8_t * scales) {
    std::memset(scales, 0, 12);
    for (int j = 0; j < NG; ++j) {
        const int l = l6[j];
        if (j < 8) {
            scales[j] = (uint8_t) (l & 0xF);
        } else {
            scales[j - 8] |= (uint8_t) ((l & 0xF) << 4);
        }
        scales[j % 4 + 8] |= (uint8_t) ((l >> 4) << (2 * (j / 4)));
    }
}

// Final q3_K levels (stored shifted: 0..7) from the stored scales, then the
// high bit of each level goes to hmask (bit e/32 of byte e%32) and the low
// two bits to qs.
void q3_K_requantize_and_pack(const float * x, lm_block_q3_K & y, int8_t * L) {
    const float d_all = half_to_f32(y.d);
    for (int j = 0; j < NG; ++j) {
        const float d = d_all * (float) q3_K_scale(y.scales, j);
        if (!d) continue;
        for (int ii = 0; ii < 16; ++ii) {
            L[16 * j + ii] = (int8_t) (clamp_int(nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
        }
    }
    std::memset(y.hmask, 0, sizeof(y.hmask));
    uint8_t low[QK];
    for (int e = 0; e < QK; ++e) {
        int l = L[e];
        if (l > 3) {
            y.hmask[e % 32] |= (uint8_t) (1u << (e / 32));
            l -= 4;
        }
        low[e] = (uint8_t) l;
    }
    pack_2bit_256(low, y.qs);
}

void q2_K_row_imatrix(const float * x, lm_block_q2_K * y, int64_t n_per_row, const float * quant_weights) {
    uint8_t L[QK], Laux[16], Ls[NG], Lm[NG];
    float mins[NG], scales[NG], sw[NG], weight[16];
    for (int64_t i = 0; i < n_per_row / QK; ++i, x += QK) {
        std::memset(sw, 0, sizeof(sw));
        float sumx2 = 0;
        for (int j = 0; j < QK; ++j) sumx2 += x[j] * x[j];
        const float sigma2 = sumx2 / QK;
        for (int j = 0; j < NG; ++j) {
            const float * qw = quant_weights + QK * i + 16 * j;
            for (int l = 0; l < 16; ++l) weight[l] = qw[l] * std::sqrt(sigma2 + x[16 * j + l] * x[16 * j + l]);
            for (int l = 0; l < 16; ++l) sw[j] += weight[l];
            scales[j] =
                make_qkx3_quants(16, 3, x + 16 * j, weight, L + 16 * j, &mins[j], Laux, -0.9f, 0.05f, 36, false);
        }
        const float dm = make_qp_quants(NG, 15, scales, Ls, sw);
        const float mm = make_qp_quants(NG, 15, mins, Lm, sw);
        y[i].d = f32_to_half(dm);
        y[i].dmin = f32_to_half(mm);
        for (int j = 0; j < NG; ++j) y[i].scales[j] = (uint8_t) (Ls[j] | (Lm[j] << 4));
        q2_K_requantize(x, y[i], L);
        pack_2bit_256(L, y[i].qs);
    }
}

void q3_K_row_imatrix(const float * x, lm_block_q3_K * y, int64_t n_per_row, const float * quant_weights) {
    int8_t L[QK], Ls[NG];
    float scales[NG], weight[16], sw[NG];
    for (int64_t i = 0; i < n_per_row / QK; ++i, x += QK) {
        float sumx2 = 0;
        for (int j = 0; j < QK; ++j) sumx2 += x[j] * x[j];
        const float sigma2 = 2 * sumx2 / QK;
        for (int j = 0; j < NG; ++j) {
            const float * xg = x + 16 * j;
            if (quant_weights) {
                const float * qw = quant_weights + QK * i + 16 * j;
                for (int l = 0; l < 16; ++l) weight[l] = qw[l] * std::sqrt(sigma2 + xg[l] * xg[l]);
            } else {
                for (int l = 0; l < 16; ++l) weight[l] = xg[l] * xg[l];
            }
            float sumw = 0;
            for (int l = 0; l < 16; ++l) sumw += weight[l];
            sw[j] = sumw;
            scales[j] = make_qx_quants(16, 4, xg, L + 16 * j, 1, weight);
        }
        const float d_block = make_qx_quants(NG, 32, scales, Ls, 1, sw);
        int l6[NG];
        for (int j = 0; j < NG; ++j) l6[j] = Ls[j];
        q3_K_pack_scales(l6, y[i].scales);
        y[i].d = f32_to_half(d_block);
        q3_K_requantize_and_pack(x, y[i], L);
    }
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

} // namespace

// ---------------------------------------------------------------- q2_K
void lm_quant_quantize_row_q2_K_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_q2_K *>(vy);
    uint8_t L[QK], Laux[16];
    float weights[16], mins[NG], scales[NG];
    const float q4scale = 15.f;
    for (int64_t i = 0; i < k / QK; ++i, x += QK) {
        float max_scale = 0, max_min = 0; // mins are subtracted, so both are >= 0
        for (int j = 0; j < NG; ++j) {
            for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
            scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0) {
            const float iscale = q4scale / max_scale;
            for (int j = 0; j < NG; ++j) y[i].scales[j] = (uint8_t) nearest_int(iscale * scales[j]);
            y[i].d = f32_to_half(max_scale / q4scale);
        } else {
            std::memset(y[i].scales, 0, sizeof(y[i].scales));
            y[i].d = f32_to_half(0.f);
        }
        if (max_min > 0) {
            const float iscale = q4scale / max_min;
            for (int j = 0; j < NG; ++j) y[i].scales[j] |= (uint8_t) (nearest_int(iscale * mins[j]) << 4);
            y[i].dmin = f32_to_half(max_min / q4scale);
        } else {
            y[i].dmin = f32_to_half(0.f);
        }
        q2_K_requantize(x, y[i], L);
        pack_2bit_256(L, y[i].qs);
    }
}

void lm_quant_dequantize_row_q2_K(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_q2_K *>(vx);
    uint8_t q[QK];
    for (int64_t i = 0; i < k / QK; ++i, y += QK) {
        const float d = half_to_f32(x[i].d), min = half_to_f32(x[i].dmin);
        unpack_q2_K(x[i], q);
        for (int j = 0; j < NG; ++j) {
            const float dl = d * (float) (x[i].scales[j] & 0xF);
            const float ml = min * (float) (x[i].scales[j] >> 4);
            for (int l = 0; l < 16; ++l) y[16 * j + l] = dl * (float) q[16 * j + l] - ml;
        }
    }
}

size_t lm_quant_rows_q2_K(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<lm_block_q2_K>(src, dst, nrow, n_per_row, imatrix, lm_quant_quantize_row_q2_K_ref,
                                        q2_K_row_imatrix);
}

// ---------------------------------------------------------------- q3_K
void lm_quant_quantize_row_q3_K_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_q3_K *>(vy);
    int8_t L[QK];
    float scales[NG];
    for (int64_t i = 0; i < k / QK; ++i, x += QK) {
        float max_scale = 0, amax = 0; // the signed scale of largest magnitude
        for (int j = 0; j < NG; ++j) {
            scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j, true);
            const float a = std::fabs(scales[j]);
            if (a > amax) {
                amax = a;
                max_scale = scales[j];
            }
        }
        if (max_scale) {
            const float iscale = -32.f / max_scale;
            int l6[NG];
            for (int j = 0; j < NG; ++j) {
                const int l = (int8_t) nearest_int(iscale * scales[j]); // ggml keeps it in an int8 first
                l6[j] = clamp_int(l, -32, 31) + 32;
            }
            q3_K_pack_scales(l6, y[i].scales);
            y[i].d = f32_to_half(1 / iscale);
        } else {
            std::memset(y[i].scales, 0, sizeof(y[i].scales));
            y[i].d = f32_to_half(0.f);
        }
        q3_K_requantize_and_pack(x, y[i], L);
    }
}

void lm_quant_dequantize_row_q3_K(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_q3_K *>(vx);
    int8_t q[QK];
    int sc[NG];
    for (int64_t i = 0; i < k / QK; ++i, y += QK) {
        const float d_all = half_to_f32(x[i].d);
        unpack_q3_K(x[i], q, sc);
        for (int j = 0; j < NG; ++j) {
            const float dl = d_all * (float) sc[j];
            for (int l = 0; l < 16; ++l) y[16 * j + l] = dl * (float) q[16 * j + l];
        }
    }
}

size_t lm_quant_rows_q3_K(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<lm_block_q3_K>(src, dst, nrow, n_per_row, imatrix, lm_quant_quantize_row_q3_K_ref,
                                        q3_K_row_imatrix);
}

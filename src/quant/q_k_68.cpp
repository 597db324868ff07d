// q6_K (weights: sixteen 16-value groups, 8-bit group scales) and q8_K (the
// activation format the K-quant dot products use). Bit-exact with ggml v1.4.1.
#include "q_search.h"
#include "q_unpack.h"

#include <algorithm>
#include <cstring>
#include <limits>

using namespace lm_quant;

namespace {

constexpr int QK = LM_QK_K;
constexpr int NG = QK / 16;

inline int clamp_int(int v, int lo, int hi) { return std::min(hi, std::max(lo, v)); }

// levels L (0..63) of value e: low 4 bits to ql, high 2 bits to qh (see unpack_q6_K)
void pack_q6_K(const int8_t * L, lm_block_q6_K & y) {
    for (int c = 0; c < 2; ++c) {
        const int8_t * Lc = L + 128 * c;
        uint8_t * ql = y.ql + 64 * c;
        uint8_t * qh = y.qh + 32 * c;
        for (int l = 0; l < 32; ++l) {
            ql[l] = (uint8_t) ((Lc[l] & 0xF) | ((Lc[l + 64] & 0xF) << 4));
            ql[l + 32] = (uint8_t) ((Lc[l + 32] & 0xF) | ((Lc[l + 96] & 0xF) << 4));
            qh[l] = (uint8_t) ((Lc[l] >> 4) | ((Lc[l + 32] >> 4) << 2) | ((Lc[l + 64] >> 4) << 4) |
                               ((Lc[l + 96] >> 4) << 6));
        }
    }
}

// One super-block; qw: 256 importance weights or NULL (weights x^2).
void quantize_block_q6_K(const float * x, const float * qw, lm_block_q6_K & y) {
    int8_t L[QK];
    float scales[NG];
    float max_scale = 0, max_abs_scale = 0; // the signed group scale of largest magnitude
    for (int ib = 0; ib < NG; ++ib) {
        scales[ib] = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, 1, qw ? qw + 16 * ib : nullptr);
        const float a = std::fabs(scales[ib]);
        if (a > max_abs_scale) {
            max_abs_scale = a;
            max_scale = scales[ib];
        }
    }
    if (max_abs_scale < kGroupMaxEps) { // an all-zero block is all zero bytes
        std::memset(&y, 0, sizeof(y));
        return;
    }
    const float iscale = -128.f / max_scale;
    y.d = f32_to_half(1 / iscale);
    for (int ib = 0; ib < NG; ++ib) y.scales[ib] = (int8_t) std::min(127, nearest_int(iscale * scales[ib]));

    const float d_all = half_to_f32(y.d);
    for (int j = 0; j < NG; ++j) {
        const float d = d_all * (float) y.scales[j];
        if (!d) continue;
        for (int ii = 0; ii < 16; ++ii) {
            L[16 * j + ii] = (int8_t) (clamp_int(nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
        }
    }
    pack_q6_K(L, y);
}

} // namespace

// ---------------------------------------------------------------- q6_K
void lm_quant_quantize_row_q6_K_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_q6_K *>(vy);
    for (int64_t i = 0; i < k / QK; ++i) quantize_block_q6_K(x + i * QK, nullptr, y[i]);
}

void lm_quant_dequantize_row_q6_K(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_q6_K *>(vx);
    int8_t q[QK];
    for (int64_t i = 0; i < k / QK; ++i, y += QK) {
        const float d = half_to_f32(x[i].d);
        unpack_q6_K(x[i], q);
        for (int j = 0; j < NG; ++j) {
            const float dl = d * (float) x[i].scales[j];
            for (int l = 0; l < 16; ++l) y[16 * j + l] = dl * (float) q[16 * j + l];
        }
    }
}

// q6_K uses the imatrix directly as the group weights (no sigma term).
size_t lm_quant_rows_q6_K(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    const size_t row_size = sizeof(lm_block_q6_K) * (size_t) (n_per_row / QK);
    if (!imatrix) {
        lm_quant_quantize_row_q6_K_ref(src, dst, nrow * n_per_row);
        return (size_t) nrow * row_size;
    }
    for (int64_t r = 0; r < nrow; ++r) {
        auto * y = reinterpret_cast<lm_block_q6_K *>(static_cast<char *>(dst) + r * row_size);
        const float * x = src + r * n_per_row;
        for (int64_t i = 0; i < n_per_row / QK; ++i) quantize_block_q6_K(x + i * QK, imatrix + i * QK, y[i]);
    }
    return (size_t) nrow * row_size;
}

// ---------------------------------------------------------------- q8_K
void lm_quant_quantize_row_q8_K_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_q8_K *>(vy);
    for (int64_t i = 0; i < k / QK; ++i, x += QK) {
        float max = 0, amax = 0;
        bool has_nan = false;
        for (int j = 0; j < QK; ++j) {
            const float ax = std::fabs(x[j]);
            if (ax > amax) {
                amax = ax;
                max = x[j];
            }
            has_nan |= ax != ax;
        }
        if (has_nan) { // the scale carries it to every product (ggml's levels would be garbage)
            std::memset(&y[i], 0, sizeof(y[i]));
            y[i].d = std::numeric_limits<float>::quiet_NaN();
            continue;
        }
        if (!amax) {
            std::memset(&y[i], 0, sizeof(y[i])); // (ggml leaves bsums unset here; zero is their true value)
            continue;
        }
        // -127 (not -128) keeps every level in int8 range for both signs
        const float iscale = -127.f / max;
        for (int j = 0; j < QK; ++j) y[i].qs[j] = (int8_t) std::min(127, nearest_int(iscale * x[j]));
        for (int j = 0; j < NG; ++j) {
            int sum = 0;
            for (int ii = 0; ii < 16; ++ii) sum += y[i].qs[16 * j + ii];
            y[i].bsums[j] = (int16_t) sum;
        }
        y[i].d = 1 / iscale;
    }
}

void lm_quant_dequantize_row_q8_K(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_q8_K *>(vx);
    for (int64_t i = 0; i < k / QK; ++i, y += QK) {
        for (int j = 0; j < QK; ++j) y[j] = x[i].d * (float) x[i].qs[j];
    }
}

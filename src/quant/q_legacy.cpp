// The 32-value block formats: q4_0, q4_1, q5_0, q5_1, q8_0, q8_1.
// Reference quantizers are bit-exact with ggml v1.4.1 (and the gguf Python
// package): same extreme-value choice, same float ops, same truncations.
#include "q_search.h"

#include <algorithm>
#include <cfloat>
#include <cstring>

using namespace lm_quant;

namespace {

constexpr int QK = 32; // values per block for every format in this file

// q of value j goes to the low nibble of byte j, of value j+16 to the high nibble
inline void pack_nibbles(const uint8_t * q, uint8_t * qs) {
    for (int j = 0; j < QK / 2; ++j) qs[j] = (uint8_t) ((q[j] & 0x0F) | ((q[j + QK / 2] & 0x0F) << 4));
}

// the 5th bit of each of the 32 levels, as a little-endian u32
inline void pack_high_bits(const uint8_t * q, uint8_t * qh) {
    uint32_t bits = 0;
    for (int j = 0; j < QK; ++j) bits |= (uint32_t) ((q[j] >> 4) & 1u) << j;
    for (int b = 0; b < 4; ++b) qh[b] = (uint8_t) (bits >> (8 * b));
}

inline uint32_t load_high_bits(const uint8_t * qh) {
    return (uint32_t) qh[0] | ((uint32_t) qh[1] << 8) | ((uint32_t) qh[2] << 16) | ((uint32_t) qh[3] << 24);
}

// level of value j (0..31) in a 4-bit block
inline int nibble(const uint8_t * qs, int j) { return j < QK / 2 ? (qs[j] & 0x0F) : (qs[j - QK / 2] >> 4); }

// symmetric formats: the signed value of largest magnitude (first on ties)
inline float signed_absmax(const float * x) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < QK; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

inline void minmax(const float * x, float * min, float * max) {
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int j = 0; j < QK; ++j) {
        if (x[j] < lo) lo = x[j];
        if (x[j] > hi) hi = x[j];
    }
    *min = lo;
    *max = hi;
}

// Symmetric b-bit levels: d = max / -2^(b-1), q = trunc(x/d + 2^(b-1) + 0.5) capped at 2^b - 1.
inline float quantize_symmetric(const float * x, int bits, uint8_t * q) {
    const int half = 1 << (bits - 1);
    const float d = signed_absmax(x) / (float) -half;
    const float id = d ? 1.0f / d : 0.0f;
    const float bias = (float) half + 0.5f;
    for (int j = 0; j < QK; ++j) q[j] = (uint8_t) std::min((1 << bits) - 1, trunc_int(x[j] * id + bias));
    return d;
}

// Asymmetric b-bit levels: d = (max - min) / (2^b - 1), q = trunc((x - min)/d + 0.5).
inline float quantize_asymmetric(const float * x, int bits, uint8_t * q, float * min_out) {
    float min, max;
    minmax(x, &min, &max);
    const float d = (max - min) / (float) ((1 << bits) - 1);
    const float id = d ? 1.0f / d : 0.0f;
    for (int j = 0; j < QK; ++j) q[j] = (uint8_t) std::min((1 << bits) - 1, trunc_int((x[j] - min) * id + 0.5f));
    *min_out = min;
    return d;
}

// d = amax / 127, q = roundf(x / d): shared by q8_0 and q8_1
inline float quantize_q8(const float * x, int8_t * q) {
    float amax = 0.0f;
    for (int j = 0; j < QK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d ? 1.0f / d : 0.0f;
    for (int j = 0; j < QK; ++j) q[j] = (int8_t) round_int(x[j] * id);
    return d;
}

// sigma^2 of a whole row, which scales the importance weights of its blocks
inline float row_sigma2(const float * x, int64_t n) {
    float sum_x2 = 0;
    for (int64_t j = 0; j < n; ++j) sum_x2 += x[j] * x[j];
    return sum_x2 / (float) n;
}

inline void importance(const float * xb, const float * qw, float sigma2, float * w) {
    for (int j = 0; j < QK; ++j) w[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
}

// Runs one_row over each row (imatrix path) or ref over everything at once.
template <typename Block, typename RowFn>
size_t quantize_rows(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix,
                     lm_ggml_from_float_t ref, RowFn one_row) {
    const size_t row_size = sizeof(Block) * (size_t) (n_per_row / QK);
    if (!imatrix) {
        ref(src, dst, nrow * n_per_row);
        return (size_t) nrow * row_size;
    }
    char * out = static_cast<char *>(dst);
    for (int64_t r = 0; r < nrow; ++r) {
        one_row(src + r * n_per_row, reinterpret_cast<Block *>(out + r * row_size), n_per_row, imatrix);
    }
    return (size_t) nrow * row_size;
}

} // namespace

// ---------------------------------------------------------------- reference quantizers
void lm_quant_quantize_row_q4_0_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_q4_0 *>(vy);
    uint8_t q[QK];
    for (int64_t i = 0; i < k / QK; ++i) {
        y[i].d = f32_to_half(quantize_symmetric(x + i * QK, 4, q));
        pack_nibbles(q, y[i].qs);
    }
}

void lm_quant_quantize_row_q4_1_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_q4_1 *>(vy);
    uint8_t q[QK];
    for (int64_t i = 0; i < k / QK; ++i) {
        float min;
        y[i].d = f32_to_half(quantize_asymmetric(x + i * QK, 4, q, &min));
        y[i].m = f32_to_half(min);
        pack_nibbles(q, y[i].qs);
    }
}

void lm_quant_quantize_row_q5_0_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_q5_0 *>(vy);
    uint8_t q[QK];
    for (int64_t i = 0; i < k / QK; ++i) {
        y[i].d = f32_to_half(quantize_symmetric(x + i * QK, 5, q));
        pack_high_bits(q, y[i].qh);
        pack_nibbles(q, y[i].qs);
    }
}

void lm_quant_quantize_row_q5_1_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_q5_1 *>(vy);
    uint8_t q[QK];
    for (int64_t i = 0; i < k / QK; ++i) {
        float min;
        y[i].d = f32_to_half(quantize_asymmetric(x + i * QK, 5, q, &min));
        y[i].m = f32_to_half(min);
        pack_high_bits(q, y[i].qh);
        pack_nibbles(q, y[i].qs);
    }
}

void lm_quant_quantize_row_q8_0_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_q8_0 *>(vy);
    for (int64_t i = 0; i < k / QK; ++i) {
        y[i].d = f32_to_half(quantize_q8(x + i * QK, y[i].qs));
    }
}

void lm_quant_quantize_row_q8_1_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_q8_1 *>(vy);
    for (int64_t i = 0; i < k / QK; ++i) {
        const float d = quantize_q8(x + i * QK, y[i].qs);
        int sum = 0;
        for (int j = 0; j < QK; ++j) sum += y[i].qs[j];
        y[i].d = f32_to_half(d);
        y[i].s = f32_to_half((float) sum * d);
    }
}

// ---------------------------------------------------------------- dequantizers
void lm_quant_dequantize_row_q4_0(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_q4_0 *>(vx);
    for (int64_t i = 0; i < k / QK; ++i, y += QK) {
        const float d = half_to_f32(x[i].d);
        for (int j = 0; j < QK; ++j) y[j] = (float) (nibble(x[i].qs, j) - 8) * d;
    }
}

void lm_quant_dequantize_row_q4_1(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_q4_1 *>(vx);
    for (int64_t i = 0; i < k / QK; ++i, y += QK) {
        const float d = half_to_f32(x[i].d), m = half_to_f32(x[i].m);
        for (int j = 0; j < QK; ++j) y[j] = (float) nibble(x[i].qs, j) * d + m;
    }
}

void lm_quant_dequantize_row_q5_0(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_q5_0 *>(vx);
    for (int64_t i = 0; i < k / QK; ++i, y += QK) {
        const float d = half_to_f32(x[i].d);
        const uint32_t qh = load_high_bits(x[i].qh);
        for (int j = 0; j < QK; ++j) {
            const int q = nibble(x[i].qs, j) | (int) (((qh >> j) & 1u) << 4);
            y[j] = (float) (q - 16) * d;
        }
    }
}

void lm_quant_dequantize_row_q5_1(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_q5_1 *>(vx);
    for (int64_t i = 0; i < k / QK; ++i, y += QK) {
        const float d = half_to_f32(x[i].d), m = half_to_f32(x[i].m);
        const uint32_t qh = load_high_bits(x[i].qh);
        for (int j = 0; j < QK; ++j) {
            const int q = nibble(x[i].qs, j) | (int) (((qh >> j) & 1u) << 4);
            y[j] = (float) q * d + m;
        }
    }
}

void lm_quant_dequantize_row_q8_0(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_q8_0 *>(vx);
    for (int64_t i = 0; i < k / QK; ++i, y += QK) {
        const float d = half_to_f32(x[i].d);
        for (int j = 0; j < QK; ++j) y[j] = (float) x[i].qs[j] * d;
    }
}

void lm_quant_dequantize_row_q8_1(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_q8_1 *>(vx);
    for (int64_t i = 0; i < k / QK; ++i, y += QK) {
        const float d = half_to_f32(x[i].d);
        for (int j = 0; j < QK; ++j) y[j] = (float) x[i].qs[j] * d;
    }
}

// ---------------------------------------------------------------- importance-weighted
// With an imatrix the block scale comes from a weighted least-squares search
// (weights: imatrix * sqrt(sigma^2 + x^2)) instead of the extreme value.
size_t lm_quant_rows_q4_0(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<lm_block_q4_0>(src, dst, nrow, n_per_row, imatrix, lm_quant_quantize_row_q4_0_ref,
                                        [](const float * x, lm_block_q4_0 * y, int64_t n, const float * qw) {
                                            const float sigma2 = row_sigma2(x, n);
                                            float w[QK];
                                            int8_t L[QK];
                                            for (int64_t ib = 0; ib < n / QK; ++ib) {
                                                importance(x + ib * QK, qw + ib * QK, sigma2, w);
                                                y[ib].d = f32_to_half(make_qx_quants(QK, 8, x + ib * QK, L, 1, w));
                                                pack_nibbles(reinterpret_cast<const uint8_t *>(L), y[ib].qs);
                                            }
                                        });
}

size_t lm_quant_rows_q4_1(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<lm_block_q4_1>(src, dst, nrow, n_per_row, imatrix, lm_quant_quantize_row_q4_1_ref,
                                        [](const float * x, lm_block_q4_1 * y, int64_t n, const float * qw) {
                                            const float sigma2 = row_sigma2(x, n);
                                            float w[QK];
                                            uint8_t L[QK], Laux[QK];
                                            for (int64_t ib = 0; ib < n / QK; ++ib) {
                                                importance(x + ib * QK, qw + ib * QK, sigma2, w);
                                                float min;
                                                const float d = make_qkx3_quants(QK, 15, x + ib * QK, w, L, &min, Laux,
                                                                                 -0.9f, 0.05f, 36, false);
                                                y[ib].d = f32_to_half(d);
                                                y[ib].m = f32_to_half(-min);
                                                pack_nibbles(L, y[ib].qs);
                                            }
                                        });
}

size_t lm_quant_rows_q5_0(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<lm_block_q5_0>(src, dst, nrow, n_per_row, imatrix, lm_quant_quantize_row_q5_0_ref,
                                        [](const float * x, lm_block_q5_0 * y, int64_t n, const float * qw) {
                                            const float sigma2 = row_sigma2(x, n);
                                            float w[QK];
                                            int8_t L[QK];
                                            for (int64_t ib = 0; ib < n / QK; ++ib) {
                                                importance(x + ib * QK, qw + ib * QK, sigma2, w);
                                                y[ib].d = f32_to_half(make_qx_quants(QK, 16, x + ib * QK, L, 1, w));
                                                const auto * q = reinterpret_cast<const uint8_t *>(L);
                                                pack_high_bits(q, y[ib].qh);
                                                pack_nibbles(q, y[ib].qs);
                                            }
                                        });
}

size_t lm_quant_rows_q5_1(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<lm_block_q5_1>(src, dst, nrow, n_per_row, imatrix, lm_quant_quantize_row_q5_1_ref,
                                        [](const float * x, lm_block_q5_1 * y, int64_t n, const float * qw) {
                                            const float sigma2 = row_sigma2(x, n);
                                            float w[QK];
                                            uint8_t L[QK], Laux[QK];
                                            for (int64_t ib = 0; ib < n / QK; ++ib) {
                                                importance(x + ib * QK, qw + ib * QK, sigma2, w);
                                                float min;
                                                const float d = make_qkx3_quants(QK, 31, x + ib * QK, w, L, &min, Laux,
                                                                                 -0.9f, 0.05f, 36, false);
                                                y[ib].d = f32_to_half(d);
                                                y[ib].m = f32_to_half(-min);
                                                pack_high_bits(L, y[ib].qh);
                                                pack_nibbles(L, y[ib].qs);
                                            }
                                        });
}

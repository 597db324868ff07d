// Ternary formats for BitNet b1.58 / TriLM weights: every value is
// d * t with t in {-1, 0, 1} and d the absolute maximum of its 256 values.
//   TQ2_0: t + 1 in 2 bits; byte 32*c + m holds values 128*c + m + 32*s at bits 2*s.
//   TQ1_0: 5 trits per byte as a base-3 fraction rounded up to 8 bits (so a
//          multiply by 3 recovers the leading trit): bytes 0..31 hold values
//          m + 32*n (n = 0..4, the first the most significant), bytes 32..47
//          values 160 + m + 16*n; qh[0..3] holds 4 trits of values
//          240 + j + 4*n, shifted up one trit.
// Quantization is exact for ternary input and is the same with or without an
// imatrix (as in ggml).
#include "q_iq4_tq.h"
#include "q_search.h"

using namespace lm_quant;

namespace {

// d = max |x|; returns 1/d (0 for an all-zero block).
float block_scale(const float * x, lm_half * d) {
    float amax = 0;
    for (int j = 0; j < LM_QK_K; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    *d = f32_to_half(amax);
    return amax ? 1.0f / amax : 0.0f;
}

// t + 1 for the value x / d, in {0, 1, 2}
inline int trit(float v) {
    const int t = round_int(v) + 1; // C lroundf: half away from zero
    return t < 0 ? 0 : (t > 2 ? 2 : t);
}

// n trits (most significant first) as a base-3 fraction of 5 digits, rounded up to 8 bits
inline uint8_t pack_trits(const int * t, int n) {
    int q = 0;
    for (int i = 0; i < n; ++i) q = q * 3 + t[i];
    for (int i = n; i < 5; ++i) q *= 3;
    return (uint8_t) ((q * 256 + 242) / 243);
}

} // namespace

void lm_quant_quantize_row_tq1_0_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_tq1_0 *>(vy);
    for (int64_t i = 0; i < k / LM_QK_K; ++i, x += LM_QK_K) {
        const float id = block_scale(x, &y[i].d);
        int t[5];
        for (int m = 0; m < 32; ++m) {
            for (int n = 0; n < 5; ++n) t[n] = trit(x[m + 32 * n] * id);
            y[i].qs[m] = pack_trits(t, 5);
        }
        for (int m = 0; m < 16; ++m) {
            for (int n = 0; n < 5; ++n) t[n] = trit(x[160 + m + 16 * n] * id);
            y[i].qs[32 + m] = pack_trits(t, 5);
        }
        for (int j = 0; j < 4; ++j) {
            for (int n = 0; n < 4; ++n) t[n] = trit(x[240 + j + 4 * n] * id);
            y[i].qh[j] = pack_trits(t, 4);
        }
    }
}

void lm_quant_quantize_row_tq2_0_ref(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT vy, int64_t k) {
    auto * y = static_cast<lm_block_tq2_0 *>(vy);
    for (int64_t i = 0; i < k / LM_QK_K; ++i, x += LM_QK_K) {
        const float id = block_scale(x, &y[i].d);
        for (int c = 0; c < 2; ++c) {
            for (int m = 0; m < 32; ++m) {
                int q = 0;
                for (int s = 0; s < 4; ++s) q |= trit(x[128 * c + m + 32 * s] * id) << (2 * s);
                y[i].qs[32 * c + m] = (uint8_t) q;
            }
        }
    }
}

void lm_quant_dequantize_row_tq1_0(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_tq1_0 *>(vx);
    for (int64_t i = 0; i < k / LM_QK_K; ++i, y += LM_QK_K) {
        const float d = half_to_f32(x[i].d);
        for (int n = 0; n < 5; ++n) {
            for (int m = 0; m < 32; ++m) y[m + 32 * n] = (float) (lm_quant_tq1_trit(x[i].qs[m], n) - 1) * d;
            for (int m = 0; m < 16; ++m) y[160 + m + 16 * n] = (float) (lm_quant_tq1_trit(x[i].qs[32 + m], n) - 1) * d;
        }
        for (int n = 0; n < 4; ++n) {
            for (int j = 0; j < 4; ++j) y[240 + j + 4 * n] = (float) (lm_quant_tq1_trit(x[i].qh[j], n) - 1) * d;
        }
    }
}

void lm_quant_dequantize_row_tq2_0(const void * LM_GGML_RESTRICT vx, float * LM_GGML_RESTRICT y, int64_t k) {
    const auto * x = static_cast<const lm_block_tq2_0 *>(vx);
    for (int64_t i = 0; i < k / LM_QK_K; ++i, y += LM_QK_K) {
        const float d = half_to_f32(x[i].d);
        for (int c = 0; c < 2; ++c) {
            for (int s = 0; s < 4; ++s) {
                for (int m = 0; m < 32; ++m) {
                    y[128 * c + 32 * s + m] = (float) (((x[i].qs[32 * c + m] >> (2 * s)) & 3) - 1) * d;
                }
            }
        }
    }
}

namespace {

template <void (*Ref)(const float * LM_GGML_RESTRICT, void * LM_GGML_RESTRICT, int64_t), typename Block>
size_t rows_ignoring_imatrix(const float * src, void * dst, int64_t nrow, int64_t n_per_row) {
    Ref(src, dst, nrow * n_per_row);
    return (size_t) (nrow * (n_per_row / LM_QK_K)) * sizeof(Block);
}

} // namespace

size_t lm_quant_rows_tq1_0(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    (void) imatrix;
    return rows_ignoring_imatrix<lm_quant_quantize_row_tq1_0_ref, lm_block_tq1_0>(src, dst, nrow, n_per_row);
}

size_t lm_quant_rows_tq2_0(const float * src, void * dst, int64_t nrow, int64_t n_per_row, const float * imatrix) {
    (void) imatrix;
    return rows_ignoring_imatrix<lm_quant_quantize_row_tq2_0_ref, lm_block_tq2_0>(src, dst, nrow, n_per_row);
}

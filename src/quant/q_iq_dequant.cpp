// Dequantizers of the grid I-quants: decode each block to integers
// (q_iq_unpack.h), then value = d * kScale * m * w.
#include "q_iq_unpack.h"

using namespace lm_quant::iq;

namespace {

template <typename Block> void dequantize(const void * vx, float * y, int64_t k) {
    const auto * x = static_cast<const Block *>(vx);
    Unpacked u;
    for (int64_t i = 0; i < k / LM_QK_K; ++i, y += LM_QK_K) {
        unpack(x[i], u);
        for (int g = 0; g < LM_QK_K / 16; ++g) {
            const float dg = u.d * kScale<Block> * (float) u.m[g];
            for (int j = 0; j < 16; ++j) y[16 * g + j] = dg * (float) u.w[16 * g + j];
        }
    }
}

} // namespace

void lm_quant_dequantize_row_iq2_xxs(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    dequantize<lm_block_iq2_xxs>(x, y, k);
}
void lm_quant_dequantize_row_iq2_xs(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    dequantize<lm_block_iq2_xs>(x, y, k);
}
void lm_quant_dequantize_row_iq2_s(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    dequantize<lm_block_iq2_s>(x, y, k);
}
void lm_quant_dequantize_row_iq3_xxs(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    dequantize<lm_block_iq3_xxs>(x, y, k);
}
void lm_quant_dequantize_row_iq3_s(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    dequantize<lm_block_iq3_s>(x, y, k);
}
void lm_quant_dequantize_row_iq1_s(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    dequantize<lm_block_iq1_s>(x, y, k);
}
void lm_quant_dequantize_row_iq1_m(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    dequantize<lm_block_iq1_m>(x, y, k);
}

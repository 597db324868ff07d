// AVX2 activation conversions: F32 rows -> Q8_0 / Q8_1 (ggml's x86 rounding,
// see layouts.h; twins in ref_act.cpp), Q8_K (bit-exact with the reference
// quantizer of src/quant) and F16.
#if defined(__x86_64__) || defined(__i386__)

#include "simd_avx2.h"
#include "x86.h"

#include "../../../quant/quants.h"

namespace lmggml::cpu::arch::x86 {
namespace {

constexpr int QK = 32;

void quantize_row_q8_0(const float * x, void * vy, int64_t k) {
    auto * y = static_cast<lm_block_q8_0 *>(vy);
    for (int64_t i = 0; i < k / QK; ++i) {
        int sum;
        y[i].d = to_f16(quantize_block_avx2(x + i * QK, y[i].qs, &sum));
    }
}

void quantize_row_q8_1(const float * x, void * vy, int64_t k) {
    auto * y = static_cast<lm_block_q8_1 *>(vy);
    for (int64_t i = 0; i < k / QK; ++i) {
        int sum;
        const float d = quantize_block_avx2(x + i * QK, y[i].qs, &sum);
        y[i].d = to_f16(d);
        y[i].s = to_f16(d * (float) sum);
    }
}

// Q8_K, as the reference (simd_avx2.h)
void quantize_row_q8_K(const float * x, void * vy, int64_t k) {
    auto * y = static_cast<lm_block_q8_K *>(vy);
    for (int64_t i = 0; i < k / LM_QK_K; ++i) {
        quantize_q8K_block_avx2(x + i * LM_QK_K, y[i].qs, y[i].bsums, &y[i].d);
    }
}

void convert_row_f16(const float * x, void * vy, int64_t k) {
    auto * y = static_cast<uint16_t *>(vy);
    int64_t i = 0;
    for (; i + 8 <= k; i += 8) {
        _mm_storeu_si128((__m128i *) (y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < k; ++i) y[i] = to_f16(x[i]);
}

} // namespace

void fill_avx2_act(KernelSet & k) {
    k.from_float[LM_GGML_TYPE_Q8_0] = quantize_row_q8_0;
    k.from_float[LM_GGML_TYPE_Q8_1] = quantize_row_q8_1;
    k.from_float[LM_GGML_TYPE_Q8_K] = quantize_row_q8_K;
    k.from_float[LM_GGML_TYPE_F16] = convert_row_f16;
}

} // namespace lmggml::cpu::arch::x86

#endif

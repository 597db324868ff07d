// AVX2 activation conversions: F32 rows -> Q8_0 / Q8_1 (ggml's x86 rounding,
// see layouts.h; twins in ref_act.cpp), Q8_K (bit-exact with the reference
// quantizer of src/quant) and F16.
#if defined(__x86_64__) || defined(__i386__)

#include "simd_avx2.h"
#include "x86.h"

#include "../../../quant/quants.h"

#include <cstring>

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

// Q8_K, as the reference: the value of largest magnitude (the first one on
// ties) sets iscale = -127 / max; levels min(127, round-half-even(iscale x)).
void quantize_row_q8_K(const float * x, void * vy, int64_t k) {
    auto *       y   = static_cast<lm_block_q8_K *>(vy);
    const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (int64_t i = 0; i < k / LM_QK_K; ++i, x += LM_QK_K) {
        __m256 vmax = _mm256_setzero_ps();
        for (int j = 0; j < LM_QK_K; j += 8) {
            vmax = _mm256_max_ps(vmax, _mm256_and_ps(_mm256_loadu_ps(x + j), abs));
        }
        const float amax = hmax8(vmax);
        if (amax == 0.0f) {
            std::memset(&y[i], 0, sizeof(y[i]));
            continue;
        }
        const __m256 target = _mm256_set1_ps(amax);
        float        max    = 0.0f;
        for (int j = 0; j < LM_QK_K; j += 8) {
            const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + j), abs), target, _CMP_EQ_OQ));
            if (hit != 0) {
                max = x[j + __builtin_ctz((unsigned) hit)];
                break;
            }
        }
        const float   iscale = -127.0f / max;
        const __m256  mul    = _mm256_set1_ps(iscale);
        const __m256i top    = _mm256_set1_epi32(127);
        for (int j = 0; j < LM_QK_K; j += 32) {
            __m256i q[4];
            for (int u = 0; u < 4; ++u) {
                q[u] = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + j + 8 * u), mul)), top);
            }
            y[i].bsums[j / 16]     = (int16_t) hsum8_i32(_mm256_add_epi32(q[0], q[1]));
            y[i].bsums[j / 16 + 1] = (int16_t) hsum8_i32(_mm256_add_epi32(q[2], q[3]));
            store_levels32(q, y[i].qs + j);
        }
        y[i].d = 1.0f / iscale;
    }
}

void convert_row_f16(const float * x, void * vy, int64_t k) {
    auto *  y = static_cast<uint16_t *>(vy);
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
    k.from_float[LM_GGML_TYPE_F16]  = convert_row_f16;
}

} // namespace lmggml::cpu::arch::x86

#endif

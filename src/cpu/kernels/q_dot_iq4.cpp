// Scalar dots of the non-linear 4-bit and ternary formats (q_dot_iq4.h). The
// integer sums are exact; per block one float product applies the scales.
// Ternary values t - 1 (t in 0..2) are summed as sum(t * y) - sum(y), the
// second term from q8_K's 16-value group sums.
#include "q_dot_iq4.h"
#include "../../quant/q_iq4_tq.h"
#include "../../quant/q_search.h"

using lm_quant::half_to_f32;

namespace {

constexpr const int8_t * kValues = lm_quant_kvalues_iq4nl;

// 32 values as 16 nibble bytes (low nibbles first) against 32 int8 activations
inline int nibble_dot(const uint8_t * qs, const int8_t * y) {
    int sum = 0;
    for (int j = 0; j < 16; ++j) sum += kValues[qs[j] & 0xF] * y[j] + kValues[qs[j] >> 4] * y[j + 16];
    return sum;
}

inline int sum_bsums(const lm_block_q8_K & y) {
    int s = 0;
    for (int g = 0; g < LM_QK_K / 16; ++g) s += y.bsums[g];
    return s;
}

} // namespace

namespace lm_cpu_q {

void vec_dot_iq4_nl_q8_0(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_iq4_nl *>(vx);
    const auto * y = static_cast<const lm_block_q8_0 *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / LM_QK4_NL; ++i) {
        sum += half_to_f32(x[i].d) * half_to_f32(y[i].d) * (float) nibble_dot(x[i].qs, y[i].qs);
    }
    *s = sum;
}

void vec_dot_iq4_xs_q8_K(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_iq4_xs *>(vx);
    const auto * y = static_cast<const lm_block_q8_K *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / LM_QK_K; ++i) {
        int isum = 0;
        for (int ib = 0; ib < LM_QK_K / 32; ++ib) {
            isum += lm_quant_iq4_xs_scale(&x[i], ib) * nibble_dot(x[i].qs + 16 * ib, y[i].qs + 32 * ib);
        }
        sum += half_to_f32(x[i].d) * y[i].d * (float) isum;
    }
    *s = sum;
}

void vec_dot_tq1_0_q8_K(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_tq1_0 *>(vx);
    const auto * y = static_cast<const lm_block_q8_K *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / LM_QK_K; ++i) {
        const int8_t * q8 = y[i].qs;
        int isum = 0;
        for (int t = 0; t < 5; ++t) {
            for (int m = 0; m < 32; ++m) isum += lm_quant_tq1_trit(x[i].qs[m], t) * q8[m + 32 * t];
            for (int m = 0; m < 16; ++m) isum += lm_quant_tq1_trit(x[i].qs[32 + m], t) * q8[160 + m + 16 * t];
        }
        for (int t = 0; t < 4; ++t) {
            for (int j = 0; j < 4; ++j) isum += lm_quant_tq1_trit(x[i].qh[j], t) * q8[240 + j + 4 * t];
        }
        sum += half_to_f32(x[i].d) * y[i].d * (float) (isum - sum_bsums(y[i]));
    }
    *s = sum;
}

void vec_dot_tq2_0_q8_K(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_tq2_0 *>(vx);
    const auto * y = static_cast<const lm_block_q8_K *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / LM_QK_K; ++i) {
        const int8_t * q8 = y[i].qs;
        int isum = 0;
        for (int c = 0; c < 2; ++c) {
            for (int sh = 0; sh < 4; ++sh) {
                for (int m = 0; m < 32; ++m) {
                    isum += ((x[i].qs[32 * c + m] >> (2 * sh)) & 3) * q8[128 * c + 32 * sh + m];
                }
            }
        }
        sum += half_to_f32(x[i].d) * y[i].d * (float) (isum - sum_bsums(y[i]));
    }
    *s = sum;
}

} // namespace lm_cpu_q

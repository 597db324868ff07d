// Integer dot products of the 32-value formats: per block, the integer sum of
// level products is scaled once by d_x * d_y (plus m_x * s_y for the formats
// with a minimum, where s_y = d_y * sum(q_y) comes precomputed in q8_1).
// Byte j of qs holds value j (low nibble) and value j + 16 (high nibble).
#include "q_dot.h"
#include "../../quant/q_search.h"

using namespace lm_quant;

namespace {

constexpr int QK = 32;

// the 5th bits of a q5 block: bit j of the little-endian u32 belongs to value j
inline uint32_t high_bits(const uint8_t * qh) {
    return (uint32_t) qh[0] | ((uint32_t) qh[1] << 8) | ((uint32_t) qh[2] << 16) | ((uint32_t) qh[3] << 24);
}

} // namespace

namespace lm_cpu_q {

void vec_dot_q4_0_q8_0(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_q4_0 *>(vx);
    const auto * y = static_cast<const lm_block_q8_0 *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / QK; ++i) {
        int isum = 0;
        for (int j = 0; j < QK / 2; ++j) {
            isum += ((x[i].qs[j] & 0xF) - 8) * y[i].qs[j] + ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + QK / 2];
        }
        sum += (float) isum * (half_to_f32(x[i].d) * half_to_f32(y[i].d));
    }
    *s = sum;
}

void vec_dot_q4_1_q8_1(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_q4_1 *>(vx);
    const auto * y = static_cast<const lm_block_q8_1 *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / QK; ++i) {
        int isum = 0;
        for (int j = 0; j < QK / 2; ++j) {
            isum += (x[i].qs[j] & 0xF) * y[i].qs[j] + (x[i].qs[j] >> 4) * y[i].qs[j + QK / 2];
        }
        sum += (float) isum * (half_to_f32(x[i].d) * half_to_f32(y[i].d)) + half_to_f32(x[i].m) * half_to_f32(y[i].s);
    }
    *s = sum;
}

void vec_dot_q5_0_q8_0(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_q5_0 *>(vx);
    const auto * y = static_cast<const lm_block_q8_0 *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / QK; ++i) {
        const uint32_t qh = high_bits(x[i].qh);
        int isum = 0;
        for (int j = 0; j < QK / 2; ++j) {
            const int lo = (x[i].qs[j] & 0xF) | (int) (((qh >> j) & 1u) << 4);
            const int hi = (x[i].qs[j] >> 4) | (int) (((qh >> (j + QK / 2)) & 1u) << 4);
            isum += (lo - 16) * y[i].qs[j] + (hi - 16) * y[i].qs[j + QK / 2];
        }
        sum += (float) isum * (half_to_f32(x[i].d) * half_to_f32(y[i].d));
    }
    *s = sum;
}

void vec_dot_q5_1_q8_1(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_q5_1 *>(vx);
    const auto * y = static_cast<const lm_block_q8_1 *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / QK; ++i) {
        const uint32_t qh = high_bits(x[i].qh);
        int isum = 0;
        for (int j = 0; j < QK / 2; ++j) {
            const int lo = (x[i].qs[j] & 0xF) | (int) (((qh >> j) & 1u) << 4);
            const int hi = (x[i].qs[j] >> 4) | (int) (((qh >> (j + QK / 2)) & 1u) << 4);
            isum += lo * y[i].qs[j] + hi * y[i].qs[j + QK / 2];
        }
        sum += (float) isum * (half_to_f32(x[i].d) * half_to_f32(y[i].d)) + half_to_f32(x[i].m) * half_to_f32(y[i].s);
    }
    *s = sum;
}

void vec_dot_q8_0_q8_0(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_q8_0 *>(vx);
    const auto * y = static_cast<const lm_block_q8_0 *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / QK; ++i) {
        int isum = 0;
        for (int j = 0; j < QK; ++j) isum += x[i].qs[j] * y[i].qs[j];
        sum += (float) isum * (half_to_f32(x[i].d) * half_to_f32(y[i].d));
    }
    *s = sum;
}

} // namespace lm_cpu_q

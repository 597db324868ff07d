// Integer dot products of the 32-value formats: per block, the integer sum of
// level products is scaled once by d_x * d_y (plus m_x * s_y for the formats
// with a minimum, where s_y = d_y * sum(q_y) comes precomputed in q8_1).
#include "q_dot.h"
#include "../../quant/q_search.h"

using namespace lm_quant;

namespace {

constexpr int QK = 32;

inline int level4(const uint8_t * qs, int j) { return j < 16 ? (qs[j] & 0xF) : (qs[j - 16] >> 4); }

inline int level5(const uint8_t * qs, const uint8_t * qh, int j) {
    const int bit = (qh[j / 8] >> (j % 8)) & 1; // bit j of the little-endian u32
    return level4(qs, j) | (bit << 4);
}

} // namespace

namespace lm_cpu_q {

void vec_dot_q4_0_q8_0(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_q4_0 *>(vx);
    const auto * y = static_cast<const lm_block_q8_0 *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / QK; ++i) {
        int isum = 0;
        for (int j = 0; j < QK; ++j) isum += (level4(x[i].qs, j) - 8) * y[i].qs[j];
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
        for (int j = 0; j < QK; ++j) isum += level4(x[i].qs, j) * y[i].qs[j];
        sum += (float) isum * (half_to_f32(x[i].d) * half_to_f32(y[i].d)) + half_to_f32(x[i].m) * half_to_f32(y[i].s);
    }
    *s = sum;
}

void vec_dot_q5_0_q8_0(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_q5_0 *>(vx);
    const auto * y = static_cast<const lm_block_q8_0 *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / QK; ++i) {
        int isum = 0;
        for (int j = 0; j < QK; ++j) isum += (level5(x[i].qs, x[i].qh, j) - 16) * y[i].qs[j];
        sum += (float) isum * (half_to_f32(x[i].d) * half_to_f32(y[i].d));
    }
    *s = sum;
}

void vec_dot_q5_1_q8_1(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_q5_1 *>(vx);
    const auto * y = static_cast<const lm_block_q8_1 *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / QK; ++i) {
        int isum = 0;
        for (int j = 0; j < QK; ++j) isum += level5(x[i].qs, x[i].qh, j) * y[i].qs[j];
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

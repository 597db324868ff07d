// Integer dot products of the K-quants with q8_K activations. Per super-block:
// isum = sum over groups of scale_g * sum(q_x * q_y); the mins of q2_K/q4_K/q5_K
// need only the q8_K group sums (bsums), not the values. The result is
// d_y * (d_x * isum - dmin_x * sum(min_g * bsum_g)).
#include "q_dot.h"
#include "../../quant/q_search.h"
#include "../../quant/q_unpack.h"

using namespace lm_quant;

namespace {

constexpr int QK = LM_QK_K;

template <typename Q> inline int group_dot(const Q * q, const int8_t * y, int len) {
    int sum = 0;
    for (int l = 0; l < len; ++l) sum += (int) q[l] * (int) y[l];
    return sum;
}

// q4_K and q5_K differ only in how the levels are unpacked
template <typename Block, typename Unpack>
float dot_k4(int n, const Block * x, const lm_block_q8_K * y, Unpack unpack) {
    uint8_t q[QK];
    float sum = 0.0f;
    for (int i = 0; i < n / QK; ++i) {
        unpack(x[i], q);
        int isum = 0, summs = 0;
        for (int g = 0; g < 8; ++g) {
            uint8_t sc, m;
            get_scale_min_k4(g, x[i].scales, &sc, &m);
            isum += sc * group_dot(q + 32 * g, y[i].qs + 32 * g, 32);
            summs += m * (y[i].bsums[2 * g] + y[i].bsums[2 * g + 1]);
        }
        const float dall = y[i].d * half_to_f32(x[i].d);
        const float dmin = y[i].d * half_to_f32(x[i].dmin);
        sum += dall * (float) isum - dmin * (float) summs;
    }
    return sum;
}

} // namespace

namespace lm_cpu_q {

void vec_dot_q2_K_q8_K(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_q2_K *>(vx);
    const auto * y = static_cast<const lm_block_q8_K *>(vy);
    uint8_t q[QK];
    float sum = 0.0f;
    for (int i = 0; i < n / QK; ++i) {
        unpack_q2_K(x[i], q);
        int isum = 0, summs = 0;
        for (int g = 0; g < 16; ++g) {
            isum += (x[i].scales[g] & 0xF) * group_dot(q + 16 * g, y[i].qs + 16 * g, 16);
            summs += (x[i].scales[g] >> 4) * y[i].bsums[g];
        }
        const float dall = y[i].d * half_to_f32(x[i].d);
        const float dmin = y[i].d * half_to_f32(x[i].dmin);
        sum += dall * (float) isum - dmin * (float) summs;
    }
    *s = sum;
}

void vec_dot_q3_K_q8_K(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_q3_K *>(vx);
    const auto * y = static_cast<const lm_block_q8_K *>(vy);
    int8_t q[QK];
    int sc[16];
    float sum = 0.0f;
    for (int i = 0; i < n / QK; ++i) {
        unpack_q3_K(x[i], q, sc);
        int isum = 0;
        for (int g = 0; g < 16; ++g) isum += sc[g] * group_dot(q + 16 * g, y[i].qs + 16 * g, 16);
        sum += y[i].d * half_to_f32(x[i].d) * (float) isum;
    }
    *s = sum;
}

void vec_dot_q4_K_q8_K(int n, float * s, const void * vx, const void * vy) {
    *s = dot_k4(n, static_cast<const lm_block_q4_K *>(vx), static_cast<const lm_block_q8_K *>(vy),
                [](const lm_block_q4_K & b, uint8_t * q) { unpack_q4_K(b, q); });
}

void vec_dot_q5_K_q8_K(int n, float * s, const void * vx, const void * vy) {
    *s = dot_k4(n, static_cast<const lm_block_q5_K *>(vx), static_cast<const lm_block_q8_K *>(vy),
                [](const lm_block_q5_K & b, uint8_t * q) { unpack_q5_K(b, q); });
}

void vec_dot_q6_K_q8_K(int n, float * s, const void * vx, const void * vy) {
    const auto * x = static_cast<const lm_block_q6_K *>(vx);
    const auto * y = static_cast<const lm_block_q8_K *>(vy);
    int8_t q[QK];
    float sum = 0.0f;
    for (int i = 0; i < n / QK; ++i) {
        unpack_q6_K(x[i], q);
        int isum = 0;
        for (int g = 0; g < 16; ++g) isum += x[i].scales[g] * group_dot(q + 16 * g, y[i].qs + 16 * g, 16);
        sum += y[i].d * half_to_f32(x[i].d) * (float) isum;
    }
    *s = sum;
}

} // namespace lm_cpu_q

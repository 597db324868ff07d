// Integer dots of the grid I-quants with q8_K activations: each block is
// decoded to integer levels w and group multipliers m (q_iq_unpack.h), so
// per super-block  isum = sum_g m_g * sum_{e in g} w_e * q8_e  exactly, and
// the result is d_x * kScale * d_y * isum.
#include "q_dot_iq.h"
#include "../../quant/q_iq_unpack.h"

using namespace lm_quant::iq;

namespace {

template <typename Block> float dot(int n, const void * vx, const void * vy) {
    const auto * x = static_cast<const Block *>(vx);
    const auto * y = static_cast<const lm_block_q8_K *>(vy);
    Unpacked u;
    float sum = 0.0f;
    for (int i = 0; i < n / LM_QK_K; ++i) {
        unpack(x[i], u);
        int isum = 0;
        for (int g = 0; g < LM_QK_K / 16; ++g) {
            int gs = 0;
            for (int j = 0; j < 16; ++j) gs += u.w[16 * g + j] * y[i].qs[16 * g + j];
            isum += u.m[g] * gs;
        }
        sum += u.d * kScale<Block> * y[i].d * (float) isum;
    }
    return sum;
}

} // namespace

namespace lm_cpu_q {

void vec_dot_iq2_xxs_q8_K(int n, float * s, const void * x, const void * y) { *s = dot<lm_block_iq2_xxs>(n, x, y); }
void vec_dot_iq2_xs_q8_K(int n, float * s, const void * x, const void * y) { *s = dot<lm_block_iq2_xs>(n, x, y); }
void vec_dot_iq2_s_q8_K(int n, float * s, const void * x, const void * y) { *s = dot<lm_block_iq2_s>(n, x, y); }
void vec_dot_iq3_xxs_q8_K(int n, float * s, const void * x, const void * y) { *s = dot<lm_block_iq3_xxs>(n, x, y); }
void vec_dot_iq3_s_q8_K(int n, float * s, const void * x, const void * y) { *s = dot<lm_block_iq3_s>(n, x, y); }
void vec_dot_iq1_s_q8_K(int n, float * s, const void * x, const void * y) { *s = dot<lm_block_iq1_s>(n, x, y); }
void vec_dot_iq1_m_q8_K(int n, float * s, const void * x, const void * y) { *s = dot<lm_block_iq1_m>(n, x, y); }

} // namespace lm_cpu_q

// Scalar twins of the RowDotX8 kernels (weights repacked 8 rows at a time,
// layouts.h "RowDotX8"). Each reads a row's block and the activation's
// values straight from the documented byte positions and forms the block's
// product as ggml defines it, so it also checks the packed s values.
#include "layouts.h"
#include "ref.h"
#include "x8.h"

#include "../../core/ggml-impl.h"
#include "../../quant/q_iq4_tq.h"
#include "../../quant/quants.h"

#include <cstring>

namespace lmggml::cpu::arch::ref {
namespace {

using namespace layout;

float f16_at(const uint8_t * p) {
    lm_half h;
    std::memcpy(&h, p, sizeof(h));
    return lm_ggml_compute_fp16_to_fp32(h);
}

// Value i (0..31) of row r in a unit's levels (lv): the weight's integer
// level as ggml decodes the block (Q4_0: nibble - 8, Q4_1: nibble, Q5_0:
// 5 bits - 16, Q5_1: 5 bits, Q8_0: the signed byte, IQ4_NL: the table's).
int level(lm_ggml_type type, const uint8_t * lv, int r, int i) {
    if (type == LM_GGML_TYPE_Q8_0) {
        return (int8_t) lv[32 * (i / 4) + 4 * r + i % 4];
    }
    const bool q5 = type == LM_GGML_TYPE_Q5_0 || type == LM_GGML_TYPE_Q5_1;
    const uint8_t * qs = lv + (q5 ? 32 : 0); // Q5: chunk 0 is qh
    // value j < 16 in the low nibble of byte j, 16 + j in the high one
    const int j = i % 16;
    const int nib = (qs[32 * (j / 4) + 4 * r + j % 4] >> (i < 16 ? 0 : 4)) & 15;
    switch (type) {
        case LM_GGML_TYPE_Q4_0: return nib - 8;
        case LM_GGML_TYPE_IQ4_NL: return lm_quant_kvalues_iq4nl[nib];
        case LM_GGML_TYPE_Q5_0:
        case LM_GGML_TYPE_Q5_1: {
            uint32_t qh;
            std::memcpy(&qh, lv + 4 * r, sizeof(qh));
            const int v = nib | (int) (((qh >> i) & 1u) << 4);
            return type == LM_GGML_TYPE_Q5_0 ? v - 16 : v;
        }
        default: return nib; // Q4_1
    }
}

// Block sums: d dy sum(level q) plus, with a minimum (Q4_1, Q5_1), m * s.
// Q4_0 takes its offset out through s (-8 d dy sum q); the kernels of
// Q5_0, Q8_0 and IQ4_NL through the int32 in s (offset * sum q), which the
// signed levels here need not.
template <lm_ggml_type kType>
void dot_groups(int64_t k, int64_t groups, const void * w, const void * vact, float * dst) {
    constexpr bool kMin = kType == LM_GGML_TYPE_Q4_1 || kType == LM_GGML_TYPE_Q5_1;
    x8::Format f;
    x8::format_of(kType, &f);
    const int64_t nb = k / kQK;
    const auto * act = static_cast<const uint8_t *>(vact);
    const float * dy = reinterpret_cast<const float *>(act + nb * 32);
    const float * sy = dy + nb;
    const size_t ub = kX8Rows * f.block_bytes; // bytes of one unit
    for (int64_t g = 0; g < groups; ++g) {
        const auto * group = static_cast<const uint8_t *>(w) + g * nb * ub;
        for (int r = 0; r < kX8Rows; ++r) {
            float acc = 0;
            for (int64_t b = 0; b < nb; ++b) {
                const uint8_t * unit = group + b * ub;
                const auto * q = reinterpret_cast<const int8_t *>(act + b * 32); // the block's levels
                const uint8_t * lv = unit + x8::levels_offset(f, b);             // chunk t of row r at 32 t + 4 r
                const uint8_t * hdr = unit + x8::header_offset(f, b);            // field i of row r at 16 i + 2 r
                int isum = 0;
                for (int i = 0; i < kQK; ++i) {
                    // Q4_0's offset comes back through s below
                    isum += (level(kType, lv, r, i) + (kType == LM_GGML_TYPE_Q4_0 ? 8 : 0)) * q[i];
                }
                const float d = f16_at(hdr + 2 * r);
                acc += d * dy[b] * (float) isum;
                if constexpr (kMin) acc += f16_at(hdr + 16 + 2 * r) * sy[b]; // m * s
                if constexpr (kType == LM_GGML_TYPE_Q4_0) acc += d * sy[b];  // d * (-8 dy sum(q))
            }
            dst[g * kX8Rows + r] = acc;
        }
    }
}

} // namespace

const RowDotX8 kRowDotX8Q4_0 = {rowdot_x8_act_size, x8::pack_act_q4_0, dot_groups<LM_GGML_TYPE_Q4_0>};
const RowDotX8 kRowDotX8Q4_1 = {rowdot_x8_act_size, x8::pack_act_q4_1, dot_groups<LM_GGML_TYPE_Q4_1>};
const RowDotX8 kRowDotX8Q5_0 = {rowdot_x8_act_size, x8::pack_act_off16, dot_groups<LM_GGML_TYPE_Q5_0>};
const RowDotX8 kRowDotX8Q5_1 = {rowdot_x8_act_size, x8::pack_act_q4_1, dot_groups<LM_GGML_TYPE_Q5_1>};
const RowDotX8 kRowDotX8Q8_0 = {rowdot_x8_act_size, x8::pack_act_off128, dot_groups<LM_GGML_TYPE_Q8_0>};
const RowDotX8 kRowDotX8IQ4_NL = {rowdot_x8_act_size, x8::pack_act_off128, dot_groups<LM_GGML_TYPE_IQ4_NL>};

} // namespace lmggml::cpu::arch::ref

// Scalar twins of the RowDotX8 kernels (weights repacked 8 rows at a time,
// layouts.h "RowDotX8"). Each reads a row's block and the activation's
// values straight from the documented byte positions and forms the block's
// product as ggml defines it, so it also checks the packed s values.
#include "layouts.h"
#include "ref.h"
#include "x8.h"

#include "../../core/ggml-impl.h"
#include "../../quant/quants.h"

#include <cstring>

namespace lmggml::cpu::arch::ref {
namespace {

using namespace layout;

enum class Kind { q4_0, q4_1 };

float f16_at(const uint8_t * p) {
    lm_half h;
    std::memcpy(&h, p, sizeof(h));
    return lm_ggml_compute_fp16_to_fp32(h);
}

template <Kind kKind> void dot_groups(int64_t k, int64_t groups, const void * w, const void * vact, float * dst) {
    constexpr lm_ggml_type kType = kKind == Kind::q4_0 ? LM_GGML_TYPE_Q4_0 : LM_GGML_TYPE_Q4_1;
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
                for (int t = 0; t < f.chunks; ++t) {
                    for (int i = 0; i < 4; ++i) {
                        const uint8_t byte = lv[32 * t + 4 * r + i];
                        // value 4t+i in the low nibble, 16+4t+i in the high one
                        isum += (byte & 15) * q[4 * t + i] + (byte >> 4) * q[16 + 4 * t + i];
                    }
                }
                const float d = f16_at(hdr + 2 * r);
                acc += d * dy[b] * (float) isum;
                if constexpr (kKind == Kind::q4_1) acc += f16_at(hdr + 16 + 2 * r) * sy[b]; // m * s
                if constexpr (kKind == Kind::q4_0) acc += d * sy[b];                        // d * (-8 dy sum(q))
            }
            dst[g * kX8Rows + r] = acc;
        }
    }
}

} // namespace

const RowDotX8 kRowDotX8Q4_0 = {rowdot_x8_act_size, x8::pack_act_q4_0, dot_groups<Kind::q4_0>};
const RowDotX8 kRowDotX8Q4_1 = {rowdot_x8_act_size, x8::pack_act_q4_1, dot_groups<Kind::q4_1>};

} // namespace lmggml::cpu::arch::ref

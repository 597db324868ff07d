// ARMv8.2 dot product: matrix x vector on Q4_0 / Q4_1 weights repacked 8
// rows at a time (layouts.h "RowDotX8", x8.h). A 16-byte load of chunk t
// holds 4 level bytes of each of 4 rows, which is exactly what one
// `sdot by element` multiplies with 4 activation bytes: lane t of the
// block's first (low nibbles, values 4t..4t+3) or second 16 activation
// bytes (high nibbles, values 16+4t..). So no shuffles: 16 sdot per block
// for 8 rows, and the F16 header of 4 rows widens with one fcvtl.
// The nibbles stay unsigned (0..15); the activation row's s carries the
// Q4_0 offset (-8 d sum(q)) and Q4_1's sum. Activation rows come from
// x8::pack_act_* (shared by every level). Twin: ref::kRowDotX8Q4_*.
#if defined(__aarch64__)

#include "arm.h"
#include "simd_neon.h"

#include "../layouts.h"
#include "../ref.h"
#include "../x8.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "rowdot_x8_dotprod.cpp needs -march=armv8.2-a+dotprod (src/cpu/arch/flags.cmake)"
#endif

namespace lmggml::cpu::arch::arm {
namespace {

using namespace layout;

// chunk T of one unit's levels: 4 rows from lv (rows 0..3) and lv + 16 (4..7)
template <int T>
static inline void chunk(const uint8_t * lv, int8x16_t alo, int8x16_t ahi, int32x4_t * i0, int32x4_t * i1) {
    const uint8x16_t nib = vdupq_n_u8(0x0F);
    const uint8x16_t w0 = vld1q_u8(lv + 32 * T), w1 = vld1q_u8(lv + 32 * T + 16);
    *i0 = vdotq_laneq_s32(*i0, vreinterpretq_s8_u8(vandq_u8(w0, nib)), alo, T);
    *i0 = vdotq_laneq_s32(*i0, vreinterpretq_s8_u8(vshrq_n_u8(w0, 4)), ahi, T);
    *i1 = vdotq_laneq_s32(*i1, vreinterpretq_s8_u8(vandq_u8(w1, nib)), alo, T);
    *i1 = vdotq_laneq_s32(*i1, vreinterpretq_s8_u8(vshrq_n_u8(w1, 4)), ahi, T);
}

template <bool kMin> void dot_groups(int64_t k, int64_t groups, const void * w, const void * vact, float * dst) {
    x8::Format f;
    x8::format_of(kMin ? LM_GGML_TYPE_Q4_1 : LM_GGML_TYPE_Q4_0, &f);
    const int64_t nb = k / kQK;
    const auto * act = static_cast<const uint8_t *>(vact);
    const float * dy = reinterpret_cast<const float *>(act + nb * 32);
    const float * sy = dy + nb;
    const size_t ub = kX8Rows * f.block_bytes;
    for (int64_t g = 0; g < groups; ++g) {
        const auto * group = static_cast<const uint8_t *>(w) + g * nb * ub;
        float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t * unit = group + b * ub;
            const uint8_t * lv = unit + x8::levels_offset(f, b);
            const auto * hdr = reinterpret_cast<const uint16_t *>(unit + x8::header_offset(f, b));
            const auto * q = reinterpret_cast<const int8_t *>(act + b * 32);
            const int8x16_t alo = vld1q_s8(q), ahi = vld1q_s8(q + 16);
            int32x4_t i0 = vdupq_n_s32(0), i1 = vdupq_n_s32(0);
            chunk<0>(lv, alo, ahi, &i0, &i1);
            chunk<1>(lv, alo, ahi, &i0, &i1);
            chunk<2>(lv, alo, ahi, &i0, &i1);
            chunk<3>(lv, alo, ahi, &i0, &i1);
            const float32x4_t d0 = load_f16x4(hdr), d1 = load_f16x4(hdr + 4);
            acc0 = vfmaq_f32(acc0, vcvtq_f32_s32(i0), vmulq_n_f32(d0, dy[b]));
            acc1 = vfmaq_f32(acc1, vcvtq_f32_s32(i1), vmulq_n_f32(d1, dy[b]));
            if constexpr (kMin) { // m * s
                acc0 = vfmaq_n_f32(acc0, load_f16x4(hdr + 8), sy[b]);
                acc1 = vfmaq_n_f32(acc1, load_f16x4(hdr + 12), sy[b]);
            } else { // d * (-8 dy sum(q))
                acc0 = vfmaq_n_f32(acc0, d0, sy[b]);
                acc1 = vfmaq_n_f32(acc1, d1, sy[b]);
            }
        }
        vst1q_f32(dst + g * kX8Rows, acc0);
        vst1q_f32(dst + g * kX8Rows + 4, acc1);
    }
}

const RowDotX8 kQ4_0 = {rowdot_x8_act_size, x8::pack_act_q4_0, dot_groups<false>};
const RowDotX8 kQ4_1 = {rowdot_x8_act_size, x8::pack_act_q4_1, dot_groups<true>};

} // namespace

void fill_dotprod_rowdot_x8(KernelSet & k) {
    k.rowdot_x8[LM_GGML_TYPE_Q4_0] = &kQ4_0;
    k.rowdot_x8[LM_GGML_TYPE_Q4_1] = &kQ4_1;
}

} // namespace lmggml::cpu::arch::arm

#endif

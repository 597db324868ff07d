// ARMv8.2 dot product (sdot): the Gemm of the K-quants (Q4_K, Q5_K, Q6_K,
// IQ4_XS) and of the 32-value block types whose weights stay row-major
// (Q5_0, Q5_1, Q8_0, IQ4_NL) on the shared layouts (layouts.h "Gemm (block
// types)", "Gemm (K-quants)"), for the CPUs without i8mm (most phones).
// Activation rows from the scalar twins' packers, panels from gemm_neon.h's
// NEON packer (same bytes, the tests compare).
// A panel vector t holds values 4t..4t+3 of 4 rows per 16 bytes, which is
// what one `sdot by element` multiplies with 4 activation values (one lane
// of a 16-byte activation load): no shuffles. sdot is signed x signed: the
// levels of Q4_K, Q5_K, Q6_K, Q5_0 and Q5_1 (0..63) are already valid int8;
// those of Q8_0, IQ4_NL and IQ4_XS (level + 128) flip their top bit back to
// the signed level, which also takes the activation's c = 128 * sum(q) out
// exactly.
// Tile: 16 weight rows (one panel group) x 2 activation rows; one body for
// every type. Twins: ref::kGemm*.
#if defined(__aarch64__)

#include "arm.h"
#include "gemm_neon.h"
#include "simd_neon.h"

#include "../layouts.h"
#include "../ref.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "gemm_dotprod.cpp needs -march=armv8.2-a+dotprod (src/cpu/arch/flags.cmake)"
#endif

namespace lmggml::cpu::arch::arm {
namespace {

using namespace layout;

constexpr int kCols = 2; // activation rows per tile

// acc += w (4 rows x 4 values) . lane l of a; the lane must be an immediate
static inline int32x4_t dot_lane(int32x4_t acc, int8x16_t w, int8x16_t a, int l) {
    switch (l) {
        case 0: return vdotq_laneq_s32(acc, w, a, 0);
        case 1: return vdotq_laneq_s32(acc, w, a, 1);
        case 2: return vdotq_laneq_s32(acc, w, a, 2);
        default: return vdotq_laneq_s32(acc, w, a, 3);
    }
}

// Rows 0..15 of panel group g times activation rows a[0..kC): acc[c][h] =
// rows 4h..4h+3 with row c. kV values per block; kMin: add the minimum term
// wm * s; kOff: subtract the activation's c; kFlip: levels + 128, flipped
// to signed (c is then already out).
template <int kV, bool kMin, bool kOff, bool kFlip, int kC>
void group_tile(const uint8_t * panel, int64_t g, int64_t nb, const ActRow * a, float32x4_t (*acc)[4]) {
    constexpr size_t kBlock = panel_block_bytes<kV>();
    constexpr int kA = kV / 16; // 16-byte activation loads per block
    for (int c = 0; c < kC; ++c) {
        for (int h = 0; h < 4; ++h) acc[c][h] = vdupq_n_f32(0.0f);
    }
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t * pb = panel + (b * kGemmGroups + g) * (int64_t) kBlock;
        int8x16_t av[kC][kA];
        for (int c = 0; c < kC; ++c) {
            for (int v = 0; v < kA; ++v) av[c][v] = vld1q_s8(a[c].q + b * kV + 16 * v);
        }
        int32x4_t is[kC][4];
        for (int c = 0; c < kC; ++c) {
            for (int h = 0; h < 4; ++h) is[c][h] = vdupq_n_s32(0);
        }
        for (int t = 0; t < kV / 4; ++t) {
            for (int h = 0; h < 4; ++h) {
                uint8x16_t wu = vld1q_u8(pb + 64 * t + 16 * h);
                if constexpr (kFlip) wu = veorq_u8(wu, vdupq_n_u8(0x80));
                const int8x16_t w = vreinterpretq_s8_u8(wu);
                for (int c = 0; c < kC; ++c) is[c][h] = dot_lane(is[c][h], w, av[c][t / 4], t % 4);
            }
        }
        // value = wd * ad * (isum - c) + wm * s
        const auto * wd = reinterpret_cast<const float *>(pb + 16 * kV);
        for (int h = 0; h < 4; ++h) {
            const float32x4_t w = vld1q_f32(wd + 4 * h);
            for (int c = 0; c < kC; ++c) {
                int32x4_t i = is[c][h];
                if constexpr (kOff && !kFlip) i = vsubq_s32(i, vdupq_n_s32(a[c].c[b]));
                acc[c][h] = vfmaq_f32(acc[c][h], vcvtq_f32_s32(i), vmulq_n_f32(w, a[c].d[b]));
                if constexpr (kMin) acc[c][h] = vfmaq_n_f32(acc[c][h], vld1q_f32(wd + 16 + 4 * h), a[c].s[b]);
            }
        }
    }
}

template <int kV, bool kMin, bool kOff, bool kFlip, int kC>
void columns(const uint8_t * panel, int64_t m, int64_t k, const void * act, size_t lda, int64_t j, float * dst,
             size_t ldd) {
    ActRow a[kC];
    for (int c = 0; c < kC; ++c) a[c] = act_row<kV>(act, lda, j + c, k);
    float32x4_t acc[kC][4];
    for (int64_t g = 0; g * kGroupRows < m; ++g) {
        group_tile<kV, kMin, kOff, kFlip, kC>(panel, g, k / kV, a, acc);
        const int64_t rows = m - g * kGroupRows;
        for (int c = 0; c < kC; ++c) {
            float * out = dst + (j + c) * ldd + g * kGroupRows;
            if (rows >= kGroupRows) {
                for (int h = 0; h < 4; ++h) vst1q_f32(out + 4 * h, acc[c][h]);
            } else {
                float tmp[kGroupRows];
                for (int h = 0; h < 4; ++h) vst1q_f32(tmp + 4 * h, acc[c][h]);
                for (int64_t r = 0; r < rows; ++r) out[r] = tmp[r];
            }
        }
    }
}

template <int kV, bool kMin, bool kOff, bool kFlip>
void compute(const void * vpanel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst,
             size_t ldd) {
    const auto * panel = static_cast<const uint8_t *>(vpanel);
    int64_t j = 0;
    for (; j + kCols <= n; j += kCols) columns<kV, kMin, kOff, kFlip, kCols>(panel, m, k, act, lda, j, dst, ldd);
    for (; j < n; ++j) columns<kV, kMin, kOff, kFlip, 1>(panel, m, k, act, lda, j, dst, ldd);
}

// block types: Q5_1's minimum, Q5_0's offset 16 (levels 0..31, valid
// int8), Q8_0's and IQ4_NL's 128 (flipped)
const Gemm kQ5_0 = {kPanelRows,
                    gemm_q_act_size,
                    ref::gemm_pack_act_q5_0,
                    gemm_q_panel_size,
                    pack_panel_neon<DecodeQ5_0>,
                    compute<32, false, true, false>};
const Gemm kQ5_1 = {kPanelRows,
                    gemm_q_act_size,
                    ref::gemm_pack_act_q5_1,
                    gemm_q_panel_size,
                    pack_panel_neon<DecodeQ5_1>,
                    compute<32, true, false, false>};
const Gemm kQ8_0 = {kPanelRows,
                    gemm_q_act_size,
                    ref::gemm_pack_act_q8_0,
                    gemm_q_panel_size,
                    pack_panel_neon<DecodeQ8_0>,
                    compute<32, false, true, true>};
const Gemm kIQ4_NL = {kPanelRows,
                      gemm_q_act_size,
                      ref::gemm_pack_act_q8_0,
                      gemm_q_panel_size,
                      pack_panel_neon<DecodeIQ4_NL>,
                      compute<32, false, true, true>};
// K-quants
const Gemm kQ4_K = {kPanelRows,
                    gemm_q_act_size,
                    ref::gemm_pack_act_q4_K,
                    gemm_q_panel_size,
                    pack_panel_neon<DecodeQ4_K>,
                    compute<32, true, false, false>};
const Gemm kQ5_K = {kPanelRows,
                    gemm_q_act_size,
                    ref::gemm_pack_act_q4_K,
                    gemm_q_panel_size,
                    pack_panel_neon<DecodeQ5_K>,
                    compute<32, true, false, false>};
// Q2_K / Q3_K: 16-value groups, levels + 32, on Q6_K's microkernel
const Gemm kQ2_K = {kPanelRows,          gemm_q16_act_size,           ref::gemm_pack_act_q2_K,
                    gemm_q16_panel_size, pack_panel_neon<DecodeQ2_K>, compute<16, true, true, false>};
const Gemm kQ3_K = {kPanelRows,          gemm_q16_act_size,           ref::gemm_pack_act_q6_K,
                    gemm_q16_panel_size, pack_panel_neon<DecodeQ3_K>, compute<16, false, true, false>};
const Gemm kQ6_K = {kPanelRows,          gemm_q16_act_size,           ref::gemm_pack_act_q6_K,
                    gemm_q16_panel_size, pack_panel_neon<DecodeQ6_K>, compute<16, false, true, false>};
const Gemm kIQ4_XS = {kPanelRows,
                      gemm_q_act_size,
                      ref::gemm_pack_act_iq4_xs,
                      gemm_q_panel_size,
                      pack_panel_neon<DecodeIQ4_XS>,
                      compute<32, false, true, true>};

} // namespace

void fill_dotprod_gemm(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_Q5_0] = &kQ5_0;
    k.gemm[LM_GGML_TYPE_Q5_1] = &kQ5_1;
    k.gemm[LM_GGML_TYPE_Q8_0] = &kQ8_0;
    k.gemm[LM_GGML_TYPE_IQ4_NL] = &kIQ4_NL;
    k.gemm[LM_GGML_TYPE_Q4_K] = &kQ4_K;
    k.gemm[LM_GGML_TYPE_Q5_K] = &kQ5_K;
    k.gemm[LM_GGML_TYPE_Q6_K] = &kQ6_K;
    k.gemm[LM_GGML_TYPE_Q2_K] = &kQ2_K;
    k.gemm[LM_GGML_TYPE_Q3_K] = &kQ3_K;
    k.gemm[LM_GGML_TYPE_IQ4_XS] = &kIQ4_XS;
}

} // namespace lmggml::cpu::arch::arm

#endif

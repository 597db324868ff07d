// ARMv8.6 int8 matrix multiply (usmmla; HWCAP2_I8MM): the Gemm of the
// 32-value block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL) and of the
// K-quants (Q4_K, Q5_K, Q6_K, IQ4_XS) on the shared layouts (layouts.h "Gemm (block types)", "Gemm (K-quants)"): activation
// rows from the scalar twins' packers, panels from gemm_neon.h's NEON packer
// (same bytes, the tests compare). Q4_0 and Q4_1, repacked to x8, take it
// for prompts of 24 columns or more (panels packed straight from x8), the
// x8 sdot kernels below that (docs/PERF.md, ARM64 section).
// usmmla multiplies a 2x8 block of unsigned bytes (two weight rows, eight
// values each) by a 2x8 block of signed bytes (two activation rows) into a
// 2x2 int32 tile. The panel holds 4 values of each of 16 rows per vector t,
// so zipping 32-bit lanes of vectors t and t+1 gives two rows' 8 values.
// Tile: 16 weight rows (one panel group) x 2 activation rows; one body for
// every type, templated on the block size (32, Q6_K 16) and on which of the
// minimum and offset terms the type has.
// Twins: ref::kGemm* (ref::gemm_compute_q, gemm_compute_q16).
#if defined(__aarch64__)

#include "arm.h"
#include "gemm_neon.h"
#include "simd_neon.h"

#include "../layouts.h"
#include "../ref.h"

#if !defined(__ARM_FEATURE_MATMUL_INT8)
#error "gemm_i8mm.cpp needs -march=armv8.2-a+dotprod+i8mm (src/cpu/arch/flags.cmake)"
#endif

namespace lmggml::cpu::arch::arm {
namespace {

using namespace layout;

// Rows 0..15 of panel group g times activation rows a0, a1 (a1 may be a0),
// into tile[8]: tile p = {(2p, a0), (2p, a1), (2p+1, a0), (2p+1, a1)}.
// kV values per block; kMin: add the minimum term wm * s; kOff: take the
// activation's c (the weights' offset) out of the integer sum.
template <int kV, bool kMin, bool kOff>
void group_x2(const uint8_t * panel, int64_t g, int64_t nb, const ActRow & a0, const ActRow & a1, float32x4_t * tile) {
    constexpr size_t kBlock = panel_block_bytes<kV>();
    constexpr int kU = kV / 8; // 8-value steps per block
    for (int p = 0; p < 8; ++p) tile[p] = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t * pb = panel + (b * kGemmGroups + g) * (int64_t) kBlock;
        // activation values 8u..8u+7 of both rows
        int8x16_t a[kU];
        for (int u = 0; u < kU; ++u) {
            a[u] = vcombine_s8(vld1_s8(a0.q + b * kV + 8 * u), vld1_s8(a1.q + b * kV + 8 * u));
        }
        int32x4_t isum[8];
        for (int p = 0; p < 8; ++p) isum[p] = vdupq_n_s32(0);
        for (int u = 0; u < kU; ++u) {
            for (int h = 0; h < 4; ++h) { // rows 4h..4h+3
                const uint32x4_t lo = vreinterpretq_u32_u8(vld1q_u8(pb + 64 * (2 * u) + 16 * h));
                const uint32x4_t hi = vreinterpretq_u32_u8(vld1q_u8(pb + 64 * (2 * u + 1) + 16 * h));
                isum[2 * h] = vusmmlaq_s32(isum[2 * h], vreinterpretq_u8_u32(vzip1q_u32(lo, hi)), a[u]);
                isum[2 * h + 1] = vusmmlaq_s32(isum[2 * h + 1], vreinterpretq_u8_u32(vzip2q_u32(lo, hi)), a[u]);
            }
        }
        // value = wd * ad * (isum - c) + wm * s, per tile entry
        const float32x2_t ad = {a0.d[b], a1.d[b]};
        const float32x4_t vd = vcombine_f32(ad, ad);
        const auto * wd = reinterpret_cast<const float *>(pb + 16 * kV);
        for (int h = 0; h < 4; ++h) {
            // {w[4h], w[4h], w[4h+1], w[4h+1]} and {w[4h+2], .., w[4h+3]}: tiles 2h, 2h+1
            const float32x4_t w = vld1q_f32(wd + 4 * h);
            int32x4_t i0 = isum[2 * h], i1 = isum[2 * h + 1];
            if constexpr (kOff) {
                const int32x2_t ac = {a0.c[b], a1.c[b]};
                const int32x4_t vc = vcombine_s32(ac, ac);
                i0 = vsubq_s32(i0, vc);
                i1 = vsubq_s32(i1, vc);
            }
            tile[2 * h] = vfmaq_f32(tile[2 * h], vcvtq_f32_s32(i0), vmulq_f32(vzip1q_f32(w, w), vd));
            tile[2 * h + 1] = vfmaq_f32(tile[2 * h + 1], vcvtq_f32_s32(i1), vmulq_f32(vzip2q_f32(w, w), vd));
            if constexpr (kMin) {
                const float32x2_t as = {a0.s[b], a1.s[b]};
                const float32x4_t vs = vcombine_f32(as, as);
                const float32x4_t mn = vld1q_f32(wd + 16 + 4 * h);
                tile[2 * h] = vfmaq_f32(tile[2 * h], vzip1q_f32(mn, mn), vs);
                tile[2 * h + 1] = vfmaq_f32(tile[2 * h + 1], vzip2q_f32(mn, mn), vs);
            }
        }
    }
}

template <int kV, bool kMin, bool kOff>
void compute(const void * vpanel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst,
             size_t ldd) {
    const auto * panel = static_cast<const uint8_t *>(vpanel);
    const int64_t nb = k / kV;
    float32x4_t tile[8];
    for (int64_t j = 0; j < n; j += 2) {
        const bool two = j + 1 < n;
        const ActRow a0 = act_row<kV>(act, lda, j, k);
        const ActRow a1 = two ? act_row<kV>(act, lda, j + 1, k) : a0;
        for (int64_t g = 0; g * kGroupRows < m; ++g) {
            group_x2<kV, kMin, kOff>(panel, g, nb, a0, a1, tile);
            float out[8][4];
            for (int p = 0; p < 8; ++p) vst1q_f32(out[p], tile[p]);
            for (int64_t r = 0; r < kGroupRows && g * kGroupRows + r < m; ++r) {
                const int64_t i = g * kGroupRows + r;
                dst[j * ldd + i] = out[r / 2][2 * (r % 2)];
                if (two) dst[(j + 1) * ldd + i] = out[r / 2][2 * (r % 2) + 1];
            }
        }
    }
}

// block types: Q5_1's minimum, the others' offsets (Q5_0 16, Q8_0 and IQ4_NL 128)
// Q4_0 (offset 8) and Q4_1 (minimum), whose weights are repacked to x8 from
// the dotprod level up: their Gemm takes prompts of 24 columns or more (the
// panels packed from x8 cost more than the x8 sdot kernel saves below about
// 19 columns; docs/PERF.md)
constexpr int64_t kQ4MinCols = 24;
const Gemm kQ4_0 = {kPanelRows,
                    gemm_q_act_size,
                    ref::gemm_pack_act_q4_0,
                    gemm_q_panel_size,
                    pack_panel_neon<DecodeQ4_0>,
                    compute<32, false, true>,
                    kQ4MinCols};
const Gemm kQ4_1 = {kPanelRows,
                    gemm_q_act_size,
                    ref::gemm_pack_act_q4_1,
                    gemm_q_panel_size,
                    pack_panel_neon<DecodeQ4_1>,
                    compute<32, true, false>,
                    kQ4MinCols};
const Gemm kQ5_0 = {kPanelRows,
                    gemm_q_act_size,
                    ref::gemm_pack_act_q5_0,
                    gemm_q_panel_size,
                    pack_panel_neon<DecodeQ5_0>,
                    compute<32, false, true>};
const Gemm kQ5_1 = {kPanelRows,
                    gemm_q_act_size,
                    ref::gemm_pack_act_q5_1,
                    gemm_q_panel_size,
                    pack_panel_neon<DecodeQ5_1>,
                    compute<32, true, false>};
const Gemm kQ8_0 = {kPanelRows,
                    gemm_q_act_size,
                    ref::gemm_pack_act_q8_0,
                    gemm_q_panel_size,
                    pack_panel_neon<DecodeQ8_0>,
                    compute<32, false, true>};
const Gemm kIQ4_NL = {kPanelRows,
                      gemm_q_act_size,
                      ref::gemm_pack_act_q8_0,
                      gemm_q_panel_size,
                      pack_panel_neon<DecodeIQ4_NL>,
                      compute<32, false, true>};
// K-quants (layouts.h): Q4_K / Q5_K sub-blocks with minimum, c = 0; IQ4_XS
// levels + 128; Q6_K 16-value groups, levels + 32
const Gemm kQ4_K = {kPanelRows,
                    gemm_q_act_size,
                    ref::gemm_pack_act_q4_K,
                    gemm_q_panel_size,
                    pack_panel_neon<DecodeQ4_K>,
                    compute<32, true, false>};
const Gemm kQ5_K = {kPanelRows,
                    gemm_q_act_size,
                    ref::gemm_pack_act_q4_K,
                    gemm_q_panel_size,
                    pack_panel_neon<DecodeQ5_K>,
                    compute<32, true, false>};
// Q2_K / Q3_K: 16-value groups, levels + 32, on Q6_K's microkernel
const Gemm kQ2_K = {kPanelRows,          gemm_q16_act_size,           ref::gemm_pack_act_q2_K,
                    gemm_q16_panel_size, pack_panel_neon<DecodeQ2_K>, compute<16, true, true>};
const Gemm kQ3_K = {kPanelRows,          gemm_q16_act_size,           ref::gemm_pack_act_q6_K,
                    gemm_q16_panel_size, pack_panel_neon<DecodeQ3_K>, compute<16, false, true>};
const Gemm kQ6_K = {kPanelRows,          gemm_q16_act_size,           ref::gemm_pack_act_q6_K,
                    gemm_q16_panel_size, pack_panel_neon<DecodeQ6_K>, compute<16, false, true>};
const Gemm kIQ4_XS = {kPanelRows,
                      gemm_q_act_size,
                      ref::gemm_pack_act_iq4_xs,
                      gemm_q_panel_size,
                      pack_panel_neon<DecodeIQ4_XS>,
                      compute<32, false, true>};

} // namespace

void fill_i8mm_gemm(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_Q4_0] = &kQ4_0;
    k.gemm[LM_GGML_TYPE_Q4_1] = &kQ4_1;
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

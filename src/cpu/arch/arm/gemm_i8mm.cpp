// ARMv8.6 int8 matrix multiply (usmmla; HWCAP2_I8MM): the Gemm of the
// 32-value block types whose weights stay row-major (Q5_0, Q5_1, Q8_0,
// IQ4_NL; the dotprod level has no Gemm for them) on the shared layouts
// (layouts.h "Gemm (block types)"): activation rows and panels from the
// scalar twins' packers, Q8_0's panels packed here with NEON (same bytes,
// the tests compare). Q4_0 and Q4_1 stay on the dotprod level's repacked
// x8 kernels: through this Gemm, whose panels are unpacked from the
// repacked layout, a prompt token of SmolLM2 Q4_1 took more instructions
// under qemu than on the x8 path (docs/PERF.md, ARM64 section).
// usmmla multiplies a 2x8 block of unsigned bytes (two weight rows, eight
// values each) by a 2x8 block of signed bytes (two activation rows) into a
// 2x2 int32 tile. The panel holds 4 values of each of 16 rows per vector t,
// so zipping 32-bit lanes of vectors t and t+1 gives two rows' 8 values.
// Tile: 16 weight rows (one panel group) x 2 activation rows.
// Twins: ref::kGemmQ5_0, kGemmQ5_1, kGemmQ8_0, kGemmIQ4_NL (ref::gemm_compute_q).
#if defined(__aarch64__)

#include "arm.h"
#include "simd_neon.h"

#include "../layouts.h"
#include "../ref.h"
#include "../../../quant/quants.h"

#include <cstring>

#if !defined(__ARM_FEATURE_MATMUL_INT8)
#error "gemm_i8mm.cpp needs -march=armv8.2-a+dotprod+i8mm (src/cpu/arch/flags.cmake)"
#endif

namespace lmggml::cpu::arch::arm {
namespace {

using namespace layout;

constexpr int64_t kGroups = kPanelRows / kGroupRows;

// One activation row's fields (layouts.h): q[k], then d, s, c per block.
struct ActRow {
    const int8_t * q;
    const float * d;
    const float * s;
    const int32_t * c;
};

static inline ActRow act_row(const void * act, size_t lda, int64_t j, int64_t k) {
    ActRow r;
    r.q = static_cast<const int8_t *>(act) + j * lda;
    r.d = reinterpret_cast<const float *>(r.q + k);
    r.s = r.d + k / kQK;
    r.c = reinterpret_cast<const int32_t *>(r.s + k / kQK);
    return r;
}

// Q8_0 panels: per block, per 16-row group, vector t lane r = values
// 4t..4t+3 of row r plus 128 (unsigned); rows past m zero.
void pack_panel_q8_0(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    auto * panel = static_cast<uint8_t *>(vpanel);
    const uint8x16_t bias = vdupq_n_u8(0x80);
    for (int64_t b = 0; b < k / kQK; ++b) {
        for (int64_t g = 0; g < kGroups; ++g) {
            uint8_t * pb = panel + (b * kGroups + g) * kPanelBlockBytes;
            auto * d = reinterpret_cast<float *>(pb + 16 * kQK);
            for (int64_t r = 0; r < kGroupRows; ++r) {
                const int64_t i = g * kGroupRows + r;
                uint8x16_t lo = vdupq_n_u8(0), hi = vdupq_n_u8(0);
                float rd = 0.0f;
                if (i < m) {
                    const char * row = static_cast<const char *>(w) + i * ldw;
                    const auto * x = reinterpret_cast<const lm_block_q8_0 *>(row) + b;
                    uint16_t h;
                    std::memcpy(&h, &x->d, sizeof(h));
                    rd = from_f16(h);
                    lo = veorq_u8(vld1q_u8(reinterpret_cast<const uint8_t *>(x->qs)), bias);
                    hi = veorq_u8(vld1q_u8(reinterpret_cast<const uint8_t *>(x->qs) + 16), bias);
                }
                uint8_t * q = pb + 4 * r;
                vst1q_lane_u32(reinterpret_cast<uint32_t *>(q + 0 * 64), vreinterpretq_u32_u8(lo), 0);
                vst1q_lane_u32(reinterpret_cast<uint32_t *>(q + 1 * 64), vreinterpretq_u32_u8(lo), 1);
                vst1q_lane_u32(reinterpret_cast<uint32_t *>(q + 2 * 64), vreinterpretq_u32_u8(lo), 2);
                vst1q_lane_u32(reinterpret_cast<uint32_t *>(q + 3 * 64), vreinterpretq_u32_u8(lo), 3);
                vst1q_lane_u32(reinterpret_cast<uint32_t *>(q + 4 * 64), vreinterpretq_u32_u8(hi), 0);
                vst1q_lane_u32(reinterpret_cast<uint32_t *>(q + 5 * 64), vreinterpretq_u32_u8(hi), 1);
                vst1q_lane_u32(reinterpret_cast<uint32_t *>(q + 6 * 64), vreinterpretq_u32_u8(hi), 2);
                vst1q_lane_u32(reinterpret_cast<uint32_t *>(q + 7 * 64), vreinterpretq_u32_u8(hi), 3);
                d[r] = rd;
                d[16 + r] = 0.0f;
            }
        }
    }
}

// {x[0], x[0], x[1], x[1]}: a row pair's field in the tile's order
static inline float32x4_t pair_rows(const float * x) {
    const float32x2_t v = vld1_f32(x);
    return vzip1q_f32(vcombine_f32(v, v), vcombine_f32(v, v));
}

// Rows 0..15 of panel group g times activation rows a0, a1 (a1 may be a0),
// into tile[8]: tile p = {(2p, a0), (2p, a1), (2p+1, a0), (2p+1, a1)}.
void group_x2(const uint8_t * panel, int64_t g, int64_t nb, const ActRow & a0, const ActRow & a1, float32x4_t * tile) {
    for (int p = 0; p < 8; ++p) tile[p] = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t * pb = panel + (b * kGroups + g) * kPanelBlockBytes;
        // activation values 8u..8u+7 of both rows, u < 4
        int8x16_t a[4];
        for (int u = 0; u < 4; ++u) {
            a[u] = vcombine_s8(vld1_s8(a0.q + b * kQK + 8 * u), vld1_s8(a1.q + b * kQK + 8 * u));
        }
        int32x4_t isum[8];
        for (int p = 0; p < 8; ++p) isum[p] = vdupq_n_s32(0);
        for (int u = 0; u < 4; ++u) {
            for (int h = 0; h < 4; ++h) { // rows 4h..4h+3
                const uint32x4_t lo = vreinterpretq_u32_u8(vld1q_u8(pb + 64 * (2 * u) + 16 * h));
                const uint32x4_t hi = vreinterpretq_u32_u8(vld1q_u8(pb + 64 * (2 * u + 1) + 16 * h));
                isum[2 * h] = vusmmlaq_s32(isum[2 * h], vreinterpretq_u8_u32(vzip1q_u32(lo, hi)), a[u]);
                isum[2 * h + 1] = vusmmlaq_s32(isum[2 * h + 1], vreinterpretq_u8_u32(vzip2q_u32(lo, hi)), a[u]);
            }
        }
        // value = wd * ad * (isum - c) + wm * s, per tile entry
        const float32x2_t ad = {a0.d[b], a1.d[b]}, as = {a0.s[b], a1.s[b]};
        const int32x2_t ac = {a0.c[b], a1.c[b]};
        const float32x4_t vd = vcombine_f32(ad, ad), vs = vcombine_f32(as, as);
        const int32x4_t vc = vcombine_s32(ac, ac);
        const auto * wd = reinterpret_cast<const float *>(pb + 16 * kQK);
        const auto * wm = wd + 16;
        for (int p = 0; p < 8; ++p) {
            const float32x4_t x = vcvtq_f32_s32(vsubq_s32(isum[p], vc));
            tile[p] = vfmaq_f32(tile[p], x, vmulq_f32(pair_rows(wd + 2 * p), vd));
            tile[p] = vfmaq_f32(tile[p], pair_rows(wm + 2 * p), vs);
        }
    }
}

void compute(const void * vpanel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst,
             size_t ldd) {
    const auto * panel = static_cast<const uint8_t *>(vpanel);
    const int64_t nb = k / kQK;
    float32x4_t tile[8];
    for (int64_t j = 0; j < n; j += 2) {
        const bool two = j + 1 < n;
        const ActRow a0 = act_row(act, lda, j, k);
        const ActRow a1 = two ? act_row(act, lda, j + 1, k) : a0;
        for (int64_t g = 0; g * kGroupRows < m; ++g) {
            group_x2(panel, g, nb, a0, a1, tile);
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

const Gemm kQ5_0 = {kPanelRows,        gemm_q_act_size,           ref::gemm_pack_act_q5_0,
                    gemm_q_panel_size, ref::gemm_pack_panel_q5_0, compute};
const Gemm kQ5_1 = {kPanelRows,        gemm_q_act_size,           ref::gemm_pack_act_q5_1,
                    gemm_q_panel_size, ref::gemm_pack_panel_q5_1, compute};
const Gemm kQ8_0 = {kPanelRows, gemm_q_act_size, ref::gemm_pack_act_q8_0, gemm_q_panel_size, pack_panel_q8_0, compute};
const Gemm kIQ4_NL = {
    kPanelRows, gemm_q_act_size, ref::gemm_pack_act_q8_0, gemm_q_panel_size, ref::gemm_pack_panel_iq4_nl, compute};

} // namespace

void fill_i8mm_gemm(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_Q5_0] = &kQ5_0;
    k.gemm[LM_GGML_TYPE_Q5_1] = &kQ5_1;
    k.gemm[LM_GGML_TYPE_Q8_0] = &kQ8_0;
    k.gemm[LM_GGML_TYPE_IQ4_NL] = &kIQ4_NL;
}

} // namespace lmggml::cpu::arch::arm

#endif

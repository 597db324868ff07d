// Plain ARMv8 NEON products for F32 and F16 weights (layouts.h: a Gemm
// panel holds 32 weight rows k-major, F16 widened to float when packed):
// the tiled Gemm of prompts and the RowDot of generation.
// Tile: kR vectors of 4 rows x kN activation rows. Four steps of k share
// one activation load per column (fmla by element), so a tile keeps kR kN
// accumulators, kN activation vectors and kR panel vectors in the 32
// registers: 16 rows x 5 columns, 8 x 8 or 4 x 12 by the panel's height.
// Every dst element is one chain of FMAs over k in order (the tiling and the
// chunking of k do not change it). Twins: ref::gemm_pack_* /
// ref::gemm_compute_f, ref::kRowDotF32 / kRowDotF16.
#if defined(__aarch64__)

#include "arm.h"
#include "simd_neon.h"

#include "../gemm_f_walk.h"
#include "../layouts.h"

#include <array>
#include <utility>

namespace lmggml::cpu::arch::arm {
namespace {

using layout::kPanelRows;

// ---------------------------------------------------------------- packing
void pack_act_f32(const float * x, void * act, int64_t k) { std::memcpy(act, x, (size_t) k * sizeof(float)); }

// rounded through F16, as the activations ggml converts for F16 weights
void pack_act_f16(const float * x, void * vact, int64_t k) {
    auto * out = static_cast<float *>(vact);
    int64_t i = 0;
    for (; i + 4 <= k; i += 4) vst1q_f32(out + i, vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    for (; i < k; ++i) out[i] = from_f16(to_f16(x[i]));
}

// values kk..kk+3 of one weight row as floats
template <bool kHalf> static inline float32x4_t load4(const char * row, int64_t kk) {
    if constexpr (kHalf) {
        return load_f16x4(reinterpret_cast<const uint16_t *>(row) + kk);
    } else {
        return vld1q_f32(reinterpret_cast<const float *>(row) + kk);
    }
}

template <bool kHalf> static inline float load1(const char * row, int64_t kk) {
    if constexpr (kHalf) {
        uint16_t h;
        std::memcpy(&h, row + kk * 2, 2);
        return from_f16(h);
    } else {
        float f;
        std::memcpy(&f, row + kk * 4, 4);
        return f;
    }
}

// columns of the 4 x 4 block r (rows) in place: c[t] = (r0[t], r1[t], r2[t], r3[t])
static inline void transpose4(float32x4_t * r) {
    const float32x4_t t0 = vtrn1q_f32(r[0], r[1]), t1 = vtrn2q_f32(r[0], r[1]);
    const float32x4_t t2 = vtrn1q_f32(r[2], r[3]), t3 = vtrn2q_f32(r[2], r[3]);
    const float64x2_t d0 = vreinterpretq_f64_f32(t0), d1 = vreinterpretq_f64_f32(t1);
    const float64x2_t d2 = vreinterpretq_f64_f32(t2), d3 = vreinterpretq_f64_f32(t3);
    r[0] = vreinterpretq_f32_f64(vtrn1q_f64(d0, d2));
    r[1] = vreinterpretq_f32_f64(vtrn1q_f64(d1, d3));
    r[2] = vreinterpretq_f32_f64(vtrn2q_f64(d0, d2));
    r[3] = vreinterpretq_f32_f64(vtrn2q_f64(d1, d3));
}

// 4 rows x 4 steps of k at a time, transposed in registers; rows past m are
// zeros, k % 4 steps go one value at a time
template <bool kHalf> void pack_panel(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    auto * panel = static_cast<float *>(vpanel);
    const char * rows = static_cast<const char *>(w);
    const int64_t k4 = k & ~(int64_t) 3;
    for (int64_t i0 = 0; i0 < kPanelRows; i0 += 4) {
        if (i0 + 4 <= m) {
            for (int64_t kk = 0; kk < k4; kk += 4) {
                float32x4_t v[4];
                for (int t = 0; t < 4; ++t) v[t] = load4<kHalf>(rows + (i0 + t) * ldw, kk);
                transpose4(v);
                for (int t = 0; t < 4; ++t) vst1q_f32(panel + (kk + t) * kPanelRows + i0, v[t]);
            }
            for (int64_t kk = k4; kk < k; ++kk) {
                for (int t = 0; t < 4; ++t) panel[kk * kPanelRows + i0 + t] = load1<kHalf>(rows + (i0 + t) * ldw, kk);
            }
            continue;
        }
        for (int64_t kk = 0; kk < k; ++kk) {
            for (int64_t t = 0; t < 4; ++t) {
                panel[kk * kPanelRows + i0 + t] = i0 + t < m ? load1<kHalf>(rows + (i0 + t) * ldw, kk) : 0.0f;
            }
        }
    }
}

void pack_panel_f32(const void * w, size_t ldw, int64_t m, int64_t k, void * p) { pack_panel<false>(w, ldw, m, k, p); }
void pack_panel_f16(const void * w, size_t ldw, int64_t m, int64_t k, void * p) { pack_panel<true>(w, ldw, m, k, p); }

// ---------------------------------------------------------------- microkernel
using gemm_f::TileFn;

// lanes [0, n) of a vector of dst (n in 1..3: a partial tile's last rows)
static inline float32x4_t load_part(const float * d, int64_t n) {
    float buf[4] = {};
    std::memcpy(buf, d, (size_t) n * sizeof(float));
    return vld1q_f32(buf);
}
static inline void store_part(float * d, int64_t n, float32x4_t v) {
    float buf[4];
    vst1q_f32(buf, v);
    std::memcpy(d, buf, (size_t) n * sizeof(float));
}

// acc += w * lane l of x; the lane must be an immediate
static inline float32x4_t fma_lane(float32x4_t acc, float32x4_t w, float32x4_t x, int l) {
    switch (l) {
        case 0: return vfmaq_laneq_f32(acc, w, x, 0);
        case 1: return vfmaq_laneq_f32(acc, w, x, 1);
        case 2: return vfmaq_laneq_f32(acc, w, x, 2);
        default: return vfmaq_laneq_f32(acc, w, x, 3);
    }
}

// kR vectors of rows (p = the panel + the tile's first row; rows = how many
// are real, 1..4 kR) x kN columns, k steps [k0, k1); first: start from zero.
// Partial sums wait in dst between chunks of k; rows of dst past `rows` are
// neither read nor written.
template <int kR, int kN>
void tile(const float * p, int64_t rows, int64_t k0, int64_t k1, const char * act, size_t lda, float * dst, size_t ldd,
          bool first) {
    const float * x[kN];
    for (int j = 0; j < kN; ++j) x[j] = reinterpret_cast<const float *>(act + j * lda);
    float32x4_t acc[kN][kR];
    for (int j = 0; j < kN; ++j) {
        for (int r = 0; r < kR; ++r) {
            const float * d = dst + j * ldd + 4 * r;
            const int64_t n = rows - 4 * r;
            acc[j][r] = first ? vdupq_n_f32(0.0f) : n >= 4 ? vld1q_f32(d) : n > 0 ? load_part(d, n) : vdupq_n_f32(0.0f);
        }
    }
    int64_t kk = k0;
    for (; kk + 4 <= k1; kk += 4) {
        float32x4_t xv[kN];
        for (int j = 0; j < kN; ++j) xv[j] = vld1q_f32(x[j] + kk);
#pragma GCC unroll 4
        for (int s = 0; s < 4; ++s) {
            float32x4_t wv[kR];
            for (int r = 0; r < kR; ++r) wv[r] = vld1q_f32(p + (kk + s) * kPanelRows + 4 * r);
            for (int j = 0; j < kN; ++j) {
                for (int r = 0; r < kR; ++r) acc[j][r] = fma_lane(acc[j][r], wv[r], xv[j], s);
            }
        }
    }
    for (; kk < k1; ++kk) {
        float32x4_t wv[kR];
        for (int r = 0; r < kR; ++r) wv[r] = vld1q_f32(p + kk * kPanelRows + 4 * r);
        for (int j = 0; j < kN; ++j) {
            const float32x4_t b = vld1q_dup_f32(x[j] + kk);
            for (int r = 0; r < kR; ++r) acc[j][r] = vfmaq_f32(acc[j][r], wv[r], b);
        }
    }
    for (int j = 0; j < kN; ++j) {
        for (int r = 0; r < kR; ++r) {
            float * d = dst + j * ldd + 4 * r;
            const int64_t n = rows - 4 * r;
            if (n >= 4) {
                vst1q_f32(d, acc[j][r]);
            } else if (n > 0) {
                store_part(d, n, acc[j][r]);
            }
        }
    }
}

// tile<kR, 1..kMax>, indexed by columns - 1
template <int kR, int... I> constexpr std::array<TileFn, sizeof...(I)> tiles(std::integer_sequence<int, I...>) {
    return {{&tile<kR, I + 1>...}};
}

constexpr int kCols4 = 5, kCols2 = 8, kCols1 = 12; // columns per tile by row vectors
constexpr auto kTiles4 = tiles<4>(std::make_integer_sequence<int, kCols4>{});
constexpr auto kTiles2 = tiles<2>(std::make_integer_sequence<int, kCols2>{});
constexpr auto kTiles1 = tiles<1>(std::make_integer_sequence<int, kCols1>{});

// 512 steps of k (64 KiB of panel) per pass over the columns: the chunk
// stays in a phone core's L2 while every column passes over it.
constexpr int64_t kChunk = 512;

void compute(const void * vpanel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst,
             size_t ldd) {
    const auto * panel = static_cast<const float *>(vpanel);
    const auto * a = static_cast<const char *>(act);
    const int64_t rows = m < kPanelRows ? m : kPanelRows;
    // the fewest row vectors that cover a short panel (more columns per tile)
    const int64_t grows = rows <= 4 ? 4 : rows <= 8 ? 8 : 16; // rows per tile
    const int64_t ncols = rows <= 4 ? kCols1 : rows <= 8 ? kCols2 : kCols4;
    const TileFn * fns = rows <= 4 ? kTiles1.data() : rows <= 8 ? kTiles2.data() : kTiles4.data();
    gemm_f::walk(panel, rows, grows, ncols, fns, k, kChunk, a, lda, n, dst, ldd);
}

// ---------------------------------------------------------------- RowDot
// Weight rows straight from memory, 4 at a time so each activation load
// serves 4 rows; two accumulators per row cover the FMA latency.
template <bool kHalf> void dot_rows(int64_t k, int64_t m, const void * w, size_t ldw, const void * vact, float * dst) {
    const auto * x = static_cast<const float *>(vact);
    const char * rows = static_cast<const char *>(w);
    const int64_t k8 = k & ~(int64_t) 7;
    int64_t r = 0;
    for (; r + 4 <= m; r += 4) {
        const char * wr[4] = {rows + r * ldw, rows + (r + 1) * ldw, rows + (r + 2) * ldw, rows + (r + 3) * ldw};
        float32x4_t acc[4][2];
        for (auto & a : acc) a[0] = a[1] = vdupq_n_f32(0.0f);
        for (int64_t kk = 0; kk < k8; kk += 8) {
            const float32x4_t x0 = vld1q_f32(x + kk), x1 = vld1q_f32(x + kk + 4);
            for (int i = 0; i < 4; ++i) {
                acc[i][0] = vfmaq_f32(acc[i][0], load4<kHalf>(wr[i], kk), x0);
                acc[i][1] = vfmaq_f32(acc[i][1], load4<kHalf>(wr[i], kk + 4), x1);
            }
        }
        // the four row sums in one vector: pairwise adds of the row vectors
        const float32x4_t s01 = vpaddq_f32(vaddq_f32(acc[0][0], acc[0][1]), vaddq_f32(acc[1][0], acc[1][1]));
        const float32x4_t s23 = vpaddq_f32(vaddq_f32(acc[2][0], acc[2][1]), vaddq_f32(acc[3][0], acc[3][1]));
        float32x4_t sum = vpaddq_f32(s01, s23);
        if (k8 < k) {
            float tail[4] = {};
            for (int i = 0; i < 4; ++i) {
                for (int64_t kk = k8; kk < k; ++kk) tail[i] += load1<kHalf>(wr[i], kk) * x[kk];
            }
            sum = vaddq_f32(sum, vld1q_f32(tail));
        }
        vst1q_f32(dst + r, sum);
    }
    for (; r < m; ++r) {
        const char * row = rows + r * ldw;
        float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(0.0f);
        for (int64_t kk = 0; kk < k8; kk += 8) {
            a0 = vfmaq_f32(a0, load4<kHalf>(row, kk), vld1q_f32(x + kk));
            a1 = vfmaq_f32(a1, load4<kHalf>(row, kk + 4), vld1q_f32(x + kk + 4));
        }
        float s = vaddvq_f32(vaddq_f32(a0, a1));
        for (int64_t kk = k8; kk < k; ++kk) s += load1<kHalf>(row, kk) * x[kk];
        dst[r] = s;
    }
}

const Gemm kF32 = {kPanelRows, layout::gemm_f_act_size, pack_act_f32, layout::gemm_f_panel_size, pack_panel_f32,
                   compute};
const Gemm kF16 = {kPanelRows, layout::gemm_f_act_size, pack_act_f16, layout::gemm_f_panel_size, pack_panel_f16,
                   compute};
const RowDot kRowDotF32 = {layout::gemm_f_act_size, pack_act_f32, dot_rows<false>};
const RowDot kRowDotF16 = {layout::gemm_f_act_size, pack_act_f16, dot_rows<true>};

} // namespace

void fill_neon_gemm_f(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_F32] = &kF32;
    k.gemm[LM_GGML_TYPE_F16] = &kF16;
    k.rowdot[LM_GGML_TYPE_F32] = &kRowDotF32;
    k.rowdot[LM_GGML_TYPE_F16] = &kRowDotF16;
}

} // namespace lmggml::cpu::arch::arm

#endif

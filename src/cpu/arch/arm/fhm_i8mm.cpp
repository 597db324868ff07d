// F16 kernels with FMLAL / FMLAL2 (FEAT_FHM: f16 x f16 products added into
// float lanes, fused, the product exact): the F16 row dot and the attention
// over an F16 KV cache (kernels.h AttnF16; twins in ref_act.cpp / ref_attn.cpp).
// They replace the NEON level's widen-then-multiply (fcvtl + fmla) at the
// i8mm level, which requires FHM too (dispatch.cpp: every core with i8mm
// also has it). Sums never run in F16: each product goes into a float lane.
// vec_dot_f16 rounds nothing more than the F32 path; the attention kernels
// round their float operand (q, p) to F16 once, a relative error of at most
// 2^-11 per product (2^-25 absolute for F16 subnormals), as ggml does with
// q (it converts q to the K type).
#if defined(__aarch64__)

#include "arm.h"
#include "simd_neon.h"

#include "../layouts.h"
#include "../ref.h"

namespace lmggml::cpu::arch::arm {
namespace {

constexpr int64_t kRows = 4;   // query rows per pass over a K row
constexpr int64_t kMaxD = 512; // head dims whose q rows fit the stack buffer
constexpr int64_t kKeys = 4;   // V rows per pass over an accumulator row

inline float16x8_t load_h8(const uint16_t * p) { return vreinterpretq_f16_u16(vld1q_u16(p)); }

void vec_dot_f16(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    const auto * x = static_cast<const uint16_t *>(vx);
    const auto * y = static_cast<const uint16_t *>(vy);
    float32x4_t acc[4] = {vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0)};
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        const float16x8_t x0 = load_h8(x + i), y0 = load_h8(y + i);
        const float16x8_t x1 = load_h8(x + i + 8), y1 = load_h8(y + i + 8);
        acc[0] = vfmlalq_low_f16(acc[0], x0, y0);
        acc[1] = vfmlalq_high_f16(acc[1], x0, y0);
        acc[2] = vfmlalq_low_f16(acc[2], x1, y1);
        acc[3] = vfmlalq_high_f16(acc[3], x1, y1);
    }
    for (; i + 8 <= n; i += 8) {
        const float16x8_t x0 = load_h8(x + i), y0 = load_h8(y + i);
        acc[0] = vfmlalq_low_f16(acc[0], x0, y0);
        acc[1] = vfmlalq_high_f16(acc[1], x0, y0);
    }
    float tail = 0.0f;
    for (; i < n; ++i) tail += from_f16(x[i]) * from_f16(y[i]);
    *s = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3]))) + tail;
}

// Up to kRows query rows, rounded to F16 once, against every K row: per 8
// values one K load, then one q load and two FMLALs per row. Rows with a
// value past F16's range (or NaN) take the float twin.
void scores(int64_t d, int64_t n, const void * k, size_t ldk, const float * q, int64_t g, float * s) {
    if (d > kMaxD) {
        ref::attn_f16_scores(d, n, k, ldk, q, g, s);
        return;
    }
    uint16_t qh[kRows * kMaxD];
    for (int64_t i0 = 0; i0 < g; i0 += kRows) {
        const int64_t rows = g - i0 < kRows ? g - i0 : kRows;
        uint32x4_t in_range = vdupq_n_u32(~0U);
        for (int64_t c = 0; c < rows * d; c += 4) {
            const float32x4_t x = vld1q_f32(q + i0 * d + c);
            in_range = vandq_u32(in_range, vcaleq_f32(x, vdupq_n_f32(65504.0f)));
            vst1_u16(qh + c, vreinterpret_u16_f16(vcvt_f16_f32(x)));
        }
        if (vminvq_u32(in_range) == 0) {
            for (int64_t r = 0; r < rows; ++r)
                ref::attn_f16_scores(d, n, k, ldk, q + (i0 + r) * d, 1, s + (i0 + r) * n);
            continue;
        }
        for (int64_t j = 0; j < n; ++j) {
            const auto * row = reinterpret_cast<const uint16_t *>(static_cast<const char *>(k) + j * (int64_t) ldk);
            float32x4_t acc[kRows][2];
            for (auto & a : acc) a[0] = a[1] = vdupq_n_f32(0.0f);
            for (int64_t c = 0; c < d; c += 8) {
                const float16x8_t kv = load_h8(row + c);
                for (int64_t r = 0; r < rows; ++r) {
                    const float16x8_t qv = load_h8(qh + r * d + c);
                    acc[r][0] = vfmlalq_low_f16(acc[r][0], qv, kv);
                    acc[r][1] = vfmlalq_high_f16(acc[r][1], qv, kv);
                }
            }
            for (int64_t r = 0; r < rows; ++r) s[(i0 + r) * n + j] = vaddvq_f32(vaddq_f32(acc[r][0], acc[r][1]));
        }
    }
}

// One 8-value slice of an accumulator row plus kKeys weighted V rows, the
// weights (rounded to F16) in the lanes of w; the keys in index order.
inline void add_keys(float * a, const uint16_t * v0, size_t ldv, float16x4_t w) {
    const auto * v1 = reinterpret_cast<const uint16_t *>(reinterpret_cast<const char *>(v0) + ldv);
    const auto * v2 = reinterpret_cast<const uint16_t *>(reinterpret_cast<const char *>(v1) + ldv);
    const auto * v3 = reinterpret_cast<const uint16_t *>(reinterpret_cast<const char *>(v2) + ldv);
    float32x4_t lo = vld1q_f32(a), hi = vld1q_f32(a + 4);
    float16x8_t v = load_h8(v0);
    lo = vfmlalq_lane_low_f16(lo, v, w, 0);
    hi = vfmlalq_lane_high_f16(hi, v, w, 0);
    v = load_h8(v1);
    lo = vfmlalq_lane_low_f16(lo, v, w, 1);
    hi = vfmlalq_lane_high_f16(hi, v, w, 1);
    v = load_h8(v2);
    lo = vfmlalq_lane_low_f16(lo, v, w, 2);
    hi = vfmlalq_lane_high_f16(hi, v, w, 2);
    v = load_h8(v3);
    lo = vfmlalq_lane_low_f16(lo, v, w, 3);
    hi = vfmlalq_lane_high_f16(hi, v, w, 3);
    vst1q_f32(a, lo);
    vst1q_f32(a + 4, hi);
}

// kKeys V rows per load / store of the accumulators (one V load and two
// FMLALs per key and 8 values), the last n % kKeys rows one at a time.
void accumulate(int64_t d, int64_t n, const void * v, size_t ldv, const float * p, int64_t g, float * acc) {
    for (int64_t i = 0; i < g; ++i) {
        float * a = acc + i * d;
        const float * pi = p + i * n;
        int64_t j = 0;
        for (; j + kKeys <= n; j += kKeys) {
            const float16x4_t w = vcvt_f16_f32(vld1q_f32(pi + j));
            const auto * row = reinterpret_cast<const uint16_t *>(static_cast<const char *>(v) + j * (int64_t) ldv);
            for (int64_t c = 0; c < d; c += 8) add_keys(a + c, row + c, ldv, w);
        }
        for (; j < n; ++j) {
            const float16x8_t w = vdupq_n_f16((float16_t) pi[j]);
            const auto * row = reinterpret_cast<const uint16_t *>(static_cast<const char *>(v) + j * (int64_t) ldv);
            for (int64_t c = 0; c < d; c += 8) {
                const float16x8_t vv = load_h8(row + c);
                vst1q_f32(a + c, vfmlalq_low_f16(vld1q_f32(a + c), vv, w));
                vst1q_f32(a + c + 4, vfmlalq_high_f16(vld1q_f32(a + c + 4), vv, w));
            }
        }
    }
}

// ---------------------------------------------------------------- F16 RowDot
// Generation's product with F16 weights (the NEON level's RowDot layout: an
// F32 activation row already rounded through F16). The row is converted
// back to F16 (exactly) kChunk values at a time into a stack buffer, then
// per 8 values of 4 weight rows: one activation load, four weight loads and
// eight FMLALs (the row dot above needs two loads and two FMLALs per row).
constexpr int64_t kChunk = 4096;

// rows r..r+nr-1 (nr <= 4) over values [k0, k0 + kc): dst[i] += the dot
inline void fhm_rows(const char * rows, size_t ldw, int64_t nr, int64_t k0, int64_t kc, const uint16_t * xh,
                     const float * x, float * dst) {
    const uint16_t * wr[4];
    for (int64_t j = 0; j < 4; ++j) {
        wr[j] = reinterpret_cast<const uint16_t *>(rows + (j < nr ? j : 0) * (int64_t) ldw) + k0;
    }
    float32x4_t acc[4][2];
    for (auto & a : acc) a[0] = a[1] = vdupq_n_f32(0.0f);
    const int64_t k8 = kc & ~(int64_t) 7;
    for (int64_t i = 0; i < k8; i += 8) {
        const float16x8_t xv = load_h8(xh + i);
        for (int64_t j = 0; j < 4; ++j) {
            const float16x8_t wv = load_h8(wr[j] + i);
            acc[j][0] = vfmlalq_low_f16(acc[j][0], wv, xv);
            acc[j][1] = vfmlalq_high_f16(acc[j][1], wv, xv);
        }
    }
    for (int64_t j = 0; j < nr; ++j) {
        float sum = vaddvq_f32(vaddq_f32(acc[j][0], acc[j][1]));
        for (int64_t i = k8; i < kc; ++i) sum += from_f16(wr[j][i]) * x[k0 + i];
        dst[j] += sum;
    }
}

void rowdot_f16(int64_t k, int64_t m, const void * w, size_t ldw, const void * vact, float * dst) {
    const auto * x = static_cast<const float *>(vact);
    const char * rows = static_cast<const char *>(w);
    alignas(16) uint16_t xh[kChunk];
    for (int64_t r = 0; r < m; ++r) dst[r] = 0.0f;
    for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
        const int64_t kc = k - k0 < kChunk ? k - k0 : kChunk;
        for (int64_t i = 0; i + 8 <= kc; i += 8) {
            const float16x4_t lo = vcvt_f16_f32(vld1q_f32(x + k0 + i));
            vst1q_u16(xh + i, vreinterpretq_u16_f16(vcvt_high_f16_f32(lo, vld1q_f32(x + k0 + i + 4))));
        }
        // a last group of fewer than 4 rows reads its first row in the unused slots, never past the matrix
        for (int64_t r = 0; r < m; r += 4) {
            fhm_rows(rows + r * (int64_t) ldw, ldw, m - r < 4 ? m - r : 4, k0, kc, xh, x, dst + r);
        }
    }
}

const RowDot kRowDotF16 = {layout::gemm_f_act_size, ref::gemm_pack_act_f16, rowdot_f16};

} // namespace

void fill_i8mm_fhm(KernelSet & k) {
    k.vec_dot[LM_GGML_TYPE_F16] = vec_dot_f16;
    k.rowdot[LM_GGML_TYPE_F16] = &kRowDotF16;
    k.attn_f16.scores = scores;
    k.attn_f16.accumulate = accumulate;
}

} // namespace lmggml::cpu::arch::arm

#endif

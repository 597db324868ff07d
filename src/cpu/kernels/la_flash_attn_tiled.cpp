// FLASH_ATTN_EXT over an F16 KV cache for prompts, on the F32/F16 Gemm
// (arch/kernels.h). The per-row path (la_flash_attn_f16.cpp) widens every K
// and V row once per query row: for a 512-token prompt over a long cache,
// that is 512 passes over megabytes of cache per KV head, from L3, with one
// F16 conversion per 1-4 FMAs. Here a work unit is a block of query rows
// (with their g heads: about kUnitCols query vectors) of one KV head, and per
// tile of keys:
//   scores  K's rows are packed into Gemm panels (widened once per unit) and
//           multiplied with the unit's query vectors: an M x nt block;
//   softmax each query vector's online softmax step (la_flash_attn_rows.h);
//   values  V's tile, widened, is already a k-major panel of 32 output
//           columns (panel[j][i] = V[j][c0 + i]), multiplied with the
//           probabilities as activation rows, then added to the accumulators.
// The Gemm's register tiles reuse each loaded value across many query
// vectors and keys, and each K and V row is widened once per unit.
//
// The F32 and F16 Gemms share one panel layout (layouts.h "Gemm (F32,
// F16)": 32 rows, k-major, floats), so K's F16 rows go through the F16
// Gemm's packer and everything is multiplied by the F32 Gemm with F32
// activations (queries and probabilities are not rounded to F16).
#include "la_flash_attn_rows.h"
#include "la_ops.h"

#include "../arch/kernels.h"
#include "../arch/layouts.h"

#include <algorithm>

namespace lmggml::cpu::la {
namespace {

constexpr int64_t kTileKeys = 128; // keys per tile: the V panels (kTileKeys x 32 floats) stay in L1/L2
constexpr int64_t kUnitCols = 96;  // query vectors per unit, about: enough columns for the Gemm's tiles
constexpr int64_t kMinCols = 16;   // fewer query vectors per KV head: the per-row path
constexpr int64_t kPanel = arch::layout::kPanelRows;

const arch::Gemm * f32_gemm() { return arch::kernels().gemm[LM_GGML_TYPE_F32]; }
const arch::Gemm * f16_gemm() { return arch::kernels().gemm[LM_GGML_TYPE_F16]; }

struct Dims : fa::Shape {
    int64_t rows, blocks, units, cols; // query rows per block, blocks per KV head, units, query vectors per block
    size_t lda_q, lda_p;               // bytes between packed query / probability rows
    explicit Dims(const lm_ggml_tensor * dst) : fa::Shape(dst) {
        rows = std::max<int64_t>(1, std::min(n_q, (kUnitCols + g - 1) / g));
        blocks = (n_q + rows - 1) / rows;
        units = n_b * n_kvh * blocks;
        cols = rows * g;
        lda_q = pad_line(f32_gemm()->act_size(D));
        lda_p = pad_line(f32_gemm()->act_size(kTileKeys));
    }
    // One thread's scratch, in this order: packed queries, packed
    // probabilities, scores, a panel, the value product, the accumulators,
    // the running max and sum.
    size_t q_bytes() const { return (size_t) cols * lda_q; }
    size_t p_bytes() const { return (size_t) cols * lda_p; }
    size_t sc_bytes() const { return pad_line((size_t) (cols * kTileKeys) * sizeof(float)); }
    size_t panel_bytes() const {
        return pad_line(std::max(f16_gemm()->panel_size(D), f32_gemm()->panel_size(kTileKeys)));
    }
    size_t out_bytes() const { return pad_line((size_t) (cols * D) * sizeof(float)); }
    size_t per_thread() const {
        return q_bytes() + p_bytes() + sc_bytes() + panel_bytes() + 2 * out_bytes() +
               pad_line((size_t) (2 * cols) * sizeof(float));
    }
};

struct Tiled : fa::Operands {
    const arch::Gemm & g32;
    const arch::Gemm & g16;
    Dims dims;

    explicit Tiled(const lm_ggml_tensor * d) : fa::Operands(d), g32(*f32_gemm()), g16(*f16_gemm()), dims(d) {}

    // One unit: query rows [r0, r0 + nr) of batch iq3, heads ik2 * g .. + g - 1.
    void unit(int64_t u, char * scratch) const {
        const int64_t g = dims.g, D = dims.D;
        const int64_t ik2 = u % dims.n_kvh;
        const int64_t blk = (u / dims.n_kvh) % dims.blocks;
        const int64_t iq3 = u / (dims.n_kvh * dims.blocks);
        const int64_t ik3 = iq3 / (q->ne[3] / k->ne[3]);
        const int64_t r0 = blk * dims.rows, nr = std::min(dims.rows, dims.n_q - r0), cols = nr * g;

        char * qa = scratch;
        char * pa = qa + dims.q_bytes();
        float * sc = (float *) (pa + dims.p_bytes());
        float * panel = (float *) ((char *) sc + dims.sc_bytes());
        float * prod = (float *) ((char *) panel + dims.panel_bytes());
        float * acc = (float *) ((char *) prod + dims.out_bytes());
        float * M = (float *) ((char *) acc + dims.out_bytes());
        float * S = M + dims.cols;

        // The keys some row of the block sees: hidden tiles at either end are skipped.
        int64_t lo = dims.n_kv, hi = 0;
        for (int64_t r = 0; r < nr; ++r) {
            const char * mrow = mask_row(r0 + r);
            const int64_t h = fa::visible_keys(mask, mrow, dims.n_kv);
            const int64_t l = fa::first_visible_key(mask, mrow, 0, h);
            if (l < h) {
                lo = std::min(lo, l);
                hi = std::max(hi, h);
            }
        }
        // query vector c = r * g + t: row r0 + r, head ik2 * g + t
        for (int64_t c = 0; c < cols; ++c) {
            g32.pack_act((const float *) row_of(q, r0 + c / g, ik2 * g + c % g, iq3), qa + c * dims.lda_q, D);
        }
        std::fill_n(acc, cols * D, 0.0f);
        std::fill_n(M, cols, -INFINITY);
        std::fill_n(S, cols, 0.0f);

        for (int64_t j0 = lo; j0 < hi; j0 += kTileKeys) {
            const int64_t nt = std::min(kTileKeys, hi - j0);
            for (int64_t p0 = 0; p0 < nt; p0 += kPanel) {
                const int64_t pm = std::min(kPanel, nt - p0);
                g16.pack_panel(row_of(k, j0 + p0, ik2, ik3), k->nb[1], pm, D, panel);
                g32.compute(panel, pm, D, qa, dims.lda_q, cols, sc + p0, (size_t) nt);
            }
            bool any = false;
            for (int64_t c = 0; c < cols; ++c) {
                float * st = sc + c * nt;
                any |= fa::softmax_tile_row(sp, st, nt, mask_row(r0 + c / g), j0, ik2 * g + c % g, acc + c * D, D,
                                            M + c, S + c);
                g32.pack_act(st, pa + c * dims.lda_p, nt);
            }
            if (!any) {
                continue;
            }
            for (int64_t c0 = 0; c0 < D; c0 += kPanel) {
                const int64_t pm = std::min(kPanel, D - c0);
                for (int64_t j = 0; j < nt; ++j) {
                    const auto * vrow = (const uint16_t *) row_of(v, j0 + j, ik2, ik3) + c0;
                    kern.math.widen_f16(pm, vrow, panel + j * kPanel);
                    std::fill(panel + j * kPanel + pm, panel + (j + 1) * kPanel, 0.0f);
                }
                g32.compute(panel, pm, nt, pa, dims.lda_p, cols, prod + c0, (size_t) D);
            }
            for (int64_t i = 0; i < cols * D; ++i) acc[i] += prod[i];
        }

        for (int64_t c = 0; c < cols; ++c) {
            float * out = (float *) row_of(dst, ik2 * g + c % g, r0 + c / g, iq3);
            const float inv = 1.0f / S[c]; // as ggml: a row whose keys were all masked divides by zero
            for (int64_t i = 0; i < D; ++i) out[i] = acc[c * D + i] * inv;
        }
    }
};

} // namespace

bool flash_attn_tiled_path(const lm_ggml_tensor * dst) {
    const arch::Gemm * g32 = f32_gemm();
    const arch::Gemm * g16 = f16_gemm();
    if (g32 == nullptr || g16 == nullptr || g32->panel_rows != kPanel || g16->panel_rows != kPanel) {
        return false; // the scalar level: no F32/F16 Gemm
    }
    const lm_ggml_tensor * q = dst->src[0];
    const lm_ggml_tensor * k = dst->src[1];
    // the layout both Gemms share, checked where it can be: same panel bytes
    if (g16->panel_size(q->ne[0]) != g32->panel_size(q->ne[0])) {
        return false;
    }
    return q->ne[1] > 1 && q->ne[1] * (q->ne[2] / k->ne[2]) >= kMinCols;
}

size_t flash_attn_tiled_work_size(const lm_ggml_tensor * dst, int n_threads) {
    return (size_t) n_threads * pad_line(Dims(dst).per_thread());
}

void flash_attn_tiled_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const Tiled t(dst);
    char * scratch = (char *) lm_cpu_thread_scratch(params);
    lm_cpu_chunk_iter it;
    lm_cpu_chunks_begin(params, t.dims.units, 1, &it);
    for (int64_t u0, u1; lm_cpu_chunks_next(params, &it, &u0, &u1);) {
        for (int64_t u = u0; u < u1; ++u) t.unit(u, scratch);
    }
}

} // namespace lmggml::cpu::la

// OUT_PROD: dst(i0, i1, i2, i3) = sum_k a(i0, k, i2/r2, i3/r3) * b(i1, k, i2, i3)
//   a   (ne00, K, ne02, ne03)  F32, or any type with to_float (decoded per row)
//   b   (ne10, K, ne12, ne13)  F32, any strides (b is often a transposed view)
//   dst (ne00, ne10, ne12, ne13)
// Two paths:
//   gemm  F32 a, at least kMinCols dst columns and an F32 Gemm on this CPU
//         (src/cpu/arch/kernels.h): dst is the matrix product A^T-rows x
//         B^T-rows, so a is transposed into scratch (rows of K values, the
//         Gemm's weight rows) and b's rows over k are packed as its
//         activation rows; barrier; then (plane, panel, column split) work
//         items as MUL_MAT's gemm path. Every dst element is one dot over
//         all of k, so results do not depend on the thread count.
//   loop  otherwise: threads own whole dst rows (zeroed, then accumulated
//         over k in ascending order, as ggml does); no barrier.
#include "la_ops.h"
#include "la_vec_dot.h"
#include "../arch/kernels.h"

namespace lmggml::cpu::la {
namespace {

size_t row_bytes(const lm_ggml_tensor * a) {
    return a->type == LM_GGML_TYPE_F32 ? 0 : pad_line((size_t) a->ne[0] * sizeof(float));
}

// Fewer columns than this: the transposes and the barrier cost more than
// the plain loop.
constexpr int64_t kMinCols = 8;
// k values of a transposed per work item of phase 1
constexpr int64_t kBlockK = 64;

const arch::Gemm * gemm_of(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    if (a->type != LM_GGML_TYPE_F32 || dst->ne[0] == 0 || dst->ne[1] < kMinCols || a->ne[1] == 0 ||
        dst->nb[1] % sizeof(float) != 0) { // the Gemm's dst rows are a whole number of floats apart
        return nullptr;
    }
    return arch::kernels().gemm[LM_GGML_TYPE_F32];
}

// Scratch of the gemm path: [a^T][b's packed rows][per thread: panel, one gathered b row]
struct GemmScratch {
    size_t at, act_row, act, panel, tmp;
    GemmScratch(const arch::Gemm & gm, const lm_ggml_tensor * dst) {
        const lm_ggml_tensor * a = dst->src[0];
        const int64_t K = a->ne[1];
        at = pad_line((size_t) (a->ne[0] * K * a->ne[2] * a->ne[3]) * sizeof(float));
        act_row = pad_line(gm.act_size(K));
        act = pad_line(act_row * (size_t) (dst->ne[1] * dst->ne[2] * dst->ne[3]));
        panel = pad_line(gm.panel_size(K));
        tmp = pad_line((size_t) K * sizeof(float));
    }
    size_t total(int n_threads) const { return at + act + (size_t) n_threads * (panel + tmp); }
};

// Phase 1: at[(pa * ne00 + i0) * K + k] = a(i0, k, plane pa), in blocks of
// k; b's row (i1, plane) over k, gathered when b is strided in k, packed for
// the Gemm.
void gemm_pack(const lm_cpu_params * params, const lm_ggml_tensor * dst, const arch::Gemm & gm, const GemmScratch & s,
               float * at, char * act, float * tmp) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    const int64_t ne0 = a->ne[0], K = a->ne[1];
    const int64_t nblk = (K + kBlockK - 1) / kBlockK;
    const Range ra = split(nblk * a->ne[2] * a->ne[3], params->ith, params->nth);
    for (int64_t it = ra.begin; it < ra.end; ++it) {
        const int64_t pa = it / nblk, k0 = (it % nblk) * kBlockK, k1 = std::min(K, k0 + kBlockK);
        float * out = at + pa * ne0 * K;
        const char * x = row_of(a, 0, pa % a->ne[2], pa / a->ne[2]);
        // contiguous writes: the block's rows of a stay in L1 while each
        // output row takes its run (scattered stores K floats apart alias
        // in L1 and miss the TLB)
        for (int64_t i0 = 0; i0 < ne0; ++i0) {
            const char * xi = x + i0 * sizeof(float);
            for (int64_t k = k0; k < k1; ++k) {
                out[i0 * K + k] = *(const float *) (xi + k * a->nb[1]);
            }
        }
    }
    const int64_t ne1 = dst->ne[1], ne2 = dst->ne[2];
    const Range rb = split(ne1 * ne2 * dst->ne[3], params->ith, params->nth);
    for (int64_t ir = rb.begin; ir < rb.end; ++ir) {
        const int64_t i1 = ir % ne1, i2 = (ir / ne1) % ne2, i3 = ir / (ne1 * ne2);
        const char * x = (const char *) b->data + i1 * b->nb[0] + i2 * b->nb[2] + i3 * b->nb[3];
        const float * row = (const float *) x;
        if (b->nb[1] != sizeof(float)) {
            for (int64_t k = 0; k < K; ++k) {
                tmp[k] = *(const float *) (x + k * b->nb[1]);
            }
            row = tmp;
        }
        gm.pack_act(row, act + ir * s.act_row, K);
    }
}

// Phase 2: like MUL_MAT's run_gemm with the transposed a as the weights.
void gemm_compute(const lm_cpu_params * params, lm_ggml_tensor * dst, const arch::Gemm & gm, const GemmScratch & s,
                  const float * at, const char * act, char * panel) {
    const lm_ggml_tensor * a = dst->src[0];
    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], K = a->ne[1];
    const int64_t r2 = dst->ne[2] / a->ne[2], r3 = dst->ne[3] / a->ne[3];
    const int64_t planes = dst->ne[2] * dst->ne[3];
    const int64_t panels = (ne0 + gm.panel_rows - 1) / gm.panel_rows;
    int64_t nsplit = (4 * (int64_t) params->nth + planes * panels - 1) / (planes * panels);
    nsplit = std::max<int64_t>(1, std::min<int64_t>(nsplit, ne1 / 16));
    const int64_t per = (ne1 + nsplit - 1) / nsplit;
    const Range items = split(planes * panels * nsplit, params->ith, params->nth);
    const float * packed = nullptr; // the rows of a^T now in this thread's panel
    for (int64_t it = items.begin; it < items.end; ++it) {
        const int64_t sp = it % nsplit, p = (it / nsplit) % panels, plane = it / (nsplit * panels);
        const int64_t i2 = plane % dst->ne[2], i3 = plane / dst->ne[2];
        const int64_t c0 = sp * per, c1 = std::min(ne1, c0 + per);
        if (c0 >= c1) continue;
        const int64_t row0 = p * gm.panel_rows;
        const int64_t m = std::min(gm.panel_rows, ne0 - row0);
        const float * w = at + (((i3 / r3) * a->ne[2] + i2 / r2) * ne0 + row0) * K;
        if (w != packed) {
            gm.pack_panel(w, (size_t) K * sizeof(float), m, K, panel);
            packed = w;
        }
        float * d = (float *) row_of(dst, c0, i2, i3) + row0;
        gm.compute(panel, m, K, act + (plane * ne1 + c0) * (int64_t) s.act_row, s.act_row, c1 - c0, d,
                   dst->nb[1] / sizeof(float));
    }
}

void gemm_forward(const lm_cpu_params * params, lm_ggml_tensor * dst, const arch::Gemm & gm) {
    const GemmScratch s(gm, dst);
    char * base = (char *) params->wdata;
    char * own = base + s.at + s.act + (size_t) params->ith * (s.panel + s.tmp);
    gemm_pack(params, dst, gm, s, (float *) base, base + s.at, (float *) (own + s.panel));
    sync(params);
    gemm_compute(params, dst, gm, s, (const float *) base, base + s.at, own);
}

} // namespace

bool out_prod_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    if (a == nullptr || b == nullptr || dst->type != LM_GGML_TYPE_F32 || dst->nb[0] != sizeof(float) ||
        b->type != LM_GGML_TYPE_F32) {
        return false;
    }
    if (a->type != LM_GGML_TYPE_F32 && decoder_of(a->type) == nullptr) {
        return false;
    }
    if (a->nb[0] != lm_ggml_type_size(a->type)) {
        return false;
    }
    return dst->ne[0] == a->ne[0] && dst->ne[1] == b->ne[0] && dst->ne[2] == b->ne[2] && dst->ne[3] == b->ne[3] &&
           a->ne[1] == b->ne[1] && a->ne[2] > 0 && a->ne[3] > 0 && b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0;
}

size_t out_prod_work_size(const lm_ggml_tensor * dst, int n_threads) {
    if (const arch::Gemm * gm = gemm_of(dst)) {
        return GemmScratch(*gm, dst).total(n_threads);
    }
    return (size_t) n_threads * row_bytes(dst->src[0]);
}

void out_prod_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    if (const arch::Gemm * gm = gemm_of(dst)) {
        gemm_forward(params, dst, *gm);
        return;
    }

    const int64_t ne0 = dst->ne[0];
    const int64_t ne1 = dst->ne[1];
    const int64_t ne2 = dst->ne[2];
    const int64_t K = a->ne[1];
    const int64_t r2 = ne2 / a->ne[2];
    const int64_t r3 = dst->ne[3] / a->ne[3];

    lm_ggml_to_float_t to_float = nullptr;
    if (a->type != LM_GGML_TYPE_F32) {
        to_float = decoder_of(a->type);
    }
    float * decoded = (float *) ((char *) params->wdata + (size_t) params->ith * row_bytes(a));

    const Range r = split(ne1 * ne2 * dst->ne[3], params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t i3 = ir / (ne1 * ne2);
        const int64_t i2 = (ir / ne1) % ne2;
        const int64_t i1 = ir % ne1;

        float * d = (float *) row_of(dst, i1, i2, i3);
        std::fill_n(d, ne0, 0.0f);
        for (int64_t k = 0; k < K; ++k) {
            const char * xa = row_of(a, k, i2 / r2, i3 / r3);
            const float vb = *(const float *) ((const char *) b->data + i1 * b->nb[0] + k * b->nb[1] + i2 * b->nb[2] +
                                               i3 * b->nb[3]);
            const float * x = (const float *) xa;
            if (to_float != nullptr) {
                to_float(xa, decoded, ne0);
                x = decoded;
            }
            mad_f32(ne0, d, x, vb);
        }
    }
}

} // namespace lmggml::cpu::la

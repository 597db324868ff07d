// MUL_MAT's vector paths (la_mul_mat_fast.h).
//
// Scratch: [b's rows packed for the kernel, line padded][gemm: one weight
// panel per thread]. Phase 1: threads pack their share of b's rows; barrier
// (rowdot and x8 with at most kPrivateRows rows or kPrivateBytes packed:
// every thread packs all of them into its own scratch slice instead, and no
// barrier is needed).
// Phase 2:
//   gemm    work items are (dst plane, panel of weight rows, column split),
//           handed out in contiguous runs so a thread reuses a packed panel
//           across the column splits of one panel.
//   rowdot  chunks of 16 weight rows (per dst plane); a thread starts on its
//           own contiguous share of them, then steals from the others'
//           (lm_cpu_chunks_*); each run it takes (up to 64 rows) is dotted
//           with every column before the next.
//   x8      the same with chunks of one 8-row group, runs of up to 8.
//   gemm on repacked weights: panels are packed straight from the x8
//           groups (the level's x8_pack_panel, else x8::pack_panel;
//           the same bytes as the level's packer makes from the rows).
// Every dst element is computed by one thread in one piece, so results do
// not depend on the thread count.
#include "la_mul_mat_fast.h"

#include "../arch/layouts.h"
#include "../arch/x8.h"
#include "../repack/repack.h"

namespace lmggml::cpu::la {
namespace {

int64_t n_b_rows(const lm_ggml_tensor * b) { return b->ne[1] * b->ne[2] * b->ne[3]; }

// A few activation rows (generation, attention of one token) are packed by
// every thread into its own copy: repeating that tiny work is cheaper than
// the barrier it saves.
constexpr int64_t kPrivateRows = 4;
constexpr size_t kPrivateBytes = 4096;

size_t act_row_bytes(const FastPath & f, int64_t k);

bool private_pack(const FastPath & f, const lm_ggml_tensor * b) {
    return (f.kind == FastPath::rowdot || f.kind == FastPath::x8) &&
           (n_b_rows(b) <= kPrivateRows || act_row_bytes(f, b->ne[0]) * (size_t) n_b_rows(b) <= kPrivateBytes);
}

size_t act_row_bytes(const FastPath & f, int64_t k) {
    switch (f.kind) {
        case FastPath::gemm: return pad_line(f.gm->act_size(k));
        case FastPath::x8: return pad_line(f.rx->act_size(k));
        default: return pad_line(f.rd->act_size(k));
    }
}

// Packs rows r of b (flat index ir = (i3*ne2 + i2)*ne1 + i1).
void pack_b(const FastPath & f, const lm_ggml_tensor * b, Range r, char * out, size_t row) {
    const auto pack = f.kind == FastPath::gemm ? f.gm->pack_act
                      : f.kind == FastPath::x8 ? f.rx->pack_act
                                               : f.rd->pack_act;
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t i3 = ir / (b->ne[1] * b->ne[2]);
        const int64_t i2 = (ir / b->ne[1]) % b->ne[2];
        const int64_t i1 = ir % b->ne[1];
        pack((const float *) row_of(b, i1, i2, i3), out + ir * row, b->ne[0]);
    }
}

// f.repacked: a's weights are in the x8 layout (panels packed by f.rx's packer if it has one)
void run_gemm(const lm_cpu_params * params, lm_ggml_tensor * dst, const FastPath & f, const char * act, size_t row,
              char * panel) {
    const arch::Gemm & gm = *f.gm;
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    const int64_t k = a->ne[0];
    const int64_t n1 = b->ne[1];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];

    const int64_t planes = b->ne[2] * b->ne[3];
    const int64_t panels = (a->ne[1] + gm.panel_rows - 1) / gm.panel_rows;
    const int64_t target = 4 * (int64_t) params->nth; // enough items to balance the threads
    int64_t nsplit = (target + planes * panels - 1) / (planes * panels);
    nsplit = std::max<int64_t>(1, std::min<int64_t>(nsplit, n1 / 16));
    const int64_t per = (n1 + nsplit - 1) / nsplit;
    const Range items = split(planes * panels * nsplit, params->ith, params->nth);

    const char * packed = nullptr; // the weight rows now in this thread's panel
    for (int64_t it = items.begin; it < items.end; ++it) {
        const int64_t s = it % nsplit;
        const int64_t p = (it / nsplit) % panels;
        const int64_t plane = it / (nsplit * panels);
        const int64_t i2 = plane % b->ne[2], i3 = plane / b->ne[2];
        const int64_t c0 = s * per, c1 = std::min(n1, c0 + per);
        if (c0 >= c1) continue;

        const int64_t row0 = p * gm.panel_rows;
        const int64_t m = std::min(gm.panel_rows, a->ne[1] - row0);
        const char * w = row_of(a, row0, i2 / r2, i3 / r3);
        if (w != packed) {
            if (f.repacked) { // m is whole groups: panels start at multiples of 8 rows
                const size_t group_bytes = arch::layout::kX8Rows * a->nb[1];
                if (f.x8_panel != nullptr) {
                    f.x8_panel(k, w, group_bytes, m, panel);
                } else {
                    arch::x8::pack_panel(a->type, k, w, group_bytes, m, panel);
                }
            } else {
                gm.pack_panel(w, a->nb[1], m, k, panel);
            }
            packed = w;
        }
        const char * x = act + ((i3 * b->ne[2] + i2) * n1 + c0) * (int64_t) row;
        float * d = (float *) row_of(dst, c0, i2, i3) + row0;
        gm.compute(panel, m, k, x, row, c1 - c0, d, dst->nb[1] / sizeof(float));
    }
}

// The chunks of every dst plane (per_plane each), handed out by
// lm_cpu_chunks_*: fn(i2, i3, c0, c1) for each run of chunks [c0, c1) of
// plane (i2, i3) this thread takes (a run taken across planes is cut).
// fn's last argument is true when the run does not continue the thread's
// previous one in memory (see prefetch_start).
template <class Fn>
void for_each_run(const lm_cpu_params * params, const lm_ggml_tensor * b, int64_t per_plane, int64_t take, Fn fn) {
    lm_cpu_chunk_iter it;
    lm_cpu_chunks_begin(params, per_plane * b->ne[2] * b->ne[3], take, &it);
    int64_t prev = -1; // the chunk after the previous run
    for (int64_t c0, c1; lm_cpu_chunks_next(params, &it, &c0, &c1);) {
        while (c0 < c1) {
            const int64_t plane = c0 / per_plane;
            const int64_t last = std::min(c1, (plane + 1) * per_plane);
            fn(plane % b->ne[2], plane / b->ne[2], c0 % per_plane, last - plane * per_plane, c0 != prev);
            prev = last % per_plane == 0 ? -1 : last; // planes need not follow each other in memory
            c0 = last;
        }
    }
}

// The RowDot kernels prefetch the weights arch::kWeightPrefetchBytes ahead
// of their loads, so a run that follows the previous one finds its first
// bytes already asked for; a thread's first run (and a stolen one) asks for
// them here, all at once, instead of waiting on demand loads line by line.
void prefetch_start(const char * w, size_t bytes) {
    const size_t n = std::min(bytes, arch::kWeightPrefetchBytes);
    for (size_t i = 0; i < n; i += 64) __builtin_prefetch(w + i, 0, 2); // to L2, as the kernels do
}

void run_rowdot(const lm_cpu_params * params, lm_ggml_tensor * dst, const arch::RowDot & rd, const char * act,
                size_t row) {
    constexpr int64_t kRows = 16; // weight rows per chunk
    constexpr int64_t kTake = 4;  // chunks dotted with all columns before moving on
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    for_each_run(params, b, (a->ne[1] + kRows - 1) / kRows, kTake,
                 [&](int64_t i2, int64_t i3, int64_t c0, int64_t c1, bool cold) {
                     const int64_t t0 = c0 * kRows;
                     const int64_t m = std::min(c1 * kRows, a->ne[1]) - t0;
                     const char * w = row_of(a, t0, i2 / r2, i3 / r3);
                     if (cold) prefetch_start(w, (size_t) m * a->nb[1]);
                     for (int64_t i1 = 0; i1 < b->ne[1]; ++i1) {
                         const char * x = act + ((i3 * b->ne[2] + i2) * b->ne[1] + i1) * (int64_t) row;
                         rd.dot_rows(a->ne[0], m, w, a->nb[1], x, (float *) row_of(dst, i1, i2, i3) + t0);
                     }
                 });
}

void run_x8(const lm_cpu_params * params, lm_ggml_tensor * dst, const arch::RowDotX8 & rx, const char * act,
            size_t row) {
    constexpr int64_t kTake = 8; // 8-row groups (one chunk each) dotted with all columns before moving on
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    const size_t group = arch::layout::kX8Rows * a->nb[1];
    for_each_run(params, b, a->ne[1] / arch::layout::kX8Rows, kTake,
                 [&](int64_t i2, int64_t i3, int64_t g0, int64_t g1, bool cold) {
                     const char * w = row_of(a, 0, i2 / r2, i3 / r3) + g0 * group;
                     if (cold) prefetch_start(w, (size_t) (g1 - g0) * group);
                     for (int64_t i1 = 0; i1 < b->ne[1]; ++i1) {
                         const char * x = act + ((i3 * b->ne[2] + i2) * b->ne[1] + i1) * (int64_t) row;
                         rx.dot_groups(a->ne[0], g1 - g0, w, x,
                                       (float *) row_of(dst, i1, i2, i3) + g0 * arch::layout::kX8Rows);
                     }
                 });
}

} // namespace

FastPath fast_path_for(const Plan & p, const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    FastPath f;
    const arch::KernelSet & ks = arch::kernels();
    if (lm_cpu_is_repacked(a)) { // its bytes are only readable by these paths
        if (b->type != LM_GGML_TYPE_F32) {
            return f; // mul_mat_supports refuses this
        }
        f.repacked = true;
        const arch::Gemm * gm = ks.gemm[a->type];
        if (gm != nullptr && b->ne[1] >= (gm->x8_min_cols > 0 ? gm->x8_min_cols : kGemmMinCols)) {
            f.kind = FastPath::gemm;
            f.gm = ks.gemm[a->type];
        } else {
            f.kind = FastPath::x8;
        }
        f.rx = ks.rowdot_x8[a->type];
        f.x8_panel = ks.x8_pack_panel[a->type];
        return f;
    }
    // only the weight type's own plan (tests force others) and F32 activations we can pack
    if (b->type != LM_GGML_TYPE_F32 || p.vec_dot == nullptr || p.vec_dot != ks.vec_dot[a->type]) {
        return f;
    }
    if (ks.gemm[a->type] != nullptr && b->ne[1] >= kGemmMinCols) {
        f.kind = FastPath::gemm;
        f.gm = ks.gemm[a->type];
    } else if (ks.rowdot[a->type] != nullptr) {
        f.kind = FastPath::rowdot;
        f.rd = ks.rowdot[a->type];
    }
    return f;
}

size_t fast_work_size(const FastPath & f, const lm_ggml_tensor * dst, int n_threads) {
    const lm_ggml_tensor * b = dst->src[1];
    const int64_t k = b->ne[0];
    size_t s = pad_line(act_row_bytes(f, k) * (size_t) n_b_rows(b));
    if (private_pack(f, b)) {
        s *= (size_t) n_threads;
    }
    if (f.kind == FastPath::gemm) {
        s += (size_t) n_threads * pad_line(f.gm->panel_size(k));
    }
    return s;
}

bool fast_private_scratch(const FastPath & f, const lm_ggml_tensor * dst) { return private_pack(f, dst->src[1]); }

void fast_forward(const lm_cpu_params * params, lm_ggml_tensor * dst, const FastPath & f) {
    const lm_ggml_tensor * b = dst->src[1];
    const int64_t k = b->ne[0];
    const size_t row = act_row_bytes(f, k);
    char * act = (char *) params->wdata;

    if (private_pack(f, b)) {
        act = (char *) lm_cpu_thread_scratch(params);
        pack_b(f, b, {0, n_b_rows(b)}, act, row); // no barrier: nobody else reads this copy
    } else {
        pack_b(f, b, split(n_b_rows(b), params->ith, params->nth), act, row);
        sync(params);
    }
    if (dst->ne[0] == 0 || n_b_rows(b) == 0) {
        return;
    }
    if (f.kind == FastPath::gemm) {
        char * panel =
            act + pad_line(row * (size_t) n_b_rows(b)) + (size_t) params->ith * pad_line(f.gm->panel_size(k));
        run_gemm(params, dst, f, act, row, panel);
    } else if (f.kind == FastPath::x8) {
        run_x8(params, dst, *f.rx, act, row);
    } else {
        run_rowdot(params, dst, *f.rd, act, row);
    }
}

} // namespace lmggml::cpu::la

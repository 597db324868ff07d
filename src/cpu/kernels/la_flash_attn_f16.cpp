// FLASH_ATTN_EXT over an F16 KV cache on the CPU's AttnF16 kernels
// (arch/kernels.h). One work unit is the g = n_head / n_head_kv query heads
// that share a KV head, at one query row: each K and V row is widened once
// for all g of them. Keys go in tiles of kTile: the tile's scores, scaled,
// masked and exponentiated with an online softmax (running max M and sum S
// per query; the accumulator is rescaled when M grows), then the tile's V
// rows are added in. A row's keys past its last unmasked one are skipped, and
// so are whole tiles before its first (a sliding window over a long cache).
//
// Generation has few units (SmolLM2: 3 KV heads x 1 row), too few for
// threads to share evenly, so then each unit's visible keys (the span its
// mask row leaves, which a sliding window makes short) are cut into segments
// (flash decoding): threads compute unnormalised partials (M, S, acc) per
// segment into shared scratch, meet at a barrier, and merge them per unit.
// The cut depends on the shape and the mask only, so every thread count (one
// included) sums in the same order.
//
// Prompts (16 or more query vectors per KV head) take the tiled path
// instead, on the Gemm (la_flash_attn_tiled.cpp), where the kernels have one.
#include "la_flash_attn_rows.h"
#include "la_ops.h"

#include "../arch/kernels.h"

namespace lmggml::cpu::la {
namespace {

constexpr int64_t kTile = 256;      // keys per scores tile
constexpr int64_t kMinSegKeys = 64; // keys per segment at least when a unit's keys are split
constexpr int64_t kMinUnits = 8;    // below this many units, split their keys

constexpr int64_t kLeadRows = 16; // rows of a K or V tile fetched before the kernel reaches them

// rows [j, j + n) of KV head ik2 in cache t (K or V), into the L2
inline void prefetch_head_rows(const lm_ggml_tensor * t, int64_t j, int64_t n, int64_t ik2, int64_t ik3) {
    const int64_t bytes = t->ne[0] * (int64_t) sizeof(lm_ggml_fp16_t);
    for (int64_t r = j; r < j + n; ++r) {
        const char * row = (const char *) row_of(t, r, ik2, ik3);
        for (int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(row + b, 0, 2);
    }
}

struct Dims : fa::Shape {
    int64_t units;
    explicit Dims(const lm_ggml_tensor * dst) : fa::Shape(dst), units(n_b * n_q * n_kvh) {}
    // Key segments per unit: from the shape alone, not the thread count, so
    // results do not depend on how many threads run the node.
    int64_t segments() const {
        if (units >= kMinUnits) {
            return 1;
        }
        const int64_t want = (kMinUnits + units - 1) / units;
        return std::max<int64_t>(1, std::min(want, n_kv / kMinSegKeys));
    }
    // floats of one partial: acc g*D, M g, S g
    int64_t partial_floats() const { return g * (D + 2); }
    // bytes of one thread's working rows: q rows g*D, scores g*kTile, and (unsplit) a partial
    size_t per_thread() const { return pad_line((size_t) (g * (D + kTile) + partial_floats()) * sizeof(float)); }
    size_t partials_bytes(int64_t segs) const {
        return segs > 1 ? pad_line((size_t) (units * segs * partial_floats()) * sizeof(float)) : 0;
    }
};

using fa::first_visible_key;
using fa::visible_keys;

struct Attend : fa::Operands {
    Dims dims;

    explicit Attend(const lm_ggml_tensor * d) : fa::Operands(d), dims(d) {}

    void unit_index(int64_t u, int64_t * ik2, int64_t * iq1, int64_t * iq3) const {
        *ik2 = u % dims.n_kvh;
        *iq1 = (u / dims.n_kvh) % dims.n_q;
        *iq3 = u / (dims.n_kvh * dims.n_q);
    }

    // [*lo, *hi): the keys of unit u from the first to the last its mask row shows
    void key_span(int64_t u, int64_t * lo, int64_t * hi) const {
        int64_t ik2, iq1, iq3;
        unit_index(u, &ik2, &iq1, &iq3);
        const char * mrow = mask_row(iq1);
        *hi = visible_keys(mask, mrow, dims.n_kv);
        *lo = first_visible_key(mask, mrow, 0, *hi);
    }

    // Unnormalised partial of unit u over keys [j_begin, j_end): acc (g x D),
    // M and S (g) at part; qb (g*D) and sc (g*kTile) are scratch.
    void partial(int64_t u, int64_t j_begin, int64_t j_end, float * qb, float * sc, float * part) const {
        const int64_t g = dims.g, D = dims.D;
        int64_t ik2, iq1, iq3;
        unit_index(u, &ik2, &iq1, &iq3);
        const int64_t ik3 = iq3 / (q->ne[3] / k->ne[3]);
        float * acc = part;
        float * M = part + g * D;
        float * S = M + g;
        std::fill_n(acc, g * D, 0.0f);
        std::fill_n(M, g, -INFINITY);
        std::fill_n(S, g, 0.0f);
        const char * mrow = mask_row(iq1);
        j_end = std::min(j_end, visible_keys(mask, mrow, dims.n_kv));
        // Whole tiles of hidden keys add nothing (every query's max stays -inf):
        // skip them, keeping the tiles after them where they were, so the
        // result is bit for bit the one over all keys.
        const int64_t first = first_visible_key(mask, mrow, j_begin, j_end);
        if (first > j_begin) {
            j_begin += (first - j_begin) / kTile * kTile;
        }
        if (j_begin >= j_end) {
            return;
        }
        for (int64_t t = 0; t < g; ++t) {
            std::memcpy(qb + t * D, row_of(q, iq1, ik2 * g + t, iq3), (size_t) D * sizeof(float));
        }
        for (int64_t j0 = j_begin; j0 < j_end; j0 += kTile) {
            const int64_t nt = std::min(kTile, j_end - j0);
            // the start of the next stream, fetched while this one is read:
            // the tile's V rows during its scores, the next K rows during its sum
            prefetch_head_rows(v, j0, std::min(nt, kLeadRows), ik2, ik3);
            kern.attn_f16.scores(D, nt, row_of(k, j0, ik2, ik3), k->nb[1], qb, g, sc);
            bool any = false;
            for (int64_t t = 0; t < g; ++t) {
                any |= fa::softmax_tile_row(sp, sc + t * nt, nt, mrow, j0, ik2 * g + t, acc + t * D, D, M + t, S + t);
            }
            if (j0 + nt < j_end) {
                prefetch_head_rows(k, j0 + nt, std::min(j_end - j0 - nt, kLeadRows), ik2, ik3);
            }
            if (any) {
                kern.attn_f16.accumulate(D, nt, row_of(v, j0, ik2, ik3), v->nb[1], sc, g, acc);
            }
        }
    }

    // dst rows of unit u from its nseg partials, nseg apart from parts
    void finish(int64_t u, const float * parts, int64_t nseg) const {
        const int64_t g = dims.g, D = dims.D, pf = dims.partial_floats();
        int64_t ik2, iq1, iq3;
        unit_index(u, &ik2, &iq1, &iq3);
        for (int64_t t = 0; t < g; ++t) {
            float m = -INFINITY;
            for (int64_t s = 0; s < nseg; ++s) m = std::max(m, parts[s * pf + g * D + t]);
            float * out = (float *) row_of(dst, ik2 * g + t, iq1, iq3);
            float sum = 0.0f;
            std::fill_n(out, D, 0.0f);
            for (int64_t s = 0; s < nseg; ++s) {
                const float * p = parts + s * pf;
                const float ms = p[g * D + t];
                if (ms == -INFINITY) {
                    continue; // no visible key in this segment
                }
                const float w = expf(ms - m);
                sum += p[g * D + g + t] * w;
                for (int64_t c = 0; c < D; ++c) out[c] += p[t * D + c] * w;
            }
            const float inv = 1.0f / sum; // as ggml: a row whose keys were all masked divides by zero
            for (int64_t c = 0; c < D; ++c) out[c] *= inv;
        }
    }
};

} // namespace

bool flash_attn_f16_path(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * q = dst->src[0];
    const lm_ggml_tensor * k = dst->src[1];
    const lm_ggml_tensor * v = dst->src[2];
    return k->type == LM_GGML_TYPE_F16 && v->type == LM_GGML_TYPE_F16 && q->ne[0] % 8 == 0 && k->ne[2] == v->ne[2] &&
           k->ne[3] == v->ne[3];
}

size_t flash_attn_f16_work_size(const lm_ggml_tensor * dst, int n_threads) {
    if (flash_attn_tiled_path(dst)) {
        return flash_attn_tiled_work_size(dst, n_threads);
    }
    const Dims d(dst);
    return d.partials_bytes(d.segments()) + (size_t) n_threads * d.per_thread();
}

bool flash_attn_f16_private_scratch(const lm_ggml_tensor * dst, int n_threads) {
    (void) n_threads;
    return flash_attn_tiled_path(dst) || Dims(dst).segments() == 1;
}

void flash_attn_f16_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    if (flash_attn_tiled_path(dst)) {
        flash_attn_tiled_forward(params, dst);
        return;
    }
    const Attend a(dst);
    const Dims & d = a.dims;
    const int64_t segs = d.segments();
    // this thread's rows: its own slice when unsplit, else after the shared partials
    char * mine = segs == 1 ? (char *) lm_cpu_thread_scratch(params)
                            : (char *) params->wdata + d.partials_bytes(segs) + (size_t) params->ith * d.per_thread();
    float * qb = (float *) mine;
    float * sc = qb + d.g * d.D;
    float * part = sc + d.g * kTile;

    lm_cpu_chunk_iter it;
    lm_cpu_chunks_begin(params, d.units * segs, 1, &it);
    if (segs == 1) {
        for (int64_t u0, u1; lm_cpu_chunks_next(params, &it, &u0, &u1);) {
            for (int64_t u = u0; u < u1; ++u) {
                a.partial(u, 0, d.n_kv, qb, sc, part);
                a.finish(u, part, 1);
            }
        }
        return;
    }
    float * parts = (float *) params->wdata; // units x segs partials
    for (int64_t i0, i1; lm_cpu_chunks_next(params, &it, &i0, &i1);) {
        for (int64_t i = i0; i < i1; ++i) {
            const int64_t u = i / segs, s = i % segs;
            int64_t lo = 0, hi = 0;
            a.key_span(u, &lo, &hi);
            const int64_t per = (hi - lo + segs - 1) / segs;
            a.partial(u, lo + s * per, lo + (s + 1) * per, qb, sc, parts + i * d.partial_floats());
        }
    }
    sync(params); // every partial written
    const Range r = split(d.units, params->ith, params->nth);
    for (int64_t u = r.begin; u < r.end; ++u) {
        a.finish(u, parts + u * segs * d.partial_floats(), segs);
    }
}

} // namespace lmggml::cpu::la

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
// threads to share evenly, so then each query row's visible keys (the span
// its mask row leaves, which a sliding window makes short) are cut into
// segments (flash decoding), each taken for every KV head at once (the cache
// rows hold the heads side by side: read front to back, not as one head's
// slice of every row per pass). Threads compute unnormalised partials (M, S,
// acc) per unit and segment into shared scratch, meet at a barrier, and
// merge them per unit. The cut depends on the shape and the mask only, so
// every thread count (one included) sums in the same order.
//
// Prompts (16 or more query vectors per KV head) take the tiled path
// instead, on the Gemm (la_flash_attn_tiled.cpp), where the kernels have one.
#include "la_flash_attn_rows.h"
#include "la_ops.h"

#include "../arch/kernels.h"

namespace lmggml::cpu::la {
namespace {

constexpr int64_t kTile = 256;       // keys per scores tile
constexpr int64_t kMinSegKeys = 128; // keys per segment at least when a row's keys are split
constexpr int64_t kMinUnits = 8;     // below this many units, split their keys

struct Dims : fa::Shape {
    int64_t units;
    explicit Dims(const lm_ggml_tensor * dst) : fa::Shape(dst), units(n_b * n_q * n_kvh) {}
    // Key segments per query row (every KV head of it at once) when there
    // are too few units: from the shape alone, not the thread count, so
    // results do not depend on how many threads run the node.
    int64_t segments() const {
        if (units >= kMinUnits) {
            return 1;
        }
        const int64_t rows = n_q * n_b;
        const int64_t want = (kMinUnits + rows - 1) / rows;
        return std::max<int64_t>(1, std::min(want, n_kv / kMinSegKeys));
    }
    // floats of one partial: acc g*D, M g, S g
    int64_t partial_floats() const { return g * (D + 2); }
    // bytes of one thread's working rows: a row's every head split (q rows,
    // scores of a tile, acc, M, S: Attend::row_segment), and no more than
    // that unsplit (q rows g*D, scores g*kTile, a partial)
    size_t per_thread() const { return pad_line((size_t) (n_kvh * g * (2 * D + kTile + 2)) * sizeof(float)); }
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

    // A partial's acc (g x D), M and S (g) at part, emptied.
    void clear_partial(float * part) const {
        const int64_t g = dims.g, D = dims.D;
        std::fill_n(part, g * D, 0.0f);
        std::fill_n(part + g * D, g, -INFINITY);
        std::fill_n(part + g * D + g, g, 0.0f);
    }

    // Keys [*j_begin, *j_end) of a row with mask row mrow, narrowed to what
    // it shows; false when nothing is left. Whole tiles of hidden keys add
    // nothing (every query's max stays -inf): they are skipped, keeping the
    // tiles after them where they were, so the result is bit for bit the one
    // over all keys.
    bool visible_range(const char * mrow, int64_t * j_begin, int64_t * j_end) const {
        *j_end = std::min(*j_end, visible_keys(mask, mrow, dims.n_kv));
        const int64_t first = first_visible_key(mask, mrow, *j_begin, *j_end);
        if (first > *j_begin) {
            *j_begin += (first - *j_begin) / kTile * kTile;
        }
        return *j_begin < *j_end;
    }

    // KV head ik2's g query rows of row iq1 (batch iq3), into qb (g x D).
    void load_queries(int64_t ik2, int64_t iq1, int64_t iq3, float * qb) const {
        for (int64_t t = 0; t < dims.g; ++t) {
            std::memcpy(qb + t * dims.D, row_of(q, iq1, ik2 * dims.g + t, iq3), (size_t) dims.D * sizeof(float));
        }
    }

    // Keys [j0, j0 + nt) of KV heads [h0, h0 + nh) (batch ik3) for their
    // query rows qb (nh*g x D), added into acc (nh*g x D), M and S (nh*g);
    // sc (nh*g x kTile) is scratch. The x86 kernels fetch their rows ahead, past
    // the tile: the next tile's first K and V rows are on their way when it
    // starts.
    void tile(int64_t h0, int64_t nh, int64_t ik3, const char * mrow, int64_t j0, int64_t nt, const float * qb,
              float * sc, float * acc, float * M, float * S) const {
        const int64_t D = dims.D, rows = nh * dims.g;
        scores_heads(row_of(k, j0, h0, ik3), nh, nt, qb, sc);
        bool any = false;
        for (int64_t i = 0; i < rows; ++i) {
            any |= fa::softmax_tile_row(sp, sc + i * nt, nt, mrow, j0, h0 * dims.g + i, acc + i * D, D, M + i, S + i);
        }
        if (any) {
            accumulate_heads(row_of(v, j0, h0, ik3), nh, nt, sc, acc);
        }
    }

    // nh heads' scores of nt keys from K rows k0 (the first head's slice):
    // the kernel's all-heads form where it has one (kernels.h AttnF16).
    void scores_heads(const void * k0, int64_t nh, int64_t nt, const float * qb, float * sc) const {
        const int64_t g = dims.g, D = dims.D;
        if (nh > 1 && kern.attn_f16.scores_heads != nullptr) {
            kern.attn_f16.scores_heads(D, nt, k0, k->nb[1], k->nb[2], nh, qb, g, sc);
            return;
        }
        for (int64_t h = 0; h < nh; ++h) {
            kern.attn_f16.scores(D, nt, (const char *) k0 + h * k->nb[2], k->nb[1], qb + h * g * D, g, sc + h * g * nt);
        }
    }

    void accumulate_heads(const void * v0, int64_t nh, int64_t nt, const float * p, float * acc) const {
        const int64_t g = dims.g, D = dims.D;
        if (nh > 1 && kern.attn_f16.accumulate_heads != nullptr) {
            kern.attn_f16.accumulate_heads(D, nt, v0, v->nb[1], v->nb[2], nh, p, g, acc);
            return;
        }
        for (int64_t h = 0; h < nh; ++h) {
            kern.attn_f16.accumulate(D, nt, (const char *) v0 + h * v->nb[2], v->nb[1], p + h * g * nt, g,
                                     acc + h * g * D);
        }
    }

    // Unnormalised partial of unit u over keys [j_begin, j_end) at part; qb
    // (g*D) and sc (g*kTile) are scratch.
    void partial(int64_t u, int64_t j_begin, int64_t j_end, float * qb, float * sc, float * part) const {
        const int64_t g = dims.g, D = dims.D;
        int64_t ik2, iq1, iq3;
        unit_index(u, &ik2, &iq1, &iq3);
        const int64_t ik3 = iq3 / (q->ne[3] / k->ne[3]);
        clear_partial(part);
        const char * mrow = mask_row(iq1);
        if (!visible_range(mrow, &j_begin, &j_end)) {
            return;
        }
        load_queries(ik2, iq1, iq3, qb);
        for (int64_t j0 = j_begin; j0 < j_end; j0 += kTile) {
            tile(ik2, 1, ik3, mrow, j0, std::min(kTile, j_end - j0), qb, sc, part, part + g * D, part + g * D + g);
        }
    }

    // Segment s of the keys of query row r (iq1 + n_q * iq3), every KV head
    // at once (kernels.h AttnF16 scores_heads): a cache row holds all heads
    // side by side, and a unit per head read a slice of every row, three
    // times over for SmolLM2, at half the speed from DRAM. Writes the
    // partials of units r * n_kvh + ik2, segment s of segs, in parts; w is
    // the thread's scratch (Dims::per_thread).
    void row_segment(int64_t r, int64_t s, int64_t segs, float * w, float * parts) const {
        const int64_t n_kvh = dims.n_kvh, g = dims.g, D = dims.D, gh = n_kvh * g;
        const int64_t iq1 = r % dims.n_q, iq3 = r / dims.n_q, ik3 = iq3 / (q->ne[3] / k->ne[3]);
        float * qb = w;                // gh x D query rows, head after head
        float * sc = qb + gh * D;      // gh x kTile scores
        float * acc = sc + gh * kTile; // gh x D
        float * M = acc + gh * D;      // gh
        float * S = M + gh;            // gh
        std::fill_n(acc, gh * D, 0.0f);
        std::fill_n(M, gh, -INFINITY);
        std::fill_n(S, gh, 0.0f);
        int64_t lo = 0, hi = 0;
        key_span(r * n_kvh, &lo, &hi);
        const int64_t per = (hi - lo + segs - 1) / segs;
        int64_t j_begin = lo + s * per, j_end = lo + (s + 1) * per;
        const char * mrow = mask_row(iq1);
        if (visible_range(mrow, &j_begin, &j_end)) {
            for (int64_t ik2 = 0; ik2 < n_kvh; ++ik2) load_queries(ik2, iq1, iq3, qb + ik2 * g * D);
            for (int64_t j0 = j_begin; j0 < j_end; j0 += kTile) {
                tile(0, n_kvh, ik3, mrow, j0, std::min(kTile, j_end - j0), qb, sc, acc, M, S);
            }
        }
        const int64_t pf = dims.partial_floats();
        for (int64_t ik2 = 0; ik2 < n_kvh; ++ik2) { // into the unit's partial: acc g x D, M g, S g
            float * part = parts + ((r * n_kvh + ik2) * segs + s) * pf;
            std::copy_n(acc + ik2 * g * D, g * D, part);
            std::copy_n(M + ik2 * g, g, part + g * D);
            std::copy_n(S + ik2 * g, g, part + g * D + g);
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
    if (segs == 1) {
        lm_cpu_chunks_begin(params, d.units, 1, &it);
        for (int64_t u0, u1; lm_cpu_chunks_next(params, &it, &u0, &u1);) {
            for (int64_t u = u0; u < u1; ++u) {
                a.partial(u, 0, d.n_kv, qb, sc, part);
                a.finish(u, part, 1);
            }
        }
        return;
    }
    float * parts = (float *) params->wdata; // units x segs partials
    lm_cpu_chunks_begin(params, d.n_q * d.n_b * segs, 1, &it);
    for (int64_t i0, i1; lm_cpu_chunks_next(params, &it, &i0, &i1);) {
        for (int64_t i = i0; i < i1; ++i) {
            a.row_segment(i / segs, i % segs, segs, qb, parts);
        }
    }
    sync(params); // every partial written
    const Range r = split(d.units, params->ith, params->nth);
    for (int64_t u = r.begin; u < r.end; ++u) {
        a.finish(u, parts + u * segs * d.partial_floats(), segs);
    }
}

} // namespace lmggml::cpu::la

// MUL_MAT_ID (mixture of experts):
//   as  (ne00, ne01, n_as)        one weight matrix per expert
//   b   (ne00, ne11, n_tokens)    ne11 is n_used or 1 (shared by every slot)
//   ids (n_used, n_tokens) I32    experts picked for each token
//   dst (ne01, n_used, n_tokens)  dst[:, s, t] = as[ids[s, t]] . b[:, s % ne11, t]
//
// Phase 1: threads convert b to the weights' vec_dot_type while thread 0
// groups the (slot, token) pairs by expert (a counting sort into scratch).
// Barrier. Phase 2: expert by expert, the threads share its rows or pairs,
// so each expert's weights are streamed once for all the tokens that use it.
#include "la_ops.h"
#include "la_vec_dot.h"

namespace lmggml::cpu::la {
namespace {

constexpr int64_t kTile = 16;

struct Pair {
    int32_t slot;
    int32_t token;
};

// Scratch: [b converted][count per expert][first pair per expert][pairs][F32 row per thread]
struct Layout {
    size_t converted, counts, starts, pairs, row;
    size_t total(int n_threads) const { return converted + counts + starts + pairs + (size_t) n_threads * row; }
};

Layout layout_of(const Plan & p, const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * as = dst->src[0];
    const lm_ggml_tensor * ids = dst->src[2];
    Layout l{};
    l.converted = pad_line(converted_size(p, dst->src[1]));
    l.counts = pad_line((size_t) as->ne[2] * sizeof(int64_t));
    l.starts = l.counts;
    l.pairs = pad_line((size_t) (ids->ne[0] * ids->ne[1]) * sizeof(Pair));
    l.row = p.vec_dot != nullptr ? 0 : pad_line((size_t) as->ne[0] * sizeof(float));
    return l;
}

int32_t expert_of(const lm_ggml_tensor * ids, int64_t slot, int64_t token) {
    int32_t e;
    memcpy(&e, (const char *) ids->data + slot * ids->nb[0] + token * ids->nb[1], sizeof(e));
    return e;
}

// Counting sort of the (slot, token) pairs by expert, token-major within an
// expert (the order ggml visits them). Pairs naming no valid expert get a
// zero dst column instead of reading out of bounds.
void group_by_expert(lm_ggml_tensor * dst, int64_t * counts, int64_t * starts, Pair * pairs) {
    const lm_ggml_tensor * ids = dst->src[2];
    const int64_t n_as = dst->src[0]->ne[2];
    const int64_t n_used = ids->ne[0];
    const int64_t n_tok = ids->ne[1];

    std::fill(counts, counts + n_as, 0);
    for (int64_t t = 0; t < n_tok; ++t) {
        for (int64_t s = 0; s < n_used; ++s) {
            const int32_t e = expert_of(ids, s, t);
            if (e >= 0 && e < n_as) {
                counts[e]++;
            } else {
                std::fill_n((float *) row_of(dst, s, t, 0), dst->ne[0], 0.0f);
            }
        }
    }
    int64_t next = 0;
    for (int64_t e = 0; e < n_as; ++e) {
        starts[e] = next;
        next += counts[e];
        counts[e] = 0; // reused as fill cursor below, ends equal to the count again
    }
    for (int64_t t = 0; t < n_tok; ++t) {
        for (int64_t s = 0; s < n_used; ++s) {
            const int32_t e = expert_of(ids, s, t);
            if (e >= 0 && e < n_as) {
                pairs[starts[e] + counts[e]++] = {(int32_t) s, (int32_t) t};
            }
        }
    }
}

struct Expert {
    const char * weights; // (ne00, ne01) plane of this expert
    const Pair * pairs;   // its (slot, token) pairs
};

void run_direct(const lm_ggml_tensor * as, lm_ggml_tensor * dst, const Plan & p, const Rows & rows, const Expert & x,
                Range r0, Range r1, int64_t ne11) {
    const int64_t n = as->ne[0];
    for (int64_t t1 = r1.begin; t1 < r1.end; t1 += kTile) {
        const int64_t e1 = std::min(t1 + kTile, r1.end);
        for (int64_t t0 = r0.begin; t0 < r0.end; t0 += kTile) {
            const int64_t e0 = std::min(t0 + kTile, r0.end);
            for (int64_t k = t1; k < e1; ++k) {
                const Pair pr = x.pairs[k];
                const char * y = rows.at(pr.slot % ne11, pr.token, 0);
                float * d = (float *) row_of(dst, pr.slot, pr.token, 0);
                for (int64_t ir0 = t0; ir0 < e0; ++ir0) {
                    p.vec_dot((int) n, &d[ir0], 0, x.weights + ir0 * as->nb[1], 0, y, 0, 1);
                }
            }
        }
    }
}

void run_dequant(const lm_ggml_tensor * as, lm_ggml_tensor * dst, const Plan & p, const Rows & rows, const Expert & x,
                 Range r0, Range r1, int64_t ne11, float * scratch) {
    const int64_t n = as->ne[0];
    for (int64_t ir0 = r0.begin; ir0 < r0.end; ++ir0) {
        p.to_float(x.weights + ir0 * as->nb[1], scratch, n);
        for (int64_t k = r1.begin; k < r1.end; ++k) {
            const Pair pr = x.pairs[k];
            const auto * y = (const float *) rows.at(pr.slot % ne11, pr.token, 0);
            ((float *) row_of(dst, pr.slot, pr.token, 0))[ir0] = dot_f32(n, scratch, y);
        }
    }
}

} // namespace

bool mul_mat_id_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * as = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    const lm_ggml_tensor * ids = dst->src[2];
    if (as == nullptr || b == nullptr || ids == nullptr || ids->type != LM_GGML_TYPE_I32 ||
        dst->type != LM_GGML_TYPE_F32 || dst->nb[0] != sizeof(float)) {
        return false;
    }
    const Plan p = plan_for(as->type);
    if (!p.ok || (b->type != LM_GGML_TYPE_F32 && b->type != p.vec_dot_type)) {
        return false;
    }
    if (as->nb[0] != lm_ggml_type_size(as->type) || b->nb[0] != lm_ggml_type_size(b->type)) {
        return false;
    }
    if (as->ne[0] != b->ne[0] || as->ne[3] != 1 || b->ne[3] != 1 || ids->ne[2] != 1 || ids->ne[3] != 1 ||
        ids->ne[1] != b->ne[2] || b->ne[1] == 0 || ids->ne[0] % b->ne[1] != 0 || dst->ne[0] != as->ne[1] ||
        dst->ne[1] != ids->ne[0] || dst->ne[2] != b->ne[2] || dst->ne[3] != 1) {
        return false;
    }
    // slot and token indices are kept as int32 in scratch
    if (ids->ne[0] > INT32_MAX || ids->ne[1] > INT32_MAX) {
        return false;
    }
    return b->type == p.vec_dot_type || b->ne[0] % lm_ggml_blck_size(p.vec_dot_type) == 0;
}

size_t mul_mat_id_work_size(const lm_ggml_tensor * dst, int n_threads) {
    return mul_mat_id_work_size_with(dst, n_threads, plan_for(dst->src[0]->type));
}

void mul_mat_id_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    mul_mat_id_forward_with(params, dst, plan_for(dst->src[0]->type));
}

size_t mul_mat_id_work_size_with(const lm_ggml_tensor * dst, int n_threads, const Plan & p) {
    return layout_of(p, dst).total(n_threads);
}

void mul_mat_id_forward_with(const lm_cpu_params * params, lm_ggml_tensor * dst, const Plan & p) {
    const lm_ggml_tensor * as = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    const Layout l = layout_of(p, dst);

    char * w = (char *) params->wdata;
    int64_t * counts = (int64_t *) (w + l.converted);
    int64_t * starts = (int64_t *) (w + l.converted + l.counts);
    Pair * pairs = (Pair *) (w + l.converted + l.counts + l.starts);
    float * row = (float *) (w + l.converted + l.counts + l.starts + l.pairs + (size_t) params->ith * l.row);

    convert_rows(params, p, b, w);
    if (params->ith == 0) {
        group_by_expert(dst, counts, starts, pairs);
    }
    sync(params);

    const Rows rows = activation_rows(p, b, w);
    const int64_t nr0 = as->ne[1];
    const int64_t nth = params->nth;

    for (int64_t e = 0; e < as->ne[2]; ++e) {
        const int64_t nr1 = counts[e];
        if (nr1 == 0) {
            continue;
        }
        // split the longer side across threads, as ggml does
        const int64_t nth0 = nr0 > nr1 ? nth : 1;
        const int64_t nth1 = nr0 > nr1 ? 1 : nth;
        const Range r0 = split(nr0, (int) (params->ith % nth0), (int) nth0);
        const Range r1 = split(nr1, (int) (params->ith / nth0), (int) nth1);
        if (r0.begin >= r0.end || r1.begin >= r1.end) {
            continue;
        }
        const Expert x{row_of(as, 0, e, 0), pairs + starts[e]};
        if (p.vec_dot != nullptr) {
            run_direct(as, dst, p, rows, x, r0, r1, b->ne[1]);
        } else {
            run_dequant(as, dst, p, rows, x, r0, r1, b->ne[1], row);
        }
    }
}

} // namespace lmggml::cpu::la

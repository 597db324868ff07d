// MUL_MAT: dst = a . b, a (weights, ne00 x ne01) broadcast over b's dims 2
// and 3. dst(i0, i1, i2, i3) = dot(a row i0 of plane (i2/r2, i3/r3), b row (i1, i2, i3)).
//
// Phase 1: every thread converts its share of b's rows to the weights'
// vec_dot_type in scratch (skipped when b already has it). Barrier.
// Phase 2: dst is cut into chunks of (a rows x b rows), handed out round-robin;
// every dst element is one dot, so results do not depend on the thread count.
//
// When the CPU's kernel set has a vector path for the weight type (gemm for
// many columns, rowdot for few; la_mul_mat_fast.h), that runs instead.
#include "la_mul_mat_fast.h"
#include "la_ops.h"
#include "la_vec_dot.h"

#include "../repack/repack.h"

namespace lmggml::cpu::la {
namespace {

constexpr int64_t kTile = 16;        // direct path: 16 a rows x 16 b rows per tile
constexpr int64_t kDequantCols = 64; // dequantize path: b rows sharing one decoded a row

// Scratch: [b converted, line padded][one F32 a row per thread (dequantize path only)]
size_t converted_bytes(const Plan & p, const lm_ggml_tensor * b) { return pad_line(converted_size(p, b)); }
size_t dequant_row_bytes(const Plan & p, const lm_ggml_tensor * a) {
    return p.vec_dot != nullptr ? 0 : pad_line((size_t) a->ne[0] * sizeof(float));
}

struct Job {
    const lm_ggml_tensor * a;
    lm_ggml_tensor * dst;
    Plan plan;
    Rows rows;       // activation rows of vec_dot_type
    int64_t r2, r3;  // broadcast factors of a over b
    float * scratch; // this thread's decoded a row
};

struct Index {
    int64_t i1, i2, i3;
};

// flat b-row index -> (i1, i2, i3) in dst/b coordinates
inline Index unflatten(const lm_ggml_tensor * dst, int64_t ir1) {
    const int64_t n12 = dst->ne[1] * dst->ne[2];
    const int64_t i3 = ir1 / n12;
    const int64_t i2 = (ir1 - i3 * n12) / dst->ne[1];
    return {ir1 - i3 * n12 - i2 * dst->ne[1], i2, i3};
}

void chunk_direct(const Job & j, Range r0, Range r1) {
    const int64_t n = j.a->ne[0];
    for (int64_t t1 = r1.begin; t1 < r1.end; t1 += kTile) {
        const int64_t e1 = std::min(t1 + kTile, r1.end);
        for (int64_t t0 = r0.begin; t0 < r0.end; t0 += kTile) {
            const int64_t e0 = std::min(t0 + kTile, r0.end);
            for (int64_t ir1 = t1; ir1 < e1; ++ir1) {
                const Index x = unflatten(j.dst, ir1);
                const char * w = row_of(j.a, 0, x.i2 / j.r2, x.i3 / j.r3);
                const char * y = j.rows.at(x.i1, x.i2, x.i3);
                float * d = (float *) row_of(j.dst, x.i1, x.i2, x.i3);
                for (int64_t ir0 = t0; ir0 < e0; ++ir0) {
                    j.plan.vec_dot((int) n, &d[ir0], 0, w + ir0 * j.a->nb[1], 0, y, 0, 1);
                }
            }
        }
    }
}

// Each a row is decoded once per group of b rows that share its plane.
void chunk_dequant(const Job & j, Range r0, Range r1) {
    const int64_t n = j.a->ne[0];
    for (int64_t t1 = r1.begin; t1 < r1.end; t1 += kDequantCols) {
        const int64_t e1 = std::min(t1 + kDequantCols, r1.end);
        for (int64_t ir0 = r0.begin; ir0 < r0.end; ++ir0) {
            const char * decoded = nullptr;
            for (int64_t ir1 = t1; ir1 < e1; ++ir1) {
                const Index x = unflatten(j.dst, ir1);
                const char * w = row_of(j.a, ir0, x.i2 / j.r2, x.i3 / j.r3);
                if (w != decoded) {
                    j.plan.to_float(w, j.scratch, n);
                    decoded = w;
                }
                const float * y = (const float *) j.rows.at(x.i1, x.i2, x.i3);
                float * d = (float *) row_of(j.dst, x.i1, x.i2, x.i3);
                d[ir0] = dot_f32(n, j.scratch, y);
            }
        }
    }
}

} // namespace

bool mul_mat_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    if (a == nullptr || b == nullptr || dst->type != LM_GGML_TYPE_F32 || dst->nb[0] != sizeof(float)) {
        return false;
    }
    const Plan p = plan_for(a->type);
    if (!p.ok || (b->type != LM_GGML_TYPE_F32 && b->type != p.vec_dot_type)) {
        return false;
    }
    if (lm_cpu_is_repacked(a) && b->type != LM_GGML_TYPE_F32) {
        return false; // repacked weights are only read by the F32 paths (la_mul_mat_fast.h)
    }
    // rows must be packed along dim 0 (ggml does not take transposed operands)
    if (a->nb[0] != lm_ggml_type_size(a->type) || b->nb[0] != lm_ggml_type_size(b->type)) {
        return false;
    }
    if (a->ne[0] != b->ne[0] || dst->ne[0] != a->ne[1] || dst->ne[1] != b->ne[1] || dst->ne[2] != b->ne[2] ||
        dst->ne[3] != b->ne[3]) {
        return false;
    }
    if (a->ne[2] == 0 || a->ne[3] == 0 || b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0) {
        return false;
    }
    // converted activation rows must be whole blocks of vec_dot_type
    return b->type == p.vec_dot_type || b->ne[0] % lm_ggml_blck_size(p.vec_dot_type) == 0;
}

bool mul_mat_private_scratch(const lm_ggml_tensor * dst, int n_threads) {
    (void) n_threads;
    const FastPath f = fast_path_for(plan_for(dst->src[0]->type), dst);
    return f.kind != FastPath::none && fast_private_scratch(f, dst);
}

size_t mul_mat_work_size(const lm_ggml_tensor * dst, int n_threads) {
    return mul_mat_work_size_with(dst, n_threads, plan_for(dst->src[0]->type));
}

void mul_mat_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    mul_mat_forward_with(params, dst, plan_for(dst->src[0]->type));
}

size_t mul_mat_work_size_with(const lm_ggml_tensor * dst, int n_threads, const Plan & p) {
    if (const FastPath f = fast_path_for(p, dst); f.kind != FastPath::none) {
        return fast_work_size(f, dst, n_threads);
    }
    return converted_bytes(p, dst->src[1]) + (size_t) n_threads * dequant_row_bytes(p, dst->src[0]);
}

void mul_mat_forward_with(const lm_cpu_params * params, lm_ggml_tensor * dst, const Plan & p) {
    if (const FastPath f = fast_path_for(p, dst); f.kind != FastPath::none) {
        fast_forward(params, dst, f);
        return;
    }
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    char * w = (char *) params->wdata;

    convert_rows(params, p, b, w);
    sync(params);

    const int64_t nr0 = dst->ne[0];                           // a rows
    const int64_t nr1 = dst->ne[1] * dst->ne[2] * dst->ne[3]; // b rows
    if (nr0 == 0 || nr1 == 0) {
        return;
    }

    // Chunking as ggml: 16x16 (64 for vector products); when that gives too
    // few chunks to balance, one chunk per thread along the longer side.
    // The dequantize path takes 64 b rows per chunk so that each a row is
    // decoded once for all of them.
    const int64_t nth = params->nth;
    const int64_t chunk = (nr0 == 1 || nr1 == 1) ? 64 : 16;
    const int64_t chunk1 = p.vec_dot != nullptr ? chunk : std::max(chunk, kDequantCols);
    int64_t nc0 = (nr0 + chunk - 1) / chunk;
    int64_t nc1 = (nr1 + chunk1 - 1) / chunk1;
    if (nc0 * nc1 < nth * 4) {
        nc0 = nr0 > nr1 ? nth : 1;
        nc1 = nr0 > nr1 ? 1 : nth;
    }
    const int64_t dr0 = (nr0 + nc0 - 1) / nc0;
    const int64_t dr1 = (nr1 + nc1 - 1) / nc1;

    Job j{};
    j.a = a;
    j.dst = dst;
    j.plan = p;
    j.rows = activation_rows(p, b, w);
    j.r2 = b->ne[2] / a->ne[2];
    j.r3 = b->ne[3] / a->ne[3];
    j.scratch = (float *) (w + converted_bytes(p, b) + (size_t) params->ith * dequant_row_bytes(p, a));

    for (int64_t c = params->ith; c < nc0 * nc1; c += nth) {
        const int64_t c0 = c % nc0;
        const int64_t c1 = c / nc0;
        const Range r0{std::min(c0 * dr0, nr0), std::min(c0 * dr0 + dr0, nr0)};
        const Range r1{std::min(c1 * dr1, nr1), std::min(c1 * dr1 + dr1, nr1)};
        if (r0.begin >= r0.end || r1.begin >= r1.end) {
            continue;
        }
        if (p.vec_dot != nullptr) {
            chunk_direct(j, r0, r1);
        } else {
            chunk_dequant(j, r0, r1);
        }
    }
}

} // namespace lmggml::cpu::la

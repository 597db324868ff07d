// Data movement: REPEAT, CONCAT (any dim), GET_ROWS, PAD (zeros appended at
// the end of each dim) and UPSCALE (nearest neighbour). Work is split over
// dst rows; elements move as bytes, or are converted between float types
// where src and dst types differ (GET_ROWS F16 -> F32 and the like).

#include "ew_common.h"
#include "ew_ops.h"

namespace lm_cpu_ew {

namespace {

bool plain_type(lm_ggml_type t) {
    return t >= 0 && t < LM_GGML_TYPE_COUNT && !lm_ggml_is_quantized(t) && lm_ggml_type_size(t) > 0;
}

// src elements can be moved into dst: same type, or a float conversion
bool movable(lm_ggml_type s, lm_ggml_type d) {
    return plain_type(s) && plain_type(d) && (s == d || (is_float_type(s) && is_float_type(d)));
}

void zero_run(char * p, size_t stride, int64_t n, size_t esz) {
    if (stride == esz) {
        std::memset(p, 0, n * esz);
        return;
    }
    for (int64_t k = 0; k < n; ++k) std::memset(p + k * stride, 0, esz);
}

} // namespace

// ---------------------------------------------------------------- REPEAT
void repeat_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const int64_t ne00 = a->ne[0];
    const size_t esz = lm_ggml_type_size(dst->type);
    const Range r = split(nrows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, dst->ne);
        const char * s = row_ptr(a, i.i1 % a->ne[1], i.i2 % a->ne[2], i.i3 % a->ne[3]);
        char * d = row_ptr_mut(dst, i.i1, i.i2, i.i3);
        for (int64_t k0 = 0; k0 < dst->ne[0]; k0 += ne00) {
            copy_run(a->type, s, a->nb[0], dst->type, d + k0 * dst->nb[0], dst->nb[0], ne00, esz);
        }
    }
}

bool repeat_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    if (!a || !movable(a->type, dst->type)) {
        return false;
    }
    if (is_empty(a)) {
        return is_empty(dst); // ggml_can_repeat's rule for empty tensors
    }
    for (int i = 0; i < LM_GGML_MAX_DIMS; ++i) {
        if (dst->ne[i] % a->ne[i] != 0) return false;
    }
    return true;
}

// ---------------------------------------------------------------- CONCAT
// i32[0] = dim. dst = src0 followed by src1 along dim.
void concat_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    const int dim = lm_ggml_get_op_params_i32(dst, 0);
    const size_t esz = lm_ggml_type_size(dst->type);
    const Range r = split(nrows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, dst->ne);
        char * d = row_ptr_mut(dst, i.i1, i.i2, i.i3);
        if (dim == 0) {
            copy_run(a->type, row_ptr(a, i.i1, i.i2, i.i3), a->nb[0], dst->type, d, dst->nb[0], a->ne[0], esz);
            copy_run(b->type, row_ptr(b, i.i1, i.i2, i.i3), b->nb[0], dst->type, d + a->ne[0] * dst->nb[0], dst->nb[0],
                     b->ne[0], esz);
            continue;
        }
        int64_t c[4] = {0, i.i1, i.i2, i.i3};
        const lm_ggml_tensor * s = a;
        if (c[dim] >= a->ne[dim]) {
            c[dim] -= a->ne[dim];
            s = b;
        }
        copy_run(s->type, row_ptr(s, c[1], c[2], c[3]), s->nb[0], dst->type, d, dst->nb[0], dst->ne[0], esz);
    }
}

bool concat_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    const int dim = lm_ggml_get_op_params_i32(dst, 0);
    if (!a || !b || dim < 0 || dim >= LM_GGML_MAX_DIMS || !movable(a->type, dst->type) ||
        !movable(b->type, dst->type)) {
        return false;
    }
    for (int i = 0; i < LM_GGML_MAX_DIMS; ++i) {
        const int64_t want = i == dim ? a->ne[i] + b->ne[i] : a->ne[i];
        if (dst->ne[i] != want || (i != dim && b->ne[i] != a->ne[i])) return false;
    }
    return true;
}

// ---------------------------------------------------------------- GET_ROWS
// src0 (ne00, ne01, ne02, ne03) table, src1 (ne10, ne11, ne12) I32 row ids,
// dst (ne00, ne10, ne11, ne12): dst[:, i10, i11, i12] = src0[:, id, i11, i12].
void get_rows_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * ids = dst->src[1];
    const size_t esz = lm_ggml_type_size(dst->type);
    const Range r = split(nrows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, dst->ne);
        int32_t id;
        std::memcpy(&id,
                    static_cast<const char *>(ids->data) + i.i1 * ids->nb[0] + i.i2 * ids->nb[1] + i.i3 * ids->nb[2],
                    sizeof(id));
        // an id outside the table is a caller bug that would read out of bounds
        LM_GGML_ASSERT(id >= 0 && id < a->ne[1]);
        copy_run(a->type, row_ptr(a, id, i.i2, i.i3), a->nb[0], dst->type, row_ptr_mut(dst, i.i1, i.i2, i.i3),
                 dst->nb[0], a->ne[0], esz);
    }
}

bool get_rows_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * ids = dst->src[1];
    return a && ids && ids->type == LM_GGML_TYPE_I32 && movable(a->type, dst->type) && dst->ne[0] == a->ne[0] &&
           dst->ne[1] == ids->ne[0] && dst->ne[2] == ids->ne[1] && dst->ne[3] == ids->ne[2] && ids->ne[3] == 1 &&
           a->ne[2] == ids->ne[1] && a->ne[3] == ids->ne[2];
}

// ---------------------------------------------------------------- PAD
void pad_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const size_t esz = lm_ggml_type_size(dst->type);
    const Range r = split(nrows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, dst->ne);
        char * d = row_ptr_mut(dst, i.i1, i.i2, i.i3);
        int64_t done = 0;
        if (i.i1 < a->ne[1] && i.i2 < a->ne[2] && i.i3 < a->ne[3]) {
            copy_run(a->type, row_ptr(a, i.i1, i.i2, i.i3), a->nb[0], dst->type, d, dst->nb[0], a->ne[0], esz);
            done = a->ne[0];
        }
        zero_run(d + done * dst->nb[0], dst->nb[0], dst->ne[0] - done, esz);
    }
}

bool pad_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    if (!a || !movable(a->type, dst->type)) {
        return false;
    }
    for (int i = 0; i < LM_GGML_MAX_DIMS; ++i) {
        if (dst->ne[i] < a->ne[i]) return false;
    }
    return true;
}

// ---------------------------------------------------------------- UPSCALE
// Nearest neighbour: src index = (int64)(dst index / (dst ne / src ne)), the
// ratio and the division in float as ggml computes them.
void upscale_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const size_t esz = lm_ggml_type_size(dst->type);
    float sf[4];
    for (int k = 0; k < 4; ++k) sf[k] = static_cast<float>(dst->ne[k]) / static_cast<float>(a->ne[k]);
    const Range r = split(nrows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, dst->ne);
        const int64_t j1 = static_cast<int64_t>(static_cast<float>(i.i1) / sf[1]);
        const int64_t j2 = static_cast<int64_t>(static_cast<float>(i.i2) / sf[2]);
        const int64_t j3 = static_cast<int64_t>(static_cast<float>(i.i3) / sf[3]);
        const char * s = row_ptr(a, j1, j2, j3);
        char * d = row_ptr_mut(dst, i.i1, i.i2, i.i3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
            const int64_t j0 = static_cast<int64_t>(static_cast<float>(i0) / sf[0]);
            copy_run(a->type, s + j0 * a->nb[0], a->nb[0], dst->type, d + i0 * dst->nb[0], dst->nb[0], 1, esz);
        }
    }
}

bool upscale_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    if (!a || !movable(a->type, dst->type) || is_empty(a)) {
        return false;
    }
    for (int i = 0; i < LM_GGML_MAX_DIMS; ++i) {
        if (dst->ne[i] < a->ne[i]) return false;
    }
    return true;
}

} // namespace lm_cpu_ew

// DUP / CPY / CONT: dst's elements in row-major order are src's elements in
// row-major order (shapes may differ, layouts are arbitrary), converted
// between F32/F16/BF16 or copied bytewise when the types match (block types
// copy whole blocks). Conversions to or from block types belong to the quant
// kernels and are reported unsupported here.
//
// SET / ACC: dst = src0, then the view of dst given by op_params
// (i32[0..2] = nb1, nb2, nb3 in bytes, i32[3] = offset, i32[4] = inplace) is
// overwritten with (SET) or incremented by (ACC) src1. Instead of ggml's
// copy-then-barrier, each thread owns a slice of dst's elements and does both
// phases for that slice only, so no barrier is needed.

#include "ew_common.h"
#include "ew_ops.h"

namespace lm_cpu_ew {

namespace {

int64_t nelements(const lm_ggml_tensor * t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }

bool known_type(lm_ggml_type t) { return t >= 0 && t < LM_GGML_TYPE_COUNT && lm_ggml_type_size(t) > 0; }

// Rows packed back to back with no gaps (dims of size 1 may have any stride).
bool is_packed(const lm_ggml_tensor * t) {
    const size_t ts = lm_ggml_type_size(t->type);
    if (t->ne[0] != 1 && t->nb[0] != ts) {
        return false;
    }
    size_t next = ts * (t->ne[0] / lm_ggml_blck_size(t->type));
    for (int i = 1; i < LM_GGML_MAX_DIMS; ++i) {
        if (t->ne[i] != 1 && t->nb[i] != next) {
            return false;
        }
        next *= t->ne[i];
    }
    return true;
}

// A block-type tensor can be copied block by block when its rows hold whole
// blocks laid out contiguously.
bool whole_blocks(const lm_ggml_tensor * t) {
    const int64_t bs = lm_ggml_blck_size(t->type);
    return t->ne[0] % bs == 0 && (t->ne[0] == bs || t->nb[0] == lm_ggml_type_size(t->type));
}

struct ViewParams {
    int64_t nb1, nb2, nb3, offset;
    bool inplace;
};

ViewParams view_params(const lm_ggml_tensor * dst) {
    return {lm_ggml_get_op_params_i32(dst, 0), lm_ggml_get_op_params_i32(dst, 1), lm_ggml_get_op_params_i32(dst, 2),
            lm_ggml_get_op_params_i32(dst, 3), lm_ggml_get_op_params_i32(dst, 4) != 0};
}

// Shared supports() of SET and ACC: the view must be element aligned and lie
// inside dst, which must be packed (the view is addressed in dst's bytes).
bool view_op_supported(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    if (!a || !b || !known_type(dst->type) || lm_ggml_is_quantized(dst->type) || a->type != dst->type ||
        !same_shape(a, dst) || !is_packed(dst) || lm_ggml_is_quantized(b->type) || !known_type(b->type)) {
        return false;
    }
    if (b->type != dst->type && !(is_float_type(b->type) && is_float_type(dst->type))) {
        return false;
    }
    const ViewParams v = view_params(dst);
    const int64_t esz = static_cast<int64_t>(lm_ggml_type_size(dst->type));
    if (v.nb1 < 0 || v.nb2 < 0 || v.nb3 < 0 || v.offset < 0 || v.nb1 % esz || v.nb2 % esz || v.nb3 % esz ||
        v.offset % esz) {
        return false;
    }
    if (is_empty(b)) {
        return true;
    }
    const int64_t last =
        v.offset + (b->ne[0] - 1) * esz + (b->ne[1] - 1) * v.nb1 + (b->ne[2] - 1) * v.nb2 + (b->ne[3] - 1) * v.nb3;
    return last + esz <= nelements(dst) * esz;
}

// Calls fn(lo, hi, src1_row_ptr) for each piece of a src1 row that lands in
// dst elements [r.begin, r.end): dst elements lo..hi-1, src1 starting at ptr.
template <class F> void for_each_view_piece(const lm_ggml_tensor * dst, Range r, const F & fn) {
    const lm_ggml_tensor * b = dst->src[1];
    const ViewParams v = view_params(dst);
    const int64_t esz = static_cast<int64_t>(lm_ggml_type_size(dst->type));
    const int64_t rows = nrows(b);
    for (int64_t ir = 0; ir < rows; ++ir) {
        const RowIdx i = row_idx(ir, b->ne);
        const int64_t e0 = (v.offset + i.i1 * v.nb1 + i.i2 * v.nb2 + i.i3 * v.nb3) / esz;
        const int64_t lo = std::max(e0, r.begin);
        const int64_t hi = std::min(e0 + b->ne[0], r.end);
        if (lo < hi) {
            fn(lo, hi, row_ptr(b, i.i1, i.i2, i.i3) + (lo - e0) * b->nb[0]);
        }
    }
}

} // namespace

// ---------------------------------------------------------------- DUP / CPY / CONT
void dup_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    if (is_empty(dst)) {
        return;
    }
    const int64_t total = units_per_row(dst) * nrows(dst);
    const Range r = split(total, params->ith, params->nth);
    if (r.begin >= r.end) {
        return;
    }
    if (src->type == dst->type && is_packed(src) && is_packed(dst)) {
        const size_t ts = lm_ggml_type_size(dst->type);
        const char * s = static_cast<const char *>(src->data) + r.begin * ts;
        char * d = static_cast<char *>(dst->data) + r.begin * ts;
        if (s != d) {
            std::memmove(d, s, (r.end - r.begin) * ts);
        }
        return;
    }
    copy_flat_range(src, dst, r.begin, r.end);
}

bool dup_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    if (!src || !known_type(src->type) || !known_type(dst->type) || nelements(src) != nelements(dst)) {
        return false;
    }
    if (src->type == dst->type) {
        return !lm_ggml_is_quantized(src->type) || (whole_blocks(src) && whole_blocks(dst));
    }
    return is_float_type(src->type) && is_float_type(dst->type);
}

// ---------------------------------------------------------------- SET
void set_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const Range r = split(nelements(dst), params->ith, params->nth);
    if (r.begin >= r.end) {
        return;
    }
    if (!view_params(dst).inplace) {
        copy_flat_range(dst->src[0], dst, r.begin, r.end);
    }
    const lm_ggml_tensor * b = dst->src[1];
    const size_t esz = lm_ggml_type_size(dst->type);
    char * base = static_cast<char *>(dst->data);
    for_each_view_piece(dst, r, [&](int64_t lo, int64_t hi, const char * bp) {
        copy_run(b->type, bp, b->nb[0], dst->type, base + lo * esz, esz, hi - lo, esz);
    });
}

bool set_supports(const lm_ggml_tensor * dst) { return view_op_supported(dst); }

// ---------------------------------------------------------------- ACC
void acc_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const Range r = split(nelements(dst), params->ith, params->nth);
    if (r.begin >= r.end) {
        return;
    }
    if (!view_params(dst).inplace) {
        copy_flat_range(dst->src[0], dst, r.begin, r.end);
    }
    const lm_ggml_tensor * b = dst->src[1];
    const size_t esz = lm_ggml_type_size(dst->type);
    char * base = static_cast<char *>(dst->data);
    for_each_view_piece(dst, r, [&](int64_t lo, int64_t hi, const char * bp) {
        float acc[kChunk];
        float add[kChunk];
        for (int64_t k0 = lo; k0 < hi; k0 += kChunk) {
            const int64_t m = std::min<int64_t>(kChunk, hi - k0);
            load_run(dst->type, base + k0 * esz, esz, m, acc);
            load_run(b->type, bp + (k0 - lo) * b->nb[0], b->nb[0], m, add);
            for (int64_t k = 0; k < m; ++k) acc[k] += add[k];
            store_run(dst->type, base + k0 * esz, esz, m, acc);
        }
    });
}

bool acc_supports(const lm_ggml_tensor * dst) {
    return view_op_supported(dst) && is_float_type(dst->type) && is_float_type(dst->src[1]->type);
}

} // namespace lm_cpu_ew

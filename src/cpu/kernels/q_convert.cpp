// GET_ROWS and F32 <-> block-type copies (see q_convert.h).
#include "q_convert.h"
#include "q_dot.h"
#include "ew_common.h"
#include "ew_ops.h"

#include "../arch/layouts.h"
#include "../arch/x8.h"
#include "../repack/repack.h"

namespace {

using lm_cpu_ew::nrows;
using lm_cpu_ew::Range;
using lm_cpu_ew::row_idx;
using lm_cpu_ew::row_ptr;
using lm_cpu_ew::row_ptr_mut;
using lm_cpu_ew::RowIdx;
using lm_cpu_ew::split;

int64_t nelements(const lm_ggml_tensor * t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }

bool valid_type(lm_ggml_type t) { return t >= 0 && t < LM_GGML_TYPE_COUNT; }

bool is_block_type(lm_ggml_type t) { return valid_type(t) && lm_cpu_get_qtype_ops(t) != nullptr; }

// A copy that converts between F32 and a block type (either direction).
bool is_q_conversion(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    return src && src->type != dst->type && (is_block_type(src->type) || is_block_type(dst->type));
}

// The block type of a conversion and its ops.
const lm_cpu_qtype_ops * block_ops(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    return lm_cpu_get_qtype_ops(is_block_type(dst->type) ? dst->type : src->type);
}

// Converts n values (a multiple of the block size) from in to out: F32 -> blocks or back.
void convert(const lm_cpu_qtype_ops * ops, bool to_blocks, const char * in, char * out, int64_t n) {
    if (to_blocks) {
        ops->from_float(reinterpret_cast<const float *>(in), out, n);
    } else {
        ops->to_float(in, reinterpret_cast<float *>(out), n);
    }
}

} // namespace

// ---------------------------------------------------------------- GET_ROWS
void lm_cpu_q_get_rows_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * ids = dst->src[1];
    const lm_cpu_qtype_ops * ops = lm_cpu_get_qtype_ops(a->type);
    const bool repacked = lm_cpu_is_repacked(a);
    lmggml::cpu::arch::x8::Format fmt{};
    if (repacked) {
        lmggml::cpu::arch::x8::format_of(a->type, &fmt);
    }
    const Range r = split(nrows(dst), params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const RowIdx i = row_idx(ir, dst->ne);
        int32_t id;
        std::memcpy(&id,
                    static_cast<const char *>(ids->data) + i.i1 * ids->nb[0] + i.i2 * ids->nb[1] + i.i3 * ids->nb[2],
                    sizeof(id));
        // an id outside the table is a caller bug that would read out of bounds
        LM_GGML_ASSERT(id >= 0 && id < a->ne[1]);
        auto * out = reinterpret_cast<float *>(row_ptr_mut(dst, i.i1, i.i2, i.i3));
        if (repacked) { // the row's blocks are spread over its group of 8 rows (x8.h)
            const int64_t r = id % lmggml::cpu::arch::layout::kX8Rows;
            const void * group = row_ptr(a, id - r, i.i2, i.i3);
            const int64_t blck = lm_ggml_blck_size(a->type);
            for (int64_t b = 0; b < a->ne[0] / blck; ++b) {
                alignas(8) uint8_t block[64];
                lmggml::cpu::arch::x8::gather_block(fmt, a->ne[0], group, (int) r, b, block);
                ops->to_float(block, out + b * blck, blck);
            }
        } else {
            ops->to_float(row_ptr(a, id, i.i2, i.i3), out, a->ne[0]);
        }
    }
}

bool lm_cpu_q_get_rows_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * ids = dst->src[1];
    if (!a || !ids || !is_block_type(a->type) || dst->type != LM_GGML_TYPE_F32 || ids->type != LM_GGML_TYPE_I32) {
        return false;
    }
    const lm_cpu_qtype_ops * ops = lm_cpu_get_qtype_ops(a->type);
    return ops->to_float && a->ne[0] % lm_ggml_blck_size(a->type) == 0 && dst->nb[0] == sizeof(float) &&
           dst->ne[0] == a->ne[0] && dst->ne[1] == ids->ne[0] && dst->ne[2] == ids->ne[1] && dst->ne[3] == ids->ne[2] &&
           ids->ne[3] == 1 && a->ne[2] == ids->ne[1] && a->ne[3] == ids->ne[2];
}

// ---------------------------------------------------------------- DUP / CPY / CONT
void lm_cpu_q_cpy_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    const lm_cpu_qtype_ops * ops = block_ops(dst);
    const bool to_blocks = is_block_type(dst->type);
    if (src->ne[0] == dst->ne[0]) {
        // row ir of src holds the same flat elements as row ir of dst
        const Range r = split(nrows(dst), params->ith, params->nth);
        for (int64_t ir = r.begin; ir < r.end; ++ir) {
            const RowIdx is = row_idx(ir, src->ne);
            const RowIdx id = row_idx(ir, dst->ne);
            convert(ops, to_blocks, row_ptr(src, is.i1, is.i2, is.i3), row_ptr_mut(dst, id.i1, id.i2, id.i3),
                    dst->ne[0]);
        }
        return;
    }
    // both contiguous: split the flat range by whole blocks of the block-type side
    const lm_ggml_tensor * q = to_blocks ? dst : src;
    const int64_t blck = lm_ggml_blck_size(q->type);
    const Range r = split(nelements(dst) / blck, params->ith, params->nth);
    if (r.begin >= r.end) return;
    const size_t in_unit = to_blocks ? sizeof(float) * blck : lm_ggml_type_size(q->type);
    const size_t out_unit = to_blocks ? lm_ggml_type_size(q->type) : sizeof(float) * blck;
    convert(ops, to_blocks, static_cast<const char *>(src->data) + r.begin * in_unit,
            static_cast<char *>(dst->data) + r.begin * out_unit, (r.end - r.begin) * blck);
}

bool lm_cpu_q_cpy_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    if (!src || !is_q_conversion(dst) || nelements(src) != nelements(dst)) return false;
    const bool to_blocks = is_block_type(dst->type);
    const lm_ggml_tensor * f = to_blocks ? src : dst; // the F32 side
    const lm_ggml_tensor * q = to_blocks ? dst : src; // the block side
    if (f->type != LM_GGML_TYPE_F32 || f->nb[0] != sizeof(float)) return false;
    const lm_cpu_qtype_ops * ops = lm_cpu_get_qtype_ops(q->type);
    if (!(to_blocks ? ops->from_float != nullptr : ops->to_float != nullptr)) return false;
    const int64_t blck = lm_ggml_blck_size(q->type);
    if (q->ne[0] % blck != 0 || q->nb[0] != lm_ggml_type_size(q->type)) return false;
    if (src->ne[0] == dst->ne[0]) return true;
    return lm_ggml_is_contiguous(src) && lm_ggml_is_contiguous(dst);
}

// ---------------------------------------------------------------- registration
namespace {

// a block-type table read into another type (rows of the same type are plain copies)
bool is_q_get_rows(const lm_ggml_tensor * dst) {
    return dst->src[0] && is_block_type(dst->src[0]->type) && dst->type != dst->src[0]->type;
}

void get_rows_dispatch(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    if (is_q_get_rows(dst)) {
        lm_cpu_q_get_rows_forward(params, dst);
    } else {
        lm_cpu_ew::get_rows_forward(params, dst);
    }
}

bool get_rows_dispatch_supports(const lm_ggml_tensor * dst) {
    return is_q_get_rows(dst) ? lm_cpu_q_get_rows_supports(dst) : lm_cpu_ew::get_rows_supports(dst);
}

void dup_dispatch(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    if (is_q_conversion(dst)) {
        lm_cpu_q_cpy_forward(params, dst);
    } else {
        lm_cpu_ew::dup_forward(params, dst);
    }
}

bool dup_dispatch_supports(const lm_ggml_tensor * dst) {
    return is_q_conversion(dst) ? lm_cpu_q_cpy_supports(dst) : lm_cpu_ew::dup_supports(dst);
}

} // namespace

void lm_cpu_register_quant_ops(struct lm_cpu_op_table * table) {
    table->ops[LM_GGML_OP_GET_ROWS].forward = get_rows_dispatch;
    table->ops[LM_GGML_OP_GET_ROWS].supports = get_rows_dispatch_supports;
    for (lm_ggml_op op : {LM_GGML_OP_DUP, LM_GGML_OP_CPY, LM_GGML_OP_CONT}) {
        table->ops[op].forward = dup_dispatch;
        table->ops[op].supports = dup_dispatch_supports;
    }
}

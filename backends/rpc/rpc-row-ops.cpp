// The server's own functions behind row-id guards and the peer's SET_ROWS
// (see rpc-peer-ops.h). They run as lmggml custom-op nodes that the server
// builds itself; their shapes were checked when the graph was built, the ids'
// values are checked here, when the graph runs.

#include "ggml-cpu.h"
#include "rpc-peer-ops.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace rpc {

namespace {

int64_t id_at(const lm_ggml_tensor * ids, const char * p) {
    if (ids->type == LM_GGML_TYPE_I64) {
        int64_t v;
        std::memcpy(&v, p, sizeof(v));
        return v;
    }
    int32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

} // namespace

// dst is an in-place view of ids: an id outside [0, rows) becomes 0 (a row
// that exists) and raises the flag, so the op after it stays in bounds and
// the server refuses the graph once it has run.
void row_guard_op(lm_ggml_tensor * dst, const lm_ggml_tensor * ids, int ith, int /*nth*/, void * userdata) {
    if (ith != 0) {
        return;
    }
    const RowGuard * g = static_cast<const RowGuard *>(userdata);
    for (int64_t i3 = 0; i3 < ids->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ids->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < ids->ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < ids->ne[0]; i0++) {
                    const size_t off = i0 * ids->nb[0] + i1 * ids->nb[1] + i2 * ids->nb[2] + i3 * ids->nb[3];
                    const int64_t id = id_at(ids, (const char *) ids->data + off);
                    if (id < 0 || id >= g->rows) {
                        std::memset((char *) dst->data + off, 0, lm_ggml_type_size(ids->type));
                        g->bad->store(true, std::memory_order_relaxed);
                    }
                }
            }
        }
    }
}

bool set_rows_type_ok(lm_ggml_type t) {
    const lm_ggml_type_traits_cpu * tr = lm_ggml_get_type_traits_cpu(t);
    return tr != nullptr && tr->from_float != nullptr;
}

// dst: an in-place view of the table; row i of (i2, i3) of src goes to row
// ids[i, i2 % n11, i3 % n12] of the table, converted to its type. Threads
// split the rows of src, as ggml's kernel does. An id out of range skips its
// row and raises the graph's flag.
void set_rows_op(lm_ggml_tensor * dst, const lm_ggml_tensor * /*table*/, const lm_ggml_tensor * src,
                 const lm_ggml_tensor * ids, int ith, int nth, void * userdata) {
    const RowGuard * g = static_cast<const RowGuard *>(userdata);
    const int64_t nc = src->ne[0];
    const int64_t nr = src->ne[1];
    const int64_t per = (nr + nth - 1) / nth;
    const int64_t r0 = std::min(nr, per * ith), r1 = std::min(nr, r0 + per);
    const lm_ggml_from_float_t from_float = lm_ggml_get_type_traits_cpu(dst->type)->from_float;
    const bool copy_f16 = src->type == LM_GGML_TYPE_F16 && dst->type == LM_GGML_TYPE_F16;
    std::vector<float> tmp(src->type == LM_GGML_TYPE_F16 && !copy_f16 ? nc : 0);
    for (int64_t i3 = 0; i3 < src->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < src->ne[2]; i2++) {
            for (int64_t i = r0; i < r1; i++) {
                const char * idp = (const char *) ids->data + i * ids->nb[0] + (i2 % ids->ne[1]) * ids->nb[1] +
                                   (i3 % ids->ne[2]) * ids->nb[2];
                const int64_t row = id_at(ids, idp);
                if (row < 0 || row >= dst->ne[1] || row >= g->rows) {
                    g->bad->store(true, std::memory_order_relaxed);
                    continue;
                }
                const char * in = (const char *) src->data + i * src->nb[1] + i2 * src->nb[2] + i3 * src->nb[3];
                char * out = (char *) dst->data + row * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
                if (copy_f16) {
                    std::memcpy(out, in, nc * sizeof(lm_ggml_fp16_t));
                } else if (src->type == LM_GGML_TYPE_F16) {
                    lm_ggml_fp16_to_fp32_row((const lm_ggml_fp16_t *) in, tmp.data(), nc);
                    from_float(tmp.data(), out, nc);
                } else {
                    from_float((const float *) in, out, nc);
                }
            }
        }
    }
}

} // namespace rpc

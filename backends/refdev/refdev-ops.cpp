// refdev compute: plain loops over device memory, one function per op.
// Element (i0, i1, i2, i3) of a tensor lives at byte i0*nb0 + i1*nb1 + ...
// from its data address, so every op below handles any strides unless
// supports_op says otherwise (MUL_MAT wants contiguous inputs).

#include "refdev.h"

#include <atomic>
#include <cstring>

namespace refdev {

namespace {

std::atomic<uint64_t> g_nodes{0};

bool is_no_op(lm_ggml_op op) {
    return op == LM_GGML_OP_NONE || op == LM_GGML_OP_RESHAPE || op == LM_GGML_OP_VIEW || op == LM_GGML_OP_PERMUTE ||
           op == LM_GGML_OP_TRANSPOSE;
}

bool is_f32_or_f16(lm_ggml_type t) { return t == LM_GGML_TYPE_F32 || t == LM_GGML_TYPE_F16; }

bool all_f32(const lm_ggml_tensor * a, const lm_ggml_tensor * b, const lm_ggml_tensor * c) {
    return a->type == LM_GGML_TYPE_F32 && b->type == LM_GGML_TYPE_F32 && c->type == LM_GGML_TYPE_F32;
}

// A tensor's device bytes plus its strides: enough to address any element.
struct view {
    uint8_t * p;
    const int64_t * ne;
    const size_t * nb;
    lm_ggml_type type;

    size_t off(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
        return i0 * nb[0] + i1 * nb[1] + i2 * nb[2] + i3 * nb[3];
    }
    float get(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
        const uint8_t * q = p + off(i0, i1, i2, i3);
        if (type == LM_GGML_TYPE_F16) {
            lm_ggml_fp16_t h;
            std::memcpy(&h, q, sizeof(h));
            return lm_ggml_fp16_to_fp32(h);
        }
        float f;
        std::memcpy(&f, q, sizeof(f));
        return f;
    }
    void set(int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) const {
        uint8_t * q = p + off(i0, i1, i2, i3);
        if (type == LM_GGML_TYPE_F16) {
            const lm_ggml_fp16_t h = lm_ggml_fp32_to_fp16(v);
            std::memcpy(q, &h, sizeof(h));
        } else {
            std::memcpy(q, &v, sizeof(v));
        }
    }
    int32_t get_i32(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
        int32_t v;
        std::memcpy(&v, p + off(i0, i1, i2, i3), sizeof(v));
        return v;
    }
};

// Device view of t, or p == NULL when t is not (entirely) in refdev memory.
view view_of(const lm_ggml_tensor * t) { return {storage_of(t, extent_of(t)), t->ne, t->nb, t->type}; }

// dst = src0 (op) src1, src1 repeated along every dimension to src0's shape
template <typename F> void binary(const view & d, const view & a, const view & b, F f) {
    for (int64_t i3 = 0; i3 < d.ne[3]; i3++)
        for (int64_t i2 = 0; i2 < d.ne[2]; i2++)
            for (int64_t i1 = 0; i1 < d.ne[1]; i1++)
                for (int64_t i0 = 0; i0 < d.ne[0]; i0++) {
                    const float x = a.get(i0, i1, i2, i3);
                    const float y = b.get(i0 % b.ne[0], i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]);
                    d.set(i0, i1, i2, i3, f(x, y));
                }
}

void scale(const view & d, const view & a, float s) {
    for (int64_t i3 = 0; i3 < d.ne[3]; i3++)
        for (int64_t i2 = 0; i2 < d.ne[2]; i2++)
            for (int64_t i1 = 0; i1 < d.ne[1]; i1++)
                for (int64_t i0 = 0; i0 < d.ne[0]; i0++) {
                    d.set(i0, i1, i2, i3, a.get(i0, i1, i2, i3) * s);
                }
}

// Element k in row-major logical order of a goes to element k of d (shapes
// may differ; element counts match), converting between F32 and F16.
void copy_elements(const view & d, const view & a) {
    int64_t j[4] = {0, 0, 0, 0}; // running index into d
    for (int64_t i3 = 0; i3 < a.ne[3]; i3++)
        for (int64_t i2 = 0; i2 < a.ne[2]; i2++)
            for (int64_t i1 = 0; i1 < a.ne[1]; i1++)
                for (int64_t i0 = 0; i0 < a.ne[0]; i0++) {
                    d.set(j[0], j[1], j[2], j[3], a.get(i0, i1, i2, i3));
                    for (int k = 0; k < 4 && ++j[k] == d.ne[k]; k++) {
                        if (k < 3) {
                            j[k] = 0;
                        }
                    }
                }
}

// dst[:, i10, i11, i12] = src0[:, ids[i10, i11, i12], i11, i12]
bool get_rows(const view & d, const view & a, const view & ids) {
    for (int64_t i12 = 0; i12 < ids.ne[2]; i12++)
        for (int64_t i11 = 0; i11 < ids.ne[1]; i11++)
            for (int64_t i10 = 0; i10 < ids.ne[0]; i10++) {
                const int32_t r = ids.get_i32(i10, i11, i12, 0);
                if (r < 0 || r >= a.ne[1]) {
                    log(LM_GGML_LOG_LEVEL_ERROR, "refdev get_rows: row id %d out of range [0, %lld)\n", r,
                        (long long) a.ne[1]);
                    return false;
                }
                for (int64_t i0 = 0; i0 < d.ne[0]; i0++) {
                    d.set(i0, i10, i11, i12, a.get(i0, r, i11, i12));
                }
            }
    return true;
}

// a (K, M, ne02, ne03), b (K, N, ne12, ne13) -> d (M, N, ne12, ne13):
// d[m, n] = sum_k a[k, m] * b[k, n]; a's batch dims broadcast over b's.
void mul_mat(const view & d, const view & a, const view & b) {
    const int64_t r2 = b.ne[2] / a.ne[2];
    const int64_t r3 = b.ne[3] / a.ne[3];
    for (int64_t i3 = 0; i3 < d.ne[3]; i3++)
        for (int64_t i2 = 0; i2 < d.ne[2]; i2++)
            for (int64_t n = 0; n < d.ne[1]; n++)
                for (int64_t m = 0; m < d.ne[0]; m++) {
                    double sum = 0.0;
                    for (int64_t k = 0; k < a.ne[0]; k++) {
                        sum += (double) a.get(k, m, i2 / r2, i3 / r3) * (double) b.get(k, n, i2, i3);
                    }
                    d.set(m, n, i2, i3, (float) sum);
                }
}

// d (1, ne1, ne2, ne3) = sum over dimension 0 of a
void sum_rows(const view & d, const view & a) {
    for (int64_t i3 = 0; i3 < a.ne[3]; i3++)
        for (int64_t i2 = 0; i2 < a.ne[2]; i2++)
            for (int64_t i1 = 0; i1 < a.ne[1]; i1++) {
                double sum = 0.0;
                for (int64_t i0 = 0; i0 < a.ne[0]; i0++) {
                    sum += a.get(i0, i1, i2, i3);
                }
                d.set(0, i1, i2, i3, (float) sum);
            }
}

bool compute_node(lm_ggml_tensor * node) {
    const view d = view_of(node);
    view s[2] = {};
    for (int i = 0; i < 2; i++) {
        if (node->src[i] != nullptr) {
            s[i] = view_of(node->src[i]);
            if (s[i].p == nullptr && !lm_ggml_is_empty(node->src[i])) {
                log(LM_GGML_LOG_LEVEL_ERROR, "refdev compute: node '%s': input '%s' is not in refdev memory\n",
                    node->name, node->src[i]->name);
                return false;
            }
        }
    }
    if (d.p == nullptr) {
        log(LM_GGML_LOG_LEVEL_ERROR, "refdev compute: node '%s': not in refdev memory\n", node->name);
        return false;
    }
    switch (node->op) {
        case LM_GGML_OP_ADD: binary(d, s[0], s[1], [](float x, float y) { return x + y; }); return true;
        case LM_GGML_OP_SUB: binary(d, s[0], s[1], [](float x, float y) { return x - y; }); return true;
        case LM_GGML_OP_MUL: binary(d, s[0], s[1], [](float x, float y) { return x * y; }); return true;
        case LM_GGML_OP_DIV: binary(d, s[0], s[1], [](float x, float y) { return x / y; }); return true;
        case LM_GGML_OP_SCALE: {
            float f;
            std::memcpy(&f, &node->op_params[0], sizeof(f));
            scale(d, s[0], f);
            return true;
        }
        case LM_GGML_OP_CPY:
        case LM_GGML_OP_DUP:
        case LM_GGML_OP_CONT: copy_elements(d, s[0]); return true;
        case LM_GGML_OP_GET_ROWS: return get_rows(d, s[0], s[1]);
        case LM_GGML_OP_MUL_MAT: mul_mat(d, s[0], s[1]); return true;
        case LM_GGML_OP_SUM_ROWS: sum_rows(d, s[0]); return true;
        default: return false; // unreachable: supports_op was checked
    }
}

} // namespace

bool supports_op(const lm_ggml_tensor * op) {
    const lm_ggml_tensor * a = op->src[0];
    const lm_ggml_tensor * b = op->src[1];
    switch (op->op) {
        case LM_GGML_OP_NONE:
        case LM_GGML_OP_RESHAPE:
        case LM_GGML_OP_VIEW:
        case LM_GGML_OP_PERMUTE:
        case LM_GGML_OP_TRANSPOSE: return true;
        case LM_GGML_OP_ADD:
        case LM_GGML_OP_SUB:
        case LM_GGML_OP_MUL:
        case LM_GGML_OP_DIV: return all_f32(op, a, b) && lm_ggml_are_same_shape(op, a) && lm_ggml_can_repeat(b, a);
        case LM_GGML_OP_SCALE:
            return op->type == LM_GGML_TYPE_F32 && a->type == LM_GGML_TYPE_F32 && lm_ggml_are_same_shape(op, a);
        case LM_GGML_OP_CPY:
        case LM_GGML_OP_DUP:
        case LM_GGML_OP_CONT:
            return is_f32_or_f16(op->type) && is_f32_or_f16(a->type) && lm_ggml_nelements(op) == lm_ggml_nelements(a);
        case LM_GGML_OP_GET_ROWS:
            return op->type == LM_GGML_TYPE_F32 && is_f32_or_f16(a->type) && b->type == LM_GGML_TYPE_I32 &&
                   op->ne[0] == a->ne[0] && op->ne[1] == b->ne[0] && op->ne[2] == b->ne[1] && op->ne[3] == b->ne[2] &&
                   a->ne[2] == b->ne[1] && a->ne[3] == b->ne[2];
        case LM_GGML_OP_MUL_MAT:
            return all_f32(op, a, b) && lm_ggml_is_contiguous(a) && lm_ggml_is_contiguous(b) && a->ne[0] == b->ne[0] &&
                   b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0 && op->ne[0] == a->ne[1] &&
                   op->ne[1] == b->ne[1] && op->ne[2] == b->ne[2] && op->ne[3] == b->ne[3];
        case LM_GGML_OP_SUM_ROWS:
            return op->type == LM_GGML_TYPE_F32 && a->type == LM_GGML_TYPE_F32 && op->ne[0] == 1 &&
                   op->ne[1] == a->ne[1] && op->ne[2] == a->ne[2] && op->ne[3] == a->ne[3];
        default: return false;
    }
}

lm_ggml_status compute_graph(lm_ggml_cgraph * graph) {
    const int n = lm_ggml_graph_n_nodes(graph);
    for (int i = 0; i < n; i++) {
        lm_ggml_tensor * node = lm_ggml_graph_node(graph, i);
        if (is_no_op(node->op) || lm_ggml_is_empty(node)) {
            continue;
        }
        if (!supports_op(node)) {
            log(LM_GGML_LOG_LEVEL_ERROR, "refdev compute: node '%s': op %s with these types/layouts is not supported\n",
                node->name, lm_ggml_op_name(node->op));
            return LM_GGML_STATUS_FAILED;
        }
        if (!compute_node(node)) {
            return LM_GGML_STATUS_FAILED;
        }
        g_nodes++;
    }
    return LM_GGML_STATUS_SUCCESS;
}

uint64_t n_nodes_computed() { return g_nodes.load(); }

} // namespace refdev

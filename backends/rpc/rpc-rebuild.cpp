// Rebuilding wire nodes through lmggml's op constructors: see rpc-rebuild.h.

#include "rpc-rebuild.h"

#include <cstdint>
#include <cstring>

namespace rpc {

namespace {

float f32_at(const int32_t * params, int i) {
    float v;
    std::memcpy(&v, params + i, sizeof(v));
    return v;
}

bool padded_1d(const lm_ggml_tensor * t) {
    return t->nb[0] == lm_ggml_type_size(t->type) && t->nb[2] == t->nb[1] * t->ne[1] && t->nb[3] == t->nb[2] * t->ne[2];
}

bool mul_mat_shapes(const lm_ggml_tensor * a, const lm_ggml_tensor * b) {
    return a->ne[0] == b->ne[0] && a->ne[2] != 0 && a->ne[3] != 0 && b->ne[2] % a->ne[2] == 0 &&
           b->ne[3] % a->ne[3] == 0;
}

int64_t n_el(const int64_t * ne) { return ne[0] * ne[1] * ne[2] * ne[3]; }

// lmggml's constructors follow ggml and assert (abort) on inputs they cannot
// take; a server must refuse those first. These are the constructors'
// asserted conditions for every op accepted over the wire.
bool preconditions(lm_ggml_op op, const int32_t * p, lm_ggml_tensor * const * s, const int64_t * ne) {
    const lm_ggml_tensor * a = s[0];
    const lm_ggml_tensor * b = s[1];
    const lm_ggml_tensor * c = s[2];
    switch (op) {
        case LM_GGML_OP_ADD:
        case LM_GGML_OP_SUB:
        case LM_GGML_OP_MUL:
        case LM_GGML_OP_DIV: return b != nullptr && lm_ggml_can_repeat(b, a);
        case LM_GGML_OP_ADD1: return b != nullptr && lm_ggml_is_scalar(b) && padded_1d(a);
        case LM_GGML_OP_CONCAT:
            if (b == nullptr || p[0] < 0 || p[0] >= LM_GGML_MAX_DIMS) {
                return false;
            }
            for (int d = 0; d < LM_GGML_MAX_DIMS; d++) {
                if (d != p[0] && a->ne[d] != b->ne[d]) {
                    return false;
                }
            }
            return true;
        case LM_GGML_OP_MUL_MAT: return b != nullptr && mul_mat_shapes(a, b) && !lm_ggml_is_transposed(a);
        case LM_GGML_OP_MUL_MAT_ID:
            return b != nullptr && c != nullptr && !lm_ggml_is_transposed(a) && c->type == LM_GGML_TYPE_I32 &&
                   a->ne[3] == 1 && b->ne[3] == 1 && c->ne[2] == 1 && c->ne[3] == 1 && c->ne[1] == b->ne[2] &&
                   a->ne[0] == b->ne[0] && b->ne[1] != 0 && c->ne[0] % b->ne[1] == 0;
        case LM_GGML_OP_OUT_PROD:
            return b != nullptr && a->ne[1] == b->ne[1] && a->ne[2] != 0 && a->ne[3] != 0 && b->ne[2] % a->ne[2] == 0 &&
                   b->ne[3] % a->ne[3] == 0 && !lm_ggml_is_transposed(a);
        case LM_GGML_OP_SCALE: return padded_1d(a);
        case LM_GGML_OP_CPY: return b != nullptr && lm_ggml_nelements(a) == lm_ggml_nelements(b);
        case LM_GGML_OP_CONT: return lm_ggml_nelements(a) == n_el(ne);
        case LM_GGML_OP_RESHAPE: return lm_ggml_is_contiguous(a) && lm_ggml_nelements(a) == n_el(ne);
        case LM_GGML_OP_PERMUTE: {
            bool seen[LM_GGML_MAX_DIMS] = {};
            for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
                if (p[i] < 0 || p[i] >= LM_GGML_MAX_DIMS || seen[p[i]]) {
                    return false;
                }
                seen[p[i]] = true;
            }
            return true;
        }
        case LM_GGML_OP_GET_ROWS:
            return b != nullptr && a->ne[2] == b->ne[1] && b->ne[3] == 1 && b->type == LM_GGML_TYPE_I32;
        case LM_GGML_OP_ARGMAX: return lm_ggml_is_matrix(a) && a->ne[0] <= INT32_MAX;
        case LM_GGML_OP_ARGSORT: return a->ne[0] <= INT32_MAX;
        case LM_GGML_OP_UNARY: return lm_ggml_is_contiguous_1(a);
        case LM_GGML_OP_SOFT_MAX: {
            float max_bias;
            std::memcpy(&max_bias, p + 1, sizeof(max_bias));
            if (!lm_ggml_is_contiguous(a) || (max_bias > 0.0f && b == nullptr)) {
                return false;
            }
            return b == nullptr ||
                   ((b->type == LM_GGML_TYPE_F16 || b->type == LM_GGML_TYPE_F32) && lm_ggml_is_contiguous(b) &&
                    lm_ggml_is_matrix(b) && b->ne[0] == a->ne[0] && b->ne[1] >= a->ne[1]);
        }
        case LM_GGML_OP_ROPE: {
            // plain rope_ext only: M-RoPE sections (words 11..14) are not taken
            for (int i = 11; i < 15; i++) {
                if (p[i] != 0) {
                    return false;
                }
            }
            return b != nullptr && (p[2] & 1) == 0 && lm_ggml_is_vector(b) && b->type == LM_GGML_TYPE_I32 &&
                   a->ne[2] == b->ne[0] && (c == nullptr || (c->type == LM_GGML_TYPE_F32 && c->ne[0] >= p[1] / 2));
        }
        case LM_GGML_OP_FLASH_ATTN_EXT: {
            const lm_ggml_tensor * mask = s[3];
            float max_bias;
            std::memcpy(&max_bias, p + 1, sizeof(max_bias));
            if (b == nullptr || c == nullptr || !mul_mat_shapes(b, a) || (max_bias > 0.0f && mask == nullptr)) {
                return false;
            }
            // newer ggml (the peer) no longer pads the mask's rows: it must
            // cover every query, the kernel reads no further
            return mask == nullptr ||
                   (lm_ggml_is_contiguous(mask) && mask->ne[2] == 1 && mask->ne[3] == 1 && mask->ne[1] >= a->ne[1]);
        }
        default: return true; // constructors that refuse bad input by returning NULL
    }
}

} // namespace

bool op_rebuildable(lm_ggml_op op) {
    switch (op) {
        case LM_GGML_OP_DUP:
        case LM_GGML_OP_ADD:
        case LM_GGML_OP_ADD1:
        case LM_GGML_OP_SUB:
        case LM_GGML_OP_MUL:
        case LM_GGML_OP_DIV:
        case LM_GGML_OP_SQR:
        case LM_GGML_OP_SQRT:
        case LM_GGML_OP_LOG:
        case LM_GGML_OP_SIN:
        case LM_GGML_OP_COS:
        case LM_GGML_OP_SUM:
        case LM_GGML_OP_SUM_ROWS:
        case LM_GGML_OP_MEAN:
        case LM_GGML_OP_ARGMAX:
        case LM_GGML_OP_REPEAT:
        case LM_GGML_OP_CONCAT:
        case LM_GGML_OP_NORM:
        case LM_GGML_OP_RMS_NORM:
        case LM_GGML_OP_GROUP_NORM:
        case LM_GGML_OP_MUL_MAT:
        case LM_GGML_OP_MUL_MAT_ID:
        case LM_GGML_OP_OUT_PROD:
        case LM_GGML_OP_SCALE:
        case LM_GGML_OP_CPY:
        case LM_GGML_OP_CONT:
        case LM_GGML_OP_RESHAPE:
        case LM_GGML_OP_VIEW:
        case LM_GGML_OP_PERMUTE:
        case LM_GGML_OP_TRANSPOSE:
        case LM_GGML_OP_GET_ROWS:
        case LM_GGML_OP_DIAG_MASK_INF:
        case LM_GGML_OP_SOFT_MAX:
        case LM_GGML_OP_ROPE:
        case LM_GGML_OP_CLAMP:
        case LM_GGML_OP_PAD:
        case LM_GGML_OP_ARGSORT:
        case LM_GGML_OP_LEAKY_RELU:
        case LM_GGML_OP_FLASH_ATTN_EXT:
        case LM_GGML_OP_UNARY: return true;
        default: return false;
    }
}

lm_ggml_tensor * rebuild_node(lm_ggml_context * ctx, lm_ggml_op op, const int32_t * p, lm_ggml_tensor * const * s,
                              const int64_t * ne, const size_t * nb) {
    lm_ggml_tensor * a = s[0];
    lm_ggml_tensor * b = s[1];
    // every op below reads src[0]; those with more check theirs
    if (a == nullptr || !preconditions(op, p, s, ne)) {
        return nullptr;
    }
    switch (op) {
        case LM_GGML_OP_DUP: return lm_ggml_dup(ctx, a);
        case LM_GGML_OP_ADD: return b ? lm_ggml_add(ctx, a, b) : nullptr;
        case LM_GGML_OP_ADD1: return b ? lm_ggml_add1(ctx, a, b) : nullptr;
        case LM_GGML_OP_SUB: return b ? lm_ggml_sub(ctx, a, b) : nullptr;
        case LM_GGML_OP_MUL: return b ? lm_ggml_mul(ctx, a, b) : nullptr;
        case LM_GGML_OP_DIV: return b ? lm_ggml_div(ctx, a, b) : nullptr;
        case LM_GGML_OP_SQR: return lm_ggml_sqr(ctx, a);
        case LM_GGML_OP_SQRT: return lm_ggml_sqrt(ctx, a);
        case LM_GGML_OP_LOG: return lm_ggml_log(ctx, a);
        case LM_GGML_OP_SIN: return lm_ggml_sin(ctx, a);
        case LM_GGML_OP_COS: return lm_ggml_cos(ctx, a);
        case LM_GGML_OP_SUM: return lm_ggml_sum(ctx, a);
        case LM_GGML_OP_SUM_ROWS: return lm_ggml_sum_rows(ctx, a);
        case LM_GGML_OP_MEAN: return lm_ggml_mean(ctx, a);
        case LM_GGML_OP_ARGMAX: return lm_ggml_argmax(ctx, a);
        case LM_GGML_OP_REPEAT: {
            // ggml keeps only a as source: the target shape comes from the node
            if (b != nullptr) {
                return nullptr;
            }
            lm_ggml_tensor * shape = lm_ggml_new_tensor(ctx, a->type, LM_GGML_MAX_DIMS, ne);
            return shape && lm_ggml_can_repeat(a, shape) ? lm_ggml_repeat(ctx, a, shape) : nullptr;
        }
        case LM_GGML_OP_CONCAT: return b ? lm_ggml_concat(ctx, a, b, p[0]) : nullptr;
        case LM_GGML_OP_NORM: return lm_ggml_norm(ctx, a, f32_at(p, 0));
        case LM_GGML_OP_RMS_NORM: return lm_ggml_rms_norm(ctx, a, f32_at(p, 0));
        case LM_GGML_OP_GROUP_NORM: return lm_ggml_group_norm(ctx, a, p[0], f32_at(p, 1));
        case LM_GGML_OP_MUL_MAT: {
            if (b == nullptr) {
                return nullptr;
            }
            lm_ggml_tensor * r = lm_ggml_mul_mat(ctx, a, b);
            if (r != nullptr && p[0] != LM_GGML_PREC_DEFAULT) {
                if (p[0] != LM_GGML_PREC_F32) {
                    return nullptr;
                }
                lm_ggml_mul_mat_set_prec(r, LM_GGML_PREC_F32);
            }
            return r;
        }
        case LM_GGML_OP_MUL_MAT_ID: return b && s[2] ? lm_ggml_mul_mat_id(ctx, a, b, s[2]) : nullptr;
        case LM_GGML_OP_OUT_PROD: return b ? lm_ggml_out_prod(ctx, a, b) : nullptr;
        case LM_GGML_OP_SCALE: return lm_ggml_scale(ctx, a, f32_at(p, 0));
        case LM_GGML_OP_CPY: return b ? lm_ggml_cpy(ctx, a, b) : nullptr;
        case LM_GGML_OP_CONT: return lm_ggml_cont_4d(ctx, a, ne[0], ne[1], ne[2], ne[3]);
        case LM_GGML_OP_RESHAPE: return lm_ggml_reshape_4d(ctx, a, ne[0], ne[1], ne[2], ne[3]);
        case LM_GGML_OP_VIEW: {
            size_t offset;
            std::memcpy(&offset, p, sizeof(offset));
            return lm_ggml_view_4d(ctx, a, ne[0], ne[1], ne[2], ne[3], nb[1], nb[2], nb[3], offset);
        }
        case LM_GGML_OP_PERMUTE: return lm_ggml_permute(ctx, a, p[0], p[1], p[2], p[3]);
        case LM_GGML_OP_TRANSPOSE: return lm_ggml_transpose(ctx, a);
        case LM_GGML_OP_GET_ROWS: return b ? lm_ggml_get_rows(ctx, a, b) : nullptr;
        case LM_GGML_OP_DIAG_MASK_INF: return lm_ggml_diag_mask_inf(ctx, a, p[0]);
        case LM_GGML_OP_SOFT_MAX: return lm_ggml_soft_max_ext(ctx, a, b, f32_at(p, 0), f32_at(p, 1));
        case LM_GGML_OP_ROPE:
            return b ? lm_ggml_rope_ext(ctx, a, b, s[2], p[1], p[2], p[4], f32_at(p, 5), f32_at(p, 6), f32_at(p, 7),
                                        f32_at(p, 8), f32_at(p, 9), f32_at(p, 10))
                     : nullptr;
        case LM_GGML_OP_CLAMP: return lm_ggml_clamp(ctx, a, f32_at(p, 0), f32_at(p, 1));
        case LM_GGML_OP_PAD: {
            // ggml's pad keeps no params: the amounts are the shape's growth
            int pad[4];
            for (int d = 0; d < 4; d++) {
                if (ne[d] < a->ne[d] || ne[d] - a->ne[d] > INT32_MAX) {
                    return nullptr;
                }
                pad[d] = (int) (ne[d] - a->ne[d]);
            }
            return lm_ggml_pad(ctx, a, pad[0], pad[1], pad[2], pad[3]);
        }
        case LM_GGML_OP_ARGSORT:
            if (p[0] != LM_GGML_SORT_ORDER_ASC && p[0] != LM_GGML_SORT_ORDER_DESC) {
                return nullptr;
            }
            return lm_ggml_argsort(ctx, a, (lm_ggml_sort_order) p[0]);
        case LM_GGML_OP_LEAKY_RELU: return lm_ggml_leaky_relu(ctx, a, f32_at(p, 0), false);
        case LM_GGML_OP_FLASH_ATTN_EXT: {
            if (b == nullptr || s[2] == nullptr) {
                return nullptr;
            }
            // lmggml's constructor wants the padded rows of older ggml: build
            // it on a padded stand-in, then read the mask sent
            lm_ggml_tensor * mask = s[3];
            if (mask != nullptr && mask->ne[1] < LM_GGML_PAD(a->ne[1], LM_GGML_KQ_MASK_PAD)) {
                mask = lm_ggml_new_tensor_2d(ctx, mask->type, mask->ne[0], LM_GGML_PAD(a->ne[1], LM_GGML_KQ_MASK_PAD));
                if (mask == nullptr) {
                    return nullptr;
                }
            }
            lm_ggml_tensor * r =
                lm_ggml_flash_attn_ext(ctx, a, b, s[2], mask, f32_at(p, 0), f32_at(p, 1), f32_at(p, 2));
            if (r != nullptr) {
                r->src[3] = s[3];
            }
            if (r != nullptr && p[3] != LM_GGML_PREC_DEFAULT) {
                if (p[3] != LM_GGML_PREC_F32) {
                    return nullptr;
                }
                lm_ggml_flash_attn_ext_set_prec(r, LM_GGML_PREC_F32);
            }
            return r;
        }
        case LM_GGML_OP_UNARY:
            if (p[0] < 0 || p[0] >= LM_GGML_UNARY_OP_COUNT) {
                return nullptr;
            }
            return lm_ggml_unary(ctx, a, (lm_ggml_unary_op) p[0]);
        default: return nullptr;
    }
}

bool rebuild_accepts(const lm_ggml_tensor * node) {
    if (node->op == LM_GGML_OP_NONE) {
        return true;
    }
    if (!op_rebuildable(node->op)) {
        return false;
    }
    // the server's rule, applied to stand-ins of the sources (same type,
    // shape and strides) in a scratch context
    lm_ggml_init_params ip = {lm_ggml_tensor_overhead() * (LM_GGML_MAX_SRC + 4), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    if (ctx == nullptr) {
        return false;
    }
    const bool self_cast = node->op == LM_GGML_OP_CPY && node->src[1] == node;
    lm_ggml_tensor * src[LM_GGML_MAX_SRC] = {};
    bool ok = true;
    for (int i = 0; i < LM_GGML_MAX_SRC && ok; i++) {
        const lm_ggml_tensor * s = node->src[i];
        if (s == nullptr || (i == 1 && self_cast)) {
            continue;
        }
        src[i] = lm_ggml_new_tensor(ctx, s->type, LM_GGML_MAX_DIMS, s->ne);
        ok = src[i] != nullptr;
        if (ok) {
            for (int d = 0; d < LM_GGML_MAX_DIMS; d++) {
                src[i]->nb[d] = s->nb[d];
            }
        }
    }
    lm_ggml_tensor * r = nullptr;
    if (ok) {
        r = self_cast ? (src[0] ? lm_ggml_cast(ctx, src[0], node->type) : nullptr)
                      : rebuild_node(ctx, node->op, node->op_params, src, node->ne, node->nb);
    }
    ok = r != nullptr && r->op == node->op && r->type == node->type &&
         std::memcmp(r->op_params, node->op_params, sizeof(r->op_params)) == 0;
    for (int d = 0; ok && d < LM_GGML_MAX_DIMS; d++) {
        ok = r->ne[d] == node->ne[d];
    }
    lm_ggml_free(ctx);
    return ok;
}

} // namespace rpc

// Ops that move or rearrange data: SCALE, SET, CPY (cpy, cast), CONT,
// GET_ROWS, CONCAT, REPEAT. Layouts: docs/OPS.md.

#include "ops_common.h"

using namespace lmggml::ops;

namespace {

// b written into the region of a described by (nb1, nb2, nb3, offset)
lm_ggml_tensor * set_impl(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, size_t nb1, size_t nb2,
                          size_t nb3, size_t offset, bool inplace) {
    LM_GGML_ASSERT(lm_ggml_nelements(a) >= lm_ggml_nelements(b));
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    LM_GGML_ASSERT(offset < (size_t) (1 << 30)); // stored in an int32 word
    const int32_t params[5] = {(int32_t) nb1, (int32_t) nb2, (int32_t) nb3, (int32_t) offset, inplace ? 1 : 0};
    lm_ggml_set_op_params(r, params, sizeof(params));
    return finish(r, LM_GGML_OP_SET, a, b);
}

lm_ggml_tensor * scale_impl(const char * fn, lm_ggml_context * ctx, lm_ggml_tensor * a, float s, bool inplace) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(is_padded_1d(a));
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_f32(r, 0, s);
    return finish(r, LM_GGML_OP_SCALE, a);
}

} // namespace

extern "C" {

lm_ggml_tensor * lm_ggml_scale(lm_ggml_context * ctx, lm_ggml_tensor * a, float s) {
    return scale_impl(__func__, ctx, a, s, false);
}
lm_ggml_tensor * lm_ggml_scale_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, float s) {
    return scale_impl(__func__, ctx, a, s, true);
}

lm_ggml_tensor * lm_ggml_set(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, size_t nb1, size_t nb2,
                             size_t nb3, size_t offset) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    return set_impl(ctx, a, b, nb1, nb2, nb3, offset, false);
}
lm_ggml_tensor * lm_ggml_set_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, size_t nb1,
                                     size_t nb2, size_t nb3, size_t offset) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    return set_impl(ctx, a, b, nb1, nb2, nb3, offset, true);
}

// set_1d / set_2d take the missing strides from a
lm_ggml_tensor * lm_ggml_set_1d(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, size_t offset) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    return set_impl(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], offset, false);
}
lm_ggml_tensor * lm_ggml_set_1d_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, size_t offset) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    return set_impl(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], offset, true);
}
lm_ggml_tensor * lm_ggml_set_2d(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, size_t nb1,
                                size_t offset) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    return set_impl(ctx, a, b, nb1, a->nb[2], a->nb[3], offset, false);
}
lm_ggml_tensor * lm_ggml_set_2d_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, size_t nb1,
                                        size_t offset) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    return set_impl(ctx, a, b, nb1, a->nb[2], a->nb[3], offset, true);
}

// Copy a into b's memory (converting type); the result is a view of b.
lm_ggml_tensor * lm_ggml_cpy(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_nelements(a) == lm_ggml_nelements(b));
    lm_ggml_tensor * r = lm_ggml_view_tensor(ctx, b);
    if (r == nullptr) {
        return nullptr;
    }
    if (b->name[0] != '\0') {
        lm_ggml_format_name(r, "%s (copy of %s)", b->name, a->name);
    } else {
        lm_ggml_format_name(r, "%s (copy)", a->name);
    }
    return finish(r, LM_GGML_OP_CPY, a, b);
}

// A CPY into a fresh tensor of `type`; as in ggml, the destination slot
// (src1) points at the result itself.
lm_ggml_tensor * lm_ggml_cast(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_type type) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, type, LM_GGML_MAX_DIMS, a->ne);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_format_name(r, "%s (copy)", a->name);
    return finish(r, LM_GGML_OP_CPY, a, r);
}

lm_ggml_tensor * lm_ggml_cont(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    lm_ggml_tensor * r = lm_ggml_dup_tensor(ctx, a);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_format_name(r, "%s (cont)", a->name);
    return finish(r, LM_GGML_OP_CONT, a);
}

// Packed copy of a with a new shape of the same element count.
lm_ggml_tensor * lm_ggml_cont_4d(lm_ggml_context * ctx, lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                                 int64_t ne3) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_nelements(a) == ne0 * ne1 * ne2 * ne3);
    lm_ggml_tensor * r = lm_ggml_new_tensor_4d(ctx, a->type, ne0, ne1, ne2, ne3);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_format_name(r, "%s (cont)", a->name);
    return finish(r, LM_GGML_OP_CONT, a);
}
lm_ggml_tensor * lm_ggml_cont_1d(lm_ggml_context * ctx, lm_ggml_tensor * a, int64_t ne0) {
    return lm_ggml_cont_4d(ctx, a, ne0, 1, 1, 1);
}
lm_ggml_tensor * lm_ggml_cont_2d(lm_ggml_context * ctx, lm_ggml_tensor * a, int64_t ne0, int64_t ne1) {
    return lm_ggml_cont_4d(ctx, a, ne0, ne1, 1, 1);
}
lm_ggml_tensor * lm_ggml_cont_3d(lm_ggml_context * ctx, lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    return lm_ggml_cont_4d(ctx, a, ne0, ne1, ne2, 1);
}

// a: (n_embd, n_rows, B2, B3) table; b: (n_ids, B2, B3) I32 row indices
// result: (n_embd, n_ids, B2, B3), F32 (I32 for an I32 table)
lm_ggml_tensor * lm_ggml_get_rows(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(a->ne[2] == b->ne[1]);
    LM_GGML_ASSERT(b->ne[3] == 1);
    LM_GGML_ASSERT(b->type == LM_GGML_TYPE_I32);
    const lm_ggml_type type = a->type == LM_GGML_TYPE_I32 ? LM_GGML_TYPE_I32 : LM_GGML_TYPE_F32;
    return finish(lm_ggml_new_tensor_4d(ctx, type, a->ne[0], b->ne[0], b->ne[1], b->ne[2]), LM_GGML_OP_GET_ROWS, a, b);
}

// a followed by b along dimension dim; all other dims must agree
lm_ggml_tensor * lm_ggml_concat(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int dim) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(dim >= 0 && dim < LM_GGML_MAX_DIMS);
    int64_t ne[LM_GGML_MAX_DIMS];
    for (int d = 0; d < LM_GGML_MAX_DIMS; ++d) {
        if (d == dim) {
            ne[d] = a->ne[d] + b->ne[d];
        } else {
            LM_GGML_ASSERT(a->ne[d] == b->ne[d]);
            ne[d] = a->ne[d];
        }
    }
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, a->type, LM_GGML_MAX_DIMS, ne);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_i32(r, 0, dim);
    return finish(r, LM_GGML_OP_CONCAT, a, b);
}

// a tiled to b's shape; b only supplies the shape and is not a source
lm_ggml_tensor * lm_ggml_repeat(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(lm_ggml_can_repeat(a, b));
    return finish(lm_ggml_new_tensor(ctx, a->type, LM_GGML_MAX_DIMS, b->ne), LM_GGML_OP_REPEAT, a);
}

} // extern "C"

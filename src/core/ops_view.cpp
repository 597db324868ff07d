// Ops that alias memory instead of computing: RESHAPE, VIEW, PERMUTE,
// TRANSPOSE. Each result is a view (view_src/view_offs) of its source; the
// op is recorded so graphs and backends know where the tensor came from.
// Layouts: docs/OPS.md.

#include "ops_common.h"

using namespace lmggml::ops;

namespace {

// Contiguous view of a (offset 0) with a new shape of the same element count.
lm_ggml_tensor * reshape_impl(lm_ggml_context * ctx, lm_ggml_tensor * a, int n_dims, const int64_t * ne) {
    LM_GGML_ASSERT(lm_ggml_is_contiguous(a));
    int64_t n = 1;
    for (int i = 0; i < n_dims; ++i) {
        n *= ne[i];
    }
    LM_GGML_ASSERT(lm_ggml_nelements(a) == n);

    lm_ggml_tensor * r = lm_ggml_new_tensor_impl(ctx, a->type, n_dims, ne, a, 0);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_format_name(r, "%s (reshaped)", a->name);
    return finish(r, LM_GGML_OP_RESHAPE, a);
}

// View of a at `offset` bytes with shape ne. nb (NULL for 1-D views) holds
// nb[1..3]; nb0 stays the element size. Strides are taken as given, like
// ggml (a zero stride repeats the same row).
lm_ggml_tensor * view_impl(const char * fn, lm_ggml_context * ctx, lm_ggml_tensor * a, int n_dims, const int64_t * ne,
                           const size_t * nb, size_t offset) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    lm_ggml_tensor * r = lm_ggml_new_tensor_impl(ctx, a->type, n_dims, ne, a, offset);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_format_name(r, "%s (view)", a->name);
    lm_ggml_set_op_params(r, &offset, sizeof(offset)); // byte offset as size_t in words 0-1
    if (nb != nullptr) {
        for (int i = 1; i < LM_GGML_MAX_DIMS; ++i) {
            r->nb[i] = nb[i];
        }
    }

    // The constructor can only check the packed extent; with explicit
    // strides the view may reach further. Refuse views that leave the
    // memory they alias, since every kernel would read out of bounds.
    const lm_ggml_tensor * base = r->view_src;
    if (base != nullptr && r->view_offs + lm_ggml_nbytes(r) > lm_ggml_nbytes(base)) {
        LM_GGML_LOG_ERROR("%s: view of '%s': offset %zu + extent %zu exceeds the %zu bytes it aliases\n", fn, a->name,
                          r->view_offs, lm_ggml_nbytes(r), lm_ggml_nbytes(base));
        return nullptr;
    }
    return finish(r, LM_GGML_OP_VIEW, a);
}

} // namespace

extern "C" {

lm_ggml_tensor * lm_ggml_reshape(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    // only b's shape matters, so b may be non-contiguous
    return reshape_impl(ctx, a, LM_GGML_MAX_DIMS, b->ne);
}

lm_ggml_tensor * lm_ggml_reshape_1d(lm_ggml_context * ctx, lm_ggml_tensor * a, int64_t ne0) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    const int64_t ne[1] = {ne0};
    return reshape_impl(ctx, a, 1, ne);
}

lm_ggml_tensor * lm_ggml_reshape_2d(lm_ggml_context * ctx, lm_ggml_tensor * a, int64_t ne0, int64_t ne1) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    const int64_t ne[2] = {ne0, ne1};
    return reshape_impl(ctx, a, 2, ne);
}

lm_ggml_tensor * lm_ggml_reshape_3d(lm_ggml_context * ctx, lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    const int64_t ne[3] = {ne0, ne1, ne2};
    return reshape_impl(ctx, a, 3, ne);
}

lm_ggml_tensor * lm_ggml_reshape_4d(lm_ggml_context * ctx, lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                                    int64_t ne3) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return reshape_impl(ctx, a, 4, ne);
}

lm_ggml_tensor * lm_ggml_view_1d(lm_ggml_context * ctx, lm_ggml_tensor * a, int64_t ne0, size_t offset) {
    const int64_t ne[1] = {ne0};
    return view_impl(__func__, ctx, a, 1, ne, nullptr, offset);
}

lm_ggml_tensor * lm_ggml_view_2d(lm_ggml_context * ctx, lm_ggml_tensor * a, int64_t ne0, int64_t ne1, size_t nb1,
                                 size_t offset) {
    const int64_t ne[2] = {ne0, ne1};
    // nb2 = nb3 = nb1*ne1, as ggml sets them (ne2 = ne3 = 1)
    const size_t nb[4] = {0, nb1, nb1 * (size_t) ne1, nb1 * (size_t) ne1};
    return view_impl(__func__, ctx, a, 2, ne, nb, offset);
}

lm_ggml_tensor * lm_ggml_view_3d(lm_ggml_context * ctx, lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                                 size_t nb1, size_t nb2, size_t offset) {
    const int64_t ne[3] = {ne0, ne1, ne2};
    const size_t nb[4] = {0, nb1, nb2, nb2 * (size_t) ne2};
    return view_impl(__func__, ctx, a, 3, ne, nb, offset);
}

lm_ggml_tensor * lm_ggml_view_4d(lm_ggml_context * ctx, lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                                 int64_t ne3, size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    const size_t nb[4] = {0, nb1, nb2, nb3};
    return view_impl(__func__, ctx, a, 4, ne, nb, offset);
}

// Source dimension i becomes result dimension axis_i (ne and nb move together).
lm_ggml_tensor * lm_ggml_permute(lm_ggml_context * ctx, lm_ggml_tensor * a, int axis0, int axis1, int axis2,
                                 int axis3) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    const int axes[4] = {axis0, axis1, axis2, axis3};
    bool seen[4] = {false, false, false, false};
    for (int axis : axes) {
        LM_GGML_ASSERT(axis >= 0 && axis < LM_GGML_MAX_DIMS);
        LM_GGML_ASSERT(!seen[axis]); // a permutation names every axis once
        seen[axis] = true;
    }

    lm_ggml_tensor * r = lm_ggml_view_tensor(ctx, a);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_format_name(r, "%s (permuted)", a->name);
    for (int i = 0; i < LM_GGML_MAX_DIMS; ++i) {
        r->ne[axes[i]] = a->ne[i];
        r->nb[axes[i]] = a->nb[i];
    }
    lm_ggml_set_op_params(r, axes, sizeof(axes));
    return finish(r, LM_GGML_OP_PERMUTE, a);
}

// Swap dims 0 and 1 (no data moves; strides swap).
lm_ggml_tensor * lm_ggml_transpose(lm_ggml_context * ctx, lm_ggml_tensor * a) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    lm_ggml_tensor * r = lm_ggml_view_tensor(ctx, a);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_format_name(r, "%s (transposed)", a->name);
    r->ne[0] = a->ne[1];
    r->ne[1] = a->ne[0];
    r->nb[0] = a->nb[1];
    r->nb[1] = a->nb[0];
    return finish(r, LM_GGML_OP_TRANSPOSE, a);
}

} // extern "C"

// Windowed vision-transformer helpers (SAM-style image encoders) and
// reflection padding: PAD_REFLECT_1D, WIN_PART, WIN_UNPART, GET_REL_POS,
// ADD_REL_POS. Layouts: docs/OPS.md.

#include "ops_common.h"

using namespace lmggml::ops;

namespace {

bool f32_ok(const char * fn, const char * name, const lm_ggml_tensor * t) {
    if (t->type != LM_GGML_TYPE_F32) {
        LM_GGML_LOG_ERROR("%s: %s must be F32, not %s\n", fn, name, lm_ggml_type_name(t->type));
        return false;
    }
    return true;
}

lm_ggml_tensor * add_rel_pos_impl(const char * fn, lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * pw,
                                  lm_ggml_tensor * ph, bool inplace) {
    if (!args_ok(fn, {{"ctx", ctx}, {"a", a}, {"pw", pw}, {"ph", ph}})) {
        return nullptr;
    }
    if (!f32_ok(fn, "pw", pw) || !f32_ok(fn, "ph", ph)) {
        return nullptr;
    }
    if (!lm_ggml_is_contiguous(a) || !lm_ggml_is_contiguous(pw) || !lm_ggml_is_contiguous(ph)) {
        LM_GGML_LOG_ERROR("%s: a, pw and ph must be contiguous\n", fn);
        return nullptr;
    }
    if (!lm_ggml_are_same_shape(pw, ph) || pw->ne[3] != a->ne[2] || pw->ne[0] * pw->ne[0] != a->ne[0] ||
        pw->ne[1] * pw->ne[2] != a->ne[1]) {
        LM_GGML_LOG_ERROR("%s: pw/ph (K, QW, QH, B) do not fit a (K*K, QW*QH, B)\n", fn);
        return nullptr;
    }
    lm_ggml_tensor * r = like(ctx, a, inplace);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_i32(r, 0, inplace ? 1 : 0);
    return finish(r, LM_GGML_OP_ADD_REL_POS, a, pw, ph);
}

} // namespace

extern "C" {

// Dim 0 grows by p0 mirrored elements in front and p1 behind (the edge
// element itself is not repeated). a: contiguous F32; p0, p1 < a->ne[0].
lm_ggml_tensor * lm_ggml_pad_reflect_1d(lm_ggml_context * ctx, lm_ggml_tensor * a, int p0, int p1) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    if (p0 < 0 || p1 < 0 || p0 >= a->ne[0] || p1 >= a->ne[0]) {
        LM_GGML_LOG_ERROR("%s: paddings %d, %d must lie in [0, %lld)\n", __func__, p0, p1, (long long) a->ne[0]);
        return nullptr;
    }
    if (!f32_ok(__func__, "a", a)) {
        return nullptr;
    }
    if (!lm_ggml_is_contiguous(a)) {
        LM_GGML_LOG_ERROR("%s: a must be contiguous\n", __func__);
        return nullptr;
    }
    lm_ggml_tensor * r = lm_ggml_new_tensor_4d(ctx, a->type, a->ne[0] + p0 + p1, a->ne[1], a->ne[2], a->ne[3]);
    if (r == nullptr) {
        return nullptr;
    }
    const int32_t params[2] = {p0, p1};
    lm_ggml_set_op_params(r, params, sizeof(params));
    return finish(r, LM_GGML_OP_PAD_REFLECT_1D, a);
}

// a (C, W, H, 1) F32 -> (C, w, w, npx*npy) windows, zero-padded at the right
// and bottom; window (px, py) is number py*npx + px.
// op_params i32: [0]=npx [1]=npy [2]=w.
lm_ggml_tensor * lm_ggml_win_part(lm_ggml_context * ctx, lm_ggml_tensor * a, int w) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    if (a->ne[3] != 1 || w <= 0) {
        LM_GGML_LOG_ERROR("%s: needs a 3-D a and a window size > 0 (ne[3] %lld, w %d)\n", __func__,
                          (long long) a->ne[3], w);
        return nullptr;
    }
    if (!f32_ok(__func__, "a", a)) {
        return nullptr;
    }
    const int px = (int) ((w - a->ne[1] % w) % w);
    const int py = (int) ((w - a->ne[2] % w) % w);
    const int npx = (int) ((px + a->ne[1]) / w);
    const int npy = (int) ((py + a->ne[2]) / w);
    const int64_t ne[4] = {a->ne[0], w, w, (int64_t) npx * npy};
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    if (r == nullptr) {
        return nullptr;
    }
    const int32_t params[3] = {npx, npy, w};
    lm_ggml_set_op_params(r, params, sizeof(params));
    return finish(r, LM_GGML_OP_WIN_PART, a);
}

// Inverse of win_part: a (C, w, w, n) F32 -> (C, w0, h0), padding dropped.
// op_params i32: [0]=w.
lm_ggml_tensor * lm_ggml_win_unpart(lm_ggml_context * ctx, lm_ggml_tensor * a, int w0, int h0, int w) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    if (!f32_ok(__func__, "a", a)) {
        return nullptr;
    }
    if (w <= 0 || w0 < 0 || h0 < 0 || a->ne[1] != w || a->ne[2] != w ||
        a->ne[3] < ((int64_t) (w0 + w - 1) / w) * ((h0 + w - 1) / w)) {
        LM_GGML_LOG_ERROR("%s: a (%lld, %lld, %lld, %lld) does not hold %dx%d windows of %d covering %dx%d\n", __func__,
                          (long long) a->ne[0], (long long) a->ne[1], (long long) a->ne[2], (long long) a->ne[3], w, w,
                          w, w0, h0);
        return nullptr;
    }
    const int64_t ne[3] = {a->ne[0], w0, h0};
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 3, ne);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_i32(r, 0, w);
    return finish(r, LM_GGML_OP_WIN_UNPART, a);
}

// a (C, 2*qh - 1) table of relative positions -> (C, kh, qh) F16 with
// row (k, q) = a's row (kh - 1 - k) + q. qh == kh.
lm_ggml_tensor * lm_ggml_get_rel_pos(lm_ggml_context * ctx, lm_ggml_tensor * a, int qh, int kh) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    if (qh != kh || qh <= 0 || 2 * (int64_t) qh - 1 != a->ne[1]) {
        LM_GGML_LOG_ERROR("%s: needs qh == kh > 0 and a->ne[1] == 2*qh - 1 (qh %d, kh %d, ne[1] %lld)\n", __func__, qh,
                          kh, (long long) a->ne[1]);
        return nullptr;
    }
    const int64_t ne[3] = {a->ne[0], kh, qh};
    return finish(lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F16, 3, ne), LM_GGML_OP_GET_REL_POS, a);
}

// a (K*K, QW*QH, B) attention scores; pw, ph (K, QW, QH, B) F32. Element
// (u*K + v, ...) of a gets ph[u] + pw[v] of the same query.
// op_params i32: [0]=inplace.
lm_ggml_tensor * lm_ggml_add_rel_pos(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * pw,
                                     lm_ggml_tensor * ph) {
    return add_rel_pos_impl(__func__, ctx, a, pw, ph, false);
}
lm_ggml_tensor * lm_ggml_add_rel_pos_inplace(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * pw,
                                             lm_ggml_tensor * ph) {
    return add_rel_pos_impl(__func__, ctx, a, pw, ph, true);
}

} // extern "C"

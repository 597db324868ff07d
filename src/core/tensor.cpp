// Tensor creation (plain and views), names, flags and data access.
#include "context.h"

#include <cstdarg>
#include <cstdio>

#include "ggml-backend.h"

namespace {

bool checked_mul(size_t a, size_t b, size_t * out) { return !__builtin_mul_overflow(a, b, out); }

// bytes of a contiguous tensor of this shape; false on overflow
bool contiguous_size(enum lm_ggml_type type, const int64_t ne[4], size_t * out) {
    // row bytes = ne0 / block size * type size, checked: ne0 near INT64_MAX wraps it
    size_t bytes = 0;
    if (!checked_mul((size_t) (ne[0] / lm_ggml_blck_size(type)), lm_ggml_type_size(type), &bytes)) return false;
    for (int i = 1; i < LM_GGML_MAX_DIMS; i++) {
        if (!checked_mul(bytes, (size_t) ne[i], &bytes)) return false;
    }
    *out = bytes;
    return true;
}

} // namespace

extern "C" struct lm_ggml_tensor * lm_ggml_new_tensor_impl(struct lm_ggml_context * ctx, enum lm_ggml_type type,
                                                           int n_dims, const int64_t * ne,
                                                           struct lm_ggml_tensor * view_src, size_t view_offs) {
    if (!ctx) {
        LM_GGML_LOG_ERROR("lm_ggml_new_tensor: context is NULL\n");
        return nullptr;
    }
    if (lm_ggml_blck_size(type) == 0) {
        LM_GGML_LOG_ERROR("lm_ggml_new_tensor: invalid type %d\n", (int) type);
        return nullptr;
    }
    if (n_dims < 1 || n_dims > LM_GGML_MAX_DIMS || !ne) {
        LM_GGML_LOG_ERROR("lm_ggml_new_tensor: n_dims must be 1..%d, got %d\n", LM_GGML_MAX_DIMS, n_dims);
        return nullptr;
    }
    int64_t shape[LM_GGML_MAX_DIMS] = {1, 1, 1, 1};
    for (int i = 0; i < n_dims; i++) {
        if (ne[i] < 0) {
            LM_GGML_LOG_ERROR("lm_ggml_new_tensor: dimension %d is negative (%lld)\n", i, (long long) ne[i]);
            return nullptr;
        }
        shape[i] = ne[i];
    }
    if (shape[0] % lm_ggml_blck_size(type) != 0) {
        LM_GGML_LOG_ERROR("lm_ggml_new_tensor: ne[0] = %lld is not a multiple of the %s block size %lld\n",
                          (long long) shape[0], lm_ggml_type_name(type), (long long) lm_ggml_blck_size(type));
        return nullptr;
    }

    // views of views point at the original storage
    if (view_src && view_src->view_src) {
        view_offs += view_src->view_offs;
        view_src = view_src->view_src;
    }

    size_t data_size = 0;
    if (!contiguous_size(type, shape, &data_size)) {
        LM_GGML_LOG_ERROR("lm_ggml_new_tensor: size of a %s tensor [%lld, %lld, %lld, %lld] overflows\n",
                          lm_ggml_type_name(type), (long long) shape[0], (long long) shape[1], (long long) shape[2],
                          (long long) shape[3]);
        return nullptr;
    }
    if (view_src && (view_offs > lm_ggml_nbytes(view_src) || data_size > lm_ggml_nbytes(view_src) - view_offs)) {
        LM_GGML_LOG_ERROR("lm_ggml_new_tensor: view of %zu bytes at offset %zu exceeds '%s' (%zu bytes)\n", data_size,
                          view_offs, view_src->name, lm_ggml_nbytes(view_src));
        return nullptr;
    }

    void * data = view_src && view_src->data ? static_cast<char *>(view_src->data) + view_offs : nullptr;
    const bool own_data = !view_src && !ctx->no_alloc;
    size_t obj_size = LM_GGML_TENSOR_SIZE;
    if (own_data && __builtin_add_overflow(obj_size, data_size, &obj_size)) {
        LM_GGML_LOG_ERROR("lm_ggml_new_tensor: tensor of %zu bytes is too large\n", data_size);
        return nullptr;
    }
    lm_ggml_object * obj = lm_ggml_new_object(ctx, LM_GGML_OBJECT_TYPE_TENSOR, obj_size, "a tensor");
    if (!obj) return nullptr;

    lm_ggml_tensor * t = reinterpret_cast<lm_ggml_tensor *>(static_cast<char *>(ctx->mem_buffer) + obj->offs);
    std::memset(t, 0, sizeof(*t));
    t->type = type;
    t->buffer = view_src ? view_src->buffer : nullptr;
    t->op = LM_GGML_OP_NONE;
    t->view_src = view_src;
    t->view_offs = view_offs;
    t->data = own_data ? static_cast<void *>(t + 1) : data;
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) t->ne[i] = shape[i];
    t->nb[0] = lm_ggml_type_size(type);
    t->nb[1] = t->nb[0] * (size_t) (t->ne[0] / lm_ggml_blck_size(type));
    for (int i = 2; i < LM_GGML_MAX_DIMS; i++) t->nb[i] = t->nb[i - 1] * (size_t) t->ne[i - 1];
    return t;
}

extern "C" struct lm_ggml_tensor * lm_ggml_new_tensor(struct lm_ggml_context * ctx, enum lm_ggml_type type, int n_dims,
                                                      const int64_t * ne) {
    return lm_ggml_new_tensor_impl(ctx, type, n_dims, ne, nullptr, 0);
}

extern "C" struct lm_ggml_tensor * lm_ggml_new_tensor_1d(struct lm_ggml_context * ctx, enum lm_ggml_type type,
                                                         int64_t ne0) {
    return lm_ggml_new_tensor(ctx, type, 1, &ne0);
}

extern "C" struct lm_ggml_tensor * lm_ggml_new_tensor_2d(struct lm_ggml_context * ctx, enum lm_ggml_type type,
                                                         int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = {ne0, ne1};
    return lm_ggml_new_tensor(ctx, type, 2, ne);
}

extern "C" struct lm_ggml_tensor * lm_ggml_new_tensor_3d(struct lm_ggml_context * ctx, enum lm_ggml_type type,
                                                         int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = {ne0, ne1, ne2};
    return lm_ggml_new_tensor(ctx, type, 3, ne);
}

extern "C" struct lm_ggml_tensor * lm_ggml_new_tensor_4d(struct lm_ggml_context * ctx, enum lm_ggml_type type,
                                                         int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return lm_ggml_new_tensor(ctx, type, 4, ne);
}

extern "C" struct lm_ggml_tensor * lm_ggml_dup_tensor(struct lm_ggml_context * ctx, const struct lm_ggml_tensor * src) {
    if (!ctx || !src) {
        lm_ggml_null_arg("lm_ggml_dup_tensor");
        return nullptr;
    }
    if (!src) return nullptr;
    return lm_ggml_new_tensor(ctx, src->type, LM_GGML_MAX_DIMS, src->ne);
}

extern "C" struct lm_ggml_tensor * lm_ggml_view_tensor(struct lm_ggml_context * ctx, struct lm_ggml_tensor * src) {
    if (!ctx || !src) {
        lm_ggml_null_arg("lm_ggml_view_tensor");
        return nullptr;
    }
    if (!src) return nullptr;
    lm_ggml_tensor * t = lm_ggml_new_tensor_impl(ctx, src->type, LM_GGML_MAX_DIMS, src->ne, src, 0);
    if (!t) return nullptr;
    lm_ggml_format_name(t, "%s (view)", src->name);
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) t->nb[i] = src->nb[i];
    return t;
}

extern "C" const char * lm_ggml_get_name(const struct lm_ggml_tensor * tensor) {
    if (!tensor) {
        lm_ggml_null_arg("lm_ggml_get_name");
        return nullptr;
    }
    return tensor->name;
}

extern "C" struct lm_ggml_tensor * lm_ggml_set_name(struct lm_ggml_tensor * tensor, const char * name) {
    if (!tensor || !name) {
        lm_ggml_null_arg("lm_ggml_set_name");
        return nullptr;
    }
    if (!tensor) return nullptr;
    size_t i = 0;
    for (; name && name[i] && i < sizeof(tensor->name) - 1; i++) tensor->name[i] = name[i];
    tensor->name[i] = '\0';
    return tensor;
}

extern "C" struct lm_ggml_tensor * lm_ggml_format_name(struct lm_ggml_tensor * tensor, const char * fmt, ...) {
    if (!tensor || !fmt) {
        lm_ggml_null_arg("lm_ggml_format_name");
        return nullptr;
    }
    if (!tensor) return nullptr;
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(tensor->name, sizeof(tensor->name), fmt, args);
    va_end(args);
    return tensor;
}

extern "C" void lm_ggml_set_input(struct lm_ggml_tensor * tensor) {
    if (!tensor) {
        lm_ggml_null_arg("lm_ggml_set_input");
        return;
    }
    tensor->flags |= LM_GGML_TENSOR_FLAG_INPUT;
}
extern "C" void lm_ggml_set_output(struct lm_ggml_tensor * tensor) {
    if (!tensor) {
        lm_ggml_null_arg("lm_ggml_set_output");
        return;
    }
    tensor->flags |= LM_GGML_TENSOR_FLAG_OUTPUT;
}
extern "C" void lm_ggml_set_loss(struct lm_ggml_tensor * tensor) {
    if (!tensor) {
        lm_ggml_null_arg("lm_ggml_set_loss");
        return;
    }
    if (tensor->type != LM_GGML_TYPE_F32 || !lm_ggml_is_scalar(tensor)) { // the backward pass seeds it with 1.0f
        LM_GGML_LOG_ERROR("lm_ggml_set_loss: '%s': a loss must be an F32 scalar\n", tensor->name);
        return;
    }
    tensor->flags |= LM_GGML_TENSOR_FLAG_LOSS;
}

extern "C" void lm_ggml_set_param(struct lm_ggml_context * /*ctx*/, struct lm_ggml_tensor * tensor) {
    if (!tensor) {
        lm_ggml_null_arg("lm_ggml_set_param");
        return;
    }
    tensor->flags |= LM_GGML_TENSOR_FLAG_PARAM;
}

extern "C" void * lm_ggml_get_data(const struct lm_ggml_tensor * tensor) {
    if (!tensor) {
        lm_ggml_null_arg("lm_ggml_get_data");
        return nullptr;
    }
    return tensor->data;
}

extern "C" float * lm_ggml_get_data_f32(const struct lm_ggml_tensor * tensor) {
    if (!tensor) {
        lm_ggml_null_arg("lm_ggml_get_data_f32");
        return nullptr;
    }
    if (tensor->type != LM_GGML_TYPE_F32) {
        LM_GGML_LOG_ERROR("lm_ggml_get_data_f32: tensor '%s' is %s, not f32\n", tensor->name,
                          lm_ggml_type_name(tensor->type));
        return nullptr;
    }
    return static_cast<float *>(tensor->data);
}

extern "C" void lm_ggml_unravel_index(const struct lm_ggml_tensor * tensor, int64_t i, int64_t * i0, int64_t * i1,
                                      int64_t * i2, int64_t * i3) {
    if (!tensor) {
        lm_ggml_null_arg("lm_ggml_unravel_index");
        return;
    }
    const int64_t ne2 = tensor->ne[2], ne1 = tensor->ne[1], ne0 = tensor->ne[0];
    const int64_t i3_ = i / (ne2 * ne1 * ne0);
    const int64_t i2_ = (i - i3_ * ne2 * ne1 * ne0) / (ne1 * ne0);
    const int64_t i1_ = (i - i3_ * ne2 * ne1 * ne0 - i2_ * ne1 * ne0) / ne0;
    const int64_t i0_ = i - i3_ * ne2 * ne1 * ne0 - i2_ * ne1 * ne0 - i1_ * ne0;
    if (i0) *i0 = i0_;
    if (i1) *i1 = i1_;
    if (i2) *i2 = i2_;
    if (i3) *i3 = i3_;
}

extern "C" struct lm_ggml_tensor * lm_ggml_set_zero(struct lm_ggml_tensor * tensor) {
    if (!tensor) {
        lm_ggml_null_arg("lm_ggml_set_zero");
        return nullptr;
    }
    if (!tensor || lm_ggml_is_empty(tensor)) return tensor;
    if (tensor->buffer) {
        lm_ggml_backend_tensor_memset(tensor, 0, 0, lm_ggml_nbytes(tensor));
    } else if (tensor->data) {
        std::memset(tensor->data, 0, lm_ggml_nbytes(tensor));
    }
    return tensor;
}

// Element access helpers of ggml-cpu.h: read/write single elements or fill a
// tensor, converting between the caller's int32/float and the tensor type.
// Types: F32, F16, BF16, I8, I16, I32. Tensors must live in host memory.
// Bad input (NULL, unsupported type, index out of range, no data) is logged
// and the call does nothing (getters return 0, fillers return NULL).

#include "core/ggml-impl.h"
#include "ggml-cpu.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace {

bool supported_type(lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_F32:
        case LM_GGML_TYPE_F16:
        case LM_GGML_TYPE_BF16:
        case LM_GGML_TYPE_I8:
        case LM_GGML_TYPE_I16:
        case LM_GGML_TYPE_I32: return true;
        default: return false;
    }
}

bool check_tensor(const lm_ggml_tensor * t, const char * fn) {
    if (t == nullptr) {
        LM_GGML_LOG_ERROR("%s: tensor is NULL\n", fn);
        return false;
    }
    if (!supported_type(t->type)) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': type %s not supported (F32, F16, BF16, I8, I16, I32)\n", fn, t->name,
                          lm_ggml_type_name(t->type));
        return false;
    }
    if (t->data == nullptr) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': has no data\n", fn, t->name);
        return false;
    }
    return true;
}

// Float -> integer without undefined behaviour: truncate toward zero,
// saturate out-of-range values, NaN -> 0.
template <typename I> I saturate(double v) {
    if (std::isnan(v)) {
        return 0;
    }
    if (v <= (double) std::numeric_limits<I>::min()) {
        return std::numeric_limits<I>::min();
    }
    if (v >= (double) std::numeric_limits<I>::max()) {
        return std::numeric_limits<I>::max();
    }
    return (I) v;
}

// Every value goes through double: exact for int32 and every float.
double load(const lm_ggml_tensor * t, const void * p) {
    switch (t->type) {
        case LM_GGML_TYPE_F32: return *(const float *) p;
        case LM_GGML_TYPE_F16: return LM_GGML_FP16_TO_FP32(*(const lm_ggml_fp16_t *) p);
        case LM_GGML_TYPE_BF16: return LM_GGML_BF16_TO_FP32(*(const lm_ggml_bf16_t *) p);
        case LM_GGML_TYPE_I8: return *(const int8_t *) p;
        case LM_GGML_TYPE_I16: return *(const int16_t *) p;
        case LM_GGML_TYPE_I32: return *(const int32_t *) p;
        default: return 0.0;
    }
}

void store(const lm_ggml_tensor * t, void * p, double v) {
    switch (t->type) {
        case LM_GGML_TYPE_F32: *(float *) p = (float) v; break;
        case LM_GGML_TYPE_F16: *(lm_ggml_fp16_t *) p = LM_GGML_FP32_TO_FP16((float) v); break;
        case LM_GGML_TYPE_BF16: *(lm_ggml_bf16_t *) p = LM_GGML_FP32_TO_BF16((float) v); break;
        case LM_GGML_TYPE_I8: *(int8_t *) p = saturate<int8_t>(v); break;
        case LM_GGML_TYPE_I16: *(int16_t *) p = saturate<int16_t>(v); break;
        case LM_GGML_TYPE_I32: *(int32_t *) p = saturate<int32_t>(v); break;
        default: break;
    }
}

// Address of element (i0, i1, i2, i3), or NULL (logged) when out of range.
char * element(const lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, const char * fn) {
    const int64_t idx[4] = {i0, i1, i2, i3};
    for (int d = 0; d < 4; d++) {
        if (idx[d] < 0 || idx[d] >= t->ne[d]) {
            LM_GGML_LOG_ERROR("%s: tensor '%s': index %lld in dim %d out of range [0, %lld)\n", fn, t->name,
                              (long long) idx[d], d, (long long) t->ne[d]);
            return nullptr;
        }
    }
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

// Flat index (row-major over ne, as lm_ggml_unravel_index) -> element address.
char * element_1d(const lm_ggml_tensor * t, int i, const char * fn) {
    const int64_t n = lm_ggml_nelements(t);
    if (i < 0 || i >= n) {
        LM_GGML_LOG_ERROR("%s: tensor '%s': index %d out of range [0, %lld)\n", fn, t->name, i, (long long) n);
        return nullptr;
    }
    const int64_t ne0 = t->ne[0], ne1 = t->ne[1], ne2 = t->ne[2];
    int64_t r = i;
    const int64_t i0 = r % ne0;
    r /= ne0;
    const int64_t i1 = r % ne1;
    r /= ne1;
    const int64_t i2 = r % ne2;
    r /= ne2;
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + r * t->nb[3];
}

lm_ggml_tensor * fill(lm_ggml_tensor * t, double v, const char * fn) {
    if (!check_tensor(t, fn)) {
        return nullptr;
    }
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                char * row = (char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                    store(t, row + i0 * t->nb[0], v);
                }
            }
        }
    }
    return t;
}

lm_ggml_tensor * new_scalar(lm_ggml_context * ctx, lm_ggml_type type, double v, const char * fn) {
    if (ctx == nullptr) {
        LM_GGML_LOG_ERROR("%s: ctx is NULL\n", fn);
        return nullptr;
    }
    if (lm_ggml_get_no_alloc(ctx)) {
        LM_GGML_LOG_ERROR("%s: ctx: is no_alloc, the value has nowhere to go\n", fn);
        return nullptr;
    }
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx, type, 1);
    return t ? fill(t, v, fn) : nullptr;
}

} // namespace

struct lm_ggml_tensor * lm_ggml_new_i32(struct lm_ggml_context * ctx, int32_t value) {
    return new_scalar(ctx, LM_GGML_TYPE_I32, value, "lm_ggml_new_i32");
}

struct lm_ggml_tensor * lm_ggml_new_f32(struct lm_ggml_context * ctx, float value) {
    return new_scalar(ctx, LM_GGML_TYPE_F32, value, "lm_ggml_new_f32");
}

struct lm_ggml_tensor * lm_ggml_set_i32(struct lm_ggml_tensor * tensor, int32_t value) {
    return fill(tensor, value, "lm_ggml_set_i32");
}

struct lm_ggml_tensor * lm_ggml_set_f32(struct lm_ggml_tensor * tensor, float value) {
    return fill(tensor, value, "lm_ggml_set_f32");
}

int32_t lm_ggml_get_i32_1d(const struct lm_ggml_tensor * tensor, int i) {
    if (!check_tensor(tensor, "lm_ggml_get_i32_1d")) return 0;
    const char * p = element_1d(tensor, i, "lm_ggml_get_i32_1d");
    return p ? saturate<int32_t>(load(tensor, p)) : 0;
}

void lm_ggml_set_i32_1d(const struct lm_ggml_tensor * tensor, int i, int32_t value) {
    if (!check_tensor(tensor, "lm_ggml_set_i32_1d")) return;
    char * p = element_1d(tensor, i, "lm_ggml_set_i32_1d");
    if (p) store(tensor, p, value);
}

int32_t lm_ggml_get_i32_nd(const struct lm_ggml_tensor * tensor, int i0, int i1, int i2, int i3) {
    if (!check_tensor(tensor, "lm_ggml_get_i32_nd")) return 0;
    const char * p = element(tensor, i0, i1, i2, i3, "lm_ggml_get_i32_nd");
    return p ? saturate<int32_t>(load(tensor, p)) : 0;
}

void lm_ggml_set_i32_nd(const struct lm_ggml_tensor * tensor, int i0, int i1, int i2, int i3, int32_t value) {
    if (!check_tensor(tensor, "lm_ggml_set_i32_nd")) return;
    char * p = element(tensor, i0, i1, i2, i3, "lm_ggml_set_i32_nd");
    if (p) store(tensor, p, value);
}

float lm_ggml_get_f32_1d(const struct lm_ggml_tensor * tensor, int i) {
    if (!check_tensor(tensor, "lm_ggml_get_f32_1d")) return 0.0f;
    const char * p = element_1d(tensor, i, "lm_ggml_get_f32_1d");
    return p ? (float) load(tensor, p) : 0.0f;
}

void lm_ggml_set_f32_1d(const struct lm_ggml_tensor * tensor, int i, float value) {
    if (!check_tensor(tensor, "lm_ggml_set_f32_1d")) return;
    char * p = element_1d(tensor, i, "lm_ggml_set_f32_1d");
    if (p) store(tensor, p, value);
}

float lm_ggml_get_f32_nd(const struct lm_ggml_tensor * tensor, int i0, int i1, int i2, int i3) {
    if (!check_tensor(tensor, "lm_ggml_get_f32_nd")) return 0.0f;
    const char * p = element(tensor, i0, i1, i2, i3, "lm_ggml_get_f32_nd");
    return p ? (float) load(tensor, p) : 0.0f;
}

void lm_ggml_set_f32_nd(const struct lm_ggml_tensor * tensor, int i0, int i1, int i2, int i3, float value) {
    if (!check_tensor(tensor, "lm_ggml_set_f32_nd")) return;
    char * p = element(tensor, i0, i1, i2, i3, "lm_ggml_set_f32_nd");
    if (p) store(tensor, p, value);
}

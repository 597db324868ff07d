// GGUF context mutation: key/value setters, key removal, copying keys from
// another context, and the tensor list (add, retype, point at data).
// Bad arguments log one line and leave the context unchanged (ggml aborts).
//
// general.alignment is a reserved key: it must be a u32 power of two, and
// setting or removing it changes the alignment the writer uses (and the
// tensor offsets), so the file written always agrees with its own header.

#include "gguf-internal.h"

#include <cinttypes>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

namespace {

using lmggml::gguf::relayout_from;
using lmggml::gguf::value_type_size;

bool is_alignment_key(const char * key) { return std::strcmp(key, LM_GGUF_KEY_GENERAL_ALIGNMENT) == 0; }

bool check_ctx_key(const lm_gguf_context * ctx, const char * key, const char * fn) {
    if (ctx == nullptr || key == nullptr) {
        LM_GGML_LOG_ERROR("%s: %s is NULL\n", fn, ctx ? "key" : "ctx");
        return false;
    }
    if (key[0] == '\0') {
        LM_GGML_LOG_ERROR("%s: key is empty\n", fn);
        return false;
    }
    return true;
}

// Replaces (or appends) kv; applies general.alignment. kv must be valid.
void put(lm_gguf_context * ctx, lm_gguf_kv && kv) {
    const int64_t old = lm_gguf_find_key(ctx, kv.key.c_str());
    if (old >= 0) {
        ctx->kv.erase(ctx->kv.begin() + old);
    }
    const bool alignment = kv.key == LM_GGUF_KEY_GENERAL_ALIGNMENT;
    uint32_t a = 0;
    if (alignment) {
        std::memcpy(&a, kv.data.data(), sizeof(a));
    }
    ctx->kv.push_back(std::move(kv));
    if (alignment && a != ctx->alignment) {
        ctx->alignment = a;
        relayout_from(*ctx, 0);
    }
}

bool alignment_value_ok(uint32_t a, const char * fn) {
    if (a == 0 || (a & (a - 1)) != 0) {
        LM_GGML_LOG_ERROR("%s: %s = %u is not a non-zero power of two\n", fn, LM_GGUF_KEY_GENERAL_ALIGNMENT, a);
        return false;
    }
    return true;
}

template <typename T>
void set_scalar(lm_gguf_context * ctx, const char * key, enum lm_gguf_type type, T val, const char * fn) {
    if (!check_ctx_key(ctx, key, fn)) {
        return;
    }
    if (is_alignment_key(key)) {
        if constexpr (std::is_same_v<T, uint32_t>) {
            if (!alignment_value_ok(val, fn)) {
                return;
            }
        } else {
            LM_GGML_LOG_ERROR("%s: %s must be set with lm_gguf_set_val_u32\n", fn, LM_GGUF_KEY_GENERAL_ALIGNMENT);
            return;
        }
    }
    try {
        lm_gguf_kv kv;
        kv.key = key;
        kv.type = type;
        kv.data.resize(sizeof(T));
        std::memcpy(kv.data.data(), &val, sizeof(T));
        put(ctx, std::move(kv));
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("%s: out of memory setting key '%s'\n", fn, key);
    }
}

} // namespace

extern "C" {

int64_t lm_gguf_remove_key(struct lm_gguf_context * ctx, const char * key) {
    if (ctx == nullptr || key == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_remove_key: %s is NULL\n", ctx ? "key" : "ctx");
        return -1;
    }
    const int64_t id = lm_gguf_find_key(ctx, key);
    if (id >= 0) {
        ctx->kv.erase(ctx->kv.begin() + id);
        if (is_alignment_key(key) && ctx->alignment != LM_GGUF_DEFAULT_ALIGNMENT) {
            ctx->alignment = LM_GGUF_DEFAULT_ALIGNMENT;
            relayout_from(*ctx, 0);
        }
    }
    return id;
}

void lm_gguf_set_val_u8(struct lm_gguf_context * ctx, const char * key, uint8_t val) {
    set_scalar(ctx, key, LM_GGUF_TYPE_UINT8, val, __func__);
}
void lm_gguf_set_val_i8(struct lm_gguf_context * ctx, const char * key, int8_t val) {
    set_scalar(ctx, key, LM_GGUF_TYPE_INT8, val, __func__);
}
void lm_gguf_set_val_u16(struct lm_gguf_context * ctx, const char * key, uint16_t val) {
    set_scalar(ctx, key, LM_GGUF_TYPE_UINT16, val, __func__);
}
void lm_gguf_set_val_i16(struct lm_gguf_context * ctx, const char * key, int16_t val) {
    set_scalar(ctx, key, LM_GGUF_TYPE_INT16, val, __func__);
}
void lm_gguf_set_val_u32(struct lm_gguf_context * ctx, const char * key, uint32_t val) {
    set_scalar(ctx, key, LM_GGUF_TYPE_UINT32, val, __func__);
}
void lm_gguf_set_val_i32(struct lm_gguf_context * ctx, const char * key, int32_t val) {
    set_scalar(ctx, key, LM_GGUF_TYPE_INT32, val, __func__);
}
void lm_gguf_set_val_f32(struct lm_gguf_context * ctx, const char * key, float val) {
    set_scalar(ctx, key, LM_GGUF_TYPE_FLOAT32, val, __func__);
}
void lm_gguf_set_val_u64(struct lm_gguf_context * ctx, const char * key, uint64_t val) {
    set_scalar(ctx, key, LM_GGUF_TYPE_UINT64, val, __func__);
}
void lm_gguf_set_val_i64(struct lm_gguf_context * ctx, const char * key, int64_t val) {
    set_scalar(ctx, key, LM_GGUF_TYPE_INT64, val, __func__);
}
void lm_gguf_set_val_f64(struct lm_gguf_context * ctx, const char * key, double val) {
    set_scalar(ctx, key, LM_GGUF_TYPE_FLOAT64, val, __func__);
}

void lm_gguf_set_val_bool(struct lm_gguf_context * ctx, const char * key, bool val) {
    set_scalar(ctx, key, LM_GGUF_TYPE_BOOL, (uint8_t) (val ? 1 : 0), __func__);
}

void lm_gguf_set_val_str(struct lm_gguf_context * ctx, const char * key, const char * val) {
    if (!check_ctx_key(ctx, key, __func__)) {
        return;
    }
    if (val == nullptr || is_alignment_key(key)) {
        LM_GGML_LOG_ERROR("%s: %s\n", __func__, val ? LM_GGUF_KEY_GENERAL_ALIGNMENT " must be a u32" : "val is NULL");
        return;
    }
    try {
        lm_gguf_kv kv;
        kv.key = key;
        kv.type = LM_GGUF_TYPE_STRING;
        kv.strs.emplace_back(val);
        put(ctx, std::move(kv));
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("%s: out of memory setting key '%s'\n", __func__, key);
    }
}

void lm_gguf_set_arr_data(struct lm_gguf_context * ctx, const char * key, enum lm_gguf_type type, const void * data,
                          size_t n) {
    if (!check_ctx_key(ctx, key, __func__)) {
        return;
    }
    const size_t es = value_type_size(type);
    if (es == 0) {
        LM_GGML_LOG_ERROR("%s: key '%s': type %d is not a fixed-size element type (strings: lm_gguf_set_arr_str)\n",
                          __func__, key, (int) type);
        return;
    }
    if (is_alignment_key(key)) {
        LM_GGML_LOG_ERROR("%s: %s must be a u32 scalar, not an array\n", __func__, LM_GGUF_KEY_GENERAL_ALIGNMENT);
        return;
    }
    size_t nbytes = 0;
    if ((data == nullptr && n != 0) || __builtin_mul_overflow(n, es, &nbytes)) {
        LM_GGML_LOG_ERROR("%s: key '%s': %s\n", __func__, key, data ? "size overflows size_t" : "data is NULL");
        return;
    }
    try {
        lm_gguf_kv kv;
        kv.key = key;
        kv.type = type;
        kv.is_array = true;
        kv.data.resize(nbytes);
        if (nbytes != 0) {
            std::memcpy(kv.data.data(), data, nbytes);
        }
        if (type == LM_GGUF_TYPE_BOOL) {
            for (uint8_t & b : kv.data) {
                b = b != 0;
            }
        }
        put(ctx, std::move(kv));
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("%s: out of memory setting key '%s' (%zu bytes)\n", __func__, key, nbytes);
    }
}

void lm_gguf_set_arr_str(struct lm_gguf_context * ctx, const char * key, const char ** data, size_t n) {
    if (!check_ctx_key(ctx, key, __func__)) {
        return;
    }
    if (is_alignment_key(key)) {
        LM_GGML_LOG_ERROR("%s: %s must be a u32 scalar, not an array\n", __func__, LM_GGUF_KEY_GENERAL_ALIGNMENT);
        return;
    }
    if (data == nullptr && n != 0) {
        LM_GGML_LOG_ERROR("%s: key '%s': data is NULL\n", __func__, key);
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        if (data[i] == nullptr) {
            LM_GGML_LOG_ERROR("%s: key '%s': string %zu is NULL\n", __func__, key, i);
            return;
        }
    }
    try {
        lm_gguf_kv kv;
        kv.key = key;
        kv.type = LM_GGUF_TYPE_STRING;
        kv.is_array = true;
        kv.strs.assign(data, data + n);
        put(ctx, std::move(kv));
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("%s: out of memory setting key '%s'\n", __func__, key);
    }
}

void lm_gguf_set_kv(struct lm_gguf_context * ctx, const struct lm_gguf_context * src) {
    if (ctx == nullptr || src == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_set_kv: %s is NULL\n", ctx ? "src" : "ctx");
        return;
    }
    try {
        const std::vector<lm_gguf_kv> copy = src->kv; // src may be ctx itself
        for (const lm_gguf_kv & kv : copy) {
            put(ctx, lm_gguf_kv(kv)); // src keys were validated when they were set or read
        }
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_gguf_set_kv: out of memory\n");
    }
}

void lm_gguf_add_tensor(struct lm_gguf_context * ctx, const struct lm_ggml_tensor * tensor) {
    if (ctx == nullptr || tensor == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_add_tensor: %s is NULL\n", ctx ? "tensor" : "ctx");
        return;
    }
    if (lm_gguf_find_tensor(ctx, tensor->name) >= 0) {
        LM_GGML_LOG_ERROR("lm_gguf_add_tensor: duplicate tensor name '%s'\n", tensor->name);
        return;
    }
    size_t nbytes = 0;
    if (!lmggml::gguf::tensor_nbytes(tensor->type, tensor->ne, &nbytes)) {
        LM_GGML_LOG_ERROR("lm_gguf_add_tensor: tensor '%s': invalid type %d or shape (%" PRId64 ", %" PRId64
                          ", %" PRId64 ", %" PRId64 ")\n",
                          tensor->name, (int) tensor->type, tensor->ne[0], tensor->ne[1], tensor->ne[2], tensor->ne[3]);
        return;
    }
    if (tensor->data != nullptr && !lm_ggml_is_contiguous(tensor)) {
        LM_GGML_LOG_ERROR("lm_gguf_add_tensor: tensor '%s' is not contiguous\n", tensor->name);
        return;
    }
    try {
        lm_gguf_tensor_info ti;
        std::memset(&ti.t, 0, sizeof(ti.t));
        std::memcpy(ti.t.name, tensor->name, sizeof(ti.t.name));
        ti.t.name[LM_GGML_MAX_NAME - 1] = '\0';
        ti.t.type = tensor->type;
        for (int i = 0; i < LM_GGML_MAX_DIMS; ++i) {
            ti.t.ne[i] = tensor->ne[i];
        }
        lmggml::gguf::set_contiguous_strides(ti.t);
        ti.t.data = tensor->data;
        ti.t.buffer = (tensor->view_src && tensor->view_src->buffer) ? tensor->view_src->buffer : tensor->buffer;
        ctx->info.push_back(ti);
        relayout_from(*ctx, ctx->info.size() - 1);
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_gguf_add_tensor: out of memory\n");
    }
}

void lm_gguf_set_tensor_type(struct lm_gguf_context * ctx, const char * name, enum lm_ggml_type type) {
    if (ctx == nullptr || name == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_set_tensor_type: %s is NULL\n", ctx ? "name" : "ctx");
        return;
    }
    const int64_t id = lm_gguf_find_tensor(ctx, name);
    if (id < 0) {
        LM_GGML_LOG_ERROR("lm_gguf_set_tensor_type: tensor '%s' not found\n", name);
        return;
    }
    lm_ggml_tensor & t = ctx->info[(size_t) id].t;
    size_t nbytes = 0;
    if (!lmggml::gguf::tensor_nbytes(type, t.ne, &nbytes)) {
        LM_GGML_LOG_ERROR("lm_gguf_set_tensor_type: tensor '%s': type %d is invalid or its block size does not divide "
                          "ne[0] = %" PRId64 "\n",
                          name, (int) type, t.ne[0]);
        return;
    }
    t.type = type;
    lmggml::gguf::set_contiguous_strides(t);
    relayout_from(*ctx, (size_t) id + 1);
}

void lm_gguf_set_tensor_data(struct lm_gguf_context * ctx, const char * name, const void * data) {
    if (ctx == nullptr || name == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_set_tensor_data: %s is NULL\n", ctx ? "name" : "ctx");
        return;
    }
    const int64_t id = lm_gguf_find_tensor(ctx, name);
    if (id < 0) {
        LM_GGML_LOG_ERROR("lm_gguf_set_tensor_data: tensor '%s' not found\n", name);
        return;
    }
    lm_ggml_tensor & t = ctx->info[(size_t) id].t;
    t.data = const_cast<void *>(data); // only read, when writing the file
    t.buffer = nullptr;                // host memory from now on
}

} // extern "C"

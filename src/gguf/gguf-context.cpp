// GGUF context: creation, shared layout helpers and the read accessors.
// Accessors never abort: a NULL context, an id out of range or a value of
// another type logs one line and returns 0 / NULL (ggml asserts instead).

#include "gguf-internal.h"

#include <cinttypes>
#include <cstring>
#include <new>

namespace lmggml::gguf {

size_t value_type_size(enum lm_gguf_type type) {
    switch (type) {
        case LM_GGUF_TYPE_UINT8: return 1;
        case LM_GGUF_TYPE_INT8: return 1;
        case LM_GGUF_TYPE_UINT16: return 2;
        case LM_GGUF_TYPE_INT16: return 2;
        case LM_GGUF_TYPE_UINT32: return 4;
        case LM_GGUF_TYPE_INT32: return 4;
        case LM_GGUF_TYPE_FLOAT32: return 4;
        case LM_GGUF_TYPE_BOOL: return 1;
        case LM_GGUF_TYPE_UINT64: return 8;
        case LM_GGUF_TYPE_INT64: return 8;
        case LM_GGUF_TYPE_FLOAT64: return 8;
        case LM_GGUF_TYPE_STRING:
        case LM_GGUF_TYPE_ARRAY:
        case LM_GGUF_TYPE_COUNT: return 0;
    }
    return 0;
}

bool is_element_type(int type) { return type >= 0 && type < LM_GGUF_TYPE_COUNT && type != LM_GGUF_TYPE_ARRAY; }

int tensor_n_dims(const lm_ggml_tensor & t) {
    for (int i = LM_GGML_MAX_DIMS - 1; i >= 1; --i) {
        if (t.ne[i] != 1) {
            return i + 1;
        }
    }
    return 1;
}

bool tensor_nbytes(enum lm_ggml_type type, const int64_t ne[LM_GGML_MAX_DIMS], size_t * out) {
    const int64_t blck = lm_ggml_blck_size(type);
    if (blck <= 0 || ne[0] < 0 || ne[0] % blck != 0) {
        return false;
    }
    // zero dimensions are skipped so that the products the core forms from
    // the other dimensions (rows, strides) are known to fit as well
    size_t bytes = lm_ggml_type_size(type);
    bool empty = false;
    const int64_t blocks[LM_GGML_MAX_DIMS] = {ne[0] / blck, ne[1], ne[2], ne[3]};
    for (int i = 0; i < LM_GGML_MAX_DIMS; ++i) {
        if (blocks[i] < 0) {
            return false;
        }
        if (blocks[i] == 0) {
            empty = true;
        } else if (__builtin_mul_overflow(bytes, (size_t) blocks[i], &bytes)) {
            return false;
        }
    }
    *out = empty ? 0 : bytes;
    return true;
}

void set_contiguous_strides(lm_ggml_tensor & t) {
    const int64_t blck = lm_ggml_blck_size(t.type);
    t.nb[0] = lm_ggml_type_size(t.type);
    t.nb[1] = t.nb[0] * (size_t) (blck > 0 ? t.ne[0] / blck : 0);
    for (int i = 2; i < LM_GGML_MAX_DIMS; ++i) {
        t.nb[i] = t.nb[i - 1] * (size_t) t.ne[i - 1];
    }
}

void relayout_from(lm_gguf_context & ctx, size_t first) {
    for (size_t i = first; i < ctx.info.size(); ++i) {
        if (i == 0) {
            ctx.info[i].offset = 0;
            continue;
        }
        const lm_gguf_tensor_info & prev = ctx.info[i - 1];
        size_t nbytes = 0;
        tensor_nbytes(prev.t.type, prev.t.ne, &nbytes);
        ctx.info[i].offset = prev.offset + LM_GGML_PAD(nbytes, ctx.alignment);
    }
}

} // namespace lmggml::gguf

size_t lm_gguf_kv::n_elements() const {
    if (type == LM_GGUF_TYPE_STRING) {
        return strs.size();
    }
    const size_t es = lmggml::gguf::value_type_size(type);
    return es ? data.size() / es : 0;
}

namespace {

using lmggml::gguf::value_type_size;

const char * type_label(enum lm_gguf_type type) {
    const char * n = lm_gguf_type_name(type);
    return n ? n : "?";
}

const lm_gguf_kv * kv_at(const lm_gguf_context * ctx, int64_t key_id, const char * fn) {
    if (ctx == nullptr) {
        LM_GGML_LOG_ERROR("%s: ctx is NULL\n", fn);
        return nullptr;
    }
    if (key_id < 0 || (uint64_t) key_id >= ctx->kv.size()) {
        LM_GGML_LOG_ERROR("%s: key id %" PRId64 " is out of range [0, %zu)\n", fn, key_id, ctx->kv.size());
        return nullptr;
    }
    return &ctx->kv[(size_t) key_id];
}

const lm_gguf_tensor_info * info_at(const lm_gguf_context * ctx, int64_t tensor_id, const char * fn) {
    if (ctx == nullptr) {
        LM_GGML_LOG_ERROR("%s: ctx is NULL\n", fn);
        return nullptr;
    }
    if (tensor_id < 0 || (uint64_t) tensor_id >= ctx->info.size()) {
        LM_GGML_LOG_ERROR("%s: tensor id %" PRId64 " is out of range [0, %zu)\n", fn, tensor_id, ctx->info.size());
        return nullptr;
    }
    return &ctx->info[(size_t) tensor_id];
}

// A single value of type `want`: a scalar, or (as in ggml) a one-element array.
const lm_gguf_kv * single_of(const lm_gguf_context * ctx, int64_t key_id, enum lm_gguf_type want, const char * fn) {
    const lm_gguf_kv * kv = kv_at(ctx, key_id, fn);
    if (kv == nullptr) {
        return nullptr;
    }
    if (kv->type != want || kv->n_elements() != 1) {
        LM_GGML_LOG_ERROR("%s: key '%s' holds %s%s (%zu elements), not a single %s\n", fn, kv->key.c_str(),
                          kv->is_array ? "an array of " : "", type_label(kv->type), kv->n_elements(), type_label(want));
        return nullptr;
    }
    return kv;
}

template <typename T>
T get_single(const lm_gguf_context * ctx, int64_t key_id, enum lm_gguf_type want, const char * fn) {
    const lm_gguf_kv * kv = single_of(ctx, key_id, want, fn);
    if (kv == nullptr) {
        return T{};
    }
    T v;
    std::memcpy(&v, kv->data.data(), sizeof(T));
    return v;
}

} // namespace

extern "C" {

struct lm_gguf_context * lm_gguf_init_empty(void) {
    try {
        return new lm_gguf_context;
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_gguf_init_empty: out of memory\n");
        return nullptr;
    }
}

void lm_gguf_free(struct lm_gguf_context * ctx) { delete ctx; }

const char * lm_gguf_type_name(enum lm_gguf_type type) {
    switch (type) {
        case LM_GGUF_TYPE_UINT8: return "u8";
        case LM_GGUF_TYPE_INT8: return "i8";
        case LM_GGUF_TYPE_UINT16: return "u16";
        case LM_GGUF_TYPE_INT16: return "i16";
        case LM_GGUF_TYPE_UINT32: return "u32";
        case LM_GGUF_TYPE_INT32: return "i32";
        case LM_GGUF_TYPE_FLOAT32: return "f32";
        case LM_GGUF_TYPE_BOOL: return "bool";
        case LM_GGUF_TYPE_STRING: return "str";
        case LM_GGUF_TYPE_ARRAY: return "arr";
        case LM_GGUF_TYPE_UINT64: return "u64";
        case LM_GGUF_TYPE_INT64: return "i64";
        case LM_GGUF_TYPE_FLOAT64: return "f64";
        case LM_GGUF_TYPE_COUNT: break;
    }
    return nullptr;
}

uint32_t lm_gguf_get_version(const struct lm_gguf_context * ctx) {
    if (ctx == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_get_version: ctx is NULL\n");
        return 0;
    }
    return ctx->version;
}

size_t lm_gguf_get_alignment(const struct lm_gguf_context * ctx) {
    if (ctx == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_get_alignment: ctx is NULL\n");
        return 0;
    }
    return ctx->alignment;
}

size_t lm_gguf_get_data_offset(const struct lm_gguf_context * ctx) {
    if (ctx == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_get_data_offset: ctx is NULL\n");
        return 0;
    }
    return ctx->offset;
}

int64_t lm_gguf_get_n_kv(const struct lm_gguf_context * ctx) {
    if (ctx == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_get_n_kv: ctx is NULL\n");
        return 0;
    }
    return (int64_t) ctx->kv.size();
}

int64_t lm_gguf_find_key(const struct lm_gguf_context * ctx, const char * key) {
    if (ctx == nullptr || key == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_find_key: %s is NULL\n", ctx ? "key" : "ctx");
        return -1;
    }
    for (size_t i = 0; i < ctx->kv.size(); ++i) {
        if (ctx->kv[i].key == key) {
            return (int64_t) i;
        }
    }
    return -1;
}

const char * lm_gguf_get_key(const struct lm_gguf_context * ctx, int64_t key_id) {
    const lm_gguf_kv * kv = kv_at(ctx, key_id, __func__);
    return kv ? kv->key.c_str() : nullptr;
}

enum lm_gguf_type lm_gguf_get_kv_type(const struct lm_gguf_context * ctx, int64_t key_id) {
    const lm_gguf_kv * kv = kv_at(ctx, key_id, __func__);
    if (kv == nullptr) {
        return LM_GGUF_TYPE_COUNT;
    }
    return kv->is_array ? LM_GGUF_TYPE_ARRAY : kv->type;
}

enum lm_gguf_type lm_gguf_get_arr_type(const struct lm_gguf_context * ctx, int64_t key_id) {
    const lm_gguf_kv * kv = kv_at(ctx, key_id, __func__);
    if (kv == nullptr) {
        return LM_GGUF_TYPE_COUNT;
    }
    if (!kv->is_array) {
        LM_GGML_LOG_ERROR("%s: key '%s' is a %s scalar, not an array\n", __func__, kv->key.c_str(),
                          type_label(kv->type));
        return LM_GGUF_TYPE_COUNT;
    }
    return kv->type;
}

uint8_t lm_gguf_get_val_u8(const struct lm_gguf_context * ctx, int64_t id) {
    return get_single<uint8_t>(ctx, id, LM_GGUF_TYPE_UINT8, __func__);
}
int8_t lm_gguf_get_val_i8(const struct lm_gguf_context * ctx, int64_t id) {
    return get_single<int8_t>(ctx, id, LM_GGUF_TYPE_INT8, __func__);
}
uint16_t lm_gguf_get_val_u16(const struct lm_gguf_context * ctx, int64_t id) {
    return get_single<uint16_t>(ctx, id, LM_GGUF_TYPE_UINT16, __func__);
}
int16_t lm_gguf_get_val_i16(const struct lm_gguf_context * ctx, int64_t id) {
    return get_single<int16_t>(ctx, id, LM_GGUF_TYPE_INT16, __func__);
}
uint32_t lm_gguf_get_val_u32(const struct lm_gguf_context * ctx, int64_t id) {
    return get_single<uint32_t>(ctx, id, LM_GGUF_TYPE_UINT32, __func__);
}
int32_t lm_gguf_get_val_i32(const struct lm_gguf_context * ctx, int64_t id) {
    return get_single<int32_t>(ctx, id, LM_GGUF_TYPE_INT32, __func__);
}
float lm_gguf_get_val_f32(const struct lm_gguf_context * ctx, int64_t id) {
    return get_single<float>(ctx, id, LM_GGUF_TYPE_FLOAT32, __func__);
}
uint64_t lm_gguf_get_val_u64(const struct lm_gguf_context * ctx, int64_t id) {
    return get_single<uint64_t>(ctx, id, LM_GGUF_TYPE_UINT64, __func__);
}
int64_t lm_gguf_get_val_i64(const struct lm_gguf_context * ctx, int64_t id) {
    return get_single<int64_t>(ctx, id, LM_GGUF_TYPE_INT64, __func__);
}
double lm_gguf_get_val_f64(const struct lm_gguf_context * ctx, int64_t id) {
    return get_single<double>(ctx, id, LM_GGUF_TYPE_FLOAT64, __func__);
}

bool lm_gguf_get_val_bool(const struct lm_gguf_context * ctx, int64_t key_id) {
    return get_single<uint8_t>(ctx, key_id, LM_GGUF_TYPE_BOOL, __func__) != 0;
}

const char * lm_gguf_get_val_str(const struct lm_gguf_context * ctx, int64_t key_id) {
    const lm_gguf_kv * kv = single_of(ctx, key_id, LM_GGUF_TYPE_STRING, __func__);
    return kv ? kv->strs[0].c_str() : nullptr;
}

const void * lm_gguf_get_val_data(const struct lm_gguf_context * ctx, int64_t key_id) {
    const lm_gguf_kv * kv = kv_at(ctx, key_id, __func__);
    if (kv == nullptr) {
        return nullptr;
    }
    if (kv->type == LM_GGUF_TYPE_STRING || kv->n_elements() != 1) {
        LM_GGML_LOG_ERROR("%s: key '%s' does not hold a single fixed-size value\n", __func__, kv->key.c_str());
        return nullptr;
    }
    return kv->data.data();
}

size_t lm_gguf_get_arr_n(const struct lm_gguf_context * ctx, int64_t key_id) {
    const lm_gguf_kv * kv = kv_at(ctx, key_id, __func__);
    return kv ? kv->n_elements() : 0;
}

const void * lm_gguf_get_arr_data(const struct lm_gguf_context * ctx, int64_t key_id) {
    const lm_gguf_kv * kv = kv_at(ctx, key_id, __func__);
    if (kv == nullptr) {
        return nullptr;
    }
    if (kv->type == LM_GGUF_TYPE_STRING) {
        LM_GGML_LOG_ERROR("%s: key '%s' holds strings: use lm_gguf_get_arr_str\n", __func__, kv->key.c_str());
        return nullptr;
    }
    return kv->data.data();
}

const char * lm_gguf_get_arr_str(const struct lm_gguf_context * ctx, int64_t key_id, size_t i) {
    const lm_gguf_kv * kv = kv_at(ctx, key_id, __func__);
    if (kv == nullptr) {
        return nullptr;
    }
    if (kv->type != LM_GGUF_TYPE_STRING) {
        LM_GGML_LOG_ERROR("%s: key '%s' holds %s, not strings\n", __func__, kv->key.c_str(), type_label(kv->type));
        return nullptr;
    }
    if (i >= kv->strs.size()) {
        LM_GGML_LOG_ERROR("%s: key '%s': index %zu is out of range [0, %zu)\n", __func__, kv->key.c_str(), i,
                          kv->strs.size());
        return nullptr;
    }
    return kv->strs[i].c_str();
}

int64_t lm_gguf_get_n_tensors(const struct lm_gguf_context * ctx) {
    if (ctx == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_get_n_tensors: ctx is NULL\n");
        return 0;
    }
    return (int64_t) ctx->info.size();
}

int64_t lm_gguf_find_tensor(const struct lm_gguf_context * ctx, const char * name) {
    if (ctx == nullptr || name == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_find_tensor: %s is NULL\n", ctx ? "name" : "ctx");
        return -1;
    }
    for (size_t i = 0; i < ctx->info.size(); ++i) {
        if (std::strcmp(ctx->info[i].t.name, name) == 0) {
            return (int64_t) i;
        }
    }
    return -1;
}

size_t lm_gguf_get_tensor_offset(const struct lm_gguf_context * ctx, int64_t tensor_id) {
    const lm_gguf_tensor_info * ti = info_at(ctx, tensor_id, __func__);
    return ti ? (size_t) ti->offset : 0;
}

const char * lm_gguf_get_tensor_name(const struct lm_gguf_context * ctx, int64_t tensor_id) {
    const lm_gguf_tensor_info * ti = info_at(ctx, tensor_id, __func__);
    return ti ? ti->t.name : nullptr;
}

enum lm_ggml_type lm_gguf_get_tensor_type(const struct lm_gguf_context * ctx, int64_t tensor_id) {
    const lm_gguf_tensor_info * ti = info_at(ctx, tensor_id, __func__);
    return ti ? ti->t.type : LM_GGML_TYPE_COUNT;
}

size_t lm_gguf_get_tensor_size(const struct lm_gguf_context * ctx, int64_t tensor_id) {
    const lm_gguf_tensor_info * ti = info_at(ctx, tensor_id, __func__);
    size_t nbytes = 0;
    if (ti != nullptr) {
        lmggml::gguf::tensor_nbytes(ti->t.type, ti->t.ne, &nbytes);
    }
    return nbytes;
}

} // extern "C"

// C++ linkage, as ggml declares it (include/ggml-impl.h).
size_t lm_gguf_type_size(enum lm_gguf_type type) { return value_type_size(type); }

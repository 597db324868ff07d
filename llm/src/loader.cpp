#include "loader.h"

#include <cinttypes>
#include <cstring>

#include "mmap.h"

namespace lmllm {

namespace {

std::string shape_str(const int64_t * ne, int n) {
    std::string s = "(";
    for (int i = 0; i < n; i++) {
        s += (i ? ", " : "") + std::to_string(ne[i]);
    }
    return s + ")";
}

int n_dims_of(const lm_ggml_tensor * t) {
    int n = LM_GGML_MAX_DIMS;
    while (n > 1 && t->ne[n - 1] == 1) {
        n--;
    }
    return n;
}

} // namespace

// ---------------------------------------------------------------- GgufFile

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string & path) {
    // Check existence and magic ourselves: the reader's NULL does not say which.
    auto reader = FileReader::open(path);
    if (!reader.ok()) {
        return reader.status();
    }
    char magic[4] = {};
    if ((*reader)->size() < 4 || !(*reader)->read_at(0, magic, 4).ok() || std::memcmp(magic, LM_GGUF_MAGIC, 4) != 0) {
        return Status::error("not a GGUF file: '" + path + "'");
    }

    std::unique_ptr<GgufFile> f(new GgufFile());
    f->path_ = path;
    f->file_size_ = (*reader)->size();
    lm_gguf_init_params params = {/*no_alloc =*/true, /*ctx =*/&f->meta_};
    f->gguf_ = lm_gguf_init_from_file(path.c_str(), params);
    if (f->gguf_ == nullptr) {
        return Status::error("invalid or corrupt GGUF file '" + path + "'");
    }
    return f;
}

GgufFile::~GgufFile() {
    if (gguf_ != nullptr) {
        lm_gguf_free(gguf_);
    }
    if (meta_ != nullptr) {
        lm_ggml_free(meta_);
    }
}

bool GgufFile::has(const std::string & key) const { return lm_gguf_find_key(gguf_, key.c_str()) >= 0; }

Status GgufFile::get_u32(const std::string & key, uint32_t & out, bool required) const {
    const int64_t id = lm_gguf_find_key(gguf_, key.c_str());
    if (id < 0) {
        return required ? Status::error("missing key '" + key + "' in '" + path_ + "'") : Status();
    }
    int64_t v = 0;
    switch (lm_gguf_get_kv_type(gguf_, id)) {
        case LM_GGUF_TYPE_UINT8: v = lm_gguf_get_val_u8(gguf_, id); break;
        case LM_GGUF_TYPE_INT8: v = lm_gguf_get_val_i8(gguf_, id); break;
        case LM_GGUF_TYPE_UINT16: v = lm_gguf_get_val_u16(gguf_, id); break;
        case LM_GGUF_TYPE_INT16: v = lm_gguf_get_val_i16(gguf_, id); break;
        case LM_GGUF_TYPE_UINT32: v = lm_gguf_get_val_u32(gguf_, id); break;
        case LM_GGUF_TYPE_INT32: v = lm_gguf_get_val_i32(gguf_, id); break;
        case LM_GGUF_TYPE_UINT64: {
            uint64_t u = lm_gguf_get_val_u64(gguf_, id);
            v = u > UINT32_MAX ? -1 : static_cast<int64_t>(u);
        } break;
        case LM_GGUF_TYPE_INT64: v = lm_gguf_get_val_i64(gguf_, id); break;
        case LM_GGUF_TYPE_ARRAY:
            return Status::error("key '" + key + "' is an array (per-layer values are not supported)");
        default: return Status::error("key '" + key + "' is not an integer");
    }
    if (v < 0 || v > static_cast<int64_t>(UINT32_MAX)) {
        return Status::error("key '" + key + "' is out of range: " + std::to_string(v));
    }
    out = static_cast<uint32_t>(v);
    return {};
}

Status GgufFile::get_f32(const std::string & key, float & out, bool required) const {
    const int64_t id = lm_gguf_find_key(gguf_, key.c_str());
    if (id < 0) {
        return required ? Status::error("missing key '" + key + "' in '" + path_ + "'") : Status();
    }
    switch (lm_gguf_get_kv_type(gguf_, id)) {
        case LM_GGUF_TYPE_FLOAT32: out = lm_gguf_get_val_f32(gguf_, id); return {};
        case LM_GGUF_TYPE_FLOAT64: out = static_cast<float>(lm_gguf_get_val_f64(gguf_, id)); return {};
        default: {
            uint32_t u = 0;
            if (get_u32(key, u, true).ok()) { // an integer written where a float was meant
                out = static_cast<float>(u);
                return {};
            }
            return Status::error("key '" + key + "' is not a number");
        }
    }
}

Status GgufFile::get_str(const std::string & key, std::string & out, bool required) const {
    const int64_t id = lm_gguf_find_key(gguf_, key.c_str());
    if (id < 0) {
        return required ? Status::error("missing key '" + key + "' in '" + path_ + "'") : Status();
    }
    if (lm_gguf_get_kv_type(gguf_, id) != LM_GGUF_TYPE_STRING) {
        return Status::error("key '" + key + "' is not a string");
    }
    out = lm_gguf_get_val_str(gguf_, id);
    return {};
}

Status GgufFile::get_arr_n(const std::string & key, uint64_t & out, bool required) const {
    const int64_t id = lm_gguf_find_key(gguf_, key.c_str());
    if (id < 0) {
        return required ? Status::error("missing key '" + key + "' in '" + path_ + "'") : Status();
    }
    if (lm_gguf_get_kv_type(gguf_, id) != LM_GGUF_TYPE_ARRAY) {
        return Status::error("key '" + key + "' is not an array");
    }
    out = lm_gguf_get_arr_n(gguf_, id);
    return {};
}

const lm_ggml_tensor * GgufFile::tensor_meta(const std::string & name) const {
    return meta_ ? lm_ggml_get_tensor(meta_, name.c_str()) : nullptr;
}

uint64_t GgufFile::tensor_file_offset(const std::string & name) const {
    const int64_t id = lm_gguf_find_tensor(gguf_, name.c_str());
    return id < 0 ? 0 : lm_gguf_get_data_offset(gguf_) + lm_gguf_get_tensor_offset(gguf_, id);
}

int64_t GgufFile::n_tensors() const { return lm_gguf_get_n_tensors(gguf_); }

// ---------------------------------------------------------------- TensorLoader

TensorLoader::TensorLoader(const GgufFile & file, Model::Impl & model) : file_(file), model_(model) {}

void TensorLoader::fail(std::string message) {
    if (status_.ok()) {
        status_ = Status::error(std::move(message));
    }
}

lm_ggml_tensor * TensorLoader::create(const std::string & name, std::vector<int64_t> shape, lm_ggml_backend_dev_t dev,
                                      bool required) {
    if (!status_.ok()) {
        return nullptr;
    }
    const lm_ggml_tensor * meta = file_.tensor_meta(name);
    if (meta == nullptr) {
        if (required) {
            fail("missing tensor '" + name + "' in '" + file_.path() + "'");
        }
        return nullptr;
    }
    int64_t want[LM_GGML_MAX_DIMS] = {1, 1, 1, 1};
    for (size_t i = 0; i < shape.size() && i < LM_GGML_MAX_DIMS; i++) {
        want[i] = shape[i];
    }
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        if (meta->ne[i] != want[i]) {
            fail("tensor '" + name + "' has shape " + shape_str(meta->ne, n_dims_of(meta)) + ", expected " +
                 shape_str(want, static_cast<int>(shape.size())));
            return nullptr;
        }
    }
    const uint64_t offset = file_.tensor_file_offset(name);
    const uint64_t nbytes = lm_ggml_nbytes(meta);
    if (offset > file_.file_size() || nbytes > file_.file_size() - offset) {
        fail("tensor '" + name + "' data lies past the end of '" + file_.path() + "' (truncated file?)");
        return nullptr;
    }
    if (!model_.on_cpu(dev) && !device_can_multiply(dev, meta)) {
        dev = model_.cpu_dev; // as llama.cpp does: a weight the device cannot compute with stays on the CPU
    }
    lm_ggml_context * ctx = model_.ctx_of(dev);
    lm_ggml_tensor * t = ctx != nullptr ? lm_ggml_dup_tensor(ctx, meta) : nullptr;
    if (t == nullptr) {
        fail("out of tensor slots while creating '" + name + "'");
        return nullptr;
    }
    lm_ggml_set_name(t, name.c_str());
    sources_.push_back({t, offset, model_.on_cpu(dev) ? model_.cpu_dev : dev});
    return t;
}

// True unless meta is a matrix dev cannot multiply with (a MUL_MAT of it by
// a batch of F32 activations, asked of the device).
bool TensorLoader::device_can_multiply(lm_ggml_backend_dev_t dev, const lm_ggml_tensor * meta) const {
    if (meta->ne[1] <= 1) {
        return true; // vectors (norms, biases) go through element-wise ops
    }
    lm_ggml_init_params ip = {3 * lm_ggml_tensor_overhead(), nullptr, /*no_alloc =*/true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    if (ctx == nullptr) {
        return false; // out of memory: the CPU is the safe place
    }
    lm_ggml_tensor * w = lm_ggml_new_tensor(ctx, meta->type, LM_GGML_MAX_DIMS, meta->ne);
    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, meta->ne[0], 512);
    lm_ggml_tensor * y = w && x ? lm_ggml_mul_mat(ctx, w, x) : nullptr;
    const bool ok = y != nullptr && lm_ggml_backend_dev_supports_op(dev, y);
    lm_ggml_free(ctx);
    return ok;
}

lm_ggml_tensor * TensorLoader::layer(uint32_t il, const char * suffix, std::vector<int64_t> shape, bool required) {
    return create("blk." + std::to_string(il) + "." + suffix, std::move(shape), model_.layer_device(il), required);
}

lm_ggml_tensor * TensorLoader::output_layer(const std::string & name, std::vector<int64_t> shape, bool required) {
    return create(name, std::move(shape), model_.output_dev, required);
}

lm_ggml_tensor * TensorLoader::output_or_tied(int64_t n_embd, int64_t n_vocab) {
    lm_ggml_backend_dev_t where = model_.output_dev;
    lm_ggml_tensor * out = create("output.weight", {n_embd, n_vocab}, where, /*required =*/false);
    if (out != nullptr || !status_.ok()) {
        return out;
    }
    if (model_.on_cpu(where)) {
        return model_.w.tok_embd; // tied: the same bytes serve both
    }
    // The output runs on the device; give it its own copy of the embeddings.
    return create("token_embd.weight", {n_embd, n_vocab}, where, true);
}

} // namespace lmllm

// GGUF writer: serialises a context as GGUF version 3, little-endian.
// Layout: header, key/values, tensor infos, zero padding to the alignment,
// then each tensor's bytes padded to the alignment. Tensor offsets are laid
// out one after another in context order.

#include "gguf-internal.h"
#include "ggml-backend.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

namespace {

class ByteWriter {
public:
    explicit ByteWriter(std::vector<uint8_t> & out) : out_(out) {}

    template <typename T> void put(const T & v) {
        const uint8_t * p = reinterpret_cast<const uint8_t *>(&v);
        out_.insert(out_.end(), p, p + sizeof(T));
    }

    void put_bytes(const void * p, size_t n) {
        const uint8_t * b = static_cast<const uint8_t *>(p);
        out_.insert(out_.end(), b, b + n);
    }

    void put_string(const char * s, size_t n) {
        put<uint64_t>(n);
        put_bytes(s, n);
    }

    void pad(size_t alignment) { out_.resize(LM_GGML_PAD(out_.size(), alignment), 0); }

private:
    std::vector<uint8_t> & out_;
};

size_t nbytes_of(const lm_gguf_tensor_info & ti) {
    size_t n = 0;
    lmggml::gguf::tensor_nbytes(ti.t.type, ti.t.ne, &n); // validated when added or read
    return n;
}

// Where a tensor's bytes come from: host memory, or a backend buffer copied
// into `scratch`. NULL (after logging) when the tensor has no data.
const void * tensor_bytes(const lm_gguf_tensor_info & ti, std::vector<uint8_t> & scratch, const char * fn) {
    static const uint8_t none = 0;
    const size_t n = nbytes_of(ti);
    if (n == 0) {
        return &none; // nothing to copy, but not an error
    }
    if (ti.t.data == nullptr) {
        LM_GGML_LOG_ERROR("%s: tensor '%s' has no data (use lm_gguf_set_tensor_data)\n", fn, ti.t.name);
        return nullptr;
    }
    if (ti.t.buffer == nullptr) {
        return ti.t.data;
    }
    scratch.resize(n);
    lm_ggml_backend_tensor_get(&ti.t, scratch.data(), 0, n);
    return scratch.data();
}

bool all_tensors_have_data(const lm_gguf_context & ctx, const char * fn) {
    for (const lm_gguf_tensor_info & ti : ctx.info) {
        if (nbytes_of(ti) != 0 && ti.t.data == nullptr) {
            LM_GGML_LOG_ERROR("%s: tensor '%s' has no data (use lm_gguf_set_tensor_data)\n", fn, ti.t.name);
            return false;
        }
    }
    return true;
}

} // namespace

namespace lmggml::gguf {

void write_meta(const lm_gguf_context & ctx, std::vector<uint8_t> & out) {
    ByteWriter w(out);
    w.put_bytes(LM_GGUF_MAGIC, 4);
    w.put<uint32_t>(LM_GGUF_VERSION);
    w.put<int64_t>((int64_t) ctx.info.size());
    w.put<int64_t>((int64_t) ctx.kv.size());

    for (const lm_gguf_kv & kv : ctx.kv) {
        w.put_string(kv.key.data(), kv.key.size());
        if (kv.is_array) {
            w.put<int32_t>(LM_GGUF_TYPE_ARRAY);
            w.put<int32_t>(kv.type);
            w.put<uint64_t>(kv.n_elements());
        } else {
            w.put<int32_t>(kv.type);
        }
        if (kv.type == LM_GGUF_TYPE_STRING) {
            for (const std::string & s : kv.strs) {
                w.put_string(s.data(), s.size());
            }
        } else {
            w.put_bytes(kv.data.data(), kv.data.size());
        }
    }

    uint64_t offset = 0;
    for (const lm_gguf_tensor_info & ti : ctx.info) {
        w.put_string(ti.t.name, std::strlen(ti.t.name));
        const int n_dims = tensor_n_dims(ti.t);
        w.put<uint32_t>((uint32_t) n_dims);
        for (int j = 0; j < n_dims; ++j) {
            w.put<int64_t>(ti.t.ne[j]);
        }
        w.put<int32_t>(ti.t.type);
        w.put<uint64_t>(offset);
        offset += LM_GGML_PAD(nbytes_of(ti), ctx.alignment);
    }
    w.pad(ctx.alignment);
}

bool write_to_buffer(const lm_gguf_context & ctx, std::vector<uint8_t> & out) {
    if (!all_tensors_have_data(ctx, "lm_gguf_write_to_buffer")) {
        return false;
    }
    write_meta(ctx, out);
    ByteWriter w(out);
    std::vector<uint8_t> scratch;
    for (const lm_gguf_tensor_info & ti : ctx.info) {
        const void * src = tensor_bytes(ti, scratch, "lm_gguf_write_to_buffer");
        if (src == nullptr) {
            return false;
        }
        w.put_bytes(src, nbytes_of(ti));
        w.pad(ctx.alignment);
    }
    return true;
}

} // namespace lmggml::gguf

extern "C" {

bool lm_gguf_write_to_file(const struct lm_gguf_context * ctx, const char * fname, bool only_meta) {
    if (ctx == nullptr || fname == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_write_to_file: %s is NULL\n", ctx ? "fname" : "ctx");
        return false;
    }
    if (!only_meta && !all_tensors_have_data(*ctx, __func__)) {
        return false;
    }
    std::vector<uint8_t> buf;
    try {
        lmggml::gguf::write_meta(*ctx, buf);
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_gguf_write_to_file: out of memory serialising the metadata\n");
        return false;
    }
    FILE * f = std::fopen(fname, "wb");
    if (f == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_write_to_file: cannot open '%s' for writing: %s\n", fname, std::strerror(errno));
        return false;
    }
    bool ok = std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
    if (ok && !only_meta) {
        // tensor data is streamed, one tensor at a time, never held whole
        static const uint8_t zeros[256] = {};
        std::vector<uint8_t> scratch;
        try {
            for (size_t i = 0; ok && i < ctx->info.size(); ++i) {
                const lm_gguf_tensor_info & ti = ctx->info[i];
                const size_t n = nbytes_of(ti);
                const void * src = tensor_bytes(ti, scratch, __func__);
                ok = src != nullptr && std::fwrite(src, 1, n, f) == n;
                for (size_t pad = LM_GGML_PAD(n, ctx->alignment) - n; ok && pad > 0;) {
                    const size_t k = pad < sizeof(zeros) ? pad : sizeof(zeros);
                    ok = std::fwrite(zeros, 1, k, f) == k;
                    pad -= k;
                }
            }
        } catch (const std::bad_alloc &) {
            LM_GGML_LOG_ERROR("lm_gguf_write_to_file: out of memory copying tensor data from a backend\n");
            std::fclose(f);
            std::remove(fname);
            return false;
        }
    }
    const int err = ok ? 0 : errno;
    if (std::fclose(f) != 0 && ok) {
        ok = false;
    }
    if (!ok) {
        LM_GGML_LOG_ERROR("lm_gguf_write_to_file: writing '%s' failed: %s\n", fname,
                          err ? std::strerror(err) : "I/O error");
        std::remove(fname); // never leave a truncated file that looks like GGUF
        return false;
    }
    return true;
}

size_t lm_gguf_get_meta_size(const struct lm_gguf_context * ctx) {
    if (ctx == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_get_meta_size: ctx is NULL\n");
        return 0;
    }
    try {
        std::vector<uint8_t> buf;
        lmggml::gguf::write_meta(*ctx, buf);
        return buf.size();
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_gguf_get_meta_size: out of memory\n");
        return 0;
    }
}

void lm_gguf_get_meta_data(const struct lm_gguf_context * ctx, void * data) {
    if (ctx == nullptr || data == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_get_meta_data: %s is NULL\n", ctx ? "data" : "ctx");
        return;
    }
    try {
        std::vector<uint8_t> buf;
        lmggml::gguf::write_meta(*ctx, buf);
        std::memcpy(data, buf.data(), buf.size());
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_gguf_get_meta_data: out of memory\n");
    }
}

} // extern "C"

// ggml's in-memory writer (exported for tests and tools, C++ linkage as in
// ggml): appends the image to buf, which is untouched on failure.
void lm_gguf_write_to_buf(const struct lm_gguf_context * ctx, std::vector<int8_t> & buf, bool only_meta) {
    if (ctx == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_write_to_buf: ctx is NULL\n");
        return;
    }
    try {
        std::vector<uint8_t> img;
        if (only_meta) {
            lmggml::gguf::write_meta(*ctx, img);
        } else if (!lmggml::gguf::write_to_buffer(*ctx, img)) {
            return; // logged
        }
        buf.reserve(buf.size() + img.size());
        buf.insert(buf.end(), img.begin(), img.end());
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_gguf_write_to_buf: out of memory\n");
    }
}

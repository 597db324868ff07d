// Placing a GGUF file's tensors on a device: zero copy into the mapping where
// the device can wrap host memory, an upload into a device buffer elsewhere.

#include "gguf-internal.h"
#include "gguf-loader.h"

#include <algorithm>
#include <new>
#include <vector>

namespace lmggml::gguf {

LoadedWeights & LoadedWeights::operator=(LoadedWeights && o) noexcept {
    if (this != &o) {
        std::swap(ctx_, o.ctx_);
        std::swap(buffer_, o.buffer_);
        std::swap(zero_copy_, o.zero_copy_);
        std::swap(mapping_, o.mapping_);
    }
    return *this;
}

LoadedWeights::~LoadedWeights() {
    if (buffer_ != nullptr) {
        lm_ggml_backend_buffer_free(buffer_);
    }
    if (ctx_ != nullptr) {
        lm_ggml_free(ctx_);
    }
}

lm_ggml_tensor * LoadedWeights::tensor(const char * name) const {
    return (ctx_ != nullptr && name != nullptr) ? lm_ggml_get_tensor(ctx_, name) : nullptr;
}

namespace {

// TENSOR_ALIGNMENT (32, ggml-impl.h): what GGUF promises for tensor data
constexpr size_t UPLOAD_CHUNK = 16u << 20; // bytes per tensor_set call: keeps progress and cancel responsive

struct Placement {
    lm_ggml_tensor * tensor;
    size_t           file_offset; // of its data in the file
    size_t           nbytes;
};

// Wraps the whole mapping as one host buffer and points every tensor into
// it. Returns false (leaving w without buffer) when the device declines or
// the data is not aligned for it; the caller then copies instead.
bool try_zero_copy(lm_ggml_backend_dev_t dev, const MappedFile & file, const std::vector<Placement> & places,
                   size_t max_size, lm_ggml_backend_buffer_t * out) {
    lm_ggml_backend_buffer_t buf =
        lm_ggml_backend_dev_buffer_from_host_ptr(dev, const_cast<uint8_t *>(file.data()), file.size(), max_size);
    if (buf == nullptr) {
        return false;
    }
    // Tensors placed at an explicit address need not honour the buffer's
    // allocation alignment (64 on the CPU), only what kernels assume of
    // weights: ggml's tensor alignment of 32 bytes, GGUF's default.
    const size_t align = std::clamp<size_t>(lm_ggml_backend_buffer_get_alignment(buf), 1, TENSOR_ALIGNMENT);
    for (const Placement & p : places) {
        if (p.nbytes != 0 && p.file_offset % align != 0) { // the mapping itself starts on a page
            lm_ggml_backend_buffer_free(buf);
            return false;
        }
    }
    *out = buf;
    return true;
}

} // namespace

Result<LoadedWeights> load_weights(const lm_gguf_context * gguf, std::shared_ptr<const MappedFile> file,
                                   lm_ggml_backend_dev_t dev, LoadProgress progress, void * user) {
    using R = Result<LoadedWeights>;
    if (gguf == nullptr || file == nullptr || dev == nullptr) {
        return R::failure(gguf == nullptr ? "gguf is NULL" : file == nullptr ? "file is NULL" : "dev is NULL");
    }
    try {
        LoadedWeights w;
        const size_t n = gguf->info.size();
        const lm_ggml_init_params ip = { /*mem_size =*/ n * lm_ggml_tensor_overhead() + 256, /*mem_buffer =*/ nullptr, /*no_alloc =*/ true };
        w.ctx_ = lm_ggml_init(ip);
        if (w.ctx_ == nullptr) {
            return R::failure("cannot create an lm_ggml_context for " + std::to_string(n) + " tensors");
        }

        std::vector<Placement> places;
        places.reserve(n);
        size_t total = 0, max_size = 0;
        for (const lm_gguf_tensor_info & ti : gguf->info) {
            size_t nbytes = 0;
            tensor_nbytes(ti.t.type, ti.t.ne, &nbytes);
            uint64_t begin = (uint64_t) gguf->offset + ti.offset;
            if (nbytes == 0) {
                begin = std::min<uint64_t>(begin, file->size()); // empty: may name any offset
            } else if (begin < ti.offset || begin > file->size() || nbytes > file->size() - begin) {
                return R::failure("tensor '" + std::string(ti.t.name) + "' lies outside '" + file->path() +
                                  "' (was the gguf context read from this file?)");
            }
            lm_ggml_tensor * t = lm_ggml_new_tensor(w.ctx_, ti.t.type, LM_GGML_MAX_DIMS, ti.t.ne);
            if (t == nullptr) {
                return R::failure("cannot create tensor '" + std::string(ti.t.name) + "'");
            }
            lm_ggml_set_name(t, ti.t.name);
            places.push_back({t, (size_t) begin, nbytes});
            total += nbytes;
            max_size = std::max(max_size, nbytes);
        }

        size_t done = 0;
        auto report = [&](size_t bytes) {
            done += bytes;
            const float f = total ? (float) ((double) done / (double) total) : 1.0f;
            return progress == nullptr || progress(f, user);
        };

        lm_ggml_backend_dev_props props{};
        lm_ggml_backend_dev_get_props(dev, &props);
        if (props.caps.buffer_from_host_ptr && n != 0 && try_zero_copy(dev, *file, places, max_size, &w.buffer_)) {
            w.zero_copy_ = true;
            w.mapping_   = file; // tensors point into it: keep it mapped
            for (const Placement & p : places) {
                void * addr = const_cast<uint8_t *>(file->data()) + p.file_offset;
                lm_ggml_backend_tensor_alloc(w.buffer_, p.tensor, addr);
                if (p.tensor->data != addr) {
                    return R::failure("cannot place tensor '" + std::string(p.tensor->name) + "' in the mapped buffer");
                }
                if (!report(p.nbytes)) {
                    return R::failure("cancelled");
                }
            }
        } else {
            lm_ggml_backend_buffer_type_t buft = lm_ggml_backend_dev_buffer_type(dev);
            if (buft == nullptr) {
                return R::failure(std::string("device ") + lm_ggml_backend_dev_name(dev) + " has no buffer type");
            }
            if (total != 0) {
                w.buffer_ = lm_ggml_backend_alloc_ctx_tensors_from_buft(w.ctx_, buft);
                if (w.buffer_ == nullptr) {
                    return R::failure("cannot allocate " + std::to_string(total) + " bytes of weights on device " +
                                      lm_ggml_backend_dev_name(dev));
                }
            }
            for (const Placement & p : places) {
                if (p.nbytes == 0 && !report(0)) {
                    return R::failure("cancelled");
                }
                for (size_t off = 0; off < p.nbytes; off += UPLOAD_CHUNK) {
                    const size_t k = std::min(UPLOAD_CHUNK, p.nbytes - off);
                    lm_ggml_backend_tensor_set(p.tensor, file->data() + p.file_offset + off, off, k);
                    if (!report(k)) {
                        return R::failure("cancelled");
                    }
                }
            }
        }
        if (n == 0 && !report(0)) {
            return R::failure("cancelled");
        }
        if (w.buffer_ != nullptr) {
            lm_ggml_backend_buffer_set_usage(w.buffer_, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        }
        return R(std::move(w));
    } catch (const std::bad_alloc &) {
        return R::failure("out of memory");
    }
}

} // namespace lmggml::gguf

#pragma once
// Internal to lmggml: loading a GGUF file's tensors onto a device for the
// LLM runner. The file is memory-mapped read-only; on a device that can wrap
// host memory (the CPU) the tensors point straight into the mapping (zero
// copy), elsewhere they are uploaded into a device buffer.
//
// Errors are values: every fallible function returns a Result whose error()
// says what went wrong; nothing here logs or aborts on bad input.

#include "gguf.h"
#include "ggml-backend.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace lmggml::gguf {

// A value or an error message.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : value_(std::move(value)) {} // NOLINT: implicit on purpose
    static Result failure(std::string message) {
        Result r;
        r.error_ = std::move(message);
        return r;
    }

    bool ok() const { return value_.has_value(); }
    explicit operator bool() const { return ok(); }

    T &       value()       { return *value_; }
    const T & value() const { return *value_; }
    T         take()        { return std::move(*value_); }

    const std::string & error() const { return error_; }

private:
    Result() = default;
    std::optional<T> value_;
    std::string      error_;
};

// A whole file mapped read-only (RAII: unmapped by the destructor).
class MappedFile {
public:
    // Maps `path`. Fails for a missing, unreadable, empty or non-regular file.
    static Result<std::shared_ptr<const MappedFile>> open(const std::string & path);

    MappedFile(const MappedFile &) = delete;
    MappedFile & operator=(const MappedFile &) = delete;
    ~MappedFile();

    const uint8_t *     data() const { return static_cast<const uint8_t *>(addr_); }
    size_t              size() const { return size_; }
    const std::string & path() const { return path_; }

private:
    MappedFile(void * addr, size_t size, std::string path) : addr_(addr), size_(size), path_(std::move(path)) {}

    void *      addr_;
    size_t      size_;
    std::string path_;
};

// Called after each step with the fraction of bytes placed so far (0..1);
// returning false cancels the load, which then fails with "cancelled".
using LoadProgress = bool (*)(float progress, void * user);

// The tensors of one GGUF file placed on one device. Owns the lm_ggml_context
// holding the tensor headers and the backend buffer holding (or wrapping)
// their data; in zero-copy mode it also keeps the mapping alive.
class LoadedWeights {
public:
    LoadedWeights(LoadedWeights && o) noexcept { *this = std::move(o); }
    LoadedWeights & operator=(LoadedWeights && o) noexcept;
    LoadedWeights(const LoadedWeights &) = delete;
    LoadedWeights & operator=(const LoadedWeights &) = delete;
    ~LoadedWeights();

    lm_ggml_context *        ctx()       const { return ctx_; }
    lm_ggml_backend_buffer_t buffer()    const { return buffer_; }
    bool                     zero_copy() const { return zero_copy_; }

    // The tensor named `name`, or NULL.
    lm_ggml_tensor * tensor(const char * name) const;

private:
    friend Result<LoadedWeights> load_weights(const lm_gguf_context *, std::shared_ptr<const MappedFile>,
                                              lm_ggml_backend_dev_t, LoadProgress, void *);
    LoadedWeights() = default;

    lm_ggml_context *                 ctx_       = nullptr;
    lm_ggml_backend_buffer_t          buffer_    = nullptr;
    bool                              zero_copy_ = false;
    std::shared_ptr<const MappedFile> mapping_; // set in zero-copy mode only
};

// Creates one tensor per tensor info of `gguf` (which must have been read
// from `file`) and places the weights on `dev`:
//  - dev reports caps.buffer_from_host_ptr and every tensor starts on a
//    multiple of min(32, the buffer alignment) bytes:
//    the mapping is wrapped with lm_ggml_backend_dev_buffer_from_host_ptr and
//    each tensor's data points inside it (no copy; tensors are read-only);
//  - otherwise a buffer of dev's buffer type is allocated and every tensor is
//    uploaded with lm_ggml_backend_tensor_set, in chunks.
// The buffer's usage is set to WEIGHTS. progress may be NULL.
Result<LoadedWeights> load_weights(const lm_gguf_context * gguf, std::shared_ptr<const MappedFile> file,
                                   lm_ggml_backend_dev_t dev, LoadProgress progress = nullptr, void * user = nullptr);

} // namespace lmggml::gguf

#pragma once
// GGUF metadata access with clear errors, and creation of the model's weight
// tensors from the file's tensor infos (names, shapes, types, offsets).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ggml.h"
#include "gguf.h"
#include "lmllm/status.h"
#include "model_impl.h"

namespace lmllm {

// An open GGUF file: metadata plus a no_alloc context holding one tensor per
// tensor info (type and shape only).
class GgufFile {
public:
    static Result<std::unique_ptr<GgufFile>> open(const std::string & path);
    ~GgufFile();
    GgufFile(const GgufFile &) = delete;
    GgufFile & operator=(const GgufFile &) = delete;

    const lm_gguf_context * gguf() const { return gguf_; }
    const std::string & path() const { return path_; }
    uint64_t file_size() const { return file_size_; }

    bool has(const std::string & key) const;
    // Integer keys accept any GGUF integer type that fits in 32 bits.
    Status get_u32(const std::string & key, uint32_t & out, bool required) const;
    Status get_f32(const std::string & key, float & out, bool required) const;
    Status get_str(const std::string & key, std::string & out, bool required) const;
    Status get_arr_n(const std::string & key, uint64_t & out, bool required) const;

    // Tensor info by name: null when absent.
    const lm_ggml_tensor * tensor_meta(const std::string & name) const;
    // Absolute offset of a tensor's data in the file.
    uint64_t tensor_file_offset(const std::string & name) const;
    int64_t n_tensors() const;

private:
    GgufFile() = default;
    lm_gguf_context * gguf_ = nullptr;
    lm_ggml_context * meta_ = nullptr;
    std::string path_;
    uint64_t file_size_ = 0;
};

// A weight to place: the tensor created in its device's context, where its
// bytes are in the file, and that device (the model's cpu_dev: the CPU).
struct TensorSource {
    lm_ggml_tensor * tensor;
    uint64_t file_offset;
    lm_ggml_backend_dev_t dev;
};

// Creates weight tensors in the per-placement contexts, checking that each is
// present (or optional) and has the expected shape. The first error sticks
// and is reported by status(); later calls then return null.
class TensorLoader {
public:
    TensorLoader(const GgufFile & file, Model::Impl & model);

    // On dev (cpu(): the CPU); a matrix dev cannot multiply with goes to the CPU.
    lm_ggml_tensor * create(const std::string & name, std::vector<int64_t> shape, lm_ggml_backend_dev_t dev,
                            bool required = true);
    lm_ggml_backend_dev_t cpu() const { return model_.cpu_dev; }
    // "blk.<il>.<suffix>" placed with layer il.
    lm_ggml_tensor * layer(uint32_t il, const char * suffix, std::vector<int64_t> shape, bool required = true);
    // A tensor of the output layer (placed with it).
    lm_ggml_tensor * output_layer(const std::string & name, std::vector<int64_t> shape, bool required = true);
    // The output projection, or the token embeddings when the file ties them
    // (a second copy when the output goes to another device than tok_embd).
    lm_ggml_tensor * output_or_tied(int64_t n_embd, int64_t n_vocab);

    const Status & status() const { return status_; }
    const std::vector<TensorSource> & sources() const { return sources_; }

private:
    void fail(std::string message);
    bool device_can_multiply(lm_ggml_backend_dev_t dev, const lm_ggml_tensor * meta) const;
    const GgufFile & file_;
    Model::Impl & model_;
    Status status_;
    std::vector<TensorSource> sources_;
};

// Allocates device buffers and places every created tensor: zero-copy views
// into the mapping on the CPU, copies into the CPU's repacked-weight buffer
// type for the weights it takes (when repack), uploads elsewhere. Reports
// progress in [0,1].
Status place_weights(const GgufFile & file, Model::Impl & model, const std::vector<TensorSource> & sources,
                     bool use_mmap, bool repack, const std::function<bool(float)> & progress);

} // namespace lmllm

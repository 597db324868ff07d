#pragma once
// Places every tensor of a (no_alloc) context into one backend buffer with a
// guard region before, between and after the tensors, filled with a known
// byte pattern; after a computation, damaged_guards() names every region a
// kernel wrote into (out-of-bounds writes). Works for any device: guard bytes
// are written and read only through lm_ggml_backend_tensor_set/get on small
// I8 tensors that cover them, never by dereferencing device memory.

#include "ggml.h"
#include "ggml-backend.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lmtest {

class GuardedBuffer {
public:
    static constexpr size_t kMinGuardBytes = 64;

    // Allocates one buffer of `buft`, places each tensor of ctx that owns its
    // memory (view_src == NULL, data == NULL) with lm_ggml_backend_tensor_alloc,
    // then initialises the views (lm_ggml_backend_view_init), and writes the
    // guard pattern. Returns nullptr and sets *err on failure.
    // The buffer is freed by the destructor; ctx must outlive this object.
    static std::unique_ptr<GuardedBuffer> place(lm_ggml_context * ctx, lm_ggml_backend_buffer_type_t buft,
                                                std::string * err);
    ~GuardedBuffer();
    GuardedBuffer(const GuardedBuffer &) = delete;
    GuardedBuffer & operator=(const GuardedBuffer &) = delete;

    lm_ggml_backend_buffer_t buffer() const { return buf_; }
    size_t guard_count() const { return guards_.size(); }

    void write_guards();
    // One line per damaged region ("after 'name': 3 of 64 bytes changed, first at +0").
    std::vector<std::string> damaged_guards() const;

private:
    struct Guard {
        lm_ggml_tensor * cover; // I8 tensor at an aligned address covering the region
        size_t offset;          // region start inside `cover`
        size_t size;            // region length in bytes
        std::string where;      // e.g. "after 'a'"
        std::vector<uint8_t> pattern;
    };

    GuardedBuffer() = default;

    lm_ggml_context * guard_ctx_ = nullptr;
    lm_ggml_backend_buffer_t buf_ = nullptr;
    std::vector<Guard> guards_;
};

// Overwrites all bytes of a tensor (through tensor_set) with `value`:
// 0xFF makes F32/F16/BF16 elements NaN and I32 elements -1.
void fill_tensor_bytes(lm_ggml_tensor * t, uint8_t value);

} // namespace lmtest

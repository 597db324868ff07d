#pragma once
// Internal to lmggml: the in-memory form of a GGUF file shared by the reader
// (gguf-read.cpp), the writer (gguf-write.cpp) and the accessors
// (gguf-context.cpp), plus entry points that are not part of the public API.

#include "gguf.h"
#include "core/ggml-impl.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// One key/value pair. Scalars are arrays of one element with is_array false.
struct lm_gguf_kv {
    std::string key;
    enum lm_gguf_type type = LM_GGUF_TYPE_UINT8; // element type, never ARRAY
    bool is_array = false;
    std::vector<uint8_t> data;     // fixed-size elements, little-endian; bools as 0/1 bytes
    std::vector<std::string> strs; // STRING elements

    size_t n_elements() const;
};

struct lm_gguf_tensor_info {
    // Holds name, type, ne and contiguous nb. For writing, data/buffer say
    // where the bytes come from (buffer != NULL: read through the backend).
    // No other field is used; src/view_src are always NULL.
    struct lm_ggml_tensor t;
    uint64_t offset = 0; // from the start of the data section, a multiple of the alignment
};

struct lm_gguf_context {
    uint32_t version = LM_GGUF_VERSION;

    std::vector<lm_gguf_kv> kv;
    std::vector<lm_gguf_tensor_info> info;

    size_t alignment = LM_GGUF_DEFAULT_ALIGNMENT;
    size_t offset = 0;     // file offset of the data section (read files)
    size_t size = 0;       // bytes of the data section that tensors cover
    void * data = nullptr; // the blob in the lm_ggml_context (no_alloc = false)
};

namespace lmggml::gguf {

// Bytes per element of a fixed-size GGUF value type; 0 for STRING, ARRAY and
// values outside the enum.
size_t value_type_size(enum lm_gguf_type type);

// True for the value types a key may hold as scalar or array element.
bool is_element_type(int type);

// Number of dimensions written for a tensor: 1 + index of the last ne != 1.
int tensor_n_dims(const lm_ggml_tensor & t);

// Total bytes of a tensor of `type` and shape `ne` with contiguous rows, or
// false when a product overflows. ne[0] must be a multiple of the block size.
bool tensor_nbytes(enum lm_ggml_type type, const int64_t ne[LM_GGML_MAX_DIMS], size_t * out);

// Sets nb[] of t for a contiguous layout of t.type and t.ne.
void set_contiguous_strides(lm_ggml_tensor & t);

// Recomputes the offsets of tensors [first, n) as the writer lays them out:
// each after its predecessor, padded to ctx.alignment.
void relayout_from(lm_gguf_context & ctx, size_t first);

// Serialises header, key/values and tensor infos, padded to the alignment
// (the exact prefix write_to_file produces). Tensor offsets are written as
// relayout_from(ctx, 0) would set them, whatever the context holds.
// May throw std::bad_alloc.
void write_meta(const lm_gguf_context & ctx, std::vector<uint8_t> & out);

// Meta plus tensor data, as write_to_file(only_meta = false) writes it.
// Returns false (and logs) when a tensor has no data.
bool write_to_buffer(const lm_gguf_context & ctx, std::vector<uint8_t> & out);

} // namespace lmggml::gguf

extern "C" {

// Parses a GGUF image held in memory (used by the fuzzer and tests); same
// checks, results and ownership as lm_gguf_init_from_file. The buffer is not
// referenced after the call returns.
struct lm_gguf_context * lm_gguf_init_from_buffer(const void * data, size_t size, struct lm_gguf_init_params params);
}

// lm_gguf_type_size, lm_gguf_init_from_file_impl and lm_gguf_write_to_buf are
// declared (exported, C++ linkage as in ggml) in include/ggml-impl.h.

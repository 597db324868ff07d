#pragma once
// A planning allocator: hands out (chunk, offset) ranges inside virtual
// buffers of at most `chunk_capacity` bytes, reusing freed ranges (best fit)
// and opening a new chunk when nothing fits. It touches no memory; the graph
// allocator later creates one real backend buffer per chunk, sized to that
// chunk's high-water mark. Chunking is how a buffer type's max size is
// respected: tensors spread over several buffers instead of failing.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lmggml {

struct DynAddr {
    int chunk = -1;
    size_t offset = 0;
};

class DynAllocator {
public:
    DynAllocator(size_t alignment, size_t chunk_capacity);

    void reset(); // forget all allocations, keep settings
    // false when size exceeds the chunk capacity (cannot be placed at all)
    bool alloc(size_t size, DynAddr * out);
    void free(DynAddr addr, size_t size);

    size_t alignment() const { return alignment_; }
    int n_chunks() const { return (int) chunks_.size(); }
    size_t chunk_high_water(int chunk) const { return chunks_[chunk].high_water; }
    size_t total_high_water() const;

private:
    struct Block {
        size_t offset;
        size_t size;
    };
    struct Chunk {
        std::vector<Block> free_blocks; // sorted by offset, coalesced
        size_t high_water = 0;          // largest end offset ever handed out
    };

    size_t align_up(size_t n) const { return (n + alignment_ - 1) / alignment_ * alignment_; }

    size_t alignment_;
    size_t capacity_;
    std::vector<Chunk> chunks_;
};

} // namespace lmggml

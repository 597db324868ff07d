#include "dyn_alloc.h"

#include <limits>

namespace lmggml {

DynAllocator::DynAllocator(size_t alignment, size_t chunk_capacity)
    : alignment_(alignment ? alignment : 1),
      capacity_(chunk_capacity / (alignment ? alignment : 1) * (alignment ? alignment : 1)) {
    if (capacity_ == 0) capacity_ = alignment_;
}

void DynAllocator::reset() { chunks_.clear(); }

size_t DynAllocator::total_high_water() const {
    size_t total = 0;
    for (const Chunk & c : chunks_) total += c.high_water;
    return total;
}

bool DynAllocator::alloc(size_t size, DynAddr * out) {
    size = align_up(size ? size : 1);
    if (size > capacity_ || size == 0) return false;

    // Best fit over the holes of every chunk. The block reaching the chunk's
    // end is "tail": using it grows the buffer, so holes are preferred.
    int best_chunk = -1;
    size_t best_block = 0;
    size_t best_size = std::numeric_limits<size_t>::max();
    bool best_is_tail = true;
    for (int c = 0; c < (int) chunks_.size(); c++) {
        const std::vector<Block> & fb = chunks_[c].free_blocks;
        for (size_t b = 0; b < fb.size(); b++) {
            if (fb[b].size < size) continue;
            const bool tail = fb[b].offset + fb[b].size == capacity_;
            const bool better =
                best_chunk < 0 || (best_is_tail && !tail) ||
                (tail == best_is_tail &&
                 (tail ? fb[b].offset < chunks_[best_chunk].free_blocks[best_block].offset : fb[b].size < best_size));
            if (better) {
                best_chunk = c;
                best_block = b;
                best_size = fb[b].size;
                best_is_tail = tail;
            }
        }
    }
    if (best_chunk < 0) {
        chunks_.push_back(Chunk{{Block{0, capacity_}}, 0});
        best_chunk = (int) chunks_.size() - 1;
        best_block = 0;
    }
    Chunk & chunk = chunks_[best_chunk];
    Block & blk = chunk.free_blocks[best_block];
    out->chunk = best_chunk;
    out->offset = blk.offset;
    blk.offset += size;
    blk.size -= size;
    if (blk.size == 0) chunk.free_blocks.erase(chunk.free_blocks.begin() + (long) best_block);
    if (out->offset + size > chunk.high_water) chunk.high_water = out->offset + size;
    return true;
}

void DynAllocator::free(DynAddr addr, size_t size) {
    if (addr.chunk < 0 || addr.chunk >= (int) chunks_.size()) return;
    size = align_up(size ? size : 1);
    std::vector<Block> & fb = chunks_[addr.chunk].free_blocks;
    // insert sorted, then merge with neighbours
    size_t i = 0;
    while (i < fb.size() && fb[i].offset < addr.offset) i++;
    fb.insert(fb.begin() + (long) i, Block{addr.offset, size});
    if (i + 1 < fb.size() && fb[i].offset + fb[i].size == fb[i + 1].offset) {
        fb[i].size += fb[i + 1].size;
        fb.erase(fb.begin() + (long) i + 1);
    }
    if (i > 0 && fb[i - 1].offset + fb[i - 1].size == fb[i].offset) {
        fb[i - 1].size += fb[i].size;
        fb.erase(fb.begin() + (long) i);
    }
}

} // namespace lmggml

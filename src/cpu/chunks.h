#pragma once
// Per-thread chunk slots of one graph compute (kernel.h: lm_cpu_chunks_*).
// The graph walk owns an array of nth slots, zeroed per compute; a slot is
// written by its owner when it starts a chunked node and by thieves after.

#include "cpu/kernels/kernel.h"

#include <atomic>
#include <cstdint>

struct alignas(64) lm_cpu_chunk_slot { // its own cache line: the owner's CAS stays local
    std::atomic<uint64_t> v{0};        // (epoch 32 | front 16 | back 16), epoch 0: never used
};

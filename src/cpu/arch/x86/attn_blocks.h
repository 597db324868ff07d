#pragma once
// The block loops of the x86 F16 attention kernels (attn_avx2.cpp,
// attn_avx512.cpp), apart from the vector code they call: which rows a block
// covers, in what order heads and column passes go, and how far ahead the
// kernels fetch. nh KV heads at once, head h's rows hs bytes after head
// h - 1's (nh 1 for one head), every head of a block before the next block:
// a cache row holding all heads is read front to back. Included only by
// files built with AVX2 or higher flags; everything has internal linkage.

#include "simd_avx2.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace lmggml::cpu::arch::x86 {
namespace {

// The cache is cold at generation (a token's weights stream through every
// cache level in between): each kernel fetches the rows kAheadRows past the
// ones it computes on, a row's lines per row (prefetch_slice), so the
// requests are spread over the math. Whole blocks of rows fetched at once
// (the earlier form) stalled the loop on full miss queues: streaming a cache
// from DRAM, the math then waited for memory instead of overlapping it.
constexpr int64_t kAheadRows = 48;

// Every cache line of the bytes at p.
inline void prefetch_slice(const char * p, int64_t bytes) {
    for (int64_t b = 0; b < bytes; b += 64) prefetch_stream(p + b);
}

// Scores of n keys in blocks of kKeys: block(h, j0, nk) for every head h of
// the block of nk keys at j0.
template <int kKeys, class Block> void scores_blocks(int64_t n, int64_t nh, Block block) {
    for (int64_t j0 = 0; j0 < n; j0 += kKeys) {
        const int nk = (int) std::min<int64_t>(kKeys, n - j0);
        for (int64_t h = 0; h < nh; ++h) block(h, j0, nk);
    }
}

// The V rows of an accumulate in blocks of block_rows (kept in L1 across the
// block's column passes): pass(h, j0, nb, c) adds the nb rows at j0 of head
// h into columns c .. c + width - 1.
template <class Pass>
void accumulate_blocks(int64_t d, int64_t n, int64_t nh, int64_t width, int64_t block_rows, Pass pass) {
    for (int64_t j0 = 0; j0 < n; j0 += block_rows) {
        const int64_t nb = std::min(block_rows, n - j0);
        for (int64_t h = 0; h < nh; ++h) {
            for (int64_t c = 0; c < d; c += width) pass(h, j0, nb, c);
        }
    }
}

} // namespace
} // namespace lmggml::cpu::arch::x86

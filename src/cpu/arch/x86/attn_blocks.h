#pragma once
// The block loops of the x86 F16 attention kernels (attn_avx2.cpp,
// attn_avx512.cpp), apart from the vector code they call: which rows a block
// covers, in what order heads and column passes go, and which cache lines
// are fetched ahead. nh KV heads at once, head h's rows hs bytes after head
// h - 1's (nh 1 for one head), every head of a block before the next block:
// a cache row holding all heads is read front to back. Included only by
// files built with AVX2 or higher flags; everything has internal linkage.

#include "simd_avx2.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace lmggml::cpu::arch::x86 {
namespace {

// Every cache line of head slices [0, nh) (bytes each, hs apart) of rows [j, j + count).
inline void prefetch_head_rows(const char * rows, size_t ld, size_t hs, int64_t nh, int64_t bytes, int64_t j,
                               int64_t count) {
    for (int64_t h = 0; h < nh; ++h)
        for (int64_t r = j; r < j + count; ++r)
            for (int64_t b = 0; b < bytes; b += 64) prefetch_stream(rows + h * (int64_t) hs + r * (int64_t) ld + b);
}

// Scores of n keys in blocks of kKeys: block(h, j0, nk) for every head h of
// the block of nk keys at j0, with the K rows `ahead` keys on fetched.
template <int kKeys, class Block>
void scores_blocks(int64_t d, int64_t n, const char * rows, size_t ldk, size_t hs, int64_t nh, int64_t ahead,
                   Block block) {
    prefetch_head_rows(rows, ldk, hs, nh, d * 2, 0, std::min<int64_t>(n, ahead));
    for (int64_t j0 = 0; j0 < n; j0 += kKeys) {
        const int nk = (int) std::min<int64_t>(kKeys, n - j0);
        if (j0 + ahead < n) {
            prefetch_head_rows(rows, ldk, hs, nh, d * 2, j0 + ahead, std::min<int64_t>(kKeys, n - j0 - ahead));
        }
        for (int64_t h = 0; h < nh; ++h) block(h, j0, nk);
    }
}

// The V rows of an accumulate in blocks of block_rows (kept in L1 across the
// block's column passes): pass(h, j0, nb, c) adds the nb rows at j0 of head
// h into columns c .. c + width - 1; the block's passes fetch the next
// block's rows of every head, a share per pass.
template <class Pass>
void accumulate_blocks(int64_t d, int64_t n, const char * rows, size_t ldv, size_t hs, int64_t nh, int64_t width,
                       int64_t block_rows, Pass pass) {
    const int64_t passes = nh * (d / width);
    const int64_t per_pass = (block_rows + passes - 1) / passes;
    prefetch_head_rows(rows, ldv, hs, nh, d * 2, 0, std::min(n, block_rows));
    for (int64_t j0 = 0; j0 < n; j0 += block_rows) {
        const int64_t nb = std::min(block_rows, n - j0);
        const int64_t next = j0 + block_rows, next_end = std::min(n, next + block_rows);
        int64_t r = next;
        for (int64_t h = 0; h < nh; ++h) {
            for (int64_t c = 0; c < d; c += width, r += per_pass) {
                if (r < next_end) prefetch_head_rows(rows, ldv, hs, nh, d * 2, r, std::min(per_pass, next_end - r));
                pass(h, j0, nb, c);
            }
        }
    }
}

} // namespace
} // namespace lmggml::cpu::arch::x86

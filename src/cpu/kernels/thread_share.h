#pragma once
// How a kernel divides n items among the nth threads of a node: ggml's
// split, equal ceil-sized contiguous blocks (the last ones possibly short or
// empty). One definition for every kernel family.

#include <algorithm>
#include <cstdint>

namespace lm_cpu {

struct Range {
    int64_t begin;
    int64_t end;
};

// The share of [0, n) that thread ith of nth works on.
inline Range split(int64_t n, int ith, int nth) {
    const int64_t per = (n + nth - 1) / nth;
    const int64_t b = std::min<int64_t>(per * ith, n);
    return {b, std::min<int64_t>(b + per, n)};
}

} // namespace lm_cpu

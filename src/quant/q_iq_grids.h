#pragma once
// Lookup tables of the grid-based I-quants (q_iq_grids.cpp; the values are in
// include/ggml-common-tables.h). A grid entry is the 8 (64-bit entries) or 4
// (32-bit entries) magnitudes of one group of values, value j in byte j;
// iq1s_grid holds signed bytes -1, 0, 1.
#include <cstdint>

namespace lm_quant::iq {

extern const uint8_t kmask_iq2xs[8];    // bit j of a sign byte: 1 << j
extern const uint8_t ksigns_iq2xs[128]; // 7 stored sign bits -> 8, the 8th making the count even
extern const uint64_t ksigns64[128];    // ksigns_iq2xs[i]'s bits as bytes 0x00 / 0xff
extern const uint64_t iq2xxs_grid[256]; // magnitudes 8, 25, 43
extern const uint64_t iq2xs_grid[512];
extern const uint64_t iq2s_grid[1024];
extern const uint32_t iq3xxs_grid[256]; // magnitudes 4, 12, ..., 52, 62
extern const uint32_t iq3s_grid[512];   // magnitudes 1, 3, ..., 15
extern const uint64_t iq1s_grid[2048];  // values -1, 0, 1

// byte j of a grid entry
static inline uint8_t grid_byte(uint64_t entry, int j) { return (uint8_t) (entry >> (8 * j)); }

} // namespace lm_quant::iq

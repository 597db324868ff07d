#pragma once
// The x8 layout of repacked weights (layouts.h, "RowDotX8"): Q4_0, Q4_1 and
// Q8_0 rows reordered 8 rows at a time. It is a byte permutation inside each
// block of 8 rows (a "unit": block b of rows 8g..8g+7), so a tensor keeps
// its size and a uniform byte pattern (memset) looks the same either way.
// Used by the CPU_REPACK buffer (reads and writes in ggml's layout), by the
// kernels that read repacked weights, and by the tests.

#include "ggml.h"

#include <cstddef>
#include <cstdint>

namespace lmggml::cpu::arch::x8 {

// Block geometry of a type with an x8 layout.
struct Format {
    size_t block_bytes; // bytes of one block of one row (ggml's type size)
    int    fields;      // F16 header fields: d (Q4_0, Q8_0), d and m (Q4_1)
    int    chunks;      // 4-byte chunks of levels per block
};

// False for types without an x8 layout.
bool format_of(lm_ggml_type type, Format * f);

// Unit bytes: 8 * f.block_bytes. Row r's block is at rows + r * ldw.
void pack_unit(const Format & f, const uint8_t * rows, size_t ldw, uint8_t * unit);
void unpack_unit(const Format & f, const uint8_t * unit, uint8_t * rows, size_t ldw);

// A whole group of 8 rows of k values: standard rows (ldw bytes apart) <-> x8.
void pack_group(const Format & f, int64_t k, const void * rows, size_t ldw, void * group);
void unpack_group(const Format & f, int64_t k, const void * group, void * rows, size_t ldw);

// Block b of row r (0..7) of the group at group, in ggml's layout, into out.
void gather_block(const Format & f, int64_t k, const void * group, int r, int64_t b, void * out);

// Activation rows of the RowDotX8 kernels (shared by every level): values
// quantized as ggml's x86 path does (layouts.h), k % 32 == 0.
void pack_act_q4_0(const float * x, void * act, int64_t k);
void pack_act_q4_1(const float * x, void * act, int64_t k);
void pack_act_q8_0(const float * x, void * act, int64_t k);

} // namespace lmggml::cpu::arch::x8

#pragma once
// The x8 layout of repacked weights (layouts.h, "RowDotX8"): Q4_0, Q4_1,
// Q5_0, Q5_1, Q8_0 and IQ4_NL rows reordered 8 rows at a time. It is a byte permutation inside each
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
    int fields;         // F16 header fields: d (Q4_0, Q5_0, Q8_0, IQ4_NL), d and m (Q4_1, Q5_1)
    int chunks;         // 4-byte chunks of levels per block (Q5: qh, then qs)
    // Q4_0 units (144 bytes) are an odd number of 16-byte halves (so are
    // Q5_0's 176, Q8_0's 272 and IQ4_NL's 144, which do the same): the
    // header comes after the levels in even units and before them in odd
    // ones, so that every 32-byte level load is aligned.
    bool alternate;
};

// Offsets in unit b of its header (16 * fields bytes) and of its levels.
inline size_t header_offset(const Format & f, int64_t b) {
    return f.alternate && b % 2 == 0 ? 32 * (size_t) f.chunks : 0;
}
inline size_t levels_offset(const Format & f, int64_t b) {
    return f.alternate && b % 2 == 0 ? 0 : 16 * (size_t) f.fields;
}

// False for types without an x8 layout.
bool format_of(lm_ggml_type type, Format * f);

// Unit b (8 * f.block_bytes bytes). Row r's block is at rows + r * ldw.
void pack_unit(const Format & f, int64_t b, const uint8_t * rows, size_t ldw, uint8_t * unit);
void unpack_unit(const Format & f, int64_t b, const uint8_t * unit, uint8_t * rows, size_t ldw);

// A whole group of 8 rows of k values: standard rows (ldw bytes apart) <-> x8.
void pack_group(const Format & f, int64_t k, const void * rows, size_t ldw, void * group);
void unpack_group(const Format & f, int64_t k, const void * group, void * rows, size_t ldw);

// A Gemm panel (layouts.h "Gemm (block types)": the bytes every level's
// pack_panel makes from the unpacked rows) straight from m / 8 x8 groups,
// group_bytes apart from groups; m a multiple of 8 up to the panel's 32
// rows, k % 32 == 0. False (nothing written) for other shapes or types.
bool pack_panel(lm_ggml_type type, int64_t k, const void * groups, size_t group_bytes, int64_t m, void * panel);

// Block b of row r (0..7) of the group at group, in ggml's layout, into out.
void gather_block(const Format & f, int64_t k, const void * group, int r, int64_t b, void * out);

// Activation rows of the RowDotX8 kernels (shared by every level): values
// quantized as ggml's x86 path does (layouts.h), k % 32 == 0.
// q4_0: s = -8 d sum(q); q4_1 (also Q5_1): s = q8_1's s; off16 (Q5_0) and
// off128 (Q8_0, IQ4_NL): s holds the int32 16 * sum(q) / 128 * sum(q), the
// offset of the unsigned levels the kernels multiply (taken out exactly).
void pack_act_q4_0(const float * x, void * act, int64_t k);
void pack_act_q4_1(const float * x, void * act, int64_t k);
void pack_act_off16(const float * x, void * act, int64_t k);
void pack_act_off128(const float * x, void * act, int64_t k);

} // namespace lmggml::cpu::arch::x8

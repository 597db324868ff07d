#pragma once
// Byte layouts private to the CPU matmul path: packed activation rows and
// weight panels (kernels.h's RowDot and Gemm). They live only in MUL_MAT's
// scratch memory, so they can change freely; the scalar twins (ref.h) and
// the vector kernels (x86/) must agree on them, and the tests check that.
//
// Activation quantization everywhere (Q8_0 / Q8_1 values, RowDot and Gemm
// rows) follows ggml's x86 SIMD path, so that the same F32 activations give
// the same integers as llama.cpp on x86: per 32 values, amax = max |x|,
// d = amax / 127, q = round-half-even(x * (127 / amax)); d is stored (and
// used) rounded to F16, and q8_1's s = F16(d * sum(q)) with the unrounded d.
// (The reference quantizer of src/quant rounds half away from zero and
// multiplies by 1/d: a different integer for about one value in 10^5.)
// One departure: a NaN in a block makes amax (the max of the |x| bit
// patterns) and d NaN, so it reaches the product as on ARM; ggml's x86 maxps
// chain keeps it only in some positions (its levels are then -128 here too).
//
// ---------------------------------------------------------------- RowDot rows
// Q4_0 and Q4_1 (groups of 4 blocks = 128 values; the last group zero-padded):
//   int8  lo[64]    values 0..15 of blocks 0..3, 16 per block
//   int8  hi[64]    values 16..31 of blocks 0..3
//   float dy[16]    lane l: d of block l / 4
//   Q4_1: float sy[16]   lane l: s of block l / 4, divided by 4 (4 lanes add it up)
//   Q4_0: int32 cy[16]   lane l: 8 * (the 8 values lane l multiplies), the
//                        offset of the weights' unsigned nibbles (q - 8)
//   Q4_1: float ds[8]    d0 s0 d2 s2 d1 s1 d3 s3 (d, s as above): times the
//                        weights' d m of the blocks in the same order, one
//                        multiply gives every block's d * dy and m * s
//                        (AVX2; the 128-bit halves hold blocks 2h and 2h+1)
//   Q4_0: float ds[8]    zeros
//   32 bytes of zeros (each group is 320 bytes, a multiple of 64)
// Lane l of a 64-byte vector covers bytes 4l..4l+3: block l / 4, values
// 4 (l % 4) .. +3 of lo (and of hi, + 16).
//
// Q8_0 (groups of 2 blocks = 64 values; the last group zero-padded):
//   int8  q[64]     values of blocks 0, 1 in order
//   float dy[16]    lane l: d of block l / 8
//   int32 cy[16]    lane l: 128 * (sum of the 4 values of lane l); the kernel
//                   makes the weights unsigned by adding 128
//
// Q5_0 and IQ4_NL read Q4_0's rows, Q5_1 Q4_1's: their kernels take the
// offset out as 2 cy (levels 0..31, minus 16) and 16 cy (IQ4_NL's levels
// + 128, unsigned).
//
// Q4_K and Q5_K (one group per 256-value super-block, 320 bytes): Q8_K's levels
// (src/quant's reference quantizer, as ggml's x86 path) reordered so that
// 64-byte vector t pairs with the weights' qs bytes 64 (t / 2) .. +63, low
// (t even) or high nibbles: vector t holds sub-blocks (32 values each)
// t % 2 + 4 (t / 2) and that + 2, one after the other:
//   int8  q[256]    sub-blocks 0 2 | 1 3 | 4 6 | 5 7
//   int32 bs[8]     sum of the levels of sub-block s
//   float d         Q8_K's d
//   28 bytes of zeros
// Q6_K (384 bytes per super-block): the weights' four 64-value vectors come
// out in value order, so Q8_K's levels stay in order:
//   int8  q[256]    the levels
//   int32 bs[16]    Q8_K's bsums (sum per 16 values)
//   float d         Q8_K's d
//   60 bytes of zeros
// IQ4_XS (448 bytes per super-block): int8 levels with one d per 32-value
// sub-block (act_block_q8, the IQ4_XS Gemm rows' integers; Q8_K's one d per
// 256 values is coarser and would save no instruction, as the kernel scales
// each lane in float anyway), set out as Q4_0's lo / hi so that 64-byte
// vector pair h lines up with the weights' qs bytes 64h..64h+63
// (sub-blocks 4h..4h+3, 16 bytes each):
//   int8  q[2][2][64]  half h: lo (values 0..15 of sub-blocks 4h..4h+3,
//                      16 each), then hi (their values 16..31)
//   int32 c[2][16]     lane l of half h: -128 * the sum of the 8 levels lane l
//                      multiplies (the kernel's weight levels are + 128)
//   float d[8]         sub-block d
//   32 bytes of zeros
//
// ---------------------------------------------------------------- RowDotX8 (repacked weights)
// Weights repacked at load (the CPU_REPACK buffer type, src/cpu/repack/)
// 8 rows at a time, for the types the CPU's level has an x8 kernel for:
// Q4_0 and Q4_1 from AVX2 (and ARM dotprod), Q5_0, Q5_1 and IQ4_NL from
// AVX2, Q8_0 at AVX-512 VNNI. A group of 8 rows keeps the bytes of those 8 rows (8 * row
// bytes), reordered block by block. Block b of the group (a "unit", 8 *
// block bytes) holds
//   the header: F16 field f of rows 0..7 (f: d; Q4_1, Q5_1: d, then m), 16
//               bytes per field
//   the levels: chunk t = bytes 4t..4t+3 of rows 0..7's bytes after the
//               header (32 bytes): Q4_0, Q4_1, IQ4_NL 4 chunks of qs;
//               Q5_0, Q5_1 5 chunks, the first one qh; Q8_0 8 chunks of qs
// Q4_1, Q5_1: header first. The others (units of an odd number of 16-byte
// halves: 144, 176, 272 bytes): the header after the levels in even units,
// before them in odd ones, so level loads stay 32-byte aligned.
// So a 32-byte load holds 4 level bytes of every row: lane r = row r.
// (Q8_0's AVX2 x8 kernel was 1.8x the row kernel with weights in L2 but
// 8-10 % slower streaming from DRAM on the Zen 3 host, so below VNNI Q8_0
// stays row-major; at VNNI the x8 kernel streams faster than the row one.)
// Activation row (k values, nb = k / 32 blocks, padded to 64 bytes):
//   int8  q[nb][32]     the levels in order (kernels broadcast each 4-value
//                       chunk to all lanes: pre-broadcast rows 8 times as
//                       long measured 7-10 % slower, crowding L1)
//   float d[nb]         F16-rounded block scale
//   float s[nb]         Q4_1, Q5_1: q8_1's s; Q4_0: -8 * d * sum(q) (the
//                       offset of the unsigned nibbles); Q5_0: the int32
//                       16 * sum(q), Q8_0 and IQ4_NL: the int32 128 * sum(q)
//                       (the offset of the kernels' unsigned levels, taken
//                       out before scaling, so exactly; AVX2's IQ4_NL kernel
//                       multiplies signed levels and does not read it)
//
// ---------------------------------------------------------------- Gemm (block types)
// Activation row (k values, nb = k / 32 blocks), then padded to 64 bytes:
//   int8  q[k]      the values in order
//   float d[nb]     block scales
//   float s[nb]     Q4_1, Q5_1: q8_1's s (the minimum's partner); 0 otherwise
//   int32 c[nb]     offset * sum(q) of the block, offset = what the panel
//                   added to make the weights unsigned: Q8_0 128, Q4_0 8,
//                   Q5_0 16, Q4_1 / Q5_1 0
// Panel of 32 weight rows = 2 groups of 16 rows, per block b, per group g
// (b-major, so the microkernel streams it), 640 bytes:
//   uint8 q[8][64]  vector t: lane r = values 4t..4t+3 of row r, unsigned
//   float d[16]     row r's block scale (0 for padding rows)
//   float m[16]     row r's block minimum (Q4_1, Q5_1; 0 otherwise)
//
// ---------------------------------------------------------------- Gemm (K-quants)
// Q4_K, Q5_K: the layouts above with one block per 32-value sub-block:
// panel d = d * scale, m = -dmin * min, levels 0..15 / 0..31; activation rows
// quantized to int8 with one d per sub-block (act_block_q8 below; ggml uses
// Q8_K's one d per 256 values, which an outlier among Gemma's activations
// makes coarse for the other 255: per sub-block halves the error):
// d = the sub-block's d, s = d * sum(q), c = 0.
// Q6_K: the same with 16-value blocks (its scales are per 16 values):
// panel block per 16-row group, 384 bytes:
//   uint8 q[4][64]  levels 0..63 (value + 32), lanes as above
//   float d[16]     d * scale
//   float m[16]     0
// activation row: int8 q[k], float d[k/16] (each group's d), float s[k/16] (0),
// int32 c[k/16] = 32 * the group's sum(q).
//
// ---------------------------------------------------------------- Gemm (F32, F16)
// Activation row: float x[k] (for F16 weights rounded through F16 first, as
// ggml converts the activations to F16).
// Panel of 32 rows, k-major: for each k, for each group of 16 rows, float w[16].

// Helpers are static: the per-ISA files include this header, and a shared
// (COMDAT) inline copy compiled with AVX-512 flags could be the one the
// linker keeps for baseline code.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace lmggml::cpu::arch::layout {

constexpr int64_t kQK = 32; // values per block of the 32-value formats

// RowDot rows
constexpr size_t kQ4GroupBytes = 320; // one group of 4 blocks
constexpr size_t kQ8GroupBytes = 192; // one group of 2 blocks

static inline size_t rowdot_q4_size(int64_t k) { return (size_t) ((k / kQK + 3) / 4) * kQ4GroupBytes; }
static inline size_t rowdot_q8_size(int64_t k) { return (size_t) ((k / kQK + 1) / 2) * kQ8GroupBytes; }
constexpr int64_t kQKK = 256;        // values per K-quant super-block
constexpr size_t kKGroupBytes = 320; // one Q4_K super-block's activation group
static inline size_t rowdot_k_size(int64_t k) { return (size_t) (k / kQKK) * kKGroupBytes; }
constexpr size_t kK6GroupBytes = 384; // one Q6_K super-block's activation group
static inline size_t rowdot_k6_size(int64_t k) { return (size_t) (k / kQKK) * kK6GroupBytes; }
constexpr size_t kIQ4XSGroupBytes = 448; // one IQ4_XS super-block's activation group
static inline size_t rowdot_iq4_xs_size(int64_t k) { return (size_t) (k / kQKK) * kIQ4XSGroupBytes; }

// RowDotX8: rows per repacked group, activation row bytes
constexpr int64_t kX8Rows = 8;
static inline size_t rowdot_x8_act_size(int64_t k) { return ((size_t) (k / kQK) * (32 + 8) + 63) & ~(size_t) 63; }

// Gemm rows and panels
constexpr int64_t kPanelRows = 32;
constexpr int64_t kGroupRows = 16;
constexpr size_t kPanelBlockBytes = 640;  // one block of one 16-row group
constexpr size_t kPanelScaleOffset = 512; // its float d[16]
constexpr size_t kPanelMinOffset = 576;   // its float m[16]

static inline size_t pad64(size_t n) { return (n + 63) & ~(size_t) 63; }

// n activations to int8 with one scale (the K-quant Gemm rows): q = round(x / d),
// d = max|x| / 127; returns d. Plain IEEE operations, so the scalar twin and
// every ISA's packer give the same bytes.
static inline float act_block_q8(const float * x, int n, int8_t * q) {
    float amax = 0.0f;
    bool nan = false; // a NaN input must reach the product (fmax would drop it)
    for (int i = 0; i < n; ++i) {
        nan = nan || std::isnan(x[i]);
        amax = std::fmax(amax, std::fabs(x[i]));
    }
    if (nan) {
        for (int i = 0; i < n; ++i) q[i] = 0;
        return std::numeric_limits<float>::quiet_NaN();
    }
    if (amax == 0.0f) {
        for (int i = 0; i < n; ++i) q[i] = 0;
        return 0.0f;
    }
    const float id = 127.0f / amax;
    for (int i = 0; i < n; ++i) q[i] = (int8_t) std::nearbyint(x[i] * id);
    return amax / 127.0f;
}
// kV: values per block (32, or 16 for Q6_K)
template <int kV> static constexpr size_t panel_block_bytes() { return 16 * (size_t) kV + 128; }
template <int kV> static inline size_t gemm_qv_act_size(int64_t k) {
    return pad64((size_t) k + (size_t) (k / kV) * 12);
}
template <int kV> static inline size_t gemm_qv_panel_size(int64_t k) {
    return (size_t) (k / kV) * (size_t) (kPanelRows / kGroupRows) * panel_block_bytes<kV>();
}
static inline size_t gemm_q_act_size(int64_t k) { return gemm_qv_act_size<32>(k); }
static inline size_t gemm_q_panel_size(int64_t k) { return gemm_qv_panel_size<32>(k); }
static inline size_t gemm_q16_act_size(int64_t k) { return gemm_qv_act_size<16>(k); }
static inline size_t gemm_q16_panel_size(int64_t k) { return gemm_qv_panel_size<16>(k); }
static inline size_t gemm_f_act_size(int64_t k) { return pad64((size_t) k * sizeof(float)); }
static inline size_t gemm_f_panel_size(int64_t k) { return (size_t) k * (size_t) kPanelRows * sizeof(float); }

} // namespace lmggml::cpu::arch::layout

// AVX2 Gemm (layouts.h) for the 32-value block types Q4_0, Q4_1, Q5_0,
// Q5_1, Q8_0, IQ4_NL and the K-quants Q4_K, Q5_K, IQ4_XS (32-value
// sub-blocks) and Q6_K (16-value groups), prompt processing on CPUs without
// AVX-512: the same panels and activation rows as the VNNI kernels
// (gemm_q_pack.h, gemm_k_pack.h), a different microkernel.
//
// A 64-byte panel vector (4 levels of 16 rows) is two ymm halves of 8 rows;
// the microkernel takes one half (8 rows) x kN columns. Per 4 levels of a
// column: one broadcast, one vpmaddubsw per half. Its int16 pair sums add
// up in int16 over as many steps as cannot overflow (steps * 2 * L * 127 <
// 2^15 for levels 0..L: a whole block for nibbles, 4 steps for 5-bit levels,
// 2 for Q6_K's 0..63) before one vpmaddwd widens them. Levels carrying +128
// (Q8_0, IQ4_NL, IQ4_XS) are turned back into signed bytes and multiplied as
// |w| * (sign(w) y), which cannot saturate (widened every step), so their
// offset correction is not needed. Per block, the int32 sums are corrected
// (the unsigned offset of Q4_0, Q5_0, Q6_K), converted and scaled into F32
// accumulators. Twins: ref::gemm_*.
#if defined(__x86_64__) || defined(__i386__)

#include "gemm_k_pack.h"
#include "gemm_q_pack.h"
#include "simd_avx2.h"
#include "x86.h"

#include "../layouts.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

constexpr int64_t kGroups = kPanelRows / kGroupRows;

// Panel chunks stay in L1 while every column tile passes over them.
constexpr int64_t kMaxChunkBytes = 24 << 10;
// Columns at a time: their activation rows stay in L2 while the panel's four
// row halves pass over them (a prompt's 512 rows would not: 400 KB for k =
// 576 beside the panel and the output).
constexpr int64_t kColBlock = 48;

// A weight format as the microkernel sees it: kV values per block, levels
// 0..kMaxLevel (255: levels + 128, multiplied signed); kCorr: subtract the
// activation's c (the unsigned levels' offset); kMin: add m * s.
template <int kValues, int kMaxLevel, bool kCorrect, bool kMinimum> struct Fmt {
    static constexpr int kV = kValues;
    static constexpr bool kCorr = kCorrect;
    static constexpr bool kMin = kMinimum;
    static constexpr int kSteps = kV / 4;
    static constexpr bool kSigned = kMaxLevel > 127;
    // steps whose int16 sums cannot overflow (activation levels are within +-127)
    static constexpr int kWiden = kSigned ? 1 : std::min(kSteps, 32767 / (2 * kMaxLevel * 127));
    // columns per tile: int32 sums beside the int16 ones take registers
    static constexpr int kCols = kSigned || kWiden < kSteps ? 4 : 6;
    static_assert(kWiden > 0 && kSteps % kWiden == 0, "whole widening rounds per block");
};

static inline __m256i rows_mask8(int64_t rows) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int) rows), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline __m256i bcast4(const int8_t * p) {
    int32_t v;
    std::memcpy(&v, p, sizeof(v));
    return _mm256_set1_epi32(v);
}

// 8 rows (half hf of the panel's 32) x kN columns, blocks [b0, b1).
// rows: how many of the 8 exist; first: start from zero, else continue dst.
template <class F, int kN>
void tile(const uint8_t * panel, int hf, int64_t rows, int64_t k, int64_t b0, int64_t b1, const char * act, size_t lda,
          float * dst, size_t ldd, bool first) {
    constexpr int kV = F::kV;
    constexpr int64_t kBlock = (int64_t) panel_block_bytes<kV>(); // one block of one 16-row group
    const int64_t nb = k / kV;
    const size_t off = (size_t) (hf / 2) * kBlock + (size_t) (hf % 2) * 32; // this half in a block's bytes
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i mask = rows_mask8(rows);
    const bool full = rows >= 8;
    const int8_t * q[kN];
    const float * d[kN];
    const float * s[kN];
    const int32_t * c[kN];
    __m256 acc[kN];
#pragma GCC unroll 8
    for (int j = 0; j < kN; ++j) {
        q[j] = reinterpret_cast<const int8_t *>(act + j * lda);
        d[j] = reinterpret_cast<const float *>(q[j] + k);
        s[j] = d[j] + nb;
        c[j] = reinterpret_cast<const int32_t *>(s[j] + nb);
        float * out = dst + j * ldd;
        acc[j] = first ? _mm256_setzero_ps() : full ? _mm256_loadu_ps(out) : _mm256_maskload_ps(out, mask);
    }
    for (int64_t b = b0; b < b1; ++b) {
        const uint8_t * pb = panel + b * kGroups * kBlock + off;
        __m256i isum[kN];
#pragma GCC unroll 8
        for (int j = 0; j < kN; ++j) isum[j] = _mm256_setzero_si256();
        if constexpr (F::kSigned) {
#pragma GCC unroll 1
            for (int t = 0; t < F::kSteps; ++t) {
                const __m256i ws =
                    _mm256_xor_si256(_mm256_load_si256((const __m256i *) (pb + 64 * t)), _mm256_set1_epi8((char) 0x80));
                const __m256i wa = _mm256_abs_epi8(ws);
#pragma GCC unroll 8
                for (int j = 0; j < kN; ++j) {
                    const __m256i y = _mm256_sign_epi8(bcast4(q[j] + b * kV + 4 * t), ws);
                    isum[j] = _mm256_add_epi32(isum[j], _mm256_madd_epi16(_mm256_maddubs_epi16(wa, y), ones));
                }
            }
        } else {
            for (int t0 = 0; t0 < F::kSteps; t0 += F::kWiden) {
                __m256i i16[kN];
#pragma GCC unroll 8
                for (int j = 0; j < kN; ++j) i16[j] = _mm256_setzero_si256();
                    // not unrolled: GCC 12 would hoist all 8 steps' products and spill them
#pragma GCC unroll 1
                for (int t = t0; t < t0 + F::kWiden; ++t) {
                    const __m256i w = _mm256_load_si256((const __m256i *) (pb + 64 * t));
#pragma GCC unroll 8
                    for (int j = 0; j < kN; ++j) {
                        i16[j] = _mm256_add_epi16(i16[j], _mm256_maddubs_epi16(w, bcast4(q[j] + b * kV + 4 * t)));
                    }
                }
#pragma GCC unroll 8
                for (int j = 0; j < kN; ++j) isum[j] = _mm256_add_epi32(isum[j], _mm256_madd_epi16(i16[j], ones));
            }
        }
        const __m256 dw = _mm256_load_ps((const float *) (pb + 16 * kV));
#pragma GCC unroll 8
        for (int j = 0; j < kN; ++j) {
            __m256i p = isum[j];
            if constexpr (F::kCorr) p = _mm256_sub_epi32(p, _mm256_set1_epi32(c[j][b]));
            acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(dw, _mm256_broadcast_ss(d[j] + b)), acc[j]);
        }
        if constexpr (F::kMin) {
            const __m256 mw = _mm256_load_ps((const float *) (pb + 16 * kV + 64));
#pragma GCC unroll 8
            for (int j = 0; j < kN; ++j) acc[j] = _mm256_fmadd_ps(mw, _mm256_broadcast_ss(s[j] + b), acc[j]);
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < kN; ++j) {
        float * out = dst + j * ldd;
        if (full) {
            _mm256_storeu_ps(out, acc[j]);
        } else {
            _mm256_maskstore_ps(out, mask, acc[j]);
        }
    }
}

// a tile of w <= kN columns
template <class F, int kN>
void tile_w(int64_t w, const uint8_t * panel, int hf, int64_t rows, int64_t k, int64_t b0, int64_t b1, const char * act,
            size_t lda, float * dst, size_t ldd, bool first) {
    if constexpr (kN > 1) {
        if (w < kN) {
            tile_w<F, kN - 1>(w, panel, hf, rows, k, b0, b1, act, lda, dst, ldd, first);
            return;
        }
    }
    tile<F, kN>(panel, hf, rows, k, b0, b1, act, lda, dst, ldd, first);
}

// columns in tiles of at most F::kCols, of near-equal width (a narrow tile leaves the multipliers idle)
template <class F>
void columns(const uint8_t * panel, int hf, int64_t rows, int64_t k, int64_t b0, int64_t b1, const char * act,
             size_t lda, int64_t n, float * dst, size_t ldd, bool first) {
    const int64_t tiles = (n + F::kCols - 1) / F::kCols;
    for (int64_t i = 0, j = 0; i < tiles; ++i) {
        const int64_t w = (n - j) / (tiles - i) + ((n - j) % (tiles - i) != 0);
        tile_w<F, F::kCols>(w, panel, hf, rows, k, b0, b1, act + j * (int64_t) lda, lda,
                            dst + j * (int64_t) ldd + 8 * hf, ldd, first);
        j += w;
    }
}

template <class F>
void compute(const void * vpanel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst,
             size_t ldd) {
    constexpr int64_t kMaxChunk = kMaxChunkBytes / (kGroups * (int64_t) panel_block_bytes<F::kV>());
    const auto * panel = static_cast<const uint8_t *>(vpanel);
    const auto * a = static_cast<const char *>(act);
    const int64_t nb = k / F::kV;
    const int64_t parts = (nb + kMaxChunk - 1) / kMaxChunk;
    const int64_t chunk = parts > 0 ? (nb + parts - 1) / parts : 1;
    for (int64_t j0 = 0; j0 < n; j0 += kColBlock) {
        const int64_t nj = std::min(kColBlock, n - j0);
        const char * aj = a + j0 * (int64_t) lda;
        float * dj = dst + j0 * (int64_t) ldd;
        for (int64_t b0 = 0; b0 < nb; b0 += chunk) {
            const int64_t b1 = std::min(nb, b0 + chunk);
            for (int hf = 0; hf < 4 && 8 * hf < m; ++hf) {
                columns<F>(panel, hf, m - 8 * hf, k, b0, b1, aj, lda, nj, dj, ldd, b0 == 0);
            }
        }
    }
}

// r[i] = row i of a 4x4 block of 32-bit values in, column i out
static inline void transpose4(__m128 r[4]) {
    const __m128 t0 = _mm_unpacklo_ps(r[0], r[1]); // a0 b0 a1 b1
    const __m128 t1 = _mm_unpackhi_ps(r[0], r[1]); // a2 b2 a3 b3
    const __m128 t2 = _mm_unpacklo_ps(r[2], r[3]); // c0 d0 c1 d1
    const __m128 t3 = _mm_unpackhi_ps(r[2], r[3]); // c2 d2 c3 d3
    r[0] = _mm_movelh_ps(t0, t2);
    r[1] = _mm_movehl_ps(t2, t0);
    r[2] = _mm_movelh_ps(t1, t3);
    r[3] = _mm_movehl_ps(t3, t1);
}

// Panel packing: for each block and 16-row group, vector t holds dword t
// (levels 4t..4t+3) of each row: a transpose of 16 rows x kV / 4 dwords,
// done as 8x8 (kV = 32, simd_avx2.h's) or 4x4 (kV = 16) transposes of the
// dwords cast to floats.
template <int kV, class Decode> void pack_panel(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    constexpr int64_t kBlock = (int64_t) panel_block_bytes<kV>();
    auto * panel = static_cast<uint8_t *>(vpanel);
    for (int64_t b = 0; b < k / kV; ++b) {
        for (int64_t g = 0; g < kGroups; ++g) {
            uint8_t * pb = panel + (b * kGroups + g) * kBlock;
            auto * d = reinterpret_cast<float *>(pb + 16 * kV);
            auto * mn = d + 16;
            const int64_t has = m - g * kGroupRows;
            alignas(32) uint8_t lv[kGroupRows][32]; // row r's levels (the first kV bytes)
            for (int64_t r = 0; r < kGroupRows; ++r) {
                if (r < has) {
                    Decode::run(static_cast<const char *>(w) + (g * kGroupRows + r) * ldw, b, lv[r], &d[r], &mn[r]);
                } else {
                    std::memset(lv[r], 0, sizeof(lv[r]));
                    d[r] = 0.0f;
                    mn[r] = 0.0f;
                }
            }
            if constexpr (kV == 32) {
                for (int hf = 0; hf < 2; ++hf) {
                    __m256 r[8];
                    for (int i = 0; i < 8; ++i) r[i] = _mm256_load_ps(reinterpret_cast<const float *>(lv[8 * hf + i]));
                    transpose8(r); // r[t]: dword t of rows 8hf..8hf+7
                    for (int t = 0; t < 8; ++t) _mm256_store_ps(reinterpret_cast<float *>(pb + 64 * t + 32 * hf), r[t]);
                }
            } else {
                static_assert(kV == 16, "16 or 32 values per block");
                for (int qr = 0; qr < 4; ++qr) {
                    __m128 r[4];
                    for (int i = 0; i < 4; ++i) r[i] = _mm_load_ps(reinterpret_cast<const float *>(lv[4 * qr + i]));
                    transpose4(r); // r[t]: dword t of rows 4qr..4qr+3
                    for (int t = 0; t < 4; ++t) _mm_store_ps(reinterpret_cast<float *>(pb + 64 * t + 16 * qr), r[t]);
                }
            }
        }
    }
}

// the formats (values per block, largest level, correction, minimum)
using Nibble = Fmt<32, 15, false, true>;        // Q4_1, Q4_K
using NibbleOffset = Fmt<32, 15, true, false>;  // Q4_0 (levels - 8)
using Bits5 = Fmt<32, 31, false, true>;         // Q5_1, Q5_K
using Bits5Offset = Fmt<32, 31, true, false>;   // Q5_0 (levels - 16)
using Bits6Offset = Fmt<16, 63, true, false>;   // Q6_K, Q3_K (levels - 32)
using Bits6OffsetMin = Fmt<16, 63, true, true>; // Q2_K (levels - 32, and its minimum)
using Signed = Fmt<32, 255, false, false>;      // Q8_0, IQ4_NL, IQ4_XS (levels + 128)

const Gemm kQ4_0 = {
    kPanelRows,           gemm_q_act_size, gemm_pack_act<8, false>, gemm_q_panel_size, pack_panel<32, DecodeQ4_0>,
    compute<NibbleOffset>};
const Gemm kQ4_1 = {
    kPanelRows,     gemm_q_act_size, gemm_pack_act<0, true>, gemm_q_panel_size, pack_panel<32, DecodeQ4_1>,
    compute<Nibble>};
const Gemm kQ5_0 = {
    kPanelRows,          gemm_q_act_size, gemm_pack_act<16, false>, gemm_q_panel_size, pack_panel<32, DecodeQ5_0>,
    compute<Bits5Offset>};
const Gemm kQ5_1 = {
    kPanelRows, gemm_q_act_size, gemm_pack_act<0, true>, gemm_q_panel_size, pack_panel<32, DecodeQ5_1>, compute<Bits5>};
const Gemm kQ8_0 = {
    kPanelRows,     gemm_q_act_size, gemm_pack_act<128, false>, gemm_q_panel_size, pack_panel<32, DecodeQ8_0>,
    compute<Signed>};
const Gemm kIQ4_NL = {
    kPanelRows,     gemm_q_act_size, gemm_pack_act<128, false>, gemm_q_panel_size, pack_panel<32, DecodeIQ4_NL>,
    compute<Signed>};
const Gemm kQ4_K = {kPanelRows,     gemm_q_act_size, pack_act_k<32>, gemm_q_panel_size, pack_panel<32, DecodeQ4_K>,
                    compute<Nibble>};
const Gemm kQ5_K = {kPanelRows,    gemm_q_act_size, pack_act_k<32>, gemm_q_panel_size, pack_panel<32, DecodeQ5_K>,
                    compute<Bits5>};
const Gemm kQ6_K = {kPanelRows,          gemm_q16_act_size,          pack_act_k<16>,
                    gemm_q16_panel_size, pack_panel<16, DecodeQ6_K>, compute<Bits6Offset>};
const Gemm kQ2_K = {kPanelRows,          gemm_q16_act_size,          pack_act_k<16, 0, true>,
                    gemm_q16_panel_size, pack_panel<16, DecodeQ2_K>, compute<Bits6OffsetMin>};
const Gemm kQ3_K = {kPanelRows,          gemm_q16_act_size,          pack_act_k<16>,
                    gemm_q16_panel_size, pack_panel<16, DecodeQ3_K>, compute<Bits6Offset>};
const Gemm kIQ4_XS = {
    kPanelRows, gemm_q_act_size, pack_act_k<32, 128>, gemm_q_panel_size, pack_panel<32, DecodeIQ4_XS>, compute<Signed>};

} // namespace

void fill_avx2_gemm_q(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_Q4_0] = &kQ4_0;
    k.gemm[LM_GGML_TYPE_Q4_1] = &kQ4_1;
    k.gemm[LM_GGML_TYPE_Q5_0] = &kQ5_0;
    k.gemm[LM_GGML_TYPE_Q5_1] = &kQ5_1;
    k.gemm[LM_GGML_TYPE_Q8_0] = &kQ8_0;
    k.gemm[LM_GGML_TYPE_IQ4_NL] = &kIQ4_NL;
    k.gemm[LM_GGML_TYPE_Q2_K] = &kQ2_K;
    k.gemm[LM_GGML_TYPE_Q3_K] = &kQ3_K;
    k.gemm[LM_GGML_TYPE_Q4_K] = &kQ4_K;
    k.gemm[LM_GGML_TYPE_Q5_K] = &kQ5_K;
    k.gemm[LM_GGML_TYPE_Q6_K] = &kQ6_K;
    k.gemm[LM_GGML_TYPE_IQ4_XS] = &kIQ4_XS;
}

} // namespace lmggml::cpu::arch::x86

#endif

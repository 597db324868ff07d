// AMX Gemm for the int8 panel types with 32-value blocks: Q4_0 ... IQ4_NL
// and the K-quants Q4_K, Q5_K, IQ4_XS, on the AVX-512 VNNI level's panels
// and activation rows (gemm_q_kernel.h, gemm_q_pack.h, gemm_k_pack.h), so
// only the product differs. Q6_K (16-value groups: twice the F32 steps per
// product, half-width tiles) measured 0.85x of VNNI (0.94-1.0x with signed
// levels) and stays there.
//
// Per block and tile of 16 activation columns x 16 weight rows, one
// TDPBSUD multiplies the columns' kV signed levels (tile A: 16 activation
// rows, lda bytes apart, read where pack_act put them) with the group's
// unsigned levels (tile B: the panel's kV / 4 vectors, whose lane r holds 4
// levels of row r: the VNNI layout AMX expects). Types whose levels carry
// an offset (Q4_0 8, Q5_0 16, Q8_0 / IQ4_NL / IQ4_XS 128) have a chunk of
// the panel's levels made signed first and take TDPBSSD, which gives the
// corrected sums without VNNI's per-column subtraction. The 16 x 16 int32
// sums go through memory to AVX-512, which converts and scales them into
// F32 accumulators as the VNNI kernel does (the same integers, then the
// same operations in the same order, so both give the same floats).
// Columns past the last whole 16 take the VNNI kernel. Twins: the VNNI
// level's (ref::gemm_compute_q).
#if defined(__x86_64__) || defined(__i386__)

#include "gemm_k_pack.h"
#include "gemm_q_kernel.h"
#include "gemm_q_pack.h"
#include "qdot_impl.h"
#include "x86.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

constexpr int kTileCols = 16;     // activation columns per tile (A's rows)
constexpr int64_t kAmxChunk = 32; // blocks whose per-column scales are gathered at once

// ldtilecfg's 64-byte operand (palette 1): tiles 0-3 = C (16 x 16 int32),
// 4-5 = A (16 columns x kV levels), 6-7 = B (kV / 4 dwords x 16 rows).
struct alignas(64) TileConfig {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
};

template <int kV> void configure_tiles() {
    TileConfig c;
    for (int t = 0; t < 4; ++t) {
        c.rows[t] = 16;
        c.colsb[t] = 64;
    }
    for (int t = 4; t < 6; ++t) {
        c.rows[t] = kTileCols;
        c.colsb[t] = kV;
    }
    for (int t = 6; t < 8; ++t) {
        c.rows[t] = kV / 4;
        c.colsb[t] = 64;
    }
    // an asm with a memory clobber: GCC 12's _tile_loadconfig lets the
    // stores that fill c sink below it
    __asm__ volatile("ldtilecfg %0" : : "m"(c) : "memory");
}

// The per-column scalars of blocks [b0, b0 + nc) for 16 columns, one
// vector of 16 columns per block: d (activation scale), s (sum, for the
// minimum). The offset correction c is not needed: the levels are made
// signed instead (SignedChunk).
struct ColumnScalars {
    alignas(64) float d[kAmxChunk][kTileCols];
    alignas(64) float s[kAmxChunk][kTileCols];
};

template <int kV, bool kMin>
void gather_scalars(const char * act, size_t lda, int64_t k, int64_t b0, int64_t nc, ColumnScalars & cs) {
    const int64_t nb = k / kV;
    const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32((int) lda));
    const char * d0 = act + k; // d[b] of column j at d0 + j lda + 4 b, then s
    for (int64_t i = 0; i < nc; ++i) {
        const char * p = d0 + 4 * (b0 + i);
        _mm512_store_ps(cs.d[i], _mm512_i32gather_ps(rows, p, 1));
        if constexpr (kMin) _mm512_store_ps(cs.s[i], _mm512_i32gather_ps(rows, p + 4 * nb, 1));
    }
}

// The F32 step of block i: sums (16 columns x 16 rows of int32, already
// corrected) converted and scaled into acc, as the VNNI kernel does.
template <int kV, bool kMin>
static inline void scale_block(const int32_t (*sums)[16], const uint8_t * pb, const ColumnScalars & cs, int64_t i,
                               __m512 * acc) {
    const __m512 dw = _mm512_load_ps((const float *) (pb + 16 * kV));
    [[maybe_unused]] __m512 mw;
    if constexpr (kMin) mw = _mm512_load_ps((const float *) (pb + 16 * kV + 64));
    for (int j = 0; j < kTileCols; ++j) {
        const __m512i p = _mm512_load_si512(sums[j]);
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dw, _mm512_set1_ps(cs.d[i][j])), acc[j]);
        if constexpr (kMin) acc[j] = _mm512_fmadd_ps(mw, _mm512_set1_ps(cs.s[i][j]), acc[j]);
    }
}

// Block i's tile product into sums, on tiles C, A, B. GCC's tile
// intrinsics paste the register number into the asm text, so it must be a
// literal: a macro, not a template parameter.
#define LMGGML_AMX_TILE_BLOCK(C, A, B)                                                                                 \
    do {                                                                                                               \
        _tile_loadd(A, a, (long) lda);                                                                                 \
        _tile_loadd(B, b, 64);                                                                                         \
        _tile_zero(C);                                                                                                 \
        if constexpr (kSignedW) {                                                                                      \
            _tile_dpbssd(C, A, B);                                                                                     \
        } else {                                                                                                       \
            _tile_dpbsud(C, A, B);                                                                                     \
        }                                                                                                              \
        _tile_stored(C, sums, 64);                                                                                     \
    } while (0)

// Tile registers are not renamed and a tile store reaches loads only
// through L1, so four blocks are in flight (C tile = slot): block i's sums
// are scaled two blocks later, while the tiles work on the next ones.
template <bool kSignedW>
static inline void tile_block(int slot, const char * a, size_t lda, const uint8_t * b, int32_t (*sums)[16]) {
    switch (slot) {
        case 0: LMGGML_AMX_TILE_BLOCK(0, 4, 6); break;
        case 1: LMGGML_AMX_TILE_BLOCK(1, 5, 7); break;
        case 2: LMGGML_AMX_TILE_BLOCK(2, 4, 6); break;
        default: LMGGML_AMX_TILE_BLOCK(3, 5, 7); break;
    }
}
#undef LMGGML_AMX_TILE_BLOCK

constexpr int kSlots = 4;
constexpr int kLag = 2; // blocks between a tile product and its F32 step

// Levels of a chunk of blocks made signed (level - kOff, in range for every
// type with an offset), so that TDPBSSD gives the corrected sums directly:
// [block][group][16 kV], the B tiles' layout.
template <int kV> struct SignedChunk { alignas(64) int8_t levels[kAmxChunk][kGroupsQ][16 * kV]; };

template <int kV, int kOff>
void make_signed(const uint8_t * panel, int64_t b0, int64_t nc, int groups, SignedChunk<kV> & out) {
    constexpr int64_t kBlock = (int64_t) panel_block_bytes<kV>();
    const __m512i off = _mm512_set1_epi8((char) kOff);
    for (int64_t i = 0; i < nc; ++i) {
        for (int g = 0; g < groups; ++g) {
            const uint8_t * src = panel + ((b0 + i) * kGroupsQ + g) * kBlock;
            for (int t = 0; t < 16 * kV; t += 64) {
                const __m512i v = _mm512_load_si512(src + t);
                _mm512_store_si512(out.levels[i][g] + t, _mm512_sub_epi8(v, off));
            }
        }
    }
}

// 16 columns (act) x group g's 16 rows, blocks [b0, b0 + nc): the F32
// accumulators continue dst unless first. With kOff the B tiles come from
// the signed chunk, else from the panel.
template <int kV, bool kMin, int kOff>
void amx_group(const uint8_t * panel, const SignedChunk<kV> * sc, int64_t m, int g, int64_t b0, int64_t nc,
               const char * act, size_t lda, const ColumnScalars & cs, float * dst, size_t ldd, bool first) {
    constexpr int64_t kBlock = (int64_t) panel_block_bytes<kV>();
    const __mmask16 mk = q_rows_mask(m - 16 * g);
    alignas(64) int32_t sums[kSlots][kTileCols][16];
    __m512 acc[kTileCols];
    for (int j = 0; j < kTileCols; ++j) {
        acc[j] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mk, dst + j * ldd + 16 * g);
    }
    auto block = [&](int64_t i) { return panel + ((b0 + i) * kGroupsQ + g) * kBlock; };
    auto levels = [&](int64_t i) {
        if constexpr (kOff != 0) return reinterpret_cast<const uint8_t *>(sc->levels[i][g]);
        return block(i);
    };
    for (int64_t i = 0; i < nc + kLag; ++i) {
        if (i < nc) tile_block<kOff != 0>((int) (i % kSlots), act + (b0 + i) * kV, lda, levels(i), sums[i % kSlots]);
        if (i >= kLag) {
            const int64_t s = i - kLag;
            scale_block<kV, kMin>(sums[s % kSlots], block(s), cs, s, acc);
        }
    }
    for (int j = 0; j < kTileCols; ++j) _mm512_mask_storeu_ps(dst + j * ldd + 16 * g, mk, acc[j]);
}

// kOff: the offset of the unsigned levels (their activation's correction),
// 0 for the types with a minimum (kMin).
template <int kV, bool kMin, int kOff>
void compute_amx(const void * vpanel, int64_t m, int64_t k, const void * vact, size_t lda, int64_t n, float * dst,
                 size_t ldd) {
    const auto * panel = static_cast<const uint8_t *>(vpanel);
    const auto * act = static_cast<const char *>(vact);
    const int64_t whole = n / kTileCols * kTileCols;
    if (whole > 0) {
        const int64_t nb = k / kV;
        const int groups = m > kGroupRows ? 2 : 1;
        ColumnScalars cs;
        [[maybe_unused]] SignedChunk<kV> sc;
        configure_tiles<kV>();
        for (int64_t b0 = 0; b0 < nb; b0 += kAmxChunk) {
            const int64_t nc = std::min(kAmxChunk, nb - b0);
            if constexpr (kOff != 0) make_signed<kV, kOff>(panel, b0, nc, groups, sc);
            for (int64_t j0 = 0; j0 < whole; j0 += kTileCols) {
                const char * aj = act + j0 * (int64_t) lda;
                float * dj = dst + j0 * (int64_t) ldd;
                gather_scalars<kV, kMin>(aj, lda, k, b0, nc, cs);
                for (int g = 0; g < groups; ++g) {
                    amx_group<kV, kMin, kOff>(panel, &sc, m, g, b0, nc, aj, lda, cs, dj, ldd, b0 == 0);
                }
            }
        }
        _tile_release(); // the thread's tile state back to its initial (unsaved) form
    }
    if (n > whole) {
        compute_q<kV, kMin, kOff != 0>(vpanel, m, k, act + whole * (int64_t) lda, lda, n - whole,
                                       dst + whole * (int64_t) ldd, ldd);
    }
}

// The Gemm of a 32-value type whose levels carry kOff (0: a minimum
// instead), its activation rows packed the block types' way or the
// K-quants' (one scale per 32-value sub-block).
template <int kOff, class Decode> constexpr Gemm block_gemm() {
    return {kPanelRows,        gemm_q_act_size,          gemm_pack_act<kOff, kOff == 0>,
            gemm_q_panel_size, pack_panel_q<32, Decode>, compute_amx<32, kOff == 0, kOff>};
}
template <int kOff, class Decode> constexpr Gemm k_quant_gemm() {
    return {kPanelRows,        gemm_q_act_size,          pack_act_k<32, kOff>,
            gemm_q_panel_size, pack_panel_q<32, Decode>, compute_amx<32, kOff == 0, kOff>};
}

const Gemm kQ4_0 = block_gemm<8, DecodeQ4_0>();
const Gemm kQ4_1 = block_gemm<0, DecodeQ4_1>();
const Gemm kQ5_0 = block_gemm<16, DecodeQ5_0>();
const Gemm kQ5_1 = block_gemm<0, DecodeQ5_1>();
const Gemm kQ8_0 = block_gemm<128, DecodeQ8_0>(); // levels + 128
const Gemm kIQ4_NL = block_gemm<128, DecodeIQ4_NL>();
const Gemm kQ4_K = k_quant_gemm<0, DecodeQ4_K>();
const Gemm kQ5_K = k_quant_gemm<0, DecodeQ5_K>();
const Gemm kIQ4_XS = k_quant_gemm<128, DecodeIQ4_XS>();

} // namespace

void fill_amx_gemm(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_Q4_0] = &kQ4_0;
    k.gemm[LM_GGML_TYPE_Q4_1] = &kQ4_1;
    k.gemm[LM_GGML_TYPE_Q5_0] = &kQ5_0;
    k.gemm[LM_GGML_TYPE_Q5_1] = &kQ5_1;
    k.gemm[LM_GGML_TYPE_Q8_0] = &kQ8_0;
    k.gemm[LM_GGML_TYPE_IQ4_NL] = &kIQ4_NL;
    k.gemm[LM_GGML_TYPE_Q4_K] = &kQ4_K;
    k.gemm[LM_GGML_TYPE_Q5_K] = &kQ5_K;
    k.gemm[LM_GGML_TYPE_IQ4_XS] = &kIQ4_XS;
}

} // namespace lmggml::cpu::arch::x86

#endif

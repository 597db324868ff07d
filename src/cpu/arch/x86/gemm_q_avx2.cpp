// AVX2 Gemm for Q4_0, Q4_1 and Q8_0 weights (layouts.h), prompt processing
// on CPUs without AVX-512: the same panels and activation rows as the VNNI
// kernel (gemm_q_pack.h), a different microkernel.
//
// A 64-byte panel vector (4 levels of 16 rows) is two ymm halves of 8 rows;
// the microkernel takes one half (8 rows) x kN columns. Per 4 levels of a
// column: one broadcast, one vpmaddubsw per half. Nibble levels (0..15)
// times int8 activations keep int16 pair sums small enough to add up a whole
// block (8 steps, at most 8 * 2 * 15 * 127 < 2^15) before one vpmaddwd
// widens them. Q8_0's panel levels carry +128; they are turned back into
// signed bytes and multiplied as |w| * (sign(w) y), which cannot saturate,
// so its offset correction is not needed. Per block, the int32 sums are
// converted and scaled into F32 accumulators. Twins: ref::gemm_*.
#if defined(__x86_64__) || defined(__i386__)

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
constexpr int64_t kBlock = (int64_t) panel_block_bytes<32>(); // one block of one 16-row group

// Panel chunks stay in L1 while every column tile passes over them.
constexpr int64_t kMaxChunkBytes = 24 << 10;

enum class Kind { nibble, nibble_offset, q8 };

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
template <Kind kKind, bool kMin, int kN>
void tile(const uint8_t * panel, int hf, int64_t rows, int64_t k, int64_t b0, int64_t b1, const char * act, size_t lda,
          float * dst, size_t ldd, bool first) {
    const int64_t nb = k / kQK;
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
            // not unrolled: GCC 12 would hoist all 8 steps' products and spill them
#pragma GCC unroll 1
        for (int t = 0; t < 8; ++t) {
            const __m256i w = _mm256_load_si256((const __m256i *) (pb + 64 * t));
            if constexpr (kKind == Kind::q8) {
                const __m256i ws = _mm256_xor_si256(w, _mm256_set1_epi8((char) 0x80));
                const __m256i wa = _mm256_abs_epi8(ws);
#pragma GCC unroll 8
                for (int j = 0; j < kN; ++j) {
                    const __m256i y = _mm256_sign_epi8(bcast4(q[j] + b * kQK + 4 * t), ws);
                    isum[j] = _mm256_add_epi32(isum[j], _mm256_madd_epi16(_mm256_maddubs_epi16(wa, y), ones));
                }
            } else {
#pragma GCC unroll 8
                for (int j = 0; j < kN; ++j) {
                    isum[j] = _mm256_add_epi16(isum[j], _mm256_maddubs_epi16(w, bcast4(q[j] + b * kQK + 4 * t)));
                }
            }
        }
        const __m256 dw = _mm256_load_ps((const float *) (pb + 16 * 32));
#pragma GCC unroll 8
        for (int j = 0; j < kN; ++j) {
            __m256i p = kKind == Kind::q8 ? isum[j] : _mm256_madd_epi16(isum[j], ones);
            if constexpr (kKind == Kind::nibble_offset) p = _mm256_sub_epi32(p, _mm256_set1_epi32(c[j][b]));
            acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(dw, _mm256_broadcast_ss(d[j] + b)), acc[j]);
        }
        if constexpr (kMin) {
            const __m256 mw = _mm256_load_ps((const float *) (pb + 16 * 32 + 64));
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

// columns in tiles of at most kMax, of near-equal width (a narrow tile leaves the multipliers idle)
template <Kind kKind, bool kMin>
void columns(const uint8_t * panel, int hf, int64_t rows, int64_t k, int64_t b0, int64_t b1, const char * act,
             size_t lda, int64_t n, float * dst, size_t ldd, bool first) {
    constexpr int kMax = kKind == Kind::q8 ? 4 : 6;
    const int64_t tiles = (n + kMax - 1) / kMax;
    for (int64_t i = 0, j = 0; i < tiles; ++i) {
        const int64_t w = (n - j) / (tiles - i) + ((n - j) % (tiles - i) != 0);
        const char * a = act + j * (int64_t) lda;
        float * o = dst + j * (int64_t) ldd + 8 * hf;
        switch (w) {
            case 1: tile<kKind, kMin, 1>(panel, hf, rows, k, b0, b1, a, lda, o, ldd, first); break;
            case 2: tile<kKind, kMin, 2>(panel, hf, rows, k, b0, b1, a, lda, o, ldd, first); break;
            case 3: tile<kKind, kMin, 3>(panel, hf, rows, k, b0, b1, a, lda, o, ldd, first); break;
            case 4: tile<kKind, kMin, 4>(panel, hf, rows, k, b0, b1, a, lda, o, ldd, first); break;
            case 5: tile<kKind, kMin, 5>(panel, hf, rows, k, b0, b1, a, lda, o, ldd, first); break;
            default: tile<kKind, kMin, kMax>(panel, hf, rows, k, b0, b1, a, lda, o, ldd, first); break;
        }
        j += w;
    }
}

template <Kind kKind, bool kMin>
void compute(const void * vpanel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst,
             size_t ldd) {
    constexpr int64_t kMaxChunk = kMaxChunkBytes / (kGroups * kBlock);
    const auto * panel = static_cast<const uint8_t *>(vpanel);
    const auto * a = static_cast<const char *>(act);
    const int64_t nb = k / kQK;
    const int64_t parts = (nb + kMaxChunk - 1) / kMaxChunk;
    const int64_t chunk = parts > 0 ? (nb + parts - 1) / parts : 1;
    for (int64_t b0 = 0; b0 < nb; b0 += chunk) {
        const int64_t b1 = std::min(nb, b0 + chunk);
        for (int hf = 0; hf < 4 && 8 * hf < m; ++hf) {
            columns<kKind, kMin>(panel, hf, m - 8 * hf, k, b0, b1, a, lda, n, dst, ldd, b0 == 0);
        }
    }
}

// Panel packing: for each block and 16-row group, vector t holds dword t
// (levels 4t..4t+3) of each row: a transpose of 16 rows x 8 dwords, done
// as two 8x8 transposes (simd_avx2.h's, on the dwords cast to floats).
template <class Decode> void pack_panel(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    auto * panel = static_cast<uint8_t *>(vpanel);
    for (int64_t b = 0; b < k / kQK; ++b) {
        for (int64_t g = 0; g < kGroups; ++g) {
            uint8_t * pb = panel + (b * kGroups + g) * kBlock;
            auto * d = reinterpret_cast<float *>(pb + 16 * 32);
            auto * mn = d + 16;
            const int64_t has = m - g * kGroupRows;
            for (int hf = 0; hf < 2; ++hf) {
                alignas(32) uint8_t lv[32];
                __m256 r[8];
                for (int i = 0; i < 8; ++i) {
                    const int64_t row = 8 * hf + i;
                    if (row < has) {
                        Decode::run(static_cast<const char *>(w) + (g * kGroupRows + row) * ldw, b, lv, &d[row],
                                    &mn[row]);
                        r[i] = _mm256_load_ps(reinterpret_cast<const float *>(lv));
                    } else {
                        r[i] = _mm256_setzero_ps();
                        d[row] = 0.0f;
                        mn[row] = 0.0f;
                    }
                }
                transpose8(r); // r[t]: dword t of rows 0..7
                for (int t = 0; t < 8; ++t) _mm256_store_ps(reinterpret_cast<float *>(pb + 64 * t + 32 * hf), r[t]);
            }
        }
    }
}

const Gemm kQ4_0 = {kPanelRows,        gemm_q_act_size,        gemm_pack_act<8, false>,
                    gemm_q_panel_size, pack_panel<DecodeQ4_0>, compute<Kind::nibble_offset, false>};
const Gemm kQ4_1 = {kPanelRows,        gemm_q_act_size,        gemm_pack_act<0, true>,
                    gemm_q_panel_size, pack_panel<DecodeQ4_1>, compute<Kind::nibble, true>};
const Gemm kQ8_0 = {kPanelRows,        gemm_q_act_size,        gemm_pack_act<128, false>,
                    gemm_q_panel_size, pack_panel<DecodeQ8_0>, compute<Kind::q8, false>};

} // namespace

void fill_avx2_gemm_q(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_Q4_0] = &kQ4_0;
    k.gemm[LM_GGML_TYPE_Q4_1] = &kQ4_1;
    k.gemm[LM_GGML_TYPE_Q8_0] = &kQ8_0;
}

} // namespace lmggml::cpu::arch::x86

#endif

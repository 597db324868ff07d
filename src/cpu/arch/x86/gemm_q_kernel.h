#pragma once
// The int8 Gemm microkernel and panel packer (layouts.h), shared by the
// 32-value block types (gemm_q_vnni.cpp) and the K-quants (gemm_k_vnni.cpp).
// kV is the number of values per scale (32, or 16 for Q6_K). Included only
// by files built with the vnni flags; everything has internal linkage.
//
// Per block and tile of kG x 16 rows and kN columns: kV / 4 steps, each one
// broadcast of 4 activation levels per column feeding one vpdpbusd per 16
// rows; then per (group, column) the int32 sums are corrected (offset of the
// unsigned weights), converted and scaled into F32 accumulators.

#include "../layouts.h"

#include <immintrin.h>

#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

constexpr int64_t kGroupsQ = layout::kPanelRows / layout::kGroupRows;

static inline __mmask16 q_rows_mask(int64_t m) {
    return m >= 16 ? (__mmask16) 0xFFFF : m <= 0 ? (__mmask16) 0 : (__mmask16) ((1u << m) - 1u);
}

// ---------------------------------------------------------------- panels
// Decode::run(row, b, out, &d, &m): block b of a weight row -> kV unsigned
// levels in value order (out, 64-byte aligned), its scale and minimum.
template <int kV, class Decode> void pack_panel_q(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    constexpr size_t kBlock = layout::panel_block_bytes<kV>();
    auto * panel = static_cast<uint8_t *>(vpanel);
    alignas(64) uint8_t tmp[layout::kGroupRows * kV]; // row r's levels at kV r
    // dword t of row r sits at byte kV r + 4 t of tmp
    const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(kV));
    for (int64_t b = 0; b < k / kV; ++b) {
        for (int64_t g = 0; g < kGroupsQ; ++g) {
            uint8_t * pb = panel + (b * kGroupsQ + g) * (int64_t) kBlock;
            auto * d = reinterpret_cast<float *>(pb + 16 * kV);
            auto * mn = d + 16;
            const int64_t has = m - g * layout::kGroupRows; // rows of this group that exist
            for (int64_t r = 0; r < layout::kGroupRows; ++r) {
                if (r < has) {
                    Decode::run(static_cast<const char *>(w) + (g * layout::kGroupRows + r) * ldw, b, tmp + kV * r,
                                &d[r], &mn[r]);
                } else {
                    std::memset(tmp + kV * r, 0, kV);
                    d[r] = 0.0f;
                    mn[r] = 0.0f;
                }
            }
            for (int t = 0; t < kV / 4; ++t) {
                const __m512i v = _mm512_i32gather_epi32(_mm512_add_epi32(rows, _mm512_set1_epi32(4 * t)), tmp, 1);
                _mm512_store_si512(pb + 64 * t, v);
            }
        }
    }
}

// ---------------------------------------------------------------- microkernel
struct QActRow {
    const int8_t * q;
    const float * d;
    const float * s;
    const int32_t * c;
};

template <int kV> static inline QActRow q_act_row(const void * act, size_t lda, int64_t j, int64_t k) {
    QActRow a;
    a.q = static_cast<const int8_t *>(act) + j * (int64_t) lda;
    a.d = reinterpret_cast<const float *>(a.q + k);
    a.s = a.d + k / kV;
    a.c = reinterpret_cast<const int32_t *>(a.s + k / kV);
    return a;
}

// The panel is walked in chunks of blocks that stay in L1 while every column
// passes over them; partial sums wait in dst between chunks (a stored float
// continues the same sum, so chunking does not change the result).
constexpr int64_t kMaxChunkBytes = 25 << 10; // chunks of equal size, at most this much panel

// kG groups of 16 rows x kN columns, blocks [b0, b1); first: start from zero
template <int kV, int kG, int kN, bool kMin, bool kCorr>
void q_tile(const uint8_t * panel, int64_t m, int64_t k, int64_t b0, int64_t b1, const void * act, size_t lda,
            float * dst, size_t ldd, bool first) {
    constexpr int64_t kBlock = (int64_t) layout::panel_block_bytes<kV>();
    QActRow a[kN];
    for (int j = 0; j < kN; ++j) a[j] = q_act_row<kV>(act, lda, j, k);
    __m512 acc[kG][kN];
    for (int g = 0; g < kG; ++g) {
        const __mmask16 mk = q_rows_mask(m - 16 * g);
        for (int j = 0; j < kN; ++j) {
            acc[g][j] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mk, dst + j * ldd + 16 * g);
        }
    }
    for (int64_t b = b0; b < b1; ++b) {
        const uint8_t * pb = panel + b * kGroupsQ * kBlock;
        __m512i isum[kG][kN];
        for (int g = 0; g < kG; ++g)
            for (int j = 0; j < kN; ++j) isum[g][j] = _mm512_setzero_si512();
        for (int t = 0; t < kV / 4; ++t) {
            __m512i w[kG];
            for (int g = 0; g < kG; ++g) w[g] = _mm512_load_si512(pb + g * kBlock + 64 * t);
            for (int j = 0; j < kN; ++j) {
                int32_t v;
                std::memcpy(&v, a[j].q + b * kV + 4 * t, sizeof(v));
                const __m512i y = _mm512_set1_epi32(v);
                for (int g = 0; g < kG; ++g) isum[g][j] = _mm512_dpbusd_epi32(isum[g][j], w[g], y);
            }
        }
        for (int g = 0; g < kG; ++g) {
            const __m512 dw = _mm512_load_ps((const float *) (pb + g * kBlock + 16 * kV));
            for (int j = 0; j < kN; ++j) {
                __m512i p = isum[g][j];
                if constexpr (kCorr) p = _mm512_sub_epi32(p, _mm512_set1_epi32(a[j].c[b]));
                acc[g][j] =
                    _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dw, _mm512_set1_ps(a[j].d[b])), acc[g][j]);
            }
            if constexpr (kMin) {
                const __m512 mw = _mm512_load_ps((const float *) (pb + g * kBlock + 16 * kV + 64));
                for (int j = 0; j < kN; ++j) acc[g][j] = _mm512_fmadd_ps(mw, _mm512_set1_ps(a[j].s[b]), acc[g][j]);
            }
        }
    }
    for (int g = 0; g < kG; ++g) {
        const __mmask16 mk = q_rows_mask(m - 16 * g);
        for (int j = 0; j < kN; ++j) _mm512_mask_storeu_ps(dst + j * ldd + 16 * g, mk, acc[g][j]);
    }
}

template <int kV, int kG, bool kMin, bool kCorr>
void q_columns(const uint8_t * panel, int64_t m, int64_t k, int64_t b0, int64_t b1, const char * act, size_t lda,
               int64_t n, float * dst, size_t ldd, bool first) {
    constexpr int kMax = kG == 2 ? 6 : 8;
    int64_t j = 0;
    for (; j + kMax <= n; j += kMax) {
        q_tile<kV, kG, kMax, kMin, kCorr>(panel, m, k, b0, b1, act + j * lda, lda, dst + j * ldd, ldd, first);
    }
    const char * a = act + j * lda;
    float * d = dst + j * ldd;
    switch (n - j) {
        case 0: break;
        case 1: q_tile<kV, kG, 1, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break;
        case 2: q_tile<kV, kG, 2, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break;
        case 3: q_tile<kV, kG, 3, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break;
        case 4: q_tile<kV, kG, 4, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break;
        case 5: q_tile<kV, kG, 5, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break;
        case 6: q_tile<kV, kG, 6, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break;
        default: q_tile<kV, kG, 7, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break; // kG == 1 only
    }
}

template <int kV, bool kMin, bool kCorr>
void compute_q(const void * vpanel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst,
               size_t ldd) {
    constexpr int64_t kMaxChunk = kMaxChunkBytes / (int64_t) (kGroupsQ * layout::panel_block_bytes<kV>());
    const auto * panel = static_cast<const uint8_t *>(vpanel);
    const auto * a = static_cast<const char *>(act);
    const int64_t nb = k / kV;
    const int64_t parts = (nb + kMaxChunk - 1) / kMaxChunk;
    const int64_t chunk = (nb + parts - 1) / parts;
    for (int64_t b0 = 0; b0 < nb; b0 += chunk) {
        const int64_t b1 = nb - b0 < chunk ? nb : b0 + chunk;
        if (m <= layout::kGroupRows) {
            q_columns<kV, 1, kMin, kCorr>(panel, m, k, b0, b1, a, lda, n, dst, ldd, b0 == 0);
        } else {
            q_columns<kV, 2, kMin, kCorr>(panel, m, k, b0, b1, a, lda, n, dst, ldd, b0 == 0);
        }
    }
}

} // namespace
} // namespace lmggml::cpu::arch::x86

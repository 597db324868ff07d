// AVX-512 VNNI Gemm for the 32-value block types (layouts.h).
//
// Weights: each panel of 32 rows is repacked per block into 8 vectors whose
// lane r holds 4 unsigned levels of row r, plus the rows' scales (and
// minimums) as F32. Activations: the levels in order plus per-block d, s and
// the offset correction c. The microkernel keeps 2 x 16 rows x 4 columns of
// int32 sums: per 4 levels of a column, one broadcast feeds one vpdpbusd
// per 16 rows; per block the sums are corrected, converted and scaled into
// F32 accumulators (the scales differ per block and per row, so this is
// once per block). Twins: ref::gemm_pack_act_*, gemm_pack_panel_*, gemm_compute_q.
#if defined(__x86_64__) || defined(__i386__)

#include "qdot_impl.h"
#include "x86.h"

#include "../layouts.h"

#include <immintrin.h>

#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

constexpr int64_t kGroups = kPanelRows / kGroupRows;

// ---------------------------------------------------------------- activations
template <int kOffset, bool kMin>
void pack_act(const float * x, void * vact, int64_t k) {
    const int64_t nb = k / kQK;
    auto *        q  = static_cast<int8_t *>(vact);
    auto *        d  = reinterpret_cast<float *>(q + k);
    auto *        s  = d + nb;
    auto *        c  = reinterpret_cast<int32_t *>(s + nb);
    for (int64_t b = 0; b < nb; ++b) {
        int         sum;
        const float db = quantize_block_avx2(x + b * kQK, q + b * kQK, &sum);
        d[b]           = from_f16(to_f16(db));
        s[b]           = kMin ? from_f16(to_f16(db * (float) sum)) : 0.0f;
        c[b]           = kOffset * sum;
    }
}

// ---------------------------------------------------------------- panels
// Decoders: block b of a weight row -> 32 unsigned levels in value order (out), scale, minimum.
struct DecodeQ4_0 {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q4_0 *>(row)[b];
        _mm256_store_si256((__m256i *) out, nibbles32(x.qs));
        *d = from_f16(x.d);
        *m = 0.0f;
    }
};
struct DecodeQ4_1 {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q4_1 *>(row)[b];
        _mm256_store_si256((__m256i *) out, nibbles32(x.qs));
        *d = from_f16(x.d);
        *m = from_f16(x.m);
    }
};
struct DecodeQ5_0 {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q5_0 *>(row)[b];
        _mm256_store_si256((__m256i *) out, _mm256_or_si256(nibbles32(x.qs), fifth_bits32(x.qh)));
        *d = from_f16(x.d);
        *m = 0.0f;
    }
};
struct DecodeQ5_1 {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q5_1 *>(row)[b];
        _mm256_store_si256((__m256i *) out, _mm256_or_si256(nibbles32(x.qs), fifth_bits32(x.qh)));
        *d = from_f16(x.d);
        *m = from_f16(x.m);
    }
};
struct DecodeQ8_0 {
    static void run(const void * row, int64_t b, uint8_t * out, float * d, float * m) {
        const auto & x = static_cast<const lm_block_q8_0 *>(row)[b];
        const __m256i q = _mm256_loadu_si256((const __m256i *) x.qs);
        _mm256_store_si256((__m256i *) out, _mm256_xor_si256(q, _mm256_set1_epi8((char) 0x80)));
        *d = from_f16(x.d);
        *m = 0.0f;
    }
};

template <class Decode>
void pack_panel(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    auto *              panel = static_cast<uint8_t *>(vpanel);
    alignas(64) uint8_t tmp[kGroupRows * 32]; // row r's 32 levels at 32 r
    // dword t of row r sits at byte 32 r + 4 t of tmp
    const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(32));
    for (int64_t b = 0; b < k / kQK; ++b) {
        for (int64_t g = 0; g < kGroups; ++g) {
            uint8_t *     pb  = panel + (b * kGroups + g) * kPanelBlockBytes;
            auto *        d   = reinterpret_cast<float *>(pb + 512);
            auto *        mn  = d + 16;
            const int64_t has = m - g * kGroupRows; // rows of this group that exist
            for (int64_t r = 0; r < kGroupRows; ++r) {
                if (r < has) {
                    Decode::run(static_cast<const char *>(w) + (g * kGroupRows + r) * ldw, b, tmp + 32 * r, &d[r], &mn[r]);
                } else {
                    _mm256_store_si256((__m256i *) (tmp + 32 * r), _mm256_setzero_si256());
                    d[r]  = 0.0f;
                    mn[r] = 0.0f;
                }
            }
            for (int t = 0; t < 8; ++t) {
                const __m512i v = _mm512_i32gather_epi32(_mm512_add_epi32(rows, _mm512_set1_epi32(4 * t)), tmp, 1);
                _mm512_store_si512(pb + 64 * t, v);
            }
        }
    }
}

// ---------------------------------------------------------------- microkernel
struct ActRow {
    const int8_t *  q;
    const float *   d;
    const float *   s;
    const int32_t * c;
};

static inline ActRow act_row(const void * act, size_t lda, int64_t j, int64_t k) {
    ActRow a;
    a.q = static_cast<const int8_t *>(act) + j * (int64_t) lda;
    a.d = reinterpret_cast<const float *>(a.q + k);
    a.s = a.d + k / kQK;
    a.c = reinterpret_cast<const int32_t *>(a.s + k / kQK);
    return a;
}

static inline __mmask16 rows_mask(int64_t m) {
    return m >= 16 ? (__mmask16) 0xFFFF : m <= 0 ? (__mmask16) 0 : (__mmask16) ((1u << m) - 1u);
}

// The panel is walked in chunks of kChunk blocks that stay in L1 while every
// column passes over them; partial sums wait in dst between chunks (a stored
// float continues the same sum, so chunking does not change the result).
constexpr int64_t kMaxChunk = 20; // at most 25 KiB of panel; chunks of equal size

// kG groups of 16 rows x kN columns, blocks [b0, b1); first: start from zero
template <int kG, int kN, bool kMin, bool kCorr>
void tile(const uint8_t * panel, int64_t m, int64_t k, int64_t b0, int64_t b1, const void * act, size_t lda,
          float * dst, size_t ldd, bool first) {
    ActRow a[kN];
    for (int j = 0; j < kN; ++j) a[j] = act_row(act, lda, j, k);
    __m512 acc[kG][kN];
    for (int g = 0; g < kG; ++g) {
        const __mmask16 mk = rows_mask(m - 16 * g);
        for (int j = 0; j < kN; ++j) {
            acc[g][j] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mk, dst + j * ldd + 16 * g);
        }
    }

    for (int64_t b = b0; b < b1; ++b) {
        const uint8_t * pb = panel + b * kGroups * (int64_t) kPanelBlockBytes;
        __m512i         isum[kG][kN];
        for (int g = 0; g < kG; ++g)
            for (int j = 0; j < kN; ++j) isum[g][j] = _mm512_setzero_si512();
        for (int t = 0; t < 8; ++t) {
            __m512i w[kG];
            for (int g = 0; g < kG; ++g) w[g] = _mm512_load_si512(pb + g * kPanelBlockBytes + 64 * t);
            for (int j = 0; j < kN; ++j) {
                int32_t v;
                std::memcpy(&v, a[j].q + b * kQK + 4 * t, sizeof(v));
                const __m512i y = _mm512_set1_epi32(v);
                for (int g = 0; g < kG; ++g) isum[g][j] = _mm512_dpbusd_epi32(isum[g][j], w[g], y);
            }
        }
        for (int g = 0; g < kG; ++g) {
            const __m512 dw = _mm512_load_ps((const float *) (pb + g * kPanelBlockBytes + 512));
            for (int j = 0; j < kN; ++j) {
                __m512i p = isum[g][j];
                if constexpr (kCorr) p = _mm512_sub_epi32(p, _mm512_set1_epi32(a[j].c[b]));
                acc[g][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dw, _mm512_set1_ps(a[j].d[b])), acc[g][j]);
            }
            if constexpr (kMin) {
                const __m512 mw = _mm512_load_ps((const float *) (pb + g * kPanelBlockBytes + 576));
                for (int j = 0; j < kN; ++j) acc[g][j] = _mm512_fmadd_ps(mw, _mm512_set1_ps(a[j].s[b]), acc[g][j]);
            }
        }
    }
    for (int g = 0; g < kG; ++g) {
        const __mmask16 mk = rows_mask(m - 16 * g);
        for (int j = 0; j < kN; ++j) _mm512_mask_storeu_ps(dst + j * ldd + 16 * g, mk, acc[g][j]);
    }
}

template <int kG, bool kMin, bool kCorr>
void columns(const uint8_t * panel, int64_t m, int64_t k, int64_t b0, int64_t b1, const char * act, size_t lda,
             int64_t n, float * dst, size_t ldd, bool first) {
    constexpr int kMax = kG == 2 ? 6 : 8;
    int64_t       j    = 0;
    for (; j + kMax <= n; j += kMax) {
        tile<kG, kMax, kMin, kCorr>(panel, m, k, b0, b1, act + j * lda, lda, dst + j * ldd, ldd, first);
    }
    const char * a = act + j * lda;
    float *      d = dst + j * ldd;
    switch (n - j) {
        case 0: break;
        case 1: tile<kG, 1, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break;
        case 2: tile<kG, 2, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break;
        case 3: tile<kG, 3, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break;
        case 4: tile<kG, 4, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break;
        case 5: tile<kG, 5, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break;
        case 6: tile<kG, 6, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break;
        default: tile<kG, 7, kMin, kCorr>(panel, m, k, b0, b1, a, lda, d, ldd, first); break; // kG == 1 only
    }
}

template <bool kMin, bool kCorr>
void compute(const void * vpanel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst, size_t ldd) {
    const auto *  panel = static_cast<const uint8_t *>(vpanel);
    const auto *  a     = static_cast<const char *>(act);
    const int64_t nb    = k / kQK;
    const int64_t parts = (nb + kMaxChunk - 1) / kMaxChunk;
    const int64_t chunk = (nb + parts - 1) / parts;
    for (int64_t b0 = 0; b0 < nb; b0 += chunk) {
        const int64_t b1 = nb - b0 < chunk ? nb : b0 + chunk;
        if (m <= kGroupRows) {
            columns<1, kMin, kCorr>(panel, m, k, b0, b1, a, lda, n, dst, ldd, b0 == 0);
        } else {
            columns<2, kMin, kCorr>(panel, m, k, b0, b1, a, lda, n, dst, ldd, b0 == 0);
        }
    }
}

const Gemm kQ4_0 = {kPanelRows, gemm_q_act_size, pack_act<8, false>, gemm_q_panel_size, pack_panel<DecodeQ4_0>, compute<false, true>};
const Gemm kQ4_1 = {kPanelRows, gemm_q_act_size, pack_act<0, true>, gemm_q_panel_size, pack_panel<DecodeQ4_1>, compute<true, false>};
const Gemm kQ5_0 = {kPanelRows, gemm_q_act_size, pack_act<16, false>, gemm_q_panel_size, pack_panel<DecodeQ5_0>, compute<false, true>};
const Gemm kQ5_1 = {kPanelRows, gemm_q_act_size, pack_act<0, true>, gemm_q_panel_size, pack_panel<DecodeQ5_1>, compute<true, false>};
const Gemm kQ8_0 = {kPanelRows, gemm_q_act_size, pack_act<128, false>, gemm_q_panel_size, pack_panel<DecodeQ8_0>, compute<false, true>};

} // namespace

void fill_vnni_gemm_q(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_Q4_0] = &kQ4_0;
    k.gemm[LM_GGML_TYPE_Q4_1] = &kQ4_1;
    k.gemm[LM_GGML_TYPE_Q5_0] = &kQ5_0;
    k.gemm[LM_GGML_TYPE_Q5_1] = &kQ5_1;
    k.gemm[LM_GGML_TYPE_Q8_0] = &kQ8_0;
}

} // namespace lmggml::cpu::arch::x86

#endif

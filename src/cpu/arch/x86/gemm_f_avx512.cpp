// AVX-512 Gemm for F32 and F16 weights (layouts.h): a panel of 32 weight
// rows stored k-major, times activation columns 8 at a time; each step of k
// is 2 panel loads, 8 broadcasts and 16 FMAs into 16 accumulators (32 rows x
// 8 columns). Twins: ref::gemm_pack_* / ref::gemm_compute_f.
#if defined(__x86_64__) || defined(__i386__)

#include "x86.h"

#include "../layouts.h"

#include <immintrin.h>

#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

static inline __mmask16 rows_mask(int64_t m) {
    return m >= 16 ? (__mmask16) 0xFFFF : m <= 0 ? (__mmask16) 0 : (__mmask16) ((1u << m) - 1u);
}

// ---------------------------------------------------------------- packing
void pack_act_f32(const float * x, void * act, int64_t k) { std::memcpy(act, x, (size_t) k * sizeof(float)); }

// rounded through F16, as the activations ggml converts for F16 weights
void pack_act_f16(const float * x, void * vact, int64_t k) {
    auto *  out = static_cast<float *>(vact);
    int64_t i   = 0;
    for (; i + 16 <= k; i += 16) {
        const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
        _mm512_storeu_ps(out + i, _mm512_cvtph_ps(h));
    }
    if (i < k) {
        const __mmask16 m = rows_mask(k - i);
        const __m256i   h = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, x + i), _MM_FROUND_TO_NEAREST_INT);
        _mm512_mask_storeu_ps(out + i, m, _mm512_cvtph_ps(h));
    }
}

// Row i's values at k-steps kk..kk+15 land in panel column i.
template <bool kHalf>
void pack_panel(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    auto * panel = static_cast<float *>(vpanel);
    alignas(64) float tmp[16];
    for (int64_t i = 0; i < kPanelRows; ++i) {
        if (i >= m) {
            for (int64_t kk = 0; kk < k; ++kk) panel[kk * kPanelRows + i] = 0.0f;
            continue;
        }
        const char * row = static_cast<const char *>(w) + i * ldw;
        for (int64_t kk = 0; kk < k; kk += 16) {
            const __mmask16 mk = rows_mask(k - kk);
            __m512          v;
            if constexpr (kHalf) {
                v = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mk, (const uint16_t *) row + kk));
            } else {
                v = _mm512_maskz_loadu_ps(mk, (const float *) row + kk);
            }
            _mm512_store_ps(tmp, v);
            const int64_t n = k - kk < 16 ? k - kk : 16;
            for (int64_t t = 0; t < n; ++t) panel[(kk + t) * kPanelRows + i] = tmp[t];
        }
    }
}

void pack_panel_f32(const void * w, size_t ldw, int64_t m, int64_t k, void * p) { pack_panel<false>(w, ldw, m, k, p); }
void pack_panel_f16(const void * w, size_t ldw, int64_t m, int64_t k, void * p) { pack_panel<true>(w, ldw, m, k, p); }

// ---------------------------------------------------------------- microkernel
// The panel is walked in chunks of kChunk steps of k that stay in L1 while
// every column passes over them; partial sums wait in dst between chunks
// (reloading a stored float continues the same sum, so the result does not
// depend on the chunking).
constexpr int64_t kChunk = 192; // 24 KiB of panel

// kG groups of 16 rows x kN columns, k steps [k0, k1); first: start from zero
template <int kG, int kN>
void tile(const float * panel, int64_t m, int64_t k0, int64_t k1, const char * act, size_t lda, float * dst,
          size_t ldd, bool first) {
    __m512 acc[kG][kN];
    for (int g = 0; g < kG; ++g) {
        const __mmask16 mk = rows_mask(m - 16 * g);
        for (int j = 0; j < kN; ++j) {
            acc[g][j] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mk, dst + j * ldd + 16 * g);
        }
    }
    for (int64_t kk = k0; kk < k1; ++kk) {
        __m512 w[kG];
        for (int g = 0; g < kG; ++g) w[g] = _mm512_load_ps(panel + kk * kPanelRows + 16 * g);
        for (int j = 0; j < kN; ++j) {
            const __m512 b = _mm512_set1_ps(((const float *) (act + j * lda))[kk]);
            for (int g = 0; g < kG; ++g) acc[g][j] = _mm512_fmadd_ps(w[g], b, acc[g][j]);
        }
    }
    for (int g = 0; g < kG; ++g) {
        const __mmask16 mk = rows_mask(m - 16 * g);
        for (int j = 0; j < kN; ++j) _mm512_mask_storeu_ps(dst + j * ldd + 16 * g, mk, acc[g][j]);
    }
}

template <int kG>
void columns(const float * panel, int64_t m, int64_t k0, int64_t k1, const char * act, size_t lda, int64_t n,
             float * dst, size_t ldd, bool first) {
    constexpr int kMax = kG == 2 ? 8 : 16;
    int64_t j = 0;
    for (; j + kMax <= n; j += kMax) tile<kG, kMax>(panel, m, k0, k1, act + j * lda, lda, dst + j * ldd, ldd, first);
    const char * a = act + j * lda;
    float *      d = dst + j * ldd;
    switch (n - j) {
        case 0: break;
        case 1: tile<kG, 1>(panel, m, k0, k1, a, lda, d, ldd, first); break;
        case 2: tile<kG, 2>(panel, m, k0, k1, a, lda, d, ldd, first); break;
        case 3: tile<kG, 3>(panel, m, k0, k1, a, lda, d, ldd, first); break;
        case 4: tile<kG, 4>(panel, m, k0, k1, a, lda, d, ldd, first); break;
        case 5: tile<kG, 5>(panel, m, k0, k1, a, lda, d, ldd, first); break;
        case 6: tile<kG, 6>(panel, m, k0, k1, a, lda, d, ldd, first); break;
        case 7: tile<kG, 7>(panel, m, k0, k1, a, lda, d, ldd, first); break;
        default: // only kG == 1 gets here (8..15 columns left): two tiles
            tile<kG, 8>(panel, m, k0, k1, a, lda, d, ldd, first);
            columns<kG>(panel, m, k0, k1, a + 8 * lda, lda, n - j - 8, d + 8 * ldd, ldd, first);
            break;
    }
}

void compute(const void * vpanel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst, size_t ldd) {
    const auto * panel = static_cast<const float *>(vpanel);
    const auto * a     = static_cast<const char *>(act);
    for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
        const int64_t k1 = k - k0 < kChunk ? k : k0 + kChunk;
        if (m <= 16) {
            columns<1>(panel, m, k0, k1, a, lda, n, dst, ldd, k0 == 0);
        } else {
            columns<2>(panel, m, k0, k1, a, lda, n, dst, ldd, k0 == 0);
        }
    }
}

const Gemm kF32 = {kPanelRows, gemm_f_act_size, pack_act_f32, gemm_f_panel_size, pack_panel_f32, compute};
const Gemm kF16 = {kPanelRows, gemm_f_act_size, pack_act_f16, gemm_f_panel_size, pack_panel_f16, compute};

} // namespace

void fill_avx512_gemm_f(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_F32] = &kF32;
    k.gemm[LM_GGML_TYPE_F16] = &kF16;
}

} // namespace lmggml::cpu::arch::x86

#endif

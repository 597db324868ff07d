// AVX2 products for F32 and F16 weights (layouts.h): Gemm, same bytes as
// the AVX-512 file: a panel of 32 weight rows stored k-major, times
// activation columns; and RowDot on the same activation rows (generation,
// and attention's K and V products with a few query rows).
// 16 ymm registers: the microkernel takes one 16-row group (2 vectors) x 6
// columns = 12 accumulators + 2 panel vectors + 1 broadcast. Each step of k
// is 2 panel loads, 6 broadcasts and 12 FMAs, enough independent chains to
// keep two FMA pipes of latency 4 busy. Twins: ref::gemm_pack_* /
// ref::gemm_compute_f.
#if defined(__x86_64__) || defined(__i386__)

#include "simd_avx2.h"
#include "x86.h"

#include "../layouts.h"

#include <immintrin.h>

#include <cstring>
#include <type_traits>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

// ---------------------------------------------------------------- packing
void pack_act_f32(const float * x, void * act, int64_t k) { std::memcpy(act, x, (size_t) k * sizeof(float)); }

static inline __m256 round_f16(__m256 v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)); }

// rounded through F16, as the activations ggml converts for F16 weights
void pack_act_f16(const float * x, void * vact, int64_t k) {
    auto *  out = static_cast<float *>(vact);
    int64_t i   = 0;
    for (; i + 8 <= k; i += 8) _mm256_storeu_ps(out + i, round_f16(_mm256_loadu_ps(x + i)));
    if (i < k) { // through a buffer: the row may end at the last readable byte
        alignas(32) float tmp[8] = {};
        std::memcpy(tmp, x + i, (size_t) (k - i) * sizeof(float));
        _mm256_store_ps(tmp, round_f16(_mm256_load_ps(tmp)));
        std::memcpy(out + i, tmp, (size_t) (k - i) * sizeof(float));
    }
}

// Values kk..kk+7 of one weight row as floats.
template <bool kHalf>
static inline __m256 load8(const char * row, int64_t kk) {
    if constexpr (kHalf) {
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (reinterpret_cast<const uint16_t *>(row) + kk)));
    } else {
        return _mm256_loadu_ps(reinterpret_cast<const float *>(row) + kk);
    }
}

// Values kk..kk+n-1 (n < 8), zeros after them: through a buffer, as the row
// may end at the last readable byte.
template <bool kHalf>
static inline __m256 load_part(const char * row, int64_t kk, int64_t n) {
    using T = std::conditional_t<kHalf, uint16_t, float>;
    alignas(32) T tmp[8] = {};
    std::memcpy(tmp, reinterpret_cast<const T *>(row) + kk, (size_t) n * sizeof(T));
    return load8<kHalf>(reinterpret_cast<const char *>(tmp), 0);
}

// 8 rows x 8 steps of k at a time, transposed in registers, so the panel is
// written in order, a k step (128 bytes) at a time. The edges (rows past m,
// k % 8) take a slower path that keeps the common block free of branches.
template <bool kHalf>
void pack_panel(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    auto *       panel = static_cast<float *>(vpanel);
    const char * rows  = static_cast<const char *>(w);
    for (int64_t kk = 0; kk < k; kk += 8) {
        const int64_t nk = k - kk < 8 ? k - kk : 8;
        for (int64_t i0 = 0; i0 < kPanelRows; i0 += 8) {
            float * out = panel + kk * kPanelRows + i0;
            __m256  v[8];
            if (nk == 8 && i0 + 8 <= m) {
#pragma GCC unroll 8
                for (int t = 0; t < 8; ++t) v[t] = load8<kHalf>(rows + (i0 + t) * ldw, kk);
                transpose8(v);
#pragma GCC unroll 8
                for (int t = 0; t < 8; ++t) _mm256_storeu_ps(out + t * kPanelRows, v[t]);
                continue;
            }
            for (int t = 0; t < 8; ++t) {
                const int64_t i = i0 + t;
                v[t] = i >= m ? _mm256_setzero_ps()
                       : nk == 8 ? load8<kHalf>(rows + i * ldw, kk)
                                 : load_part<kHalf>(rows + i * ldw, kk, nk);
            }
            transpose8(v);
            for (int64_t t = 0; t < nk; ++t) _mm256_storeu_ps(out + t * kPanelRows, v[t]);
        }
    }
}

void pack_panel_f32(const void * w, size_t ldw, int64_t m, int64_t k, void * p) { pack_panel<false>(w, ldw, m, k, p); }
void pack_panel_f16(const void * w, size_t ldw, int64_t m, int64_t k, void * p) { pack_panel<true>(w, ldw, m, k, p); }

// ---------------------------------------------------------------- microkernel
// The panel is walked in chunks of kChunk steps of k (128 KiB of panel) that
// stay in L2 while every column passes over them: a step reads only 64 bytes
// of panel per 12 FMAs, which L2 easily feeds, and long chunks save the
// per-tile setup (on Zen 3, L1-sized chunks of 192 steps measured ~5% slower).
// Partial sums wait in dst between chunks (reloading a stored float continues
// the same sum, so the result does not depend on the chunking).
constexpr int64_t kChunk = 1024;
constexpr int     kCols  = 6;

// One 16-row group (p = the panel + the group's first row; rows = how many
// of its 16 rows are real, 1..16) x kN columns, k steps [k0, k1); first:
// start from zero. Rows of dst past `rows` are neither read nor written.
template <int kN>
void tile(const float * p, int64_t rows, int64_t k0, int64_t k1, const char * act, size_t lda, float * dst,
          size_t ldd, bool first) {
    const float * x[kN];
    for (int j = 0; j < kN; ++j) x[j] = reinterpret_cast<const float *>(act + j * lda);
    // masked moves only for a partial group: they are slow on AMD
    const bool    full = rows >= kGroupRows;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mk[2] = {_mm256_cmpgt_epi32(_mm256_set1_epi32((int) rows), lane),
                           _mm256_cmpgt_epi32(_mm256_set1_epi32((int) rows - 8), lane)};
    // The unroll pragmas let GCC keep acc in registers (without them it
    // stores all 12 accumulators to the stack on every step of k).
    __m256 acc[kN][2];
#pragma GCC unroll 16
    for (int i = 0; i < 2 * kN; ++i) {
        float * d          = dst + (i / 2) * ldd + 8 * (i % 2);
        acc[i / 2][i % 2] = first ? _mm256_setzero_ps() : full ? _mm256_loadu_ps(d) : _mm256_maskload_ps(d, mk[i % 2]);
    }
    for (int64_t kk = k0; kk < k1; ++kk) {
        const __m256 w0 = _mm256_loadu_ps(p + kk * kPanelRows);
        const __m256 w1 = _mm256_loadu_ps(p + kk * kPanelRows + 8);
#pragma GCC unroll 16
        for (int j = 0; j < kN; ++j) {
            const __m256 b = _mm256_broadcast_ss(x[j] + kk);
            acc[j][0]      = _mm256_fmadd_ps(w0, b, acc[j][0]);
            acc[j][1]      = _mm256_fmadd_ps(w1, b, acc[j][1]);
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < 2 * kN; ++i) {
        float * d = dst + (i / 2) * ldd + 8 * (i % 2);
        if (full) {
            _mm256_storeu_ps(d, acc[i / 2][i % 2]);
        } else {
            _mm256_maskstore_ps(d, mk[i % 2], acc[i / 2][i % 2]);
        }
    }
}

void compute(const void * vpanel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst, size_t ldd) {
    const auto *  panel  = static_cast<const float *>(vpanel);
    const auto *  a      = static_cast<const char *>(act);
    const int64_t groups = m > kGroupRows ? 2 : 1;
    for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
        const int64_t k1    = k - k0 < kChunk ? k : k0 + kChunk;
        const bool    first = k0 == 0;
        // tiles of near-equal width (7 columns: 4 + 3, not 6 + 1): a narrow
        // tile has too few accumulators to cover the FMA latency
        const int64_t tiles = (n + kCols - 1) / kCols;
        for (int64_t t = 0, j = 0, nc = 0; t < tiles; ++t, j += nc) {
            nc             = (n - j + tiles - t - 1) / (tiles - t);
            const char * x = a + j * lda;
            // both groups over the same columns: their activations (24 KiB) stay in L1
            for (int64_t g = 0; g < groups; ++g) {
                const float * p    = panel + g * kGroupRows;
                const int64_t rows = m - g * kGroupRows < kGroupRows ? m - g * kGroupRows : kGroupRows;
                float *       d    = dst + j * ldd + g * kGroupRows;
                switch (nc) {
                    case 1: tile<1>(p, rows, k0, k1, x, lda, d, ldd, first); break;
                    case 2: tile<2>(p, rows, k0, k1, x, lda, d, ldd, first); break;
                    case 3: tile<3>(p, rows, k0, k1, x, lda, d, ldd, first); break;
                    case 4: tile<4>(p, rows, k0, k1, x, lda, d, ldd, first); break;
                    case 5: tile<5>(p, rows, k0, k1, x, lda, d, ldd, first); break;
                    default: tile<6>(p, rows, k0, k1, x, lda, d, ldd, first); break;
                }
            }
        }
    }
}

// ---------------------------------------------------------------- RowDot
// Weight rows straight from memory, 4 at a time so each activation load
// serves 4 FMAs; the 4 sums are reduced together.
template <bool kHalf>
void dot_rows(int64_t k, int64_t m, const void * w, size_t ldw, const void * vact, float * dst) {
    const auto *  x    = static_cast<const float *>(vact);
    const char *  rows = static_cast<const char *>(w);
    const int64_t k8   = k & ~(int64_t) 7;
    alignas(32) float tail[8] = {};
    std::memcpy(tail, x + k8, (size_t) (k - k8) * sizeof(float)); // zeros past k
    const __m256 xt = _mm256_load_ps(tail);
    int64_t      r  = 0;
    for (; r + 4 <= m; r += 4) {
        const char * wr[4] = {rows + r * ldw, rows + (r + 1) * ldw, rows + (r + 2) * ldw, rows + (r + 3) * ldw};
        __m256       acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int64_t kk = 0; kk < k8; kk += 8) {
            const __m256 xv = _mm256_loadu_ps(x + kk);
            for (int i = 0; i < 4; ++i) acc[i] = _mm256_fmadd_ps(load8<kHalf>(wr[i], kk), xv, acc[i]);
        }
        if (k8 < k) {
            for (int i = 0; i < 4; ++i) acc[i] = _mm256_fmadd_ps(load_part<kHalf>(wr[i], k8, k - k8), xt, acc[i]);
        }
        _mm_storeu_ps(dst + r, hsum8x4(acc));
    }
    for (; r < m; ++r) {
        const char * row = rows + r * ldw;
        __m256       acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int64_t kk = 0; kk < k8; kk += 8) acc[0] = _mm256_fmadd_ps(load8<kHalf>(row, kk), _mm256_loadu_ps(x + kk), acc[0]);
        if (k8 < k) acc[0] = _mm256_fmadd_ps(load_part<kHalf>(row, k8, k - k8), xt, acc[0]);
        dst[r] = _mm_cvtss_f32(hsum8x4(acc));
    }
}

const RowDot kRowDotF32 = {gemm_f_act_size, pack_act_f32, dot_rows<false>};
const RowDot kRowDotF16 = {gemm_f_act_size, pack_act_f16, dot_rows<true>};

const Gemm kF32 = {kPanelRows, gemm_f_act_size, pack_act_f32, gemm_f_panel_size, pack_panel_f32, compute};
const Gemm kF16 = {kPanelRows, gemm_f_act_size, pack_act_f16, gemm_f_panel_size, pack_panel_f16, compute};

} // namespace

void fill_avx2_gemm_f(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_F32] = &kF32;
    k.gemm[LM_GGML_TYPE_F16] = &kF16;
    k.rowdot[LM_GGML_TYPE_F32] = &kRowDotF32;
    k.rowdot[LM_GGML_TYPE_F16] = &kRowDotF16;
}

} // namespace lmggml::cpu::arch::x86

#endif

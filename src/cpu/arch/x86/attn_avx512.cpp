// AVX-512 attention over an F16 KV cache (kernels.h AttnF16; twins in
// ref_attn.cpp), on top of the AVX2 kernels (attn_avx2.cpp), which keep the
// shapes this file leaves to them. On the AVX2 kernels decode attention is
// bound by the vector ports, not by memory: at head size 64 one core read a
// cache in L2 at 17 GB/s, below its DRAM speed. A zmm widens 16 F16 values in
// one vcvtph2ps and feeds 16-lane FMAs, half the uops per value:
//   accumulate  every head size that is a multiple of 16: a pass adds up to
//               64 columns (4 zmm) into up to 4 query rows (16 accumulators
//               of the 32 registers), so SmolLM2's 64 columns take one pass
//               per V row instead of two
//   scores      head sizes from kZmmScoresMin (128; Gemma 3: 256): 3 keys x
//               up to 4 query rows, each sum reduced from 16 lanes at the
//               end (head size 128, one layer hot: 0.34 -> 0.31 ms). At head
//               size 64 the 16-lane reductions cost more than the 4-step loop
//               saves (zmm scores were about 15 % slower there), so the AVX2
//               kernel keeps them.
// The all-heads forms follow the same rule, so each head's results are bit
// for bit the one-head kernel's (the kernels.h contract).
#if defined(__x86_64__) || defined(__i386__)

#include "attn_blocks.h"
#include "simd_avx512.h"
#include "x86.h"

#include <algorithm>

namespace lmggml::cpu::arch::x86 {
namespace {

// The AVX2 kernels, for the shapes this file leaves to them (built once,
// thread-safe: several levels fill from this file).
const AttnF16 & base() {
    static const AttnF16 b = [] {
        KernelSet k{};
        fill_avx2_attn(k);
        return k.attn_f16;
    }();
    return b;
}

constexpr int64_t kZmmScoresMin = 128; // head size from which scores run on zmm
constexpr int kKeys = 3;               // keys per scores block
constexpr int64_t kBlockRows = 32;     // V rows per accumulate block, kept in L1 across its passes

inline __m512 widen16(const char * row, int64_t c) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(row + c * 2)));
}

// s[i * n + j] for G query rows (q) and the nk <= kKeys keys from rows.
template <int G>
void scores_block(int64_t d, const char * rows, size_t ldk, int nk, const float * q, float * s, int64_t n) {
    const char * r[kKeys];
    for (int j = 0; j < kKeys; ++j) r[j] = rows + (j < nk ? j : 0) * (int64_t) ldk; // past nk: row 0 again, dropped
    for (int j = 0; j < kKeys; ++j) prefetch_slice(r[j] + kAheadRows * (int64_t) ldk, d * 2);
    __m512 acc[G][kKeys];
    for (int i = 0; i < G; ++i)
        for (int j = 0; j < kKeys; ++j) acc[i][j] = _mm512_setzero_ps();
    for (int64_t c = 0; c < d; c += 16) {
        __m512 kv[kKeys];
        for (int j = 0; j < kKeys; ++j) kv[j] = widen16(r[j], c);
        for (int i = 0; i < G; ++i) {
            const __m512 qv = _mm512_loadu_ps(q + i * d + c);
            for (int j = 0; j < kKeys; ++j) acc[i][j] = _mm512_fmadd_ps(kv[j], qv, acc[i][j]);
        }
    }
    for (int i = 0; i < G; ++i) {
        const __m128 sums = hsum16x4(acc[i][0], acc[i][1], acc[i][2], _mm512_setzero_ps());
        float * si = s + i * n;
        if (nk >= 2) {
            _mm_storel_pi(reinterpret_cast<__m64 *>(si), sums);
            if (nk == 3) _mm_store_ss(si + 2, _mm_movehl_ps(sums, sums));
        } else {
            _mm_store_ss(si, sums);
        }
    }
}

// nh heads' scores of G query rows each, key block by key block, every head
// of a block before the next (nh 1: one head).
template <int G>
void scores_rows_heads(int64_t d, int64_t n, const char * rows, size_t ldk, size_t hs, int64_t nh, const float * q,
                       float * s) {
    scores_blocks<kKeys>(n, nh, [&](int64_t h, int64_t j0, int nk) {
        scores_block<G>(d, rows + h * (int64_t) hs + j0 * (int64_t) ldk, ldk, nk, q + h * G * d, s + h * G * n + j0, n);
    });
}

// up to 4 query rows per pass over the keys: 4 while a multiple of 4 is left, else 3
void scores_zmm(int64_t d, int64_t n, const char * rows, size_t ldk, size_t hs, int64_t nh, const float * q, int64_t g,
                float * s) {
    if (g > 4) { // one head at a time, its rows in groups
        for (int64_t h = 0; h < nh; ++h) {
            for (int64_t i0 = 0; i0 < g;) {
                const int64_t left = g - i0, take = left % 4 == 0 ? 4 : std::min<int64_t>(3, left);
                scores_zmm(d, n, rows + h * (int64_t) hs, ldk, hs, 1, q + (h * g + i0) * d, take, s + (h * g + i0) * n);
                i0 += take;
            }
        }
        return;
    }
    switch (g) {
        case 1: scores_rows_heads<1>(d, n, rows, ldk, hs, nh, q, s); break;
        case 2: scores_rows_heads<2>(d, n, rows, ldk, hs, nh, q, s); break;
        case 3: scores_rows_heads<3>(d, n, rows, ldk, hs, nh, q, s); break;
        default: scores_rows_heads<4>(d, n, rows, ldk, hs, nh, q, s); break;
    }
}

bool zmm_scores(int64_t d) { return d % 16 == 0 && d >= kZmmScoresMin; }

void scores(int64_t d, int64_t n, const void * k, size_t ldk, const float * q, int64_t g, float * s) {
    if (!zmm_scores(d)) {
        base().scores(d, n, k, ldk, q, g, s);
        return;
    }
    scores_zmm(d, n, static_cast<const char *>(k), ldk, 0, 1, q, g, s);
}

void scores_heads(int64_t d, int64_t n, const void * k, size_t ldk, size_t hs, int64_t nh, const float * q, int64_t g,
                  float * s) {
    if (!zmm_scores(d)) {
        base().scores_heads(d, n, k, ldk, hs, nh, q, g, s);
        return;
    }
    scores_zmm(d, n, static_cast<const char *>(k), ldk, hs, nh, q, g, s);
}

// acc rows i < G (d floats apart), columns c .. c + 16 W - 1, += p[i * ldp
// + j] * V row j for j < nb: G W accumulators, each V row's 16 W values
// widened once for all G rows.
template <int G, int W>
void accumulate_pass(int64_t d, int64_t nb, const char * rows, size_t ldv, const float * p, int64_t ldp, float * acc,
                     int64_t c) {
    __m512 a[G][W];
    for (int i = 0; i < G; ++i)
        for (int w = 0; w < W; ++w) a[i][w] = _mm512_loadu_ps(acc + i * d + c + 16 * w);
    const int64_t ahead = kAheadRows * (int64_t) ldv + c * 2;
    for (int64_t j = 0; j < nb; ++j) {
        const char * row = rows + j * (int64_t) ldv;
        for (int w = 0; w < W; w += 2) prefetch_stream(row + ahead + 32 * w); // W zmm: 32 W bytes
        __m512 v[W];
        for (int w = 0; w < W; ++w) v[w] = widen16(row, c + 16 * w);
        for (int i = 0; i < G; ++i) {
            const __m512 b = _mm512_set1_ps(p[i * ldp + j]);
            for (int w = 0; w < W; ++w) a[i][w] = _mm512_fmadd_ps(b, v[w], a[i][w]);
        }
    }
    for (int i = 0; i < G; ++i)
        for (int w = 0; w < W; ++w) _mm512_storeu_ps(acc + i * d + c + 16 * w, a[i][w]);
}

// Columns per pass: 64 where the head size allows, else 32, else 16.
int64_t cols_per_pass(int64_t d) { return d % 64 == 0 ? 64 : d % 32 == 0 ? 32 : 16; }

template <int G>
void accumulate_cols(int64_t d, int64_t nb, const char * rows, size_t ldv, const float * p, int64_t ldp, float * acc,
                     int64_t c, int64_t width) {
    switch (width) {
        case 64: accumulate_pass<G, 4>(d, nb, rows, ldv, p, ldp, acc, c); break;
        case 32: accumulate_pass<G, 2>(d, nb, rows, ldv, p, ldp, acc, c); break;
        default: accumulate_pass<G, 1>(d, nb, rows, ldv, p, ldp, acc, c); break;
    }
}

// nh heads' accumulators, block by block of V rows (nh 1: one head).
template <int G>
void accumulate_rows_heads(int64_t d, int64_t n, const char * rows, size_t ldv, size_t hs, int64_t nh, const float * p,
                           float * acc) {
    const int64_t width = cols_per_pass(d);
    accumulate_blocks(d, n, nh, width, kBlockRows, [&](int64_t h, int64_t j0, int64_t nb, int64_t c) {
        accumulate_cols<G>(d, nb, rows + h * (int64_t) hs + j0 * (int64_t) ldv, ldv, p + h * G * n + j0, n,
                           acc + h * G * d, c, width);
    });
}

void accumulate_zmm(int64_t d, int64_t n, const char * rows, size_t ldv, size_t hs, int64_t nh, const float * p,
                    int64_t g, float * acc) {
    if (g > 4) { // one head at a time, its rows 4 at a time
        for (int64_t h = 0; h < nh; ++h) {
            for (int64_t i0 = 0; i0 < g; i0 += 4) {
                accumulate_zmm(d, n, rows + h * (int64_t) hs, ldv, hs, 1, p + (h * g + i0) * n,
                               std::min<int64_t>(4, g - i0), acc + (h * g + i0) * d);
            }
        }
        return;
    }
    switch (g) {
        case 1: accumulate_rows_heads<1>(d, n, rows, ldv, hs, nh, p, acc); break;
        case 2: accumulate_rows_heads<2>(d, n, rows, ldv, hs, nh, p, acc); break;
        case 3: accumulate_rows_heads<3>(d, n, rows, ldv, hs, nh, p, acc); break;
        default: accumulate_rows_heads<4>(d, n, rows, ldv, hs, nh, p, acc); break;
    }
}

void accumulate(int64_t d, int64_t n, const void * v, size_t ldv, const float * p, int64_t g, float * acc) {
    if (d % 16 != 0) {
        base().accumulate(d, n, v, ldv, p, g, acc);
        return;
    }
    accumulate_zmm(d, n, static_cast<const char *>(v), ldv, 0, 1, p, g, acc);
}

void accumulate_heads(int64_t d, int64_t n, const void * v, size_t ldv, size_t hs, int64_t nh, const float * p,
                      int64_t g, float * acc) {
    if (d % 16 != 0) {
        base().accumulate_heads(d, n, v, ldv, hs, nh, p, g, acc);
        return;
    }
    accumulate_zmm(d, n, static_cast<const char *>(v), ldv, hs, nh, p, g, acc);
}

} // namespace

void fill_avx512_attn(KernelSet & k) {
    k.attn_f16.scores = scores;
    k.attn_f16.accumulate = accumulate;
    k.attn_f16.scores_heads = scores_heads;
    k.attn_f16.accumulate_heads = accumulate_heads;
}

} // namespace lmggml::cpu::arch::x86

#endif

// AVX2 attention over an F16 KV cache (kernels.h AttnF16; twins in
// ref_attn.cpp). Each K or V row is widened once (vcvtph2ps) for all the
// query rows of its group, which is where grouped-query attention saves: the
// widening, not the FMAs, bounds a head dimension of 64.
//   scores      2 to 4 keys at a time, widened 8 values at a time and
//               dotted with up to 4 query rows; a block's sums are reduced
//               together (hsum8x4). Groups of 4 (Gemma 3: 4 heads per KV
//               head) go in one pass of 2 or 3 keys: a second pass for the
//               4th row would widen every key again for a single FMA.
//               Full 3-key blocks of 3 or 4 rows reduce named accumulators
//               in groups of 4 with no zero lane (scores_block_x3).
//   accumulate  per block of kBlockRows V rows, per 32 output columns (16
//               for 4 query rows, whose 8 chains already cover the FMA
//               latency), each row's values are widened once and added into
//               up to 4 query rows' accumulators. The block keeps the passes
//               in L1: a cache of one KV head has rows a power of two apart
//               (Gemma 3: 512 bytes), so one column of a whole tile's rows
//               falls into a few L1 sets and every pass went to L2 (2.3x).
#if defined(__x86_64__) || defined(__i386__)

#include "attn_blocks.h"
#include "x86.h"

#include "../ref.h"

#include <algorithm>

namespace lmggml::cpu::arch::x86 {
namespace {

inline __m256 widen8(const char * row, int64_t c) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(row + c * 2)));
}

// Keys per scores block for G query rows: K * G accumulators, K widened keys
// and one query vector in the 16 registers. G 4 takes 3 keys (16 registers,
// a few spills outside the column loop) where the column loop is long enough
// to pay for them: head size 256 33 -> 28 ns a key, 128 19 -> 17.4; at 64
// the 2-key block is faster (11.7 against 12.7 ns).
template <int G> constexpr int kKeys = G == 3 ? 3 : 4; // G 1 to 3; G 4 chooses by head size (scores)
constexpr int kKeysG4Long = 3, kKeysG4Short = 2;
constexpr int64_t kLongRow = 128; // head size from which G 4 takes kKeysG4Long

// The sum of a's lanes, added in hsum4's order (pairs, quads, halves).
inline float hsum1(__m256 a) {
    __m256 h = _mm256_hadd_ps(a, a);
    h = _mm256_hadd_ps(h, h);
    return _mm_cvtss_f32(_mm_add_ss(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}

// A full block of 3 keys for G = 3 or 4 query rows (SmolLM2: 3 heads per KV
// head, head size 64, where the reduction cost as much as the 8-step loop;
// Gemma 3: 4 heads, 256): named accumulators reduced in groups of 4 sums,
// 4 + 4 + 1 or 4 + 4 + 4. The array form below keeps them in registers in
// the loop but zeroes, stores and reloads all of them through the stack
// around it, and reduces a zero lane per query row.
template <int G> void scores_block_x3(int64_t d, const char * rows, size_t ldk, const float * q, float * s, int64_t n) {
    static_assert(G == 3 || G == 4);
    const char *r0 = rows, *r1 = rows + ldk, *r2 = rows + 2 * (int64_t) ldk;
    const int64_t ahead = kAheadRows * (int64_t) ldk;
    prefetch_slice(r0 + ahead, d * 2);
    prefetch_slice(r1 + ahead, d * 2);
    prefetch_slice(r2 + ahead, d * 2);
    __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00, a20 = a00, a21 = a00,
           a22 = a00, a30 = a00, a31 = a00, a32 = a00;
    const auto row = [](__m256 qv, __m256 k0, __m256 k1, __m256 k2, __m256 & b0, __m256 & b1, __m256 & b2) {
        b0 = _mm256_fmadd_ps(k0, qv, b0);
        b1 = _mm256_fmadd_ps(k1, qv, b1);
        b2 = _mm256_fmadd_ps(k2, qv, b2);
    };
    for (int64_t c = 0; c < d; c += 8) {
        const __m256 k0 = widen8(r0, c), k1 = widen8(r1, c), k2 = widen8(r2, c);
        row(_mm256_loadu_ps(q + c), k0, k1, k2, a00, a01, a02);
        row(_mm256_loadu_ps(q + d + c), k0, k1, k2, a10, a11, a12);
        row(_mm256_loadu_ps(q + 2 * d + c), k0, k1, k2, a20, a21, a22);
        if constexpr (G == 4) row(_mm256_loadu_ps(q + 3 * d + c), k0, k1, k2, a30, a31, a32);
    }
    const __m128 x = hsum4(a00, a01, a02, a10); // s00 s01 s02 s10
    const __m128 y = hsum4(a11, a12, a20, a21); // s11 s12 s20 s21
    _mm_storel_pi(reinterpret_cast<__m64 *>(s), x);
    _mm_store_ss(s + 2, _mm_movehl_ps(x, x));
    _mm_store_ss(s + n, _mm_shuffle_ps(x, x, 3));
    _mm_storel_pi(reinterpret_cast<__m64 *>(s + n + 1), y);
    _mm_storeh_pi(reinterpret_cast<__m64 *>(s + 2 * n), y);
    if constexpr (G == 3) {
        s[2 * n + 2] = hsum1(a22);
    } else {
        const __m128 z = hsum4(a22, a30, a31, a32); // s22 s30 s31 s32
        _mm_store_ss(s + 2 * n + 2, z);
        _mm_store_ss(s + 3 * n, _mm_shuffle_ps(z, z, 1));
        _mm_storeh_pi(reinterpret_cast<__m64 *>(s + 3 * n + 1), z);
    }
}

// s[i * n + j] for G query rows (q) and the nk <= K keys from rows.
template <int G, int K>
void scores_block(int64_t d, const char * rows, size_t ldk, int nk, const float * q, float * s, int64_t n) {
    if constexpr (K == 3 && (G == 3 || G == 4)) {
        if (nk == 3) {
            scores_block_x3<G>(d, rows, ldk, q, s, n);
            return;
        }
    }
    const char * r[K];
    for (int j = 0; j < K; ++j) r[j] = rows + (j < nk ? j : 0) * (int64_t) ldk; // past nk: row 0 again, dropped
    for (int j = 0; j < K; ++j) prefetch_slice(r[j] + kAheadRows * (int64_t) ldk, d * 2);
    __m256 acc[G][4];
    for (int i = 0; i < G; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = _mm256_setzero_ps(); // lanes K..3 stay 0
    for (int64_t c = 0; c < d; c += 8) {
        __m256 kv[K];
        for (int j = 0; j < K; ++j) kv[j] = widen8(r[j], c);
        for (int i = 0; i < G; ++i) {
            const __m256 qv = _mm256_loadu_ps(q + i * d + c);
            for (int j = 0; j < K; ++j) acc[i][j] = _mm256_fmadd_ps(kv[j], qv, acc[i][j]);
        }
    }
    for (int i = 0; i < G; ++i) {
        const __m128 sums = hsum8x4(acc[i]);
        float * si = s + i * n;
        if (nk == 4) {
            _mm_storeu_ps(si, sums);
        } else if (nk >= 2) { // 2 or 3: no detour through memory
            _mm_storel_pi(reinterpret_cast<__m64 *>(si), sums);
            if (nk == 3) _mm_store_ss(si + 2, _mm_movehl_ps(sums, sums));
        } else {
            _mm_store_ss(si, sums);
        }
    }
}

// nh heads' scores of G query rows each, key block by key block (nh 1: one head).
template <int G, int K = kKeys<G>>
void scores_rows_heads(int64_t d, int64_t n, const char * rows, size_t ldk, size_t hs, int64_t nh, const float * q,
                       float * s) {
    scores_blocks<K>(n, nh, [&](int64_t h, int64_t j0, int nk) {
        scores_block<G, K>(d, rows + h * (int64_t) hs + j0 * (int64_t) ldk, ldk, nk, q + h * G * d, s + h * G * n + j0,
                           n);
    });
}

template <int G, int K = kKeys<G>>
void scores_rows(int64_t d, int64_t n, const char * rows, size_t ldk, const float * q, float * s) {
    scores_rows_heads<G, K>(d, n, rows, ldk, 0, 1, q, s);
}

void scores(int64_t d, int64_t n, const void * k, size_t ldk, const float * q, int64_t g, float * s) {
    if (d % 8 != 0) {
        ref::attn_f16_scores(d, n, k, ldk, q, g, s);
        return;
    }
    const char * rows = static_cast<const char *>(k);
    // up to 4 query rows per pass over the keys: 4 while a multiple of 4 is left, else 3
    for (int64_t i0 = 0; i0 < g;) {
        const float * qi = q + i0 * d;
        float * si = s + i0 * n;
        const int64_t rows_left = g - i0;
        const int64_t take = rows_left % 4 == 0 ? 4 : std::min<int64_t>(3, rows_left);
        switch (take) {
            case 1: scores_rows<1>(d, n, rows, ldk, qi, si); break;
            case 2: scores_rows<2>(d, n, rows, ldk, qi, si); break;
            case 3: scores_rows<3>(d, n, rows, ldk, qi, si); break;
            default:
                if (d >= kLongRow) {
                    scores_rows<4, kKeysG4Long>(d, n, rows, ldk, qi, si);
                } else {
                    scores_rows<4, kKeysG4Short>(d, n, rows, ldk, qi, si);
                }
                break;
        }
        i0 += take;
    }
}

void scores_heads(int64_t d, int64_t n, const void * k, size_t ldk, size_t hs, int64_t nh, const float * q, int64_t g,
                  float * s) {
    const char * rows = static_cast<const char *>(k);
    if (d % 8 != 0 || g > 4 || (g == 4 && d >= kLongRow)) { // one head at a time
        for (int64_t h = 0; h < nh; ++h) scores(d, n, rows + h * (int64_t) hs, ldk, q + h * g * d, g, s + h * g * n);
        return;
    }
    switch (g) {
        case 1: scores_rows_heads<1>(d, n, rows, ldk, hs, nh, q, s); break;
        case 2: scores_rows_heads<2>(d, n, rows, ldk, hs, nh, q, s); break;
        case 3: scores_rows_heads<3>(d, n, rows, ldk, hs, nh, q, s); break;
        default: scores_rows_heads<4, kKeysG4Short>(d, n, rows, ldk, hs, nh, q, s); break;
    }
}

// V rows per accumulate block: 32 rows of up to 512 bytes stay in L1 while
// the column passes go over them.
constexpr int64_t kBlockRows = 32;

// acc rows i < G (d floats apart), columns c..c+15, += p[i * ldp + j] * V
// row j for j < nb: 2G accumulators, each V row's 16 values widened once for
// all G rows. The accumulators are named variables, not an array: GCC 12 kept
// an array's in registers but also stored all of them to the stack on every
// row (6 stores a row at G 3, which bounded the loop). No branch in the
// loop: with one, GCC spilled them as well; the row's line ahead is fetched
// by the pass that starts it (kFetch: even 16-column passes), so each line
// once.
struct Cols16 {
    __m256 lo, hi;
};

template <int G, bool kFetch>
void accumulate_cols(int64_t d, int64_t nb, const char * rows, size_t ldv, const float * p, int64_t ldp, float * acc,
                     int64_t c) {
    const auto load = [&](int i) {
        return Cols16{_mm256_loadu_ps(acc + i * d + c), _mm256_loadu_ps(acc + i * d + c + 8)};
    };
    const auto store = [&](int i, const Cols16 & a) {
        _mm256_storeu_ps(acc + i * d + c, a.lo);
        _mm256_storeu_ps(acc + i * d + c + 8, a.hi);
    };
    const auto add = [](Cols16 & a, __m256 w, __m256 v0, __m256 v1) {
        a.lo = _mm256_fmadd_ps(w, v0, a.lo);
        a.hi = _mm256_fmadd_ps(w, v1, a.hi);
    };
    Cols16 a0 = load(0), a1{}, a2{}, a3{};
    if constexpr (G > 1) a1 = load(1);
    if constexpr (G > 2) a2 = load(2);
    if constexpr (G > 3) a3 = load(3);
    const int64_t ahead = kAheadRows * (int64_t) ldv + c * 2;
    for (int64_t j = 0; j < nb; ++j) {
        const char * row = rows + j * (int64_t) ldv;
        if constexpr (kFetch) prefetch_stream(row + ahead);
        const __m256 v0 = widen8(row, c), v1 = widen8(row, c + 8);
        add(a0, _mm256_broadcast_ss(p + j), v0, v1);
        if constexpr (G > 1) add(a1, _mm256_broadcast_ss(p + ldp + j), v0, v1);
        if constexpr (G > 2) add(a2, _mm256_broadcast_ss(p + 2 * ldp + j), v0, v1);
        if constexpr (G > 3) add(a3, _mm256_broadcast_ss(p + 3 * ldp + j), v0, v1);
    }
    store(0, a0);
    if constexpr (G > 1) store(1, a1);
    if constexpr (G > 2) store(2, a2);
    if constexpr (G > 3) store(3, a3);
}

// acc rows i < G (G <= 3), columns c..c+31, += p[i * ldp + j] * V row j:
// 4G accumulators. At 16 columns the 2G chains of G <= 3 wait on the FMA
// latency (4 cycles a row for 2G FMAs); 32 columns give the FMA pipes 4G
// independent ones. A V row is widened 16 values at a time and each half's
// weights broadcast again (a load, no ALU), so 4G + 3 registers hold it all.
struct Cols32 {
    __m256 v0, v1, v2, v3;
};

template <int G>
void accumulate_cols32(int64_t d, int64_t nb, const char * rows, size_t ldv, const float * p, int64_t ldp, float * acc,
                       int64_t c) {
    static_assert(G >= 1 && G <= 3);
    const auto load = [&](int i) {
        const float * a = acc + i * d + c;
        return Cols32{_mm256_loadu_ps(a), _mm256_loadu_ps(a + 8), _mm256_loadu_ps(a + 16), _mm256_loadu_ps(a + 24)};
    };
    const auto store = [&](int i, const Cols32 & a) {
        float * o = acc + i * d + c;
        _mm256_storeu_ps(o, a.v0);
        _mm256_storeu_ps(o + 8, a.v1);
        _mm256_storeu_ps(o + 16, a.v2);
        _mm256_storeu_ps(o + 24, a.v3);
    };
    Cols32 a0 = load(0), a1{}, a2{};
    if constexpr (G > 1) a1 = load(1);
    if constexpr (G > 2) a2 = load(2);
    const int64_t ahead = kAheadRows * (int64_t) ldv + c * 2;
    for (int64_t j = 0; j < nb; ++j) {
        const char * row = rows + j * (int64_t) ldv;
        prefetch_stream(row + ahead);
        const float * pj = p + j;
        // one half row (16 columns) into accumulator members lo, hi of every query row
        const auto half = [&](const float * w, __m256 v0, __m256 v1, __m256 Cols32::*lo, __m256 Cols32::*hi) {
            __m256 b = _mm256_broadcast_ss(w);
            a0.*lo = _mm256_fmadd_ps(b, v0, a0.*lo);
            a0.*hi = _mm256_fmadd_ps(b, v1, a0.*hi);
            if constexpr (G > 1) {
                b = _mm256_broadcast_ss(w + ldp);
                a1.*lo = _mm256_fmadd_ps(b, v0, a1.*lo);
                a1.*hi = _mm256_fmadd_ps(b, v1, a1.*hi);
            }
            if constexpr (G > 2) {
                b = _mm256_broadcast_ss(w + 2 * ldp);
                a2.*lo = _mm256_fmadd_ps(b, v0, a2.*lo);
                a2.*hi = _mm256_fmadd_ps(b, v1, a2.*hi);
            }
        };
        half(pj, widen8(row, c), widen8(row, c + 8), &Cols32::v0, &Cols32::v1);
        // the same weights, loaded again: GCC would keep G broadcasts live
        // across the halves and spill an accumulator for them
        __asm__("" : "+r"(pj));
        half(pj, widen8(row, c + 16), widen8(row, c + 24), &Cols32::v2, &Cols32::v3);
    }
    store(0, a0);
    if constexpr (G > 1) store(1, a1);
    if constexpr (G > 2) store(2, a2);
}

// Columns per accumulate pass: 32 for G <= 3 where d allows, else 16.
template <int G> constexpr bool kWideCols = G <= 3;

template <int G> int64_t cols_per_pass(int64_t d) { return kWideCols<G> && d % 32 == 0 ? 32 : 16; }

template <int G>
void accumulate_pass(int64_t d, int64_t nb, const char * rows, size_t ldv, const float * p, int64_t ldp, float * acc,
                     int64_t c, int64_t width) {
    if constexpr (kWideCols<G>) {
        if (width == 32) {
            accumulate_cols32<G>(d, nb, rows, ldv, p, ldp, acc, c);
            return;
        }
    }
    if (c % 32 == 0) {
        accumulate_cols<G, true>(d, nb, rows, ldv, p, ldp, acc, c);
    } else {
        accumulate_cols<G, false>(d, nb, rows, ldv, p, ldp, acc, c);
    }
}

// nh heads' accumulators, block by block of V rows (nh 1: one head).
template <int G>
void accumulate_rows_heads(int64_t d, int64_t n, const char * rows, size_t ldv, size_t hs, int64_t nh, const float * p,
                           float * acc) {
    const int64_t width = cols_per_pass<G>(d);
    accumulate_blocks(d, n, nh, width, kBlockRows, [&](int64_t h, int64_t j0, int64_t nb, int64_t c) {
        accumulate_pass<G>(d, nb, rows + h * (int64_t) hs + j0 * (int64_t) ldv, ldv, p + h * G * n + j0, n,
                           acc + h * G * d, c, width);
    });
}

template <int G>
void accumulate_rows(int64_t d, int64_t n, const char * rows, size_t ldv, const float * p, float * acc) {
    accumulate_rows_heads<G>(d, n, rows, ldv, 0, 1, p, acc);
}

void accumulate(int64_t d, int64_t n, const void * v, size_t ldv, const float * p, int64_t g, float * acc) {
    if (d % 16 != 0) {
        ref::attn_f16_accumulate(d, n, v, ldv, p, g, acc);
        return;
    }
    const char * rows = static_cast<const char *>(v);
    for (int64_t i0 = 0; i0 < g; i0 += 4) {
        const float * pi = p + i0 * n;
        float * ai = acc + i0 * d;
        switch (std::min<int64_t>(4, g - i0)) {
            case 1: accumulate_rows<1>(d, n, rows, ldv, pi, ai); break;
            case 2: accumulate_rows<2>(d, n, rows, ldv, pi, ai); break;
            case 3: accumulate_rows<3>(d, n, rows, ldv, pi, ai); break;
            default: accumulate_rows<4>(d, n, rows, ldv, pi, ai); break;
        }
    }
}

void accumulate_heads(int64_t d, int64_t n, const void * v, size_t ldv, size_t hs, int64_t nh, const float * p,
                      int64_t g, float * acc) {
    const char * rows = static_cast<const char *>(v);
    if (d % 16 != 0 || g > 4) { // one head at a time
        for (int64_t h = 0; h < nh; ++h)
            accumulate(d, n, rows + h * (int64_t) hs, ldv, p + h * g * n, g, acc + h * g * d);
        return;
    }
    switch (g) {
        case 1: accumulate_rows_heads<1>(d, n, rows, ldv, hs, nh, p, acc); break;
        case 2: accumulate_rows_heads<2>(d, n, rows, ldv, hs, nh, p, acc); break;
        case 3: accumulate_rows_heads<3>(d, n, rows, ldv, hs, nh, p, acc); break;
        default: accumulate_rows_heads<4>(d, n, rows, ldv, hs, nh, p, acc); break;
    }
}

} // namespace

void fill_avx2_attn(KernelSet & k) {
    k.attn_f16.scores = scores;
    k.attn_f16.accumulate = accumulate;
    k.attn_f16.scores_heads = scores_heads;
    k.attn_f16.accumulate_heads = accumulate_heads;
}

} // namespace lmggml::cpu::arch::x86

#endif

// AVX2 row dots in ggml's formats: the 32-value block types (qdot_impl.h
// with maddubs), the K-quants q2_K .. q6_K, and F32 / F16.
// Twins: lm_cpu_q::vec_dot_* and ref::vec_dot_f32 / f16.
#if defined(__x86_64__) || defined(__i386__)

#include "qdot_impl.h"
#include "x86.h"

namespace lmggml::cpu::arch::x86 {
namespace {

struct Maddubs {
    static __m256i dot(__m256i u, __m256i s) {
        return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
    }
    // pair sums stay within int16: levels are at most 31, offsets at most 16
    static __m256i dot_offset(__m256i u, __m256i s, __m256i o) {
        const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(u, s), _mm256_maddubs_epi16(o, s));
        return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
    }
};

using L = Legacy<Maddubs>;

// ---------------------------------------------------------------- K-quants
// 6-bit scale and min of sub-block j (0..7) of a q4_K / q5_K block
static inline void scale_min_k4(const uint8_t * q, int j, int * sc, int * m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// q4_K and q5_K: per pair of 32-value sub-blocks (low / high nibbles of 32
// bytes) the products are scaled in int16 -> int32 by madd with the scale.
template <bool kFive, typename Block> float dot_k45(int n, const Block * x, const lm_block_q8_K * y) {
    const __m256i nib = _mm256_set1_epi8(0x0F);
    float sum = 0.0f;
    for (int i = 0; i < n / LM_QK_K; ++i) {
        int sc[8], mn[8];
        for (int j = 0; j < 8; ++j) scale_min_k4(x[i].scales, j, &sc[j], &mn[j]);
        int summs = 0;
        for (int j = 0; j < 8; ++j) summs += mn[j] * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);

        __m256i acc = _mm256_setzero_si256();
        const int8_t * q8 = y[i].qs;
        __m256i hb = _mm256_setzero_si256();
        if constexpr (kFive) hb = _mm256_loadu_si256((const __m256i *) x[i].qh);
        for (int j = 0; j < 4; ++j) {
            const __m256i q = _mm256_loadu_si256((const __m256i *) (x[i].qs + 32 * j));
            __m256i lo = _mm256_and_si256(q, nib);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), nib);
            if constexpr (kFive) {
                // 5th bit of value 64j + l is bit 2j of qh[l], of 64j + 32 + l bit 2j + 1
                const __m256i one = _mm256_set1_epi8(1);
                lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2 * j), one), 4));
                hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2 * j + 1), one), 4));
            }
            const __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *) (q8 + 64 * j)));
            const __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *) (q8 + 64 * j + 32)));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(plo, _mm256_set1_epi16((short) sc[2 * j])));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(phi, _mm256_set1_epi16((short) sc[2 * j + 1])));
        }
        const float dall = y[i].d * from_f16(x[i].d);
        const float dmin = y[i].d * from_f16(x[i].dmin);
        sum += dall * (float) hsum8_i32(acc) - dmin * (float) summs;
    }
    return sum;
}

void vec_dot_q4_K(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    *s = dot_k45<false>(n, static_cast<const lm_block_q4_K *>(vx), static_cast<const lm_block_q8_K *>(vy));
}

void vec_dot_q5_K(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    *s = dot_k45<true>(n, static_cast<const lm_block_q5_K *>(vx), static_cast<const lm_block_q8_K *>(vy));
}

// q6_K: levels 0..63 (offset 32, taken out through the q8_K group sums);
// each 32-value product covers two 16-value groups with their own scales.
void vec_dot_q6_K(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    const auto * x = static_cast<const lm_block_q6_K *>(vx);
    const auto * y = static_cast<const lm_block_q8_K *>(vy);
    const __m256i nib = _mm256_set1_epi8(0x0F);
    const __m256i two = _mm256_set1_epi8(3);
    float sum = 0.0f;
    for (int i = 0; i < n / LM_QK_K; ++i) {
        int offs = 0;
        for (int g = 0; g < 16; ++g) offs += x[i].scales[g] * y[i].bsums[g];
        __m256i acc = _mm256_setzero_si256();
        for (int c = 0; c < 2; ++c) {
            const __m256i l0 = _mm256_loadu_si256((const __m256i *) (x[i].ql + 64 * c));
            const __m256i l1 = _mm256_loadu_si256((const __m256i *) (x[i].ql + 64 * c + 32));
            const __m256i h = _mm256_loadu_si256((const __m256i *) (x[i].qh + 32 * c));
            const __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(l0, nib), _mm256_slli_epi16(_mm256_and_si256(h, two), 4)),
                _mm256_or_si256(_mm256_and_si256(l1, nib),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2), two), 4)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), nib),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 4), two), 4)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), nib),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 6), two), 4)),
            };
            for (int u = 0; u < 4; ++u) {
                const int g0 = 8 * c + 2 * u; // the two 16-value groups of values 128c + 32u ..
                const __m256i p =
                    _mm256_maddubs_epi16(q[u], _mm256_loadu_si256((const __m256i *) (y[i].qs + 128 * c + 32 * u)));
                const __m256i sc =
                    _mm256_set_m128i(_mm_set1_epi16(x[i].scales[g0 + 1]), _mm_set1_epi16(x[i].scales[g0]));
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, sc));
            }
        }
        sum += y[i].d * from_f16(x[i].d) * (float) (hsum8_i32(acc) - 32 * offs);
    }
    *s = sum;
}

// q2_K and q3_K: value 128c + 32s + l has its 2 low bits at 2s of
// qs[32c + l] (q3_K: the third bit at 4c + s of hmask[l], the value 4 lower
// where it is clear); 16-value groups with their own scale. Levels go to
// maddubs unsigned (q3_K: + 4, 0..7, taken out as 4 * the q8_K group sums;
// q2_K: 0..3 and its minimum m * group sums, as the twin).
template <bool kQ3, typename Block> float dot_k23(int n, const Block * x, const lm_block_q8_K * y) {
    const __m256i three = _mm256_set1_epi8(3);
    float sum = 0.0f;
    for (int i = 0; i < n / LM_QK_K; ++i) {
        int sc[16];
        int offs = 0; // q3_K: sum sc * bsums (the + 4); q2_K: sum m * bsums
        for (int g = 0; g < 16; ++g) {
            if constexpr (kQ3) {
                const int lo = g < 8 ? (x[i].scales[g] & 0xF) : (x[i].scales[g - 8] >> 4);
                sc[g] = (lo | (((x[i].scales[8 + g % 4] >> (2 * (g / 4))) & 3) << 4)) - 32;
                offs += sc[g] * y[i].bsums[g];
            } else {
                sc[g] = x[i].scales[g] & 0xF;
                offs += (x[i].scales[g] >> 4) * y[i].bsums[g];
            }
        }
        __m256i hm = _mm256_setzero_si256();
        if constexpr (kQ3) hm = _mm256_loadu_si256((const __m256i *) x[i].hmask);
        __m256i acc = _mm256_setzero_si256();
        for (int c = 0; c < 2; ++c) {
            const __m256i q = _mm256_loadu_si256((const __m256i *) (x[i].qs + 32 * c));
            for (int s = 0; s < 4; ++s) {
                __m256i u = _mm256_and_si256(_mm256_srli_epi16(q, 2 * s), three);
                if constexpr (kQ3) { // + 4 where bit 4c + s of hmask is set: the level + 4
                    const __m256i h = _mm256_and_si256(_mm256_srli_epi16(hm, 4 * c + s), _mm256_set1_epi8(1));
                    u = _mm256_or_si256(u, _mm256_slli_epi16(h, 2));
                }
                const int g0 = 8 * c + 2 * s; // the two 16-value groups of values 128c + 32s ..
                const __m256i p =
                    _mm256_maddubs_epi16(u, _mm256_loadu_si256((const __m256i *) (y[i].qs + 128 * c + 32 * s)));
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set_m128i(_mm_set1_epi16((short) sc[g0 + 1]),
                                                                                  _mm_set1_epi16((short) sc[g0]))));
            }
        }
        if constexpr (kQ3) {
            sum += y[i].d * from_f16(x[i].d) * (float) (hsum8_i32(acc) - 4 * offs);
        } else {
            const float dall = y[i].d * from_f16(x[i].d);
            const float dmin = y[i].d * from_f16(x[i].dmin);
            sum += dall * (float) hsum8_i32(acc) - dmin * (float) offs;
        }
    }
    return sum;
}

void vec_dot_q2_K(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    *s = dot_k23<false>(n, static_cast<const lm_block_q2_K *>(vx), static_cast<const lm_block_q8_K *>(vy));
}

void vec_dot_q3_K(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    *s = dot_k23<true>(n, static_cast<const lm_block_q3_K *>(vx), static_cast<const lm_block_q8_K *>(vy));
}

// ---------------------------------------------------------------- floats
void vec_dot_f32(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    const auto * x = static_cast<const float *>(vx);
    const auto * y = static_cast<const float *>(vy);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        for (int u = 0; u < 4; ++u) {
            acc[u] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8 * u), _mm256_loadu_ps(y + i + 8 * u), acc[u]);
        }
    }
    for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc[0]);
    float tail = 0.0f;
    for (; i < n; ++i) tail += x[i] * y[i];
    *s = hsum8(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]))) + tail;
}

void vec_dot_f16(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    const auto * x = static_cast<const uint16_t *>(vx);
    const auto * y = static_cast<const uint16_t *>(vy);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int i = 0;
    auto ld = [](const uint16_t * p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) p)); };
    for (; i + 32 <= n; i += 32) {
        for (int u = 0; u < 4; ++u) acc[u] = _mm256_fmadd_ps(ld(x + i + 8 * u), ld(y + i + 8 * u), acc[u]);
    }
    for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(ld(x + i), ld(y + i), acc[0]);
    float tail = 0.0f;
    for (; i < n; ++i) tail += from_f16(x[i]) * from_f16(y[i]);
    *s = hsum8(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]))) + tail;
}

} // namespace

void fill_avx2_qdot(KernelSet & k) {
    k.vec_dot[LM_GGML_TYPE_F32] = vec_dot_f32;
    k.vec_dot[LM_GGML_TYPE_F16] = vec_dot_f16;
    k.vec_dot[LM_GGML_TYPE_Q4_0] = L::q4_0;
    k.vec_dot[LM_GGML_TYPE_Q4_1] = L::q4_1;
    k.vec_dot[LM_GGML_TYPE_Q5_0] = L::q5_0;
    k.vec_dot[LM_GGML_TYPE_Q5_1] = L::q5_1;
    k.vec_dot[LM_GGML_TYPE_Q8_0] = L::q8_0;
    k.vec_dot[LM_GGML_TYPE_Q2_K] = vec_dot_q2_K;
    k.vec_dot[LM_GGML_TYPE_Q3_K] = vec_dot_q3_K;
    k.vec_dot[LM_GGML_TYPE_Q4_K] = vec_dot_q4_K;
    k.vec_dot[LM_GGML_TYPE_Q5_K] = vec_dot_q5_K;
    k.vec_dot[LM_GGML_TYPE_Q6_K] = vec_dot_q6_K;
}

} // namespace lmggml::cpu::arch::x86

#endif

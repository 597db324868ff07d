// AVX2 row dots of the grid I-quants with q8_K activations. Per 32 values
// the grid entries are gathered into one vector (4 x 64-bit or 8 x 32-bit),
// the signs come from a 256-entry table of +-1 bytes, maddubs multiplies
// magnitudes by signed activations and madd applies the two 16-value group
// multipliers. The integer sums equal the scalar twins' (lm_cpu_q::
// vec_dot_iq*_q8_K); only the float accumulation may round differently.
#if defined(__x86_64__) || defined(__i386__)

#include "simd_avx2.h"
#include "x86.h"

#include "../../../quant/q_iq.h"
#include "../../../quant/q_iq_grids.h"

#include <cstring>
#include <type_traits>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace lm_quant::iq;

// byte j of kSignBytes.v[s]: 0xFF (-1) where bit j of s is set, else 0x01
struct SignBytes {
    uint64_t v[256];
    constexpr SignBytes() : v{} {
        for (int s = 0; s < 256; ++s) {
            for (int j = 0; j < 8; ++j) v[s] |= (uint64_t) ((s >> j) & 1 ? 0xFF : 0x01) << (8 * j);
        }
    }
};
constexpr SignBytes kSignBytes;

static inline __m256i signs4(unsigned s0, unsigned s1, unsigned s2, unsigned s3) {
    return _mm256_set_epi64x((long long) kSignBytes.v[s3], (long long) kSignBytes.v[s2], (long long) kSignBytes.v[s1],
                             (long long) kSignBytes.v[s0]);
}

static inline __m256i grid4(const uint64_t * g, int i0, int i1, int i2, int i3) {
    return _mm256_set_epi64x((long long) g[i3], (long long) g[i2], (long long) g[i1], (long long) g[i0]);
}

static inline uint32_t load32(const void * p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

// 8 int32 partial sums of mag * sign * q over 32 values; values 0..15 times
// m_lo, 16..31 times m_hi. mag: unsigned magnitudes, sign: +-1 bytes.
static inline __m256i dot32(__m256i mag, __m256i sign, const int8_t * q8, int m_lo, int m_hi) {
    const __m256i q = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *) q8), sign);
    const __m256i p = _mm256_maddubs_epi16(mag, q);
    return _mm256_madd_epi16(p, _mm256_set_m128i(_mm_set1_epi16((short) m_hi), _mm_set1_epi16((short) m_lo)));
}

// ---------------------------------------------------------------- per-block integer sums
static inline int isum_iq2_xxs(const lm_block_iq2_xxs & b, const int8_t * q8) {
    const auto * q = reinterpret_cast<const uint8_t *>(b.qs);
    __m256i acc = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
        const uint32_t idx = load32(q + 8 * ib), aux = load32(q + 8 * ib + 4);
        const __m256i mag = grid4(iq2xxs_grid, idx & 255, (idx >> 8) & 255, (idx >> 16) & 255, idx >> 24);
        const __m256i sgn = signs4(ksigns_iq2xs[aux & 127], ksigns_iq2xs[(aux >> 7) & 127],
                                   ksigns_iq2xs[(aux >> 14) & 127], ksigns_iq2xs[(aux >> 21) & 127]);
        const int m = 2 * (int) (aux >> 28) + 1;
        acc = _mm256_add_epi32(acc, dot32(mag, sgn, q8 + 32 * ib, m, m));
    }
    return hsum8_i32(acc);
}

static inline int isum_iq2_xs(const lm_block_iq2_xs & b, const int8_t * q8) {
    __m256i acc = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
        const uint16_t * v = b.qs + 4 * ib;
        const __m256i mag = grid4(iq2xs_grid, v[0] & 511, v[1] & 511, v[2] & 511, v[3] & 511);
        const __m256i sgn =
            signs4(ksigns_iq2xs[v[0] >> 9], ksigns_iq2xs[v[1] >> 9], ksigns_iq2xs[v[2] >> 9], ksigns_iq2xs[v[3] >> 9]);
        acc = _mm256_add_epi32(acc,
                               dot32(mag, sgn, q8 + 32 * ib, 2 * (b.scales[ib] & 15) + 1, 2 * (b.scales[ib] >> 4) + 1));
    }
    return hsum8_i32(acc);
}

static inline int isum_iq2_s(const lm_block_iq2_s & b, const int8_t * q8) {
    __m256i acc = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
        const uint8_t * qs = b.qs + 4 * ib;
        const int h = b.qh[ib];
        const __m256i mag = grid4(iq2s_grid, qs[0] | ((h << 8) & 0x300), qs[1] | ((h << 6) & 0x300),
                                  qs[2] | ((h << 4) & 0x300), qs[3] | ((h << 2) & 0x300));
        const uint8_t * s = b.qs + LM_QK_K / 8 + 4 * ib;
        acc = _mm256_add_epi32(acc, dot32(mag, signs4(s[0], s[1], s[2], s[3]), q8 + 32 * ib,
                                          2 * (b.scales[ib] & 15) + 1, 2 * (b.scales[ib] >> 4) + 1));
    }
    return hsum8_i32(acc);
}

static inline int isum_iq3_xxs(const lm_block_iq3_xxs & b, const int8_t * q8) {
    __m256i acc = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
        const uint8_t * qs = b.qs + 8 * ib;
        const uint32_t aux = load32(b.qs + LM_QK_K / 4 + 4 * ib);
        const __m256i mag = _mm256_set_epi32(
            (int) iq3xxs_grid[qs[7]], (int) iq3xxs_grid[qs[6]], (int) iq3xxs_grid[qs[5]], (int) iq3xxs_grid[qs[4]],
            (int) iq3xxs_grid[qs[3]], (int) iq3xxs_grid[qs[2]], (int) iq3xxs_grid[qs[1]], (int) iq3xxs_grid[qs[0]]);
        const __m256i sgn = signs4(ksigns_iq2xs[aux & 127], ksigns_iq2xs[(aux >> 7) & 127],
                                   ksigns_iq2xs[(aux >> 14) & 127], ksigns_iq2xs[(aux >> 21) & 127]);
        const int m = 2 * (int) (aux >> 28) + 1;
        acc = _mm256_add_epi32(acc, dot32(mag, sgn, q8 + 32 * ib, m, m));
    }
    return hsum8_i32(acc);
}

static inline int isum_iq3_s(const lm_block_iq3_s & b, const int8_t * q8) {
    __m256i acc = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
        const uint8_t * qs = b.qs + 8 * ib;
        const int h = b.qh[ib];
        int idx[8];
        for (int k = 0; k < 8; ++k) idx[k] = qs[k] | (((h >> k) & 1) << 8);
        const __m256i mag = _mm256_set_epi32((int) iq3s_grid[idx[7]], (int) iq3s_grid[idx[6]], (int) iq3s_grid[idx[5]],
                                             (int) iq3s_grid[idx[4]], (int) iq3s_grid[idx[3]], (int) iq3s_grid[idx[2]],
                                             (int) iq3s_grid[idx[1]], (int) iq3s_grid[idx[0]]);
        const uint8_t * s = b.signs + 4 * ib;
        const int m = 2 * ((b.scales[ib / 2] >> (4 * (ib % 2))) & 15) + 1;
        acc = _mm256_add_epi32(acc, dot32(mag, signs4(s[0], s[1], s[2], s[3]), q8 + 32 * ib, m, m));
    }
    return hsum8_i32(acc);
}

// IQ1: levels w = 8 g + delta sign (never 0), so |w| * (q with w's sign)
static inline __m256i dot32_iq1(__m256i g, __m256i ds, const int8_t * q8, int m_lo, int m_hi) {
    const __m256i w = _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), g), ds);
    return dot32(_mm256_abs_epi8(w), w, q8, m_lo, m_hi);
}

static inline int isum_iq1_s(const lm_block_iq1_s & b, const int8_t * q8) {
    __m256i acc = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
        const int h = b.qh[ib];
        const uint8_t * qs = b.qs + 4 * ib;
        const __m256i g = grid4(iq1s_grid, qs[0] | ((h << 8) & 0x700), qs[1] | ((h << 5) & 0x700),
                                qs[2] | ((h << 2) & 0x700), qs[3] | ((h >> 1) & 0x700));
        const __m256i ds = _mm256_set1_epi8((h & 0x8000) ? -1 : 1);
        const int m = 2 * ((h >> 12) & 7) + 1;
        acc = _mm256_add_epi32(acc, dot32_iq1(g, ds, q8 + 32 * ib, m, m));
    }
    return hsum8_i32(acc);
}

static inline int isum_iq1_m(const lm_block_iq1_m & b, const int8_t * q8, uint16_t * d_bits) {
    uint16_t sc[4];
    for (int i = 0; i < 4; ++i) sc[i] = (uint16_t) (b.scales[2 * i] | (b.scales[2 * i + 1] << 8));
    *d_bits = (uint16_t) ((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000));
    __m256i acc = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
        const uint8_t * qs = b.qs + 4 * ib;
        const int h0 = b.qh[2 * ib], h1 = b.qh[2 * ib + 1];
        const __m256i g = grid4(iq1s_grid, qs[0] | ((h0 << 8) & 0x700), qs[1] | ((h0 << 4) & 0x700),
                                qs[2] | ((h1 << 8) & 0x700), qs[3] | ((h1 << 4) & 0x700));
        const long long p = 0x0101010101010101LL, n = -1LL;
        const __m256i ds =
            _mm256_set_epi64x(h1 & 0x80 ? n : p, h1 & 0x08 ? n : p, h0 & 0x80 ? n : p, h0 & 0x08 ? n : p);
        const int m_lo = 2 * ((sc[ib / 2] >> (6 * (ib % 2))) & 7) + 1;
        const int m_hi = 2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1;
        acc = _mm256_add_epi32(acc, dot32_iq1(g, ds, q8 + 32 * ib, m_lo, m_hi));
    }
    return hsum8_i32(acc);
}

// ---------------------------------------------------------------- rows
// value formula factors (q_iq_unpack.h's kScale)
template <typename Block, int (*Isum)(const Block &, const int8_t *)>
void vec_dot(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    const auto * x = static_cast<const Block *>(vx);
    const auto * y = static_cast<const lm_block_q8_K *>(vy);
    constexpr float kF = std::is_same_v<Block, lm_block_iq3_xxs> ? 0.25f
                         : std::is_same_v<Block, lm_block_iq3_s> ? 1.0f
                                                                 : 0.125f;
    float sum = 0.0f;
    for (int i = 0; i < n / LM_QK_K; ++i) {
        const int isum = Isum(x[i], y[i].qs);
        sum += from_f16(x[i].d) * kF * y[i].d * (float) isum;
    }
    *s = sum;
}

void vec_dot_iq1_m(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    const auto * x = static_cast<const lm_block_iq1_m *>(vx);
    const auto * y = static_cast<const lm_block_q8_K *>(vy);
    float sum = 0.0f;
    for (int i = 0; i < n / LM_QK_K; ++i) {
        uint16_t d;
        const int isum = isum_iq1_m(x[i], y[i].qs, &d);
        sum += from_f16(d) * 0.125f * y[i].d * (float) isum;
    }
    *s = sum;
}

} // namespace

void fill_avx2_iqdot(KernelSet & k) {
    k.vec_dot[LM_GGML_TYPE_IQ2_XXS] = vec_dot<lm_block_iq2_xxs, isum_iq2_xxs>;
    k.vec_dot[LM_GGML_TYPE_IQ2_XS] = vec_dot<lm_block_iq2_xs, isum_iq2_xs>;
    k.vec_dot[LM_GGML_TYPE_IQ2_S] = vec_dot<lm_block_iq2_s, isum_iq2_s>;
    k.vec_dot[LM_GGML_TYPE_IQ3_XXS] = vec_dot<lm_block_iq3_xxs, isum_iq3_xxs>;
    k.vec_dot[LM_GGML_TYPE_IQ3_S] = vec_dot<lm_block_iq3_s, isum_iq3_s>;
    k.vec_dot[LM_GGML_TYPE_IQ1_S] = vec_dot<lm_block_iq1_s, isum_iq1_s>;
    k.vec_dot[LM_GGML_TYPE_IQ1_M] = vec_dot_iq1_m;
}

} // namespace lmggml::cpu::arch::x86

#endif

// AVX-512 row dots of F32 and F16 rows (F16 widened with vcvtph2ps, summed
// in F32). Tails use masked loads. Twins: ref::vec_dot_f32 / f16.
#if defined(__x86_64__) || defined(__i386__)

#include "x86.h"

#include <immintrin.h>

namespace lmggml::cpu::arch::x86 {
namespace {

static inline __mmask16 tail_mask(int r) { return (__mmask16) ((1u << r) - 1u); }

void vec_dot_f32(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    const auto * x = static_cast<const float *>(vx);
    const auto * y = static_cast<const float *>(vy);
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        for (int u = 0; u < 4; ++u) {
            acc[u] = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16 * u), _mm512_loadu_ps(y + i + 16 * u), acc[u]);
        }
    }
    for (; i + 16 <= n; i += 16) acc[0] = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), acc[0]);
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        acc[1] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i), acc[1]);
    }
    *s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

static inline __m512 load_f16(const uint16_t * p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) p)); }
static inline __m512 load_f16(const uint16_t * p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}

void vec_dot_f16(int n, float * s, size_t, const void * vx, size_t, const void * vy, size_t, int) {
    const auto * x = static_cast<const uint16_t *>(vx);
    const auto * y = static_cast<const uint16_t *>(vy);
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        for (int u = 0; u < 4; ++u)
            acc[u] = _mm512_fmadd_ps(load_f16(x + i + 16 * u), load_f16(y + i + 16 * u), acc[u]);
    }
    for (; i + 16 <= n; i += 16) acc[0] = _mm512_fmadd_ps(load_f16(x + i), load_f16(y + i), acc[0]);
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        acc[1] = _mm512_fmadd_ps(load_f16(x + i, m), load_f16(y + i, m), acc[1]);
    }
    *s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

} // namespace

void fill_avx512_fdot(KernelSet & k) {
    k.vec_dot[LM_GGML_TYPE_F32] = vec_dot_f32;
    k.vec_dot[LM_GGML_TYPE_F16] = vec_dot_f16;
}

} // namespace lmggml::cpu::arch::x86

#endif

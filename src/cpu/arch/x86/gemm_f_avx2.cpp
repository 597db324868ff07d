// AVX2 products for F32 and F16 weights (layouts.h): Gemm (gemm_f_impl.h
// on 8-float vectors) and RowDot on the same activation rows (generation,
// and attention's K and V products with a few query rows).
// 16 ymm registers: a tile takes 12 accumulators (one 16-row group x 6
// columns, or 8 rows x 12), the panel vectors and a broadcast. The panel is
// walked in chunks of 1024 steps of k (128 KiB) that stay in L2: a step
// reads only 64 bytes of panel per 12 FMAs, which L2 easily feeds, and long
// chunks save the per-tile setup (on Zen 3, L1-sized chunks of 192 steps
// measured ~5% slower). Twins: ref::gemm_pack_* / ref::gemm_compute_f.
#if defined(__x86_64__) || defined(__i386__)

#include "gemm_f_impl.h"
#include "x86.h"

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

// ---------------------------------------------------------------- RowDot
// Weight rows straight from memory, 4 at a time so each activation load
// serves 4 FMAs; the 4 sums are reduced together.
template <bool kHalf> void dot_rows(int64_t k, int64_t m, const void * w, size_t ldw, const void * vact, float * dst) {
    const auto * x = static_cast<const float *>(vact);
    const char * rows = static_cast<const char *>(w);
    const int64_t k8 = k & ~(int64_t) 7;
    alignas(32) float tail[8] = {};
    std::memcpy(tail, x + k8, (size_t) (k - k8) * sizeof(float)); // zeros past k
    const __m256 xt = _mm256_load_ps(tail);
    int64_t r = 0;
    for (; r + 4 <= m; r += 4) {
        const char * wr[4] = {rows + r * ldw, rows + (r + 1) * ldw, rows + (r + 2) * ldw, rows + (r + 3) * ldw};
        __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
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
        __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int64_t kk = 0; kk < k8; kk += 8)
            acc[0] = _mm256_fmadd_ps(load8<kHalf>(row, kk), _mm256_loadu_ps(x + kk), acc[0]);
        if (k8 < k) acc[0] = _mm256_fmadd_ps(load_part<kHalf>(row, k8, k - k8), xt, acc[0]);
        dst[r] = _mm_cvtss_f32(hsum8x4(acc));
    }
}

const RowDot kRowDotF32 = {gemm_f_act_size, pack_act_f32, dot_rows<false>};
const RowDot kRowDotF16 = {gemm_f_act_size, pack_act_f16<F32x8>, dot_rows<true>};

constexpr Gemm kF32 = gemm_f32<F32x8, 1024, 12>();
constexpr Gemm kF16 = gemm_f16<F32x8, 1024, 12>();

} // namespace

void fill_avx2_gemm_f(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_F32] = &kF32;
    k.gemm[LM_GGML_TYPE_F16] = &kF16;
    k.rowdot[LM_GGML_TYPE_F32] = &kRowDotF32;
    k.rowdot[LM_GGML_TYPE_F16] = &kRowDotF16;
}

} // namespace lmggml::cpu::arch::x86

#endif

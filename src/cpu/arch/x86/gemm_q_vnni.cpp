// AVX-512 VNNI Gemm for the 32-value block types (layouts.h).
//
// Weights: each panel of 32 rows is repacked per block into 8 vectors whose
// lane r holds 4 unsigned levels of row r, plus the rows' scales (and
// minimums) as F32. Activations: the levels in order plus per-block d, s and
// the offset correction c. The microkernel (gemm_q_kernel.h) keeps 2 x 16
// rows x 6 columns of int32 sums: per 4 levels of a column, one broadcast
// feeds one vpdpbusd per 16 rows; per block the sums are corrected,
// converted and scaled into F32 accumulators (the scales differ per block
// and per row, so this is once per block). Twins: ref::gemm_pack_act_*,
// gemm_pack_panel_*, gemm_compute_q.
#if defined(__x86_64__) || defined(__i386__)

#include "gemm_q_kernel.h"
#include "qdot_impl.h"
#include "x86.h"

#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

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

const Gemm kQ4_0 = {kPanelRows, gemm_q_act_size, pack_act<8, false>, gemm_q_panel_size, pack_panel_q<32, DecodeQ4_0>, compute_q<32, false, true>};
const Gemm kQ4_1 = {kPanelRows, gemm_q_act_size, pack_act<0, true>, gemm_q_panel_size, pack_panel_q<32, DecodeQ4_1>, compute_q<32, true, false>};
const Gemm kQ5_0 = {kPanelRows, gemm_q_act_size, pack_act<16, false>, gemm_q_panel_size, pack_panel_q<32, DecodeQ5_0>, compute_q<32, false, true>};
const Gemm kQ5_1 = {kPanelRows, gemm_q_act_size, pack_act<0, true>, gemm_q_panel_size, pack_panel_q<32, DecodeQ5_1>, compute_q<32, true, false>};
const Gemm kQ8_0 = {kPanelRows, gemm_q_act_size, pack_act<128, false>, gemm_q_panel_size, pack_panel_q<32, DecodeQ8_0>, compute_q<32, false, true>};

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

// AVX-512 VNNI Gemm for the K-quants Q4_K, Q5_K, IQ4_XS (32-value
// sub-blocks; IQ4_XS's levels + 128, taken out by the activation's c) and
// Q2_K, Q3_K, Q6_K (16-value groups, levels + 32), on the int8 microkernel of gemm_q_kernel.h: each
// sub-block becomes a block with its own F32 scale (d * scale) and minimum
// (-dmin * min); activations get one int8 scale per sub-block (layouts.h).
// Activation packers and decoders: gemm_k_pack.h, shared with the AVX2
// level. Twins: ref::gemm_*_q4_K / q5_K / q6_K / iq4_xs.
#if defined(__x86_64__) || defined(__i386__)

#include "gemm_k_pack.h"
#include "gemm_q_kernel.h"
#include "x86.h"

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

const Gemm kQ4_K = {kPanelRows,
                    gemm_q_act_size,
                    pack_act_k<32>,
                    gemm_q_panel_size,
                    pack_panel_q<32, DecodeQ4_K>,
                    compute_q<32, true, false>};
const Gemm kQ5_K = {kPanelRows,
                    gemm_q_act_size,
                    pack_act_k<32>,
                    gemm_q_panel_size,
                    pack_panel_q<32, DecodeQ5_K>,
                    compute_q<32, true, false>};
const Gemm kQ6_K = {kPanelRows,
                    gemm_q16_act_size,
                    pack_act_k<16>,
                    gemm_q16_panel_size,
                    pack_panel_q<16, DecodeQ6_K>,
                    compute_q<16, false, true>};
const Gemm kQ2_K = {kPanelRows,
                    gemm_q16_act_size,
                    pack_act_k<16, 0, true>,
                    gemm_q16_panel_size,
                    pack_panel_q<16, DecodeQ2_K>,
                    compute_q<16, true, true>};
const Gemm kQ3_K = {kPanelRows,
                    gemm_q16_act_size,
                    pack_act_k<16>,
                    gemm_q16_panel_size,
                    pack_panel_q<16, DecodeQ3_K>,
                    compute_q<16, false, true>};
const Gemm kIQ4_XS = {kPanelRows,
                      gemm_q_act_size,
                      pack_act_k<32, 128>,
                      gemm_q_panel_size,
                      pack_panel_q<32, DecodeIQ4_XS>,
                      compute_q<32, false, true>};

} // namespace

void fill_vnni_gemm_k(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_Q2_K] = &kQ2_K;
    k.gemm[LM_GGML_TYPE_Q3_K] = &kQ3_K;
    k.gemm[LM_GGML_TYPE_Q4_K] = &kQ4_K;
    k.gemm[LM_GGML_TYPE_Q5_K] = &kQ5_K;
    k.gemm[LM_GGML_TYPE_Q6_K] = &kQ6_K;
    k.gemm[LM_GGML_TYPE_IQ4_XS] = &kIQ4_XS;
}

} // namespace lmggml::cpu::arch::x86

#endif

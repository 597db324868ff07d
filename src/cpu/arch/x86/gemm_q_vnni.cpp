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
#include "gemm_q_pack.h"
#include "qdot_impl.h"
#include "x86.h"

#include <cstring>

namespace lmggml::cpu::arch::x86 {
namespace {

using namespace layout;

const Gemm kQ4_0 = {kPanelRows,
                    gemm_q_act_size,
                    gemm_pack_act<8, false>,
                    gemm_q_panel_size,
                    pack_panel_q<32, DecodeQ4_0>,
                    compute_q<32, false, true>};
const Gemm kQ4_1 = {kPanelRows,
                    gemm_q_act_size,
                    gemm_pack_act<0, true>,
                    gemm_q_panel_size,
                    pack_panel_q<32, DecodeQ4_1>,
                    compute_q<32, true, false>};
const Gemm kQ5_0 = {kPanelRows,
                    gemm_q_act_size,
                    gemm_pack_act<16, false>,
                    gemm_q_panel_size,
                    pack_panel_q<32, DecodeQ5_0>,
                    compute_q<32, false, true>};
const Gemm kQ5_1 = {kPanelRows,
                    gemm_q_act_size,
                    gemm_pack_act<0, true>,
                    gemm_q_panel_size,
                    pack_panel_q<32, DecodeQ5_1>,
                    compute_q<32, true, false>};
const Gemm kQ8_0 = {kPanelRows,
                    gemm_q_act_size,
                    gemm_pack_act<128, false>,
                    gemm_q_panel_size,
                    pack_panel_q<32, DecodeQ8_0>,
                    compute_q<32, false, true>};
const Gemm kIQ4_NL = {kPanelRows,
                      gemm_q_act_size,
                      gemm_pack_act<128, false>,
                      gemm_q_panel_size,
                      pack_panel_q<32, DecodeIQ4_NL>,
                      compute_q<32, false, true>};

} // namespace

void fill_vnni_gemm_q(KernelSet & k) {
    k.gemm[LM_GGML_TYPE_Q4_0] = &kQ4_0;
    k.gemm[LM_GGML_TYPE_Q4_1] = &kQ4_1;
    k.gemm[LM_GGML_TYPE_Q5_0] = &kQ5_0;
    k.gemm[LM_GGML_TYPE_Q5_1] = &kQ5_1;
    k.gemm[LM_GGML_TYPE_Q8_0] = &kQ8_0;
    k.gemm[LM_GGML_TYPE_IQ4_NL] = &kIQ4_NL;
}

} // namespace lmggml::cpu::arch::x86

#endif

#pragma once
// Fill functions of the x86 kernel files, one per file, named after the
// level (dispatch.cpp calls them in order: avx2, avx512, vnni). Each is compiled with
// its level's flags (flags.cmake) and must only be called on a CPU that has
// that level: dispatch.cpp checks before it calls.

#include "../kernels.h"

namespace lmggml::cpu::arch::x86 {

void fill_avx2_act(KernelSet & k);
void fill_avx2_attn(KernelSet & k);
void fill_avx2_gemm_f(KernelSet & k);
void fill_avx2_math(KernelSet & k);
void fill_avx2_qdot(KernelSet & k);
void fill_avx2_qdot_iq4(KernelSet & k);
void fill_avx2_rowdot(KernelSet & k);
void fill_avx2_rowdot_q5(KernelSet & k);
void fill_avx2_rowdot_k(KernelSet & k);
void fill_avx2_rowdot_x8(KernelSet & k); // also the x8 panel packers, used by every higher level
void fill_avx2_gemm_q(KernelSet & k);
void fill_avx2_iqdot(KernelSet & k);
void fill_avx512_fdot(KernelSet & k);
void fill_avx512_gemm_f(KernelSet & k);
void fill_avx512_math(KernelSet & k);
void fill_avx512_attn(KernelSet & k);
void fill_vnni_qdot(KernelSet & k);
void fill_vnni_qdot_iq4(KernelSet & k);
void fill_vnni_rowdot(KernelSet & k);
void fill_vnni_rowdot_q5(KernelSet & k);
void fill_vnni_rowdot_k(KernelSet & k);
void fill_vnni_gemm_q(KernelSet & k);
void fill_vnni_gemm_k(KernelSet & k);
void fill_vnni_rowdot_x8(KernelSet & k);
// AMX-INT8 (with AVX-512 VNNI): the Gemm of the int8 panel types
void fill_amx_gemm(KernelSet & k);

} // namespace lmggml::cpu::arch::x86

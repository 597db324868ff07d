#pragma once
// Fill functions of the ARM64 kernel files, named after their level
// (dispatch.cpp calls them in order: neon, dotprod, i8mm). Each file is
// compiled with its level's flags (flags.cmake: *_dotprod.cpp gets
// -march=armv8.2-a+dotprod, *_i8mm.cpp that plus +i8mm+fp16fml) and must only be
// called on a CPU that has that level: dispatch.cpp checks the HWCAP bits
// (cpu-features.cpp) first.

#include "../kernels.h"

namespace lmggml::cpu::arch::arm {

void fill_neon_act(KernelSet & k);
void fill_neon_attn(KernelSet & k);
void fill_neon_math(KernelSet & k);
void fill_neon_qdot(KernelSet & k);
void fill_neon_gemm_f(KernelSet & k);
void fill_dotprod_qdot(KernelSet & k);
void fill_dotprod_rowdot_x8(KernelSet & k);
void fill_dotprod_gemm(KernelSet & k);
void fill_i8mm_gemm(KernelSet & k);
void fill_i8mm_fhm(KernelSet & k);

} // namespace lmggml::cpu::arch::arm

#pragma once
// MUL_MAT's vector paths (src/cpu/arch/kernels.h), taken when the CPU's
// kernel set has one for the weight type and the activations are F32:
//   gemm    many activation columns per weight plane (prompt processing):
//           weight panels repacked per thread, register-tiled microkernel
//   rowdot  few columns (generation): packed activation row, one pass over
//           the weight rows per column
//   x8      rowdot on weights repacked 8 rows at a time (a CPU_REPACK
//           tensor, src/cpu/repack/); with many columns such weights take
//           the gemm path, its panels packed from the x8 groups
// Otherwise la_mul_mat.cpp's row-dot loop runs.

#include "la_vec_dot.h"
#include "../arch/kernels.h"

namespace lmggml::cpu::la {

struct FastPath {
    enum Kind { none, rowdot, gemm, x8 } kind = none;
    const arch::RowDot * rd = nullptr;
    const arch::Gemm * gm = nullptr;
    const arch::RowDotX8 * rx = nullptr;
    arch::X8PanelPacker x8_panel = nullptr; // gemm on repacked weights: the level's packer, else x8::pack_panel
    bool repacked = false;                  // a is in the x8 layout (gemm packs panels from the groups)
};

// Columns per weight plane from which the gemm path is taken.
constexpr int64_t kGemmMinCols = 8;

// The path for dst = mul_mat(a, b) under plan p (none unless p is the
// weight type's default plan and b is F32). Repacked weights always get a
// path (x8 or gemm), whatever the plan.
FastPath fast_path_for(const Plan & p, const lm_ggml_tensor * dst);

size_t fast_work_size(const FastPath & f, const lm_ggml_tensor * dst, int n_threads);

// True when each thread packs all of b into its own scratch slice
// (lm_cpu_thread_scratch): a few columns, rowdot or x8.
bool fast_private_scratch(const FastPath & f, const lm_ggml_tensor * dst);

// Every thread of the node calls it (packs its share of b, syncs, computes).
void fast_forward(const lm_cpu_params * params, lm_ggml_tensor * dst, const FastPath & f);

} // namespace lmggml::cpu::la

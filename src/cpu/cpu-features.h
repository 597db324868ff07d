#pragma once
// What this CPU can run, detected once (cpuid + OS register-state support on
// x86; ARM fields stay false on other architectures). Kernels never test
// these in their loops: a backend picks function pointers once at init.

struct lm_cpu_features {
    // x86
    bool sse3, ssse3, avx, avx2, f16c, fma, avx_vnni;
    bool avx512, avx512_vbmi, avx512_vnni, avx512_bf16, amx_int8;
    // ARM (fp16_fml: the widening F16 multiply-add FMLAL, FEAT_FHM)
    bool neon, arm_fma, fp16_va, fp16_fml, dotprod, matmul_int8, sve;
    int sve_cnt; // SVE vector length in bytes, 0 without SVE
    // others
    bool riscv_v, vsx, wasm_simd;
};

// Detected on first call (thread-safe), then a constant.
const lm_cpu_features & lm_cpu_get_features();

// CPU feature probes: runtime detection, done once. On x86 a feature counts
// only when both the CPU reports it (cpuid) and the OS saves the register
// state it needs (xgetbv), so "has AVX-512" means AVX-512 code can run here.

#include "cpu/cpu-features.h"

#include "ggml-cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

namespace {

#if defined(__x86_64__) || defined(__i386__)

struct cpuid_regs {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

cpuid_regs cpuid(unsigned leaf, unsigned subleaf) {
    cpuid_regs r;
    __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
    return r;
}

// XCR0: which register files the OS saves on context switch.
unsigned long long read_xcr0() {
    unsigned eax = 0, edx = 0;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long) edx << 32) | eax;
}

bool bit(unsigned reg, int n) { return (reg >> n) & 1u; }

void detect_x86(lm_cpu_features & f) {
    const unsigned max_leaf = __get_cpuid_max(0, nullptr);
    if (max_leaf < 1) {
        return;
    }
    const cpuid_regs l1 = cpuid(1, 0);
    f.sse3 = bit(l1.ecx, 0);
    f.ssse3 = bit(l1.ecx, 9);

    const bool osxsave = bit(l1.ecx, 27);
    const unsigned long long xcr0 = osxsave ? read_xcr0() : 0;
    const bool os_ymm = (xcr0 & 0x6) == 0x6;             // SSE + AVX state
    const bool os_zmm = os_ymm && (xcr0 & 0xe0) == 0xe0; // opmask + ZMM state
    const bool os_tile = (xcr0 & 0x60000) == 0x60000;    // AMX tile config + data

    f.avx = os_ymm && bit(l1.ecx, 28);
    f.fma = os_ymm && bit(l1.ecx, 12);
    f.f16c = os_ymm && bit(l1.ecx, 29);

    if (max_leaf < 7) {
        return;
    }
    const cpuid_regs l7 = cpuid(7, 0);
    f.avx2 = os_ymm && bit(l7.ebx, 5);
    f.avx512 = os_zmm && bit(l7.ebx, 16);
    f.avx512_vbmi = f.avx512 && bit(l7.ecx, 1);
    f.avx512_vnni = f.avx512 && bit(l7.ecx, 11);
    f.amx_int8 = os_tile && bit(l7.edx, 24) && bit(l7.edx, 25);
    if (l7.eax >= 1) {
        const cpuid_regs l71 = cpuid(7, 1);
        f.avx_vnni = os_ymm && bit(l71.eax, 4);
        f.avx512_bf16 = f.avx512 && bit(l71.eax, 5);
    }
}

#endif

#if defined(__aarch64__) && defined(__linux__)
void detect_arm(lm_cpu_features & f) {
    const unsigned long hwcap = getauxval(AT_HWCAP);
    const unsigned long hwcap2 = getauxval(AT_HWCAP2);
    f.neon = (hwcap & HWCAP_ASIMD) != 0;
    f.arm_fma = f.neon; // AArch64 Advanced SIMD always has fused multiply-add
    f.fp16_va = (hwcap & HWCAP_ASIMDHP) != 0;
    f.fp16_fml = (hwcap & HWCAP_ASIMDFHM) != 0;
    f.dotprod = (hwcap & HWCAP_ASIMDDP) != 0;
    f.matmul_int8 = (hwcap2 & HWCAP2_I8MM) != 0;
    f.sve = (hwcap & HWCAP_SVE) != 0;
    if (f.sve) {
        const int vl = prctl(PR_SVE_GET_VL);
        f.sve_cnt = vl > 0 ? (vl & PR_SVE_VL_LEN_MASK) : 0;
    }
}
#endif

lm_cpu_features detect() {
    lm_cpu_features f{};
#if defined(__x86_64__) || defined(__i386__)
    detect_x86(f);
#endif
#if defined(__aarch64__) && defined(__linux__)
    detect_arm(f);
#endif
#if defined(__riscv_v_intrinsic) || defined(__riscv_vector)
    f.riscv_v = true; // no portable runtime probe; reflects the build target
#endif
#if defined(__POWER9_VECTOR__)
    f.vsx = true;
#endif
#if defined(__wasm_simd128__)
    f.wasm_simd = true;
#endif
    return f;
}

} // namespace

const lm_cpu_features & lm_cpu_get_features() {
    static const lm_cpu_features features = detect(); // thread-safe static init
    return features;
}

int lm_ggml_cpu_has_sse3(void) { return lm_cpu_get_features().sse3; }
int lm_ggml_cpu_has_ssse3(void) { return lm_cpu_get_features().ssse3; }
int lm_ggml_cpu_has_avx(void) { return lm_cpu_get_features().avx; }
int lm_ggml_cpu_has_avx_vnni(void) { return lm_cpu_get_features().avx_vnni; }
int lm_ggml_cpu_has_avx2(void) { return lm_cpu_get_features().avx2; }
int lm_ggml_cpu_has_f16c(void) { return lm_cpu_get_features().f16c; }
int lm_ggml_cpu_has_fma(void) { return lm_cpu_get_features().fma; }
int lm_ggml_cpu_has_avx512(void) { return lm_cpu_get_features().avx512; }
int lm_ggml_cpu_has_avx512_vbmi(void) { return lm_cpu_get_features().avx512_vbmi; }
int lm_ggml_cpu_has_avx512_vnni(void) { return lm_cpu_get_features().avx512_vnni; }
int lm_ggml_cpu_has_avx512_bf16(void) { return lm_cpu_get_features().avx512_bf16; }
int lm_ggml_cpu_has_amx_int8(void) { return lm_cpu_get_features().amx_int8; }

int lm_ggml_cpu_has_neon(void) { return lm_cpu_get_features().neon; }
int lm_ggml_cpu_has_arm_fma(void) { return lm_cpu_get_features().arm_fma; }
int lm_ggml_cpu_has_fp16_va(void) { return lm_cpu_get_features().fp16_va; }
int lm_ggml_cpu_has_dotprod(void) { return lm_cpu_get_features().dotprod; }
int lm_ggml_cpu_has_matmul_int8(void) { return lm_cpu_get_features().matmul_int8; }
int lm_ggml_cpu_has_sve(void) { return lm_cpu_get_features().sve; }
int lm_ggml_cpu_get_sve_cnt(void) { return lm_cpu_get_features().sve_cnt; }

int lm_ggml_cpu_has_riscv_v(void) { return lm_cpu_get_features().riscv_v; }
int lm_ggml_cpu_has_vsx(void) { return lm_cpu_get_features().vsx; }
int lm_ggml_cpu_has_wasm_simd(void) { return lm_cpu_get_features().wasm_simd; }
// No llamafile sgemm in this library.
int lm_ggml_cpu_has_llamafile(void) { return 0; }

// Builds the kernel sets (kernels.h) once: the scalar set, then each level
// this CPU supports fills in what it has on top of the level below.
#include "kernels.h"
#include "ref.h"

#include "../cpu-features.h"
#include "../kernels/q_dot.h"
#include "../kernels/q_dot_iq4.h"
#include "../kernels/q_dot_iq.h"
#include "../../quant/quants.h"

#if defined(__x86_64__) || defined(__i386__)
#include "x86/x86.h"
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__aarch64__)
#include "arm/arm.h"
#endif

#include <cstdlib>
#include <cstring>

namespace lmggml::cpu::arch {
namespace {

// ggml's vec_dot signature around a scalar q_dot.h kernel (nrc == 1)
template <void (*Dot)(int, float *, const void *, const void *)>
void ggml_sig(int n, float * s, size_t, const void * x, size_t, const void * y, size_t, int) {
    Dot(n, s, x, y);
}

void fill_scalar(KernelSet & k) {
    k.math.exp_sum = ref::exp_sum;
    k.math.silu = ref::silu;
    k.math.gelu = ref::gelu;
    k.math.scale_mask_max = ref::scale_mask_max;
    k.math.scale = ref::scale;
    k.math.widen_f16 = ref::widen_f16;
    k.attn_f16.scores = ref::attn_f16_scores;
    k.attn_f16.accumulate = ref::attn_f16_accumulate;
    k.vec_dot[LM_GGML_TYPE_F32] = ref::vec_dot_f32;
    k.vec_dot[LM_GGML_TYPE_F16] = ref::vec_dot_f16;
    k.vec_dot[LM_GGML_TYPE_BF16] = ref::vec_dot_bf16;
    k.vec_dot[LM_GGML_TYPE_Q4_0] = ggml_sig<lm_cpu_q::vec_dot_q4_0_q8_0>;
    k.vec_dot[LM_GGML_TYPE_Q4_1] = ggml_sig<lm_cpu_q::vec_dot_q4_1_q8_1>;
    k.vec_dot[LM_GGML_TYPE_Q5_0] = ggml_sig<lm_cpu_q::vec_dot_q5_0_q8_0>;
    k.vec_dot[LM_GGML_TYPE_Q5_1] = ggml_sig<lm_cpu_q::vec_dot_q5_1_q8_1>;
    k.vec_dot[LM_GGML_TYPE_Q8_0] = ggml_sig<lm_cpu_q::vec_dot_q8_0_q8_0>;
    k.vec_dot[LM_GGML_TYPE_Q2_K] = ggml_sig<lm_cpu_q::vec_dot_q2_K_q8_K>;
    k.vec_dot[LM_GGML_TYPE_Q3_K] = ggml_sig<lm_cpu_q::vec_dot_q3_K_q8_K>;
    k.vec_dot[LM_GGML_TYPE_Q4_K] = ggml_sig<lm_cpu_q::vec_dot_q4_K_q8_K>;
    k.vec_dot[LM_GGML_TYPE_Q5_K] = ggml_sig<lm_cpu_q::vec_dot_q5_K_q8_K>;
    k.vec_dot[LM_GGML_TYPE_Q6_K] = ggml_sig<lm_cpu_q::vec_dot_q6_K_q8_K>;
    k.vec_dot[LM_GGML_TYPE_IQ4_NL] = ggml_sig<lm_cpu_q::vec_dot_iq4_nl_q8_0>;
    k.vec_dot[LM_GGML_TYPE_IQ4_XS] = ggml_sig<lm_cpu_q::vec_dot_iq4_xs_q8_K>;
    k.vec_dot[LM_GGML_TYPE_TQ1_0] = ggml_sig<lm_cpu_q::vec_dot_tq1_0_q8_K>;
    k.vec_dot[LM_GGML_TYPE_TQ2_0] = ggml_sig<lm_cpu_q::vec_dot_tq2_0_q8_K>;
    k.vec_dot[LM_GGML_TYPE_IQ2_XXS] = ggml_sig<lm_cpu_q::vec_dot_iq2_xxs_q8_K>;
    k.vec_dot[LM_GGML_TYPE_IQ2_XS] = ggml_sig<lm_cpu_q::vec_dot_iq2_xs_q8_K>;
    k.vec_dot[LM_GGML_TYPE_IQ2_S] = ggml_sig<lm_cpu_q::vec_dot_iq2_s_q8_K>;
    k.vec_dot[LM_GGML_TYPE_IQ3_XXS] = ggml_sig<lm_cpu_q::vec_dot_iq3_xxs_q8_K>;
    k.vec_dot[LM_GGML_TYPE_IQ3_S] = ggml_sig<lm_cpu_q::vec_dot_iq3_s_q8_K>;
    k.vec_dot[LM_GGML_TYPE_IQ1_S] = ggml_sig<lm_cpu_q::vec_dot_iq1_s_q8_K>;
    k.vec_dot[LM_GGML_TYPE_IQ1_M] = ggml_sig<lm_cpu_q::vec_dot_iq1_m_q8_K>;

    k.from_float[LM_GGML_TYPE_F16] = ref::convert_row_f16;
    k.from_float[LM_GGML_TYPE_BF16] = ref::convert_row_bf16;
    k.from_float[LM_GGML_TYPE_Q8_0] = ref::quantize_row_q8_0;
    k.from_float[LM_GGML_TYPE_Q8_1] = ref::quantize_row_q8_1;
    k.from_float[LM_GGML_TYPE_Q8_K] = lm_quant_quantize_row_q8_K_ref; // ggml's x86 path uses its reference too
    // no RowDot / RowDotX8 and no Gemm of the block types: those scalar
    // twins are not faster than vec_dot (and without RowDotX8 the CPU does
    // not repack weights). The K-quant Gemm twins are (N = 512, x86, GFLOP/s:
    // Q4_K 0.9 -> 1.8, Q5_K 0.5 -> 2.1, Q6_K 0.4 -> 3.2, IQ4_XS 1.3 -> 2.7)
    // and round activations per sub-block as the vector levels do
    // (layouts.h). Not on ARM64, whose NEON level (every AArch64 CPU) would
    // inherit them unmeasured against its row dots.
#if !defined(__aarch64__)
    k.gemm[LM_GGML_TYPE_Q4_K] = &ref::kGemmQ4_K;
    k.gemm[LM_GGML_TYPE_Q5_K] = &ref::kGemmQ5_K;
    k.gemm[LM_GGML_TYPE_Q6_K] = &ref::kGemmQ6_K;
    k.gemm[LM_GGML_TYPE_IQ4_XS] = &ref::kGemmIQ4_XS;
#endif
}

#if defined(__x86_64__) || defined(__i386__)
// cpu-features reports AVX512F (with the OS's ZMM state); the kernels also
// use the BW, DQ and VL extensions, which every AVX-512 CPU since Skylake-X has.
bool has_avx512_bw_dq_vl() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_max(0, nullptr) < 7) return false;
    __cpuid_count(7, 0, a, b, c, d);
    return ((b >> 17) & 1u) && ((b >> 30) & 1u) && ((b >> 31) & 1u);
}
#endif

#if defined(__x86_64__) && defined(__linux__)
// Linux hands a process the AMX tile data state only on request
// (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA); without it the
// first tile instruction faults. Asked once; a refusal keeps the level off.
bool amx_tiles_permitted() {
    static const bool ok = [] {
        constexpr long kReqXcompPerm = 0x1023;
        constexpr long kXfeatureXtiledata = 18;
        return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
    }();
    return ok;
}
#elif defined(__x86_64__) || defined(__i386__)
bool amx_tiles_permitted() { return false; }
#endif

bool cpu_supports(Isa isa) {
#if defined(__x86_64__) || defined(__i386__)
    const lm_cpu_features & f = lm_cpu_get_features();
    const bool avx2 = f.avx2 && f.fma && f.f16c;
    const bool avx512 = avx2 && f.avx512 && has_avx512_bw_dq_vl();
    switch (isa) {
        case Isa::scalar: return true;
        case Isa::avx2: return avx2;
        case Isa::avx512: return avx512;
        case Isa::avx512_vnni: return avx512 && f.avx512_vnni && f.avx512_vbmi;
        case Isa::amx: return avx512 && f.avx512_vnni && f.avx512_vbmi && f.amx_int8 && amx_tiles_permitted();
        default: return false;
    }
#elif defined(__aarch64__)
    const lm_cpu_features & f = lm_cpu_get_features();
    switch (isa) {
        case Isa::scalar: return true;
        case Isa::neon: return f.neon;
        case Isa::dotprod: return f.neon && f.dotprod;
        // FHM (FMLAL) with i8mm: FEAT_FHM is mandatory from ARMv8.4 on cores
        // with FP16, and every i8mm core (Cortex-A510/A710/X2 on, Neoverse
        // V1/N2, Apple M2) is ARMv8.4+ with FP16; one without stays dotprod
        case Isa::i8mm: return f.neon && f.dotprod && f.matmul_int8 && f.fp16_va && f.fp16_fml;
        default: return false;
    }
#else
    return isa == Isa::scalar;
#endif
}

// Levels form a chain per architecture above the shared scalar level:
// x86 avx2 < avx512 < avx512_vnni < amx, ARM neon < dotprod < i8mm. rank() is the
// position in the chain (scalar 0), chain() which one it is.
int rank(Isa isa) {
    switch (isa) {
        case Isa::scalar: return 0;
        case Isa::avx2: return 1;
        case Isa::avx512: return 2;
        case Isa::avx512_vnni: return 3;
        case Isa::neon: return 1;
        case Isa::dotprod: return 2;
        case Isa::i8mm: return 3;
        case Isa::amx: return 4;
    }
    return 0;
}

int chain(Isa isa) {
    if (isa == Isa::scalar) return 0;
    return isa == Isa::neon || isa == Isa::dotprod || isa == Isa::i8mm ? 2 : 1;
}

void fill_level(KernelSet & k, Isa isa) {
    switch (isa) {
        case Isa::scalar: fill_scalar(k); break;
#if defined(__x86_64__) || defined(__i386__)
        case Isa::avx2:
            x86::fill_avx2_act(k);
            x86::fill_avx2_qdot(k);
            x86::fill_avx2_qdot_iq4(k);
            x86::fill_avx2_gemm_f(k);
            x86::fill_avx2_math(k);
            x86::fill_avx2_attn(k);
            x86::fill_avx2_rowdot(k);
            x86::fill_avx2_rowdot_q5(k);
            x86::fill_avx2_rowdot_k(k);
            x86::fill_avx2_rowdot_x8(k);
            x86::fill_avx2_gemm_q(k);
            x86::fill_avx2_iqdot(k);
            break;
        case Isa::avx512:
            x86::fill_avx512_fdot(k);
            x86::fill_avx512_gemm_f(k);
            x86::fill_avx512_math(k);
            x86::fill_avx512_attn(k);
            break;
        case Isa::avx512_vnni:
            x86::fill_vnni_qdot(k);
            x86::fill_vnni_qdot_iq4(k);
            x86::fill_vnni_rowdot(k);
            x86::fill_vnni_rowdot_q5(k);
            x86::fill_vnni_rowdot_k(k);
            x86::fill_vnni_gemm_q(k);
            x86::fill_vnni_gemm_k(k);
            x86::fill_vnni_rowdot_x8(k);
            break;
        case Isa::amx: x86::fill_amx_gemm(k); break;
#endif
#if defined(__aarch64__)
        case Isa::neon:
            arm::fill_neon_act(k);
            arm::fill_neon_attn(k);
            arm::fill_neon_math(k);
            arm::fill_neon_qdot(k);
            arm::fill_neon_gemm_f(k);
            break;
        case Isa::dotprod:
            arm::fill_dotprod_qdot(k);
            arm::fill_dotprod_rowdot_x8(k);
            arm::fill_dotprod_gemm(k);
            break;
        case Isa::i8mm:
            arm::fill_i8mm_gemm(k);
            arm::fill_i8mm_fhm(k);
            break;
#endif
        default: break;
    }
}

// All levels of top's chain up to `top`, each on top of the one below.
KernelSet build(Isa top) {
    KernelSet k{};
    for (int i = 0; i <= (int) top; ++i) {
        if (i == 0 || chain((Isa) i) == chain(top)) fill_level(k, (Isa) i);
    }
    k.isa = top;
    k.name = isa_name(top);
    return k;
}

// The highest level the CPU supports, capped by LMGGML_CPU_ISA when set
// (by rank: a CPU supports levels of one chain only).
Isa best_isa() {
    int cap = rank(Isa::amx); // the highest rank of any chain
    if (const char * env = std::getenv("LMGGML_CPU_ISA")) {
        for (int i = 0; i < kIsaCount; ++i) {
            if (std::strcmp(env, isa_name((Isa) i)) == 0) cap = rank((Isa) i);
        }
    }
    int best = 0;
    for (int i = 1; i < kIsaCount; ++i) {
        if (cpu_supports((Isa) i) && rank((Isa) i) <= cap && rank((Isa) i) >= rank((Isa) best)) best = i;
    }
    return (Isa) best;
}

struct Sets {
    KernelSet level[kIsaCount];
    bool ok[kIsaCount];
    KernelSet best;
    Sets() : level{}, ok{} {
        for (int i = 0; i < kIsaCount; ++i) {
            ok[i] = cpu_supports((Isa) i);
            if (ok[i]) level[i] = build((Isa) i);
        }
        best = build(best_isa());
    }
};

const Sets & sets() {
    static const Sets s; // once, thread-safe
    return s;
}

} // namespace

const char * isa_name(Isa isa) {
    switch (isa) {
        case Isa::scalar: return "scalar";
        case Isa::avx2: return "avx2";
        case Isa::avx512: return "avx512";
        case Isa::avx512_vnni: return "avx512_vnni";
        case Isa::neon: return "neon";
        case Isa::dotprod: return "dotprod";
        case Isa::i8mm: return "i8mm";
        case Isa::amx: return "amx";
    }
    return "?";
}

const KernelSet & kernels() { return sets().best; }

const KernelSet * kernels_for(Isa isa) {
    const int i = (int) isa;
    if (i < 0 || i >= kIsaCount || !sets().ok[i]) return nullptr;
    return &sets().level[i];
}

} // namespace lmggml::cpu::arch

// The per-type table of quantized CPU support (q_dot.h) and its adaptor to
// the linear-algebra kernels' lm_cpu_vec_dot_traits (la_vec_dot.h). The dots
// and activation quantizers are the CPU's best (src/cpu/arch/kernels.h);
// the scalar kernels of q_dot_legacy.cpp / q_dot_k.cpp are their twins.
#include "q_dot.h"
#include "la_vec_dot.h"
#include "../arch/kernels.h"
#include "../../quant/quants.h"

namespace {

struct Entry {
    lm_ggml_type type;
    lm_cpu_qtype_ops ops;
    lm_cpu_vec_dot_traits traits; // ggml-signature form of ops (vec_dot NULL when ops has none)
};

using QDot = void (*)(int, float *, const void *, const void *);

// q_dot.h's signature around the kernel set's dot for weight type T
template <lm_ggml_type T> void dispatched(int n, float * s, const void * x, const void * y) {
    lmggml::cpu::arch::kernels().vec_dot[T](n, s, 0, x, 0, y, 0, 1);
}

struct Pairing {
    lm_ggml_type type, vec_dot_type;
    QDot dot; // NULL: activation-only format
};

// ggml's pairing of weight formats with activation formats
constexpr Pairing kPairings[] = {
    {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q8_0, dispatched<LM_GGML_TYPE_Q4_0>},
    {LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q8_1, dispatched<LM_GGML_TYPE_Q4_1>},
    {LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q8_0, dispatched<LM_GGML_TYPE_Q5_0>},
    {LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q8_1, dispatched<LM_GGML_TYPE_Q5_1>},
    {LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q8_0, dispatched<LM_GGML_TYPE_Q8_0>},
    {LM_GGML_TYPE_Q8_1, LM_GGML_TYPE_Q8_1, nullptr},
    {LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_Q2_K>},
    {LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_Q3_K>},
    {LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_Q4_K>},
    {LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_Q5_K>},
    {LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_Q6_K>},
    {LM_GGML_TYPE_Q8_K, LM_GGML_TYPE_Q8_K, nullptr},
    {LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_Q8_0, dispatched<LM_GGML_TYPE_IQ4_NL>},
    {LM_GGML_TYPE_IQ4_XS, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_IQ4_XS>},
    {LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_TQ1_0>},
    {LM_GGML_TYPE_TQ2_0, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_TQ2_0>},
    {LM_GGML_TYPE_IQ2_XXS, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_IQ2_XXS>},
    {LM_GGML_TYPE_IQ2_XS, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_IQ2_XS>},
    {LM_GGML_TYPE_IQ2_S, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_IQ2_S>},
    {LM_GGML_TYPE_IQ3_XXS, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_IQ3_XXS>},
    {LM_GGML_TYPE_IQ3_S, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_IQ3_S>},
    {LM_GGML_TYPE_IQ1_S, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_IQ1_S>},
    {LM_GGML_TYPE_IQ1_M, LM_GGML_TYPE_Q8_K, dispatched<LM_GGML_TYPE_IQ1_M>},
};
constexpr size_t kCount = sizeof(kPairings) / sizeof(kPairings[0]);

// As ggml's CPU backend, F32 -> grid I-quant copies are not offered: those
// quantizers are slow searches meant for offline use (quantize_chunk).
constexpr bool cpu_quantizes(lm_ggml_type t) {
    return t != LM_GGML_TYPE_IQ2_XXS && t != LM_GGML_TYPE_IQ2_XS && t != LM_GGML_TYPE_IQ2_S &&
           t != LM_GGML_TYPE_IQ3_XXS && t != LM_GGML_TYPE_IQ3_S && t != LM_GGML_TYPE_IQ1_S && t != LM_GGML_TYPE_IQ1_M;
}

// The row conversions come from src/quant's table, the one source of truth
// (this also links src/quant/traits.cpp, and with it the type-traits hook,
// into any program that uses the CPU kernels from the static library).
// The activation converter (traits.from_float) is the kernel set's: it
// rounds as ggml's x86 code does (src/cpu/arch/layouts.h), while ops.from_float
// stays src/quant's reference quantizer of the type itself.
struct Table {
    Entry e[kCount];
    Table() {
        const lmggml::cpu::arch::KernelSet & k = lmggml::cpu::arch::kernels();
        for (size_t i = 0; i < kCount; ++i) {
            const Pairing & p = kPairings[i];
            const lm_quant_type_fns * self = lm_quant_get_fns(p.type);
            e[i] = Entry{p.type,
                         {p.dot, p.vec_dot_type, cpu_quantizes(p.type) ? self->from_float : nullptr, self->to_float},
                         {p.dot ? k.vec_dot[p.type] : nullptr, p.vec_dot_type, k.from_float[p.vec_dot_type]}};
        }
    }
};

const Entry * find(lm_ggml_type type) {
    static const Table table; // built once, thread-safe
    for (const Entry & e : table.e) {
        if (e.type == type) return &e;
    }
    return nullptr;
}

} // namespace

const struct lm_cpu_qtype_ops * lm_cpu_get_qtype_ops(enum lm_ggml_type type) {
    const Entry * e = find(type);
    return e ? &e->ops : nullptr;
}

const struct lm_cpu_vec_dot_traits * lm_cpu_get_quant_vec_dot_traits(enum lm_ggml_type type) {
    const Entry * e = find(type);
    return (e && e->traits.vec_dot) ? &e->traits : nullptr;
}

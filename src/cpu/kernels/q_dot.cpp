// The per-type table of quantized CPU support (q_dot.h) and its adaptor to
// the linear-algebra kernels' lm_cpu_vec_dot_traits (la_vec_dot.h).
#include "q_dot.h"
#include "la_vec_dot.h"
#include "../../quant/quants.h"

namespace {

using lm_cpu_q::vec_dot_q2_K_q8_K;
using lm_cpu_q::vec_dot_q3_K_q8_K;
using lm_cpu_q::vec_dot_q4_0_q8_0;
using lm_cpu_q::vec_dot_q4_1_q8_1;
using lm_cpu_q::vec_dot_q4_K_q8_K;
using lm_cpu_q::vec_dot_q5_0_q8_0;
using lm_cpu_q::vec_dot_q5_1_q8_1;
using lm_cpu_q::vec_dot_q5_K_q8_K;
using lm_cpu_q::vec_dot_q6_K_q8_K;
using lm_cpu_q::vec_dot_q8_0_q8_0;

struct Entry {
    lm_ggml_type          type;
    lm_cpu_qtype_ops      ops;
    lm_cpu_vec_dot_traits traits; // ggml-signature form of ops (vec_dot NULL when ops has none)
};

// ggml's vec_dot signature around a q_dot.h dot; strides are unused (nrc == 1)
template <void (*Dot)(int, float *, const void *, const void *)>
void ggml_sig(int n, float * s, size_t, const void * x, size_t, const void * y, size_t, int) {
    Dot(n, s, x, y);
}

using QDot = void (*)(int, float *, const void *, const void *);
using GDot = lm_ggml_vec_dot_t;

struct Pairing {
    lm_ggml_type type, vec_dot_type;
    QDot         dot;  // NULL: activation-only format
    GDot         gdot; // the same in ggml's signature
};

// ggml's pairing of weight formats with activation formats
constexpr Pairing kPairings[] = {
    {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q8_0, vec_dot_q4_0_q8_0, ggml_sig<vec_dot_q4_0_q8_0>},
    {LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q8_1, vec_dot_q4_1_q8_1, ggml_sig<vec_dot_q4_1_q8_1>},
    {LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q8_0, vec_dot_q5_0_q8_0, ggml_sig<vec_dot_q5_0_q8_0>},
    {LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q8_1, vec_dot_q5_1_q8_1, ggml_sig<vec_dot_q5_1_q8_1>},
    {LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q8_0, vec_dot_q8_0_q8_0, ggml_sig<vec_dot_q8_0_q8_0>},
    {LM_GGML_TYPE_Q8_1, LM_GGML_TYPE_Q8_1, nullptr, nullptr},
    {LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q8_K, vec_dot_q2_K_q8_K, ggml_sig<vec_dot_q2_K_q8_K>},
    {LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q8_K, vec_dot_q3_K_q8_K, ggml_sig<vec_dot_q3_K_q8_K>},
    {LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q8_K, vec_dot_q4_K_q8_K, ggml_sig<vec_dot_q4_K_q8_K>},
    {LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q8_K, vec_dot_q5_K_q8_K, ggml_sig<vec_dot_q5_K_q8_K>},
    {LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_Q8_K, vec_dot_q6_K_q8_K, ggml_sig<vec_dot_q6_K_q8_K>},
    {LM_GGML_TYPE_Q8_K, LM_GGML_TYPE_Q8_K, nullptr, nullptr},
};
constexpr size_t kCount = sizeof(kPairings) / sizeof(kPairings[0]);

// The row conversions come from src/quant's table, the one source of truth
// (this also links src/quant/traits.cpp, and with it the type-traits hook,
// into any program that uses the CPU kernels from the static library).
struct Table {
    Entry e[kCount];
    Table() {
        for (size_t i = 0; i < kCount; ++i) {
            const Pairing & p = kPairings[i];
            const lm_quant_type_fns * self = lm_quant_get_fns(p.type);
            const lm_quant_type_fns * act  = lm_quant_get_fns(p.vec_dot_type);
            e[i] = Entry{p.type, {p.dot, p.vec_dot_type, self->from_float, self->to_float},
                         {p.gdot, p.vec_dot_type, act->from_float}};
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

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

#define LM_Q_ENTRY(T, t, dot, VT, vt)                                                                       \
    Entry{LM_GGML_TYPE_##T,                                                                                  \
          {dot, LM_GGML_TYPE_##VT, lm_quant_quantize_row_##t##_ref, lm_quant_dequantize_row_##t},            \
          {ggml_sig<dot>, LM_GGML_TYPE_##VT, lm_quant_quantize_row_##vt##_ref}}

#define LM_Q_ACTIVATION(T, t)                                                                               \
    Entry{LM_GGML_TYPE_##T,                                                                                  \
          {nullptr, LM_GGML_TYPE_##T, lm_quant_quantize_row_##t##_ref, lm_quant_dequantize_row_##t},         \
          {nullptr, LM_GGML_TYPE_##T, lm_quant_quantize_row_##t##_ref}}

const Entry kEntries[] = {
    LM_Q_ENTRY(Q4_0, q4_0, vec_dot_q4_0_q8_0, Q8_0, q8_0),
    LM_Q_ENTRY(Q4_1, q4_1, vec_dot_q4_1_q8_1, Q8_1, q8_1),
    LM_Q_ENTRY(Q5_0, q5_0, vec_dot_q5_0_q8_0, Q8_0, q8_0),
    LM_Q_ENTRY(Q5_1, q5_1, vec_dot_q5_1_q8_1, Q8_1, q8_1),
    LM_Q_ENTRY(Q8_0, q8_0, vec_dot_q8_0_q8_0, Q8_0, q8_0),
    LM_Q_ACTIVATION(Q8_1, q8_1),
    LM_Q_ENTRY(Q2_K, q2_K, vec_dot_q2_K_q8_K, Q8_K, q8_K),
    LM_Q_ENTRY(Q3_K, q3_K, vec_dot_q3_K_q8_K, Q8_K, q8_K),
    LM_Q_ENTRY(Q4_K, q4_K, vec_dot_q4_K_q8_K, Q8_K, q8_K),
    LM_Q_ENTRY(Q5_K, q5_K, vec_dot_q5_K_q8_K, Q8_K, q8_K),
    LM_Q_ENTRY(Q6_K, q6_K, vec_dot_q6_K_q8_K, Q8_K, q8_K),
    LM_Q_ACTIVATION(Q8_K, q8_K),
};

#undef LM_Q_ENTRY
#undef LM_Q_ACTIVATION

const Entry * find(lm_ggml_type type) {
    for (const Entry & e : kEntries) {
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

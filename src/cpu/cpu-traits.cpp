// CPU type traits (lm_ggml_get_type_traits_cpu) and lm_ggml_cpu_init.
//
// For each type: from_float (row conversion from F32 into the type), the dot
// product of one row of the type with one row of vec_dot_type, and
// vec_dot_type (the type MUL_MAT converts src1 into before dotting). The dot
// products here are scalar references with double accumulation; quantized
// types get their dot products from the matmul kernels.

#include "cpu/cpu-features.h"
#include "cpu/cpu-internal.h"

#include "core/ggml-impl.h"
#include "ggml-cpu.h"

#include <cstring>

namespace {

void from_float_f32(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) {
    memcpy(y, x, (size_t) k * sizeof(float));
}

void from_float_f16(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) {
    lm_ggml_fp16_t * out = static_cast<lm_ggml_fp16_t *>(y);
    for (int64_t i = 0; i < k; i++) {
        out[i] = LM_GGML_FP32_TO_FP16(x[i]);
    }
}

void from_float_bf16(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) {
    lm_ggml_bf16_t * out = static_cast<lm_ggml_bf16_t *>(y);
    for (int64_t i = 0; i < k; i++) {
        out[i] = LM_GGML_FP32_TO_BF16(x[i]);
    }
}

// s[0] = sum_i x[i] * y[i] over n elements. The row strides (bs, bx, by) and
// nrc matter only for multi-row kernels; these traits declare nrows = 1.
void vec_dot_f32(int n, float * LM_GGML_RESTRICT s, size_t bs, const void * LM_GGML_RESTRICT vx, size_t bx,
                 const void * LM_GGML_RESTRICT vy, size_t by, int nrc) {
    (void) bs;
    (void) bx;
    (void) by;
    (void) nrc;
    const float * x = static_cast<const float *>(vx);
    const float * y = static_cast<const float *>(vy);
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        sum += (double) x[i] * (double) y[i];
    }
    *s = (float) sum;
}

void vec_dot_f16(int n, float * LM_GGML_RESTRICT s, size_t bs, const void * LM_GGML_RESTRICT vx, size_t bx,
                 const void * LM_GGML_RESTRICT vy, size_t by, int nrc) {
    (void) bs;
    (void) bx;
    (void) by;
    (void) nrc;
    const lm_ggml_fp16_t * x = static_cast<const lm_ggml_fp16_t *>(vx);
    const lm_ggml_fp16_t * y = static_cast<const lm_ggml_fp16_t *>(vy);
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        sum += (double) LM_GGML_FP16_TO_FP32(x[i]) * (double) LM_GGML_FP16_TO_FP32(y[i]);
    }
    *s = (float) sum;
}

void vec_dot_bf16(int n, float * LM_GGML_RESTRICT s, size_t bs, const void * LM_GGML_RESTRICT vx, size_t bx,
                  const void * LM_GGML_RESTRICT vy, size_t by, int nrc) {
    (void) bs;
    (void) bx;
    (void) by;
    (void) nrc;
    const lm_ggml_bf16_t * x = static_cast<const lm_ggml_bf16_t *>(vx);
    const lm_ggml_bf16_t * y = static_cast<const lm_ggml_bf16_t *>(vy);
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        sum += (double) LM_GGML_BF16_TO_FP32(x[i]) * (double) LM_GGML_BF16_TO_FP32(y[i]);
    }
    *s = (float) sum;
}

struct cpu_traits_table {
    lm_ggml_type_traits_cpu t[LM_GGML_TYPE_COUNT];
};

cpu_traits_table build_traits() {
    cpu_traits_table tab;
    memset(&tab, 0, sizeof(tab));
    for (int i = 0; i < LM_GGML_TYPE_COUNT; i++) {
        tab.t[i].vec_dot_type = LM_GGML_TYPE_F32;
        tab.t[i].nrows = 1;
    }
    tab.t[LM_GGML_TYPE_F32] = {from_float_f32, vec_dot_f32, LM_GGML_TYPE_F32, 1};
    tab.t[LM_GGML_TYPE_F16] = {from_float_f16, vec_dot_f16, LM_GGML_TYPE_F16, 1};
    tab.t[LM_GGML_TYPE_BF16] = {from_float_bf16, vec_dot_bf16, LM_GGML_TYPE_BF16, 1};

    // The activation format each block type is dotted with (ggml's pairing).
    const struct {
        lm_ggml_type type, dot;
    } pairs[] = {
        {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q8_0},   {LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q8_1},
        {LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q8_0},   {LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q8_1},
        {LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q8_0},   {LM_GGML_TYPE_Q8_1, LM_GGML_TYPE_Q8_1},
        {LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q8_K},   {LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q8_K},
        {LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q8_K},   {LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q8_K},
        {LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_Q8_K},   {LM_GGML_TYPE_IQ2_XXS, LM_GGML_TYPE_Q8_K},
        {LM_GGML_TYPE_IQ2_XS, LM_GGML_TYPE_Q8_K}, {LM_GGML_TYPE_IQ3_XXS, LM_GGML_TYPE_Q8_K},
        {LM_GGML_TYPE_IQ1_S, LM_GGML_TYPE_Q8_K},  {LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_Q8_0},
        {LM_GGML_TYPE_IQ3_S, LM_GGML_TYPE_Q8_K},  {LM_GGML_TYPE_IQ2_S, LM_GGML_TYPE_Q8_K},
        {LM_GGML_TYPE_IQ4_XS, LM_GGML_TYPE_Q8_K}, {LM_GGML_TYPE_IQ1_M, LM_GGML_TYPE_Q8_K},
        {LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_Q8_K},  {LM_GGML_TYPE_TQ2_0, LM_GGML_TYPE_Q8_K},
    };
    // Block types quantize rows with the core's reference quantizers.
    auto take_quantizer = [&](lm_ggml_type type) {
        const lm_ggml_type_traits * core = lm_ggml_get_type_traits(type);
        if (core != nullptr) {
            tab.t[type].from_float = core->from_float_ref;
        }
    };
    for (const auto & p : pairs) {
        tab.t[p.type].vec_dot_type = p.dot;
        take_quantizer(p.type);
    }
    take_quantizer(LM_GGML_TYPE_Q8_K); // activations only: no dot product of its own
    return tab;
}

const cpu_traits_table & traits() {
    static const cpu_traits_table table = build_traits(); // once, thread-safe
    return table;
}

} // namespace

// Returns NULL (and logs) for a value outside enum lm_ggml_type. Removed
// type numbers (4, 5, 31-33, 36-38) get an entry with no functions.
const struct lm_ggml_type_traits_cpu * lm_ggml_get_type_traits_cpu(enum lm_ggml_type type) {
    if ((int) type < 0 || type >= LM_GGML_TYPE_COUNT) {
        LM_GGML_LOG_ERROR("lm_ggml_get_type_traits_cpu: type %d: out of range\n", (int) type);
        return nullptr;
    }
    return &traits().t[type];
}

// Detects CPU features and builds the op and type tables. Idempotent and
// thread-safe; every CPU entry point calls it, so applications need not.
void lm_ggml_cpu_init(void) {
    (void) lm_cpu_get_features();
    (void) lm_cpu_get_op_table();
    (void) traits();
}

// Public fp16 / bf16 conversions (scalar and row forms).
#include "ggml-impl.h"

extern "C" float lm_ggml_fp16_to_fp32(lm_ggml_fp16_t x) { return LM_GGML_FP16_TO_FP32(x); }
extern "C" lm_ggml_fp16_t lm_ggml_fp32_to_fp16(float x) { return LM_GGML_FP32_TO_FP16(x); }
extern "C" float lm_ggml_bf16_to_fp32(lm_ggml_bf16_t x) { return LM_GGML_BF16_TO_FP32(x); }
extern "C" lm_ggml_bf16_t lm_ggml_fp32_to_bf16(float x) { return LM_GGML_FP32_TO_BF16(x); }

extern "C" void lm_ggml_fp16_to_fp32_row(const lm_ggml_fp16_t * x, float * y, int64_t n) {
    if (!x || !y) {
        lm_ggml_null_arg("lm_ggml_fp16_to_fp32_row");
        return;
    }
    for (int64_t i = 0; i < n; i++) y[i] = LM_GGML_FP16_TO_FP32(x[i]);
}

extern "C" void lm_ggml_fp32_to_fp16_row(const float * x, lm_ggml_fp16_t * y, int64_t n) {
    if (!x || !y) {
        lm_ggml_null_arg("lm_ggml_fp32_to_fp16_row");
        return;
    }
    for (int64_t i = 0; i < n; i++) y[i] = LM_GGML_FP32_TO_FP16(x[i]);
}

extern "C" void lm_ggml_bf16_to_fp32_row(const lm_ggml_bf16_t * x, float * y, int64_t n) {
    if (!x || !y) {
        lm_ggml_null_arg("lm_ggml_bf16_to_fp32_row");
        return;
    }
    for (int64_t i = 0; i < n; i++) y[i] = LM_GGML_BF16_TO_FP32(x[i]);
}

extern "C" void lm_ggml_fp32_to_bf16_row_ref(const float * x, lm_ggml_bf16_t * y, int64_t n) {
    if (!x || !y) {
        lm_ggml_null_arg("lm_ggml_fp32_to_bf16_row_ref");
        return;
    }
    for (int64_t i = 0; i < n; i++) y[i] = LM_GGML_FP32_TO_BF16(x[i]);
}

extern "C" void lm_ggml_fp32_to_bf16_row(const float * x, lm_ggml_bf16_t * y, int64_t n) {
    if (!x || !y) {
        lm_ggml_null_arg("lm_ggml_fp32_to_bf16_row");
        return;
    }
    lm_ggml_fp32_to_bf16_row_ref(x, y, n);
}

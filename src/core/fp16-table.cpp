// lm_ggml_table_f32_f16: the fp32 value of every fp16 bit pattern. lmggml
// itself converts arithmetically; the table is exported for code built
// against ggml's headers, whose LM_GGML_FP16_TO_FP32 indexes it directly.
#include "ggml-impl.h"

extern "C" {
float lm_ggml_table_f32_f16[1 << 16];
}

namespace {

// Filled while the library loads, before any caller can read it.
[[maybe_unused]] const bool g_table_filled = [] {
    for (uint32_t i = 0; i < (1u << 16); i++) {
        lm_ggml_table_f32_f16[i] = lm_ggml_compute_fp16_to_fp32((lm_ggml_fp16_t) i);
    }
    return true;
}();

} // namespace

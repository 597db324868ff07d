/* include/ggml-impl.h and include/ggml-threading.h compile as C11 and link
 * against liblmggml as a plugin backend written in C would use them. */
#include "ggml-impl.h"
#include "ggml-threading.h"

/* Returns 0 when every check passes, else the number of the first failure. */
int lmtest_impl_header_c(void) {
    lm_ggml_bitset_t bits[2] = {0, 0};
    lm_ggml_bitset_set(bits, 37);
    if (!lm_ggml_bitset_get(bits, 37) || bits[1] != (1u << 5)) return 1;
    lm_ggml_bitset_clear(bits, 37);
    if (bits[1] != 0) return 2;
    if (lm_ggml_bitset_size(33) != 2) return 3;

    struct lm_ggml_tensor t;
    memset(&t, 0, sizeof(t));
    lm_ggml_set_op_params_f32(&t, 1, 0.25f);
    lm_ggml_set_op_params_i32(&t, 0, -7);
    if (lm_ggml_get_op_params_i32(&t, 0) != -7 || lm_ggml_get_op_params_f32(&t, 1) != 0.25f) return 4;

    if (LM_GGML_FP16_TO_FP32(0x3c00) != 1.0f || LM_GGML_FP32_TO_FP16(-2.0f) != 0xc000) return 5;
    if (lm_ggml_table_f32_f16[0x3c00] != 1.0f) return 6;
    if (lm_ggml_up32(33) != 64 || lm_ggml_up(17, 8) != 24 || MIN(3, 4) != 3 || MAX(3, 4) != 4) return 7;
    if (TENSOR_ALIGNMENT != 32) return 8;

    lm_ggml_critical_section_start();
    lm_ggml_critical_section_end();

    void * p = lm_ggml_aligned_malloc(100);
    if (p == NULL || ((uintptr_t) p % 64) != 0) return 9;
    lm_ggml_aligned_free(p, 100);

    LM_GGML_LOG_DEBUG("lmtest_impl_header_c: %d\n", 1);
    return 0;
}

/* ggml-common.h / ggml-quants.h compiled as C: the block layouts as C sees
   them (anonymous unions reach d and m directly) and a call through the
   typed signature. Returns 0, or the number of the first failed check. */
#include "ggml-quants.h"

#include <stddef.h>

int lm_test_quants_header_c(void);

int lm_test_quants_header_c(void) {
    if (offsetof(block_q4_1, m) != 2 || offsetof(block_q4_1, qs) != 4) return 1;
    if (offsetof(block_q8_1, s) != 2 || sizeof(block_q8_1) != 36) return 2;
    if (offsetof(block_q2_K, d) != 80 || offsetof(block_q2_K, dmin) != 82) return 3;
    if (offsetof(block_q8_K, bsums) != 260 || sizeof(block_q8_K) != 292) return 4;
    if (offsetof(block_iq4_xs, scales_l) != 4 || offsetof(block_iq4_xs, qs) != 8) return 5;
    if (offsetof(block_tq1_0, qh) != 48 || offsetof(block_tq1_0, d) != 52) return 6;
    if (QK_K != 256 || QK4_NL != 32 || QK8_0 != 32) return 7;

    block_q8_0 b;
    float y[QK8_0];
    int j;
    b.d = 0x3800; /* 0.5 */
    for (j = 0; j < QK8_0; ++j) b.qs[j] = (int8_t) (j - 16);
    dequantize_row_q8_0(&b, y, QK8_0);
    for (j = 0; j < QK8_0; ++j) {
        if (y[j] != 0.5f * (float) (j - 16)) return 8;
    }

    block_q4_1 c;
    c.d = 0x3c00; /* 1 */
    c.m = 0xc000; /* -2 */
    for (j = 0; j < QK4_1 / 2; ++j) c.qs[j] = (uint8_t) (j | (15 - j) << 4);
    dequantize_row_q4_1(&c, y, QK4_1);
    for (j = 0; j < QK4_1 / 2; ++j) {
        if (y[j] != (float) j - 2.0f || y[j + 16] != (float) (15 - j) - 2.0f) return 9;
    }
    return 0;
}

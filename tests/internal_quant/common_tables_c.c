/* ggml-common.h's I-quant tables compiled as C11, as ggml's CPU sources see
   them (LM_GGML_COMMON_IMPL_C: iq1s_grid rather than iq1s_grid_gpu). Hands
   them to test_common_tables.cpp, which checks the values. */
#define LM_GGML_COMMON_IMPL_C
#include "ggml-common.h"

#include <stddef.h>

const void * lm_test_common_table_c(int i, size_t * size);

/* table i in the order kmask_iq2xs, ksigns_iq2xs, ksigns64, iq2xxs_grid,
   iq2xs_grid, iq2s_grid, iq3xxs_grid, iq3s_grid, iq1s_grid; NULL past the end */
const void * lm_test_common_table_c(int i, size_t * size) {
    const void * p[] = {kmask_iq2xs, ksigns_iq2xs, ksigns64,  iq2xxs_grid, iq2xs_grid,
                        iq2s_grid,   iq3xxs_grid,  iq3s_grid, iq1s_grid};
    const size_t n[] = {sizeof(kmask_iq2xs), sizeof(ksigns_iq2xs), sizeof(ksigns64),
                        sizeof(iq2xxs_grid), sizeof(iq2xs_grid),   sizeof(iq2s_grid),
                        sizeof(iq3xxs_grid), sizeof(iq3s_grid),    sizeof(iq1s_grid)};
    if (i < 0 || i >= (int) (sizeof(p) / sizeof(p[0]))) return NULL;
    *size = n[i];
    return p[i];
}

#pragma once
// Test-side block formats: random valid blocks and a double-precision
// dequantizer per format, written from the GGUF block layouts (facts), not
// from the library, so quantized ops are checked against independent values.
// Supported: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q6_K; IQ4_NL, IQ4_XS, TQ1_0,
// TQ2_0 (lmtest_iq4_tq.h); IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
// IQ1_M (lmtest_iq_grid.h).

#include "ggml.h"
#include "lmtest_rng.h"

#include <cstddef>
#include <cstdint>

namespace lmtest {

struct BlockLayout {
    int64_t block_elems; // elements per block
    size_t block_bytes;  // bytes per block
};

// false for formats this file does not know
bool quant_layout(lm_ggml_type type, BlockLayout * out);

// Fills n_blocks blocks with random quants and modest scales (|x| <~ 1).
void quant_random_blocks(lm_ggml_type type, int64_t n_blocks, Rng & rng, uint8_t * out);

// Dequantizes n elements (a multiple of the block size) into out.
void quant_dequantize(lm_ggml_type type, const uint8_t * blocks, int64_t n, double * out);

} // namespace lmtest

#pragma once
// Double-precision references shared by several op tables (and by the
// multi-op graph cases). Semantics are documented where each op's table is.

#include "op_case.h"

namespace opstest {

// dst[i, j, i2, i3] = sum_k a[k, i, i2 / (ne2(b)/ne2(a)), i3 / (ne3(b)/ne3(a))] * b[k, j, i2, i3]
HTensor mul_mat_ref(const HTensor & a, const HTensor & b);
// per row: (x - mean) / sqrt(var + eps), or x / sqrt(mean(x^2) + eps) when rms
HTensor norm_ref(const HTensor & a, double eps, bool rms);
// ALiBi slope of head h among n_head heads (1 when max_bias <= 0)
double alibi_slope(int64_t h, int64_t n_head, double max_bias);
// softmax(x*scale + slope_h * mask[:, row]) per row; mask may be NULL
HTensor soft_max_ref(const HTensor & a, const HTensor * mask, double scale, double max_bias);

} // namespace opstest

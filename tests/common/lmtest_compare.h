#pragma once
// Comparison of a computed tensor with its reference.
//
// NMSE = sum((actual - expected)^2) / sum(expected^2) over the finite
// reference elements (SPEC §4 limits: 1e-7 for F32 ops, 5e-4 for matrix
// products with F16/quantized weights, 1e-4 for ROPE). Non-finite reference
// elements (e.g. -inf from DIAG_MASK_INF) must be reproduced exactly, and a
// non-finite result where the reference is finite always fails, whatever
// the NMSE. Elements marked dont_care in the reference are skipped.

#include "lmtest_tensor.h"

#include <string>

namespace lmtest {

struct CompareResult {
    bool ok = false;
    double nmse = 0.0;   // NaN when a non-finite mismatch was found
    std::string message; // why it failed, with the worst elements
};

CompareResult compare_nmse(const HTensor & expected, const HTensor & actual, double max_nmse);
// Every element must be equal (NaN matches NaN).
CompareResult compare_exact(const HTensor & expected, const HTensor & actual);

} // namespace lmtest

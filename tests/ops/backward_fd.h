#pragma once
// Checks for the references of the training ops (cases_backward*.cpp): an
// analytic gradient written from the math is compared with central
// differences of a double-precision forward reference, so a wrong
// derivation in a reference fails the case instead of confirming a kernel
// that has the same mistake.

#include "op_case.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

namespace opstest::fd {

// sum_i a_i * b_i: the scalar whose gradient a *_back op computes, with b the
// forward op's result and a the incoming gradient dy
inline double dot(const HTensor & a, const HTensor & b) {
    double s = 0;
    for (size_t i = 0; i < a.v.size(); ++i) {
        s += a.v[i] * b.v[i];
    }
    return s;
}

// Inputs above this many elements are not differenced (each element costs
// two evaluations of L over the whole input); the same reference code is
// checked on the smaller cases of its op.
constexpr size_t kMaxDifferenced = 1536;

// analytic[i] must equal dL/dx_i at x for every element, measured with
// central differences of step h (error O(h^2) plus rounding, far below the
// relative 1e-6 allowed here for smooth L and inputs of order 1).
inline void expect_gradient(const std::string & what, const HTensor & analytic, const HTensor & x,
                            const std::function<double(const HTensor &)> & L, double h = 1e-5) {
    if (x.v.size() > kMaxDifferenced) {
        return;
    }
    HTensor xp = x;
    double max_err = 0, max_abs = 0;
    size_t worst = 0;
    for (size_t i = 0; i < x.v.size(); ++i) {
        xp.v[i] = x.v[i] + h;
        const double lp = L(xp);
        xp.v[i] = x.v[i] - h;
        const double lm = L(xp);
        xp.v[i] = x.v[i];
        const double err = std::fabs((lp - lm) / (2 * h) - analytic.v[i]);
        if (err > max_err) {
            max_err = err;
            worst = i;
        }
        max_abs = std::max(max_abs, std::fabs(analytic.v[i]));
    }
    EXPECT_LE(max_err, 1e-6 * std::max(1.0, max_abs))
        << what << ": the analytic reference gradient disagrees with central differences at flat element " << worst
        << " (analytic " << analytic.v[worst] << ")";
}

} // namespace opstest::fd

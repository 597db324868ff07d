#pragma once
// Gradient checks: the gradients lm_ggml_build_backward_expand computes,
// against central finite differences of the forward graph.
//
// A case builds y = f(params, constants). The loss is L = sum(y * R) with R
// a fixed random tensor (so that every output element has its own weight and
// transposed or permuted gradients cannot pass by symmetry). The analytic
// side is the backward graph of that loss; the numeric side evaluates only
// y (in F32, on the CPU) and forms L in double on the host, so the only F32
// rounding in L is y's own, one ulp-ish per element.
//
// Numeric derivative: the five-point stencil
//   (8 (L(x+h) - L(x-h)) - (L(x+2h) - L(x-2h))) / (12 h)
// whose truncation error is h^4 f^(5) / 30 (~3e-10 for h = 1e-2 and
// derivatives of order 1) and whose rounding error is about
// 18 / (12 h) * |dL| with |dL| ~ 1e-7 * sqrt(N) * |y| the F32 error of L:
// ~2e-4 for N = 100 outputs of size 1 at h = 1e-2. The default tolerance,
// 3e-3 + 3e-3 |numeric|, is ten times that; a wrong rule (a missing factor, a
// transposed or unreduced gradient) is off by O(1). Non-smooth ops (abs,
// relu, max pooling) get inputs at least 0.1 away from their kinks, farther
// than the stencil's 2h reach.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"

namespace gradcheck {

// value of element (i0, i1, i2, i3) of an F32 or F16 tensor, by strides
inline double get(const lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const char * p = static_cast<const char *>(t->data) + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
    if (t->type == LM_GGML_TYPE_F16) return lm_ggml_fp16_to_fp32(*reinterpret_cast<const lm_ggml_fp16_t *>(p));
    return *reinterpret_cast<const float *>(p);
}

// every element in logical order (i0 fastest)
inline std::vector<double> read(const lm_ggml_tensor * t) {
    std::vector<double> v;
    v.reserve((size_t) lm_ggml_nelements(t));
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++) v.push_back(get(t, i0, i1, i2, i3));
    return v;
}

class Check {
public:
    explicit Check(uint32_t seed) : rng_(seed) {
        lm_ggml_init_params ip = {256u << 20, nullptr, false};
        ctx_ = lm_ggml_init(ip);
    }
    ~Check() { lm_ggml_free(ctx_); }
    Check(const Check &) = delete;
    Check & operator=(const Check &) = delete;

    lm_ggml_context * ctx() const { return ctx_; }
    std::mt19937 & rng() { return rng_; }
    int dim(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

    // F32 tensor with values uniform in [lo, hi]; with `away` > 0 the values
    // keep |x| >= away (random sign) so kinks at 0 stay out of the stencil
    lm_ggml_tensor * tensor(std::vector<int64_t> ne, float lo = -1.0f, float hi = 1.0f, float away = 0.0f) {
        while (ne.size() < 4) ne.push_back(1);
        lm_ggml_tensor * t = lm_ggml_new_tensor(ctx_, LM_GGML_TYPE_F32, 4, ne.data());
        float * d = static_cast<float *>(t->data);
        std::uniform_real_distribution<float> u(lo, hi);
        for (int64_t i = 0; i < lm_ggml_nelements(t); i++) {
            float x = u(rng_);
            if (away > 0.0f) x = (std::fabs(x) + away) * (x < 0 ? -1.0f : 1.0f);
            d[i] = x;
        }
        return t;
    }
    lm_ggml_tensor * param(std::vector<int64_t> ne, float lo = -1.0f, float hi = 1.0f, float away = 0.0f) {
        lm_ggml_tensor * t = tensor(std::move(ne), lo, hi, away);
        lm_ggml_set_param(ctx_, t);
        lm_ggml_format_name(t, "param%zu", params_.size());
        params_.push_back(t);
        return t;
    }
    // distinct values (spaced 0.1 apart, shuffled): a unique max per window
    lm_ggml_tensor * param_distinct(std::vector<int64_t> ne) {
        lm_ggml_tensor * t = param(std::move(ne));
        const int64_t n = lm_ggml_nelements(t);
        std::vector<int64_t> perm((size_t) n);
        for (int64_t i = 0; i < n; i++) perm[(size_t) i] = i;
        std::shuffle(perm.begin(), perm.end(), rng_);
        float * d = static_cast<float *>(t->data);
        for (int64_t i = 0; i < n; i++) d[i] = 0.1f * (float) perm[(size_t) i] - 0.05f * (float) n;
        return t;
    }
    lm_ggml_tensor * ids(std::vector<int32_t> v) {
        lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx_, LM_GGML_TYPE_I32, (int64_t) v.size());
        std::copy(v.begin(), v.end(), static_cast<int32_t *>(t->data));
        return t;
    }

    // Runs the check on y; `no_grad` lists params that must get no gradient.
    void run(lm_ggml_tensor * y, double atol = 3e-3, double rtol = 3e-3, float h = 1e-2f,
             const std::vector<lm_ggml_tensor *> & no_grad = {});

private:
    double loss_numeric(lm_ggml_cgraph * gf, lm_ggml_tensor * y, const std::vector<double> & r);

    lm_ggml_context * ctx_ = nullptr;
    std::mt19937 rng_;
    std::vector<lm_ggml_tensor *> params_;
};

} // namespace gradcheck

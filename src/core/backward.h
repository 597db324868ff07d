#pragma once
// Internal to the backward pass (backward.cpp drives it, backward_rules.cpp
// holds the per-op gradient rules). Gradients live in the graph's grads /
// grad_accs arrays, indexed by the tensor's slot in visited_hash_set.

#include "ggml-impl.h"

#include <vector>

namespace lmggml::backward {

// Sources whose gradient cannot influence the output gradient (index only,
// shape only, piecewise constant, or overwritten): ggml never propagates
// into them, so they need no rule and do not make a node need a gradient.
bool ignores_src(const lm_ggml_tensor * node, int j);

// NULL when `node` has a gradient rule for every source flagged in `need`;
// otherwise what is missing (for the one error line).
const char * missing_rule(const lm_ggml_tensor * node, const bool need[LM_GGML_MAX_SRC]);

// State of one lm_ggml_build_backward_expand call.
class Builder {
public:
    Builder(lm_ggml_context * ctx, lm_ggml_cgraph * g, const std::vector<char> & needed)
        : ctx_(ctx), g_(g), needed_(needed) {}

    // slot of t in the graph's hash set, or LM_GGML_HASHSET_FULL when absent
    size_t slot(const lm_ggml_tensor * t) const;
    // t takes part in the backward pass (is, or depends on, a parameter)
    bool needs(const lm_ggml_tensor * t) const;
    lm_ggml_tensor * grad(const lm_ggml_tensor * t) const;

    // Add d to the gradient of src (or set it when src has none yet). With a
    // gradient accumulator the update is in place, so it lands in the
    // accumulator's memory. sub subtracts d; add1 adds a scalar d to every
    // element; acc adds d into the region (nb1, nb2, nb3, offset) of src's
    // gradient (zeros elsewhere).
    void add(lm_ggml_tensor * src, lm_ggml_tensor * d);
    void sub(lm_ggml_tensor * src, lm_ggml_tensor * d);
    void add1(lm_ggml_tensor * src, lm_ggml_tensor * d);
    void acc(lm_ggml_tensor * src, lm_ggml_tensor * d, size_t nb1, size_t nb2, size_t nb3, size_t offset);

    // the gradient rule of node (whose own gradient is `grad`)
    void apply(lm_ggml_tensor * node, lm_ggml_tensor * grad);

    lm_ggml_context * ctx() const { return ctx_; }
    // a constructor returned NULL (context out of memory): the pass failed
    bool failed() const { return failed_; }

private:
    void set(size_t i, lm_ggml_tensor * g, const lm_ggml_tensor * src);

    lm_ggml_context * ctx_;
    lm_ggml_cgraph * g_;
    const std::vector<char> & needed_;
    bool failed_ = false;
};

} // namespace lmggml::backward

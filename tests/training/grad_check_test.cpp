// A gradient check for every op with a backward rule (ggml 1.4.1's list),
// on random shapes (three seeds each), with broadcasts, views and
// non-contiguous inputs. Method and tolerance: grad_util.h.

#include "grad_util.h"

using gradcheck::Check;

namespace {

constexpr uint32_t kSeeds[] = {1, 2, 3};

#define FOR_SEEDS                                                                                                      \
    for (uint32_t seed : kSeeds)                                                                                       \
        if (Check c(seed); true)

} // namespace

// ---------------------------------------------------------------- element-wise binary

TEST(GradCheck, AddSameShapeAndBroadcast) {
    FOR_SEEDS {
        const int n0 = c.dim(2, 5), n1 = c.dim(1, 4), n2 = c.dim(1, 3);
        lm_ggml_tensor * a = c.param({n0, n1, n2});
        lm_ggml_tensor * b = c.param({n0, 1, n2}); // broadcast along dim 1
        lm_ggml_tensor * d = c.param({n0, n1, n2});
        c.run(lm_ggml_add(c.ctx(), lm_ggml_add(c.ctx(), a, b), d));
    }
}

TEST(GradCheck, SubBroadcast) {
    FOR_SEEDS {
        const int n0 = c.dim(2, 5), n1 = c.dim(2, 4);
        lm_ggml_tensor * a = c.param({n0, n1, 2});
        lm_ggml_tensor * b = c.param({n0, 1, 1});
        c.run(lm_ggml_sub(c.ctx(), a, b));
    }
}

TEST(GradCheck, MulBroadcastBothSides) {
    FOR_SEEDS {
        const int n0 = c.dim(2, 5), n1 = c.dim(2, 4);
        lm_ggml_tensor * a = c.param({n0, n1, 3});
        lm_ggml_tensor * b = c.param({1, n1, 1});
        c.run(lm_ggml_mul(c.ctx(), a, b));
    }
}

TEST(GradCheck, DivBroadcast) {
    FOR_SEEDS {
        const int n0 = c.dim(2, 5), n1 = c.dim(2, 4);
        lm_ggml_tensor * a = c.param({n0, n1});
        lm_ggml_tensor * b = c.param({n0, 1}, 0.5f, 2.0f);
        c.run(lm_ggml_div(c.ctx(), a, b));
    }
}

TEST(GradCheck, Add1) {
    FOR_SEEDS {
        lm_ggml_tensor * a = c.param({c.dim(2, 5), c.dim(1, 4)});
        lm_ggml_tensor * s = c.param({1});
        c.run(lm_ggml_add1(c.ctx(), a, s));
    }
}

TEST(GradCheck, NonContiguousInputs) {
    FOR_SEEDS {
        // a transposed and a permuted parameter feed an element-wise op
        const int n0 = c.dim(2, 4), n1 = c.dim(2, 4), n2 = c.dim(2, 3);
        lm_ggml_tensor * a = c.param({n1, n0});
        lm_ggml_tensor * b = c.param({n0, n1});
        c.run(lm_ggml_mul(c.ctx(), lm_ggml_transpose(c.ctx(), a), b));

        Check c2(seed + 100);
        lm_ggml_tensor * p = c2.param({n2, n0, n1});
        lm_ggml_tensor * q = c2.param({n0, n1, n2});
        c2.run(lm_ggml_add(c2.ctx(), lm_ggml_permute(c2.ctx(), p, 2, 0, 1, 3), q));
    }
}

// ---------------------------------------------------------------- unary / element-wise math

TEST(GradCheck, SqrSqrtLog) {
    FOR_SEEDS {
        lm_ggml_tensor * a = c.param({c.dim(2, 6), c.dim(1, 4)});
        c.run(lm_ggml_sqr(c.ctx(), a));
        Check c2(seed + 10);
        lm_ggml_tensor * b = c2.param({c2.dim(2, 6), 3}, 0.5f, 2.0f);
        c2.run(lm_ggml_sqrt(c2.ctx(), b));
        Check c3(seed + 20);
        lm_ggml_tensor * d = c3.param({c3.dim(2, 6), 2}, 0.5f, 2.0f);
        c3.run(lm_ggml_log(c3.ctx(), d));
    }
}

TEST(GradCheck, SinCosScale) {
    FOR_SEEDS {
        lm_ggml_tensor * a = c.param({c.dim(2, 6), c.dim(1, 3)}, -2.0f, 2.0f);
        c.run(lm_ggml_sin(c.ctx(), a));
        Check c2(seed + 10);
        lm_ggml_tensor * b = c2.param({c2.dim(2, 6), 2}, -2.0f, 2.0f);
        c2.run(lm_ggml_cos(c2.ctx(), b));
        Check c3(seed + 20);
        lm_ggml_tensor * d = c3.param({c3.dim(2, 6), 2});
        c3.run(lm_ggml_scale(c3.ctx(), d, -1.75f));
    }
}

TEST(GradCheck, UnaryAbsNegReluSiluExp) {
    FOR_SEEDS {
        const int n0 = c.dim(2, 6), n1 = c.dim(1, 3);
        lm_ggml_tensor * a = c.param({n0, n1}, -1.0f, 1.0f, 0.1f);
        c.run(lm_ggml_abs(c.ctx(), a));
        Check c2(seed + 10);
        c2.run(lm_ggml_neg(c2.ctx(), c2.param({n0, n1})));
        Check c3(seed + 20);
        c3.run(lm_ggml_relu(c3.ctx(), c3.param({n0, n1}, -1.0f, 1.0f, 0.1f)));
        Check c4(seed + 30);
        c4.run(lm_ggml_silu(c4.ctx(), c4.param({n0, n1}, -3.0f, 3.0f)));
        Check c5(seed + 40);
        c5.run(lm_ggml_exp(c5.ctx(), c5.param({n0, n1})));
    }
}

TEST(GradCheck, SgnAndStepGiveNoGradient) {
    // piecewise constant: the parameter gets no gradient through them, only
    // through the second, differentiable path
    FOR_SEEDS {
        lm_ggml_tensor * a = c.param({c.dim(2, 5), 2}, -1.0f, 1.0f, 0.1f);
        lm_ggml_tensor * b = c.param({a->ne[0], 2}, -1.0f, 1.0f, 0.1f);
        lm_ggml_tensor * y = lm_ggml_add(c.ctx(), lm_ggml_sgn(c.ctx(), a), lm_ggml_step(c.ctx(), a));
        c.run(lm_ggml_add(c.ctx(), y, b), 3e-3, 3e-3, 1e-2f, {a});
    }
}

// ---------------------------------------------------------------- reductions, repeat

TEST(GradCheck, SumSumRowsMean) {
    FOR_SEEDS {
        const int n0 = c.dim(2, 5), n1 = c.dim(1, 4), n2 = c.dim(1, 3);
        c.run(lm_ggml_sum(c.ctx(), c.param({n0, n1, n2})));
        Check c2(seed + 10);
        c2.run(lm_ggml_sum_rows(c2.ctx(), c2.param({n0, n1, n2})));
        Check c3(seed + 20);
        c3.run(lm_ggml_mean(c3.ctx(), c3.param({n0, n1, n2})));
    }
}

TEST(GradCheck, SumFeedsTwoConsumers) {
    // a scalar gradient added to an existing one (the add1 path of SUM)
    FOR_SEEDS {
        lm_ggml_tensor * a = c.param({c.dim(2, 5), c.dim(2, 3)});
        lm_ggml_tensor * s = lm_ggml_sum(c.ctx(), a);
        c.run(lm_ggml_add1(c.ctx(), lm_ggml_sqr(c.ctx(), a), s));
    }
}

TEST(GradCheck, RepeatAndRepeatBack) {
    FOR_SEEDS {
        const int n0 = c.dim(1, 3), n1 = c.dim(1, 3);
        lm_ggml_tensor * a = c.param({n0, n1});
        lm_ggml_tensor * shape = c.tensor({2 * n0, n1, 3});
        c.run(lm_ggml_repeat(c.ctx(), a, shape));
        Check c2(seed + 10);
        lm_ggml_tensor * b = c2.param({2 * n0, n1, 3});
        lm_ggml_tensor * sm = c2.tensor({n0, n1});
        c2.run(lm_ggml_repeat_back(c2.ctx(), b, sm));
    }
}

// ---------------------------------------------------------------- layout and views

TEST(GradCheck, DupCpyContReshape) {
    FOR_SEEDS {
        const int n0 = c.dim(2, 4), n1 = c.dim(2, 4);
        lm_ggml_tensor * a = c.param({n0, n1});
        c.run(lm_ggml_dup(c.ctx(), a));
        Check c2(seed + 10);
        lm_ggml_tensor * b = c2.param({n0, n1});
        lm_ggml_tensor * dst = c2.tensor({n0, n1});
        c2.run(lm_ggml_cpy(c2.ctx(), b, dst));
        Check c3(seed + 20);
        lm_ggml_tensor * d = c3.param({n0, n1, 2});
        c3.run(lm_ggml_cont_2d(c3.ctx(), lm_ggml_transpose(c3.ctx(), lm_ggml_reshape_2d(c3.ctx(), d, n0, 2 * n1)),
                               2 * n1, n0));
        Check c4(seed + 30);
        c4.run(lm_ggml_reshape_3d(c4.ctx(), c4.param({n0, n1, 2}), n1, 2, n0));
    }
}

TEST(GradCheck, ViewsPermuteTranspose) {
    FOR_SEEDS {
        const int n0 = c.dim(3, 5), n1 = c.dim(2, 4), n2 = c.dim(2, 3);
        lm_ggml_tensor * a = c.param({n0, n1, n2});
        // a strided 2-d slice starting at element (1, 0, 1), used twice
        lm_ggml_tensor * v = lm_ggml_view_2d(c.ctx(), a, n0 - 1, n1, a->nb[1], a->nb[2] + a->nb[0]);
        c.run(lm_ggml_mul(c.ctx(), v, lm_ggml_view_2d(c.ctx(), a, n0 - 1, n1, a->nb[1], 0)));
        Check c2(seed + 10);
        c2.run(lm_ggml_permute(c2.ctx(), c2.param({n0, n1, n2, 2}), 1, 3, 0, 2));
        Check c3(seed + 20);
        c3.run(lm_ggml_transpose(c3.ctx(), c3.param({n0, n1})));
    }
}

TEST(GradCheck, AccAndSet) {
    FOR_SEEDS {
        const int n0 = c.dim(3, 5), n1 = c.dim(3, 4);
        lm_ggml_tensor * a = c.param({n0, n1});
        lm_ggml_tensor * b = c.param({n0 - 1, n1 - 2});
        c.run(lm_ggml_acc(c.ctx(), a, b, a->nb[1], a->nb[2], a->nb[3], a->nb[1] + a->nb[0]));
        Check c2(seed + 10);
        lm_ggml_tensor * p = c2.param({n0, n1});
        lm_ggml_tensor * q = c2.param({n0 - 2, n1 - 1});
        c2.run(lm_ggml_set(c2.ctx(), p, q, p->nb[1], p->nb[2], p->nb[3], p->nb[0] * 2));
    }
}

TEST(GradCheck, GetRowsWithRepeatedIndices) {
    FOR_SEEDS {
        const int n0 = c.dim(2, 5), rows = c.dim(3, 5);
        lm_ggml_tensor * a = c.param({n0, rows});
        lm_ggml_tensor * i = c.ids({0, (int32_t) rows - 1, 1, 0, (int32_t) rows - 1});
        c.run(lm_ggml_get_rows(c.ctx(), a, i));
    }
}

// ---------------------------------------------------------------- linear algebra

TEST(GradCheck, MulMat) {
    FOR_SEEDS {
        const int k = c.dim(2, 5), m = c.dim(1, 4), n = c.dim(1, 4);
        lm_ggml_tensor * a = c.param({k, m, 2});
        lm_ggml_tensor * b = c.param({k, n, 2});
        c.run(lm_ggml_mul_mat(c.ctx(), a, b));
    }
}

TEST(GradCheck, MulMatBroadcastOverBatches) {
    FOR_SEEDS {
        const int k = c.dim(2, 4), m = c.dim(1, 3), n = c.dim(1, 3);
        lm_ggml_tensor * a = c.param({k, m, 1, 2});
        lm_ggml_tensor * b = c.param({k, n, 3, 2});
        c.run(lm_ggml_mul_mat(c.ctx(), a, b));
    }
}

// ---------------------------------------------------------------- normalization, attention pieces

TEST(GradCheck, RmsNorm) {
    FOR_SEEDS {
        lm_ggml_tensor * a = c.param({c.dim(2, 8), c.dim(1, 3), 2});
        c.run(lm_ggml_rms_norm(c.ctx(), a, 1e-5f));
    }
}

TEST(GradCheck, SoftMaxPlainScaledMasked) {
    FOR_SEEDS {
        const int n0 = c.dim(2, 6), n1 = c.dim(1, 4);
        c.run(lm_ggml_soft_max(c.ctx(), c.param({n0, n1, 2}, -2.0f, 2.0f)));
        Check c2(seed + 10);
        lm_ggml_tensor * a = c2.param({n0, n1}, -2.0f, 2.0f);
        lm_ggml_tensor * mask = c2.tensor({n0, n1});
        c2.run(lm_ggml_soft_max_ext(c2.ctx(), a, mask, 0.7f, 0.0f));
    }
}

TEST(GradCheck, DiagMaskInfThenSoftMaxAndDiagMaskZero) {
    FOR_SEEDS {
        const int n = c.dim(2, 5);
        lm_ggml_tensor * a = c.param({n, n, 2});
        c.run(lm_ggml_soft_max(c.ctx(), lm_ggml_diag_mask_inf(c.ctx(), a, 1)));
        Check c2(seed + 10);
        c2.run(lm_ggml_diag_mask_zero(c2.ctx(), c2.param({n, n}), 0));
    }
}

TEST(GradCheck, RopeNormalAndNeox) {
    for (int mode : {0, LM_GGML_ROPE_TYPE_NEOX}) {
        FOR_SEEDS {
            const int d = 2 * c.dim(2, 4), heads = c.dim(1, 3), tokens = c.dim(1, 4);
            lm_ggml_tensor * a = c.param({d, heads, tokens});
            std::vector<int32_t> pos;
            for (int t = 0; t < tokens; t++) pos.push_back(3 * t + 1);
            lm_ggml_tensor * p = c.ids(pos);
            c.run(lm_ggml_rope_ext(c.ctx(), a, p, nullptr, d, mode, 64, 100.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f));
        }
    }
}

TEST(GradCheck, Im2ColAndPool2d) {
    FOR_SEEDS {
        const int w = c.dim(3, 5), h = c.dim(3, 5), ch = c.dim(1, 2);
        lm_ggml_tensor * x = c.param({w, h, ch, 1});
        lm_ggml_tensor * k = c.tensor({2, 2, ch, 1});
        c.run(lm_ggml_im2col(c.ctx(), k, x, 1, 1, 1, 0, 1, 1, true, LM_GGML_TYPE_F32));
        Check c2(seed + 10);
        lm_ggml_tensor * y = c2.param({w, h, ch, 1});
        c2.run(lm_ggml_pool_2d(c2.ctx(), y, LM_GGML_OP_POOL_AVG, 2, 2, 1, 1, 0.0f, 0.0f));
        Check c3(seed + 20);
        lm_ggml_tensor * z = c3.param_distinct({w, h, ch, 1});
        c3.run(lm_ggml_pool_2d(c3.ctx(), z, LM_GGML_OP_POOL_MAX, 2, 2, 2, 2, 0.0f, 0.0f));
    }
}

TEST(GradCheck, CrossEntropyLoss) {
    FOR_SEEDS {
        const int classes = c.dim(2, 6), n = c.dim(1, 4);
        lm_ggml_tensor * logits = c.param({classes, n}, -2.0f, 2.0f);
        // labels: a probability distribution per datapoint
        lm_ggml_tensor * raw = c.tensor({classes, n});
        lm_ggml_tensor * labels = lm_ggml_soft_max(c.ctx(), raw);
        c.run(lm_ggml_cross_entropy_loss(c.ctx(), logits, labels));
    }
}

TEST(GradCheck, TwoLayerNetworkEndToEnd) {
    // chain of rules: mul_mat, add (broadcast bias), relu, mul_mat, soft_max, cross entropy
    FOR_SEEDS {
        const int in = c.dim(2, 4), hid = c.dim(2, 4), out = c.dim(2, 3), n = c.dim(2, 3);
        lm_ggml_tensor * x = c.tensor({in, n});
        lm_ggml_tensor * w1 = c.param({in, hid});
        lm_ggml_tensor * b1 = c.param({hid, 1}, 0.2f, 1.0f);
        lm_ggml_tensor * w2 = c.param({hid, out});
        lm_ggml_tensor * h = lm_ggml_silu(c.ctx(), lm_ggml_add(c.ctx(), lm_ggml_mul_mat(c.ctx(), w1, x), b1));
        lm_ggml_tensor * o = lm_ggml_mul_mat(c.ctx(), w2, h);
        lm_ggml_tensor * lb = lm_ggml_soft_max(c.ctx(), c.tensor({out, n}));
        c.run(lm_ggml_cross_entropy_loss(c.ctx(), o, lb));
    }
}

// ---------------------------------------------------------------- more layouts and variants

TEST(GradCheck, RopeWithFreqFactorsAndYarn) {
    FOR_SEEDS {
        const int d = 2 * c.dim(2, 4), heads = c.dim(1, 2), tokens = c.dim(1, 3);
        lm_ggml_tensor * a = c.param({d, heads, tokens});
        lm_ggml_tensor * ff = c.tensor({d / 2}, 1.0f, 4.0f); // constant frequency factors
        std::vector<int32_t> pos;
        for (int t = 0; t < tokens; t++) pos.push_back(5 * t + 2);
        c.run(lm_ggml_rope_ext(c.ctx(), a, c.ids(pos), ff, d, LM_GGML_ROPE_TYPE_NEOX, 16, 500.0f, 0.5f, 0.8f, 1.0f,
                               32.0f, 1.0f));
    }
}

TEST(GradCheck, RopeMulti) {
    FOR_SEEDS {
        const int d = 8, heads = c.dim(1, 2), tokens = c.dim(1, 3);
        lm_ggml_tensor * a = c.param({d, heads, tokens});
        std::vector<int32_t> pos; // four position streams of `tokens` each
        for (int s = 0; s < 4; s++)
            for (int t = 0; t < tokens; t++) pos.push_back(t * (s + 1) + s);
        int sections[4] = {2, 1, 1, 0};
        c.run(lm_ggml_rope_multi(c.ctx(), a, c.ids(pos), nullptr, d, sections, LM_GGML_ROPE_TYPE_MROPE, 32, 100.0f,
                                 1.0f, 0.0f, 1.0f, 32.0f, 1.0f));
    }
}

TEST(GradCheck, MulMatOfTransposedOperand) {
    FOR_SEEDS {
        const int k = c.dim(2, 4), m = c.dim(2, 3), n = c.dim(2, 3);
        lm_ggml_tensor * a = c.param({k, m});
        lm_ggml_tensor * b = c.param({n, k}); // used as its transpose [k, n] (non-contiguous)
        c.run(lm_ggml_mul_mat(c.ctx(), a, lm_ggml_cont(c.ctx(), lm_ggml_transpose(c.ctx(), b))));
    }
}

TEST(GradCheck, SoftMaxWithAlibiBias) {
    FOR_SEEDS {
        const int n0 = c.dim(2, 5), n1 = c.dim(1, 3), heads = 2;
        lm_ggml_tensor * a = c.param({n0, n1, heads}, -2.0f, 2.0f);
        lm_ggml_tensor * mask = c.tensor({n0, n1});
        c.run(lm_ggml_soft_max_ext(c.ctx(), a, mask, 0.5f, 8.0f));
    }
}

TEST(GradCheck, Conv2dKernelAndInput) {
    // conv_2d is im2col + mul_mat: the kernel's gradient goes through
    // mul_mat and reshapes, the input's through im2col_back
    FOR_SEEDS {
        const int w = c.dim(3, 5), h = c.dim(3, 5), ic = c.dim(1, 2), oc = c.dim(1, 2);
        lm_ggml_tensor * k = c.param({2, 2, ic, oc});
        lm_ggml_tensor * x = c.param({w, h, ic, 1});
        c.run(lm_ggml_conv_2d(c.ctx(), k, x, 1, 1, 0, 0, 1, 1));
    }
}

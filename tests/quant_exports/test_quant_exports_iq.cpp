// ggml-quants.h's exports for the grid I-quants (IQ1_S, IQ2_XXS, IQ2_XS,
// IQ2_S, IQ3_XXS, IQ3_S), called as a backend plugin would: dequantize_row_X against
// the test-side decoder (lmtest_iq_grid.h, written from the block formats),
// quantize_X and the quantize_row_X_ref that exist against the library's
// other entry point (same bytes) and the original data (error bound), and
// lm_iq2xs_free_impl (a freed grid map is rebuilt on the next use).
#include "ggml-quants.h"

#include "lmtest_iq_grid.h"
#include "lmtest_rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

struct IqFns {
    lm_ggml_type t;
    void (*deq)(const void *, float *, int64_t);
    size_t (*quant)(const float *, void *, int64_t, int64_t, const float *);
    void (*ref)(const float *, void *, int64_t); // NULL: ggml has none (needs an imatrix)
    double max_nmse;                             // round trip of Gaussian data with an imatrix
};

#define LM_DEQ(t)                                                                                                      \
    [](const void * x, float * y, int64_t k) { dequantize_row_##t(static_cast<const block_##t *>(x), y, k); }
#define LM_REF(t)                                                                                                      \
    [](const float * x, void * y, int64_t k) { quantize_row_##t##_ref(x, static_cast<block_##t *>(y), k); }

const std::vector<IqFns> & iq_fns() {
    static const std::vector<IqFns> v = {
        {LM_GGML_TYPE_IQ1_S, LM_DEQ(iq1_s), quantize_iq1_s, nullptr, 0.3},
        {LM_GGML_TYPE_IQ2_XXS, LM_DEQ(iq2_xxs), quantize_iq2_xxs, nullptr, 0.15},
        {LM_GGML_TYPE_IQ2_XS, LM_DEQ(iq2_xs), quantize_iq2_xs, nullptr, 0.12},
        {LM_GGML_TYPE_IQ2_S, LM_DEQ(iq2_s), quantize_iq2_s, LM_REF(iq2_s), 0.09},
        {LM_GGML_TYPE_IQ3_XXS, LM_DEQ(iq3_xxs), quantize_iq3_xxs, LM_REF(iq3_xxs), 0.05},
        {LM_GGML_TYPE_IQ3_S, LM_DEQ(iq3_s), quantize_iq3_s, LM_REF(iq3_s), 0.05},
    };
    return v;
}

#undef LM_DEQ
#undef LM_REF

std::vector<float> gaussian(size_t n, uint64_t seed) {
    lmtest::Rng rng(seed);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; i += 2) {
        const double u = rng.uniform(1e-12, 1.0), w = rng.uniform(0.0, 6.283185307179586);
        x[i] = (float) (std::sqrt(-2 * std::log(u)) * std::cos(w));
        if (i + 1 < n) x[i + 1] = (float) (std::sqrt(-2 * std::log(u)) * std::sin(w));
    }
    return x;
}

double nmse(const std::vector<float> & x, const std::vector<float> & y) {
    double num = 0, den = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        num += ((double) x[i] - y[i]) * ((double) x[i] - y[i]);
        den += (double) x[i] * x[i];
    }
    return num / den;
}

TEST(QuantExportsIq, DequantizeMatchesFormat) {
    for (const IqFns & f : iq_fns()) {
        SCOPED_TRACE(lm_ggml_type_name(f.t));
        const int64_t nb = 3, n = nb * 256;
        const size_t bb = lmtest::iqgrid::block_bytes(f.t);
        lmtest::Rng rng(lmtest::seed_from_name(lm_ggml_type_name(f.t)));
        std::vector<uint8_t> q(bb * nb);
        for (int64_t i = 0; i < nb; ++i) lmtest::iqgrid::random_block(f.t, rng, q.data() + i * bb);
        std::vector<float> y((size_t) n, NAN);
        f.deq(q.data(), y.data(), n);
        std::vector<double> want(256);
        for (int64_t i = 0; i < nb; ++i) {
            lmtest::iqgrid::dequantize_block(f.t, q.data() + i * bb, want.data());
            for (int j = 0; j < 256; ++j)
                ASSERT_NEAR(y[i * 256 + j], want[j], 1e-6 * std::fabs(want[j]) + 1e-9) << i * 256 + j;
        }
    }
}

TEST(QuantExportsIq, QuantizersMatchTheChunkEntryAndTheData) {
    const int64_t n_per_row = 512, nrows = 2, n = n_per_row * nrows;
    const std::vector<float> x = gaussian((size_t) n, 21);
    std::vector<float> imat((size_t) n_per_row);
    lmtest::Rng rng(22);
    for (float & w : imat) w = (float) rng.uniform(0.2, 2.0);
    for (const IqFns & f : iq_fns()) {
        SCOPED_TRACE(lm_ggml_type_name(f.t));
        const size_t row = lm_ggml_row_size(f.t, n_per_row);
        std::vector<uint8_t> q(row * nrows, 0xCD), chunk(row * nrows, 0x11);
        ASSERT_EQ(f.quant(x.data(), q.data(), nrows, n_per_row, imat.data()), row * nrows);
        ASSERT_EQ(lm_ggml_quantize_chunk(f.t, x.data(), chunk.data(), 0, nrows, n_per_row, imat.data()), row * nrows);
        EXPECT_EQ(q, chunk);
        std::vector<float> y((size_t) n);
        f.deq(q.data(), y.data(), n);
        EXPECT_LT(nmse(x, y), f.max_nmse);
        if (f.ref) { // the reference quantizer: quantize_X without an imatrix
            std::vector<uint8_t> r(row * nrows, 0x22), plain(row * nrows, 0x33);
            f.ref(x.data(), r.data(), n);
            ASSERT_EQ(f.quant(x.data(), plain.data(), nrows, n_per_row, nullptr), row * nrows);
            EXPECT_EQ(r, plain);
            f.deq(r.data(), y.data(), n);
            EXPECT_LT(nmse(x, y), 1.5 * f.max_nmse);
        }
    }
}

TEST(QuantExportsIq, FreedGridMapIsRebuilt) {
    const std::vector<float> x = gaussian(256, 23);
    const std::vector<float> imat(256, 1.0f);
    for (lm_ggml_type t : {LM_GGML_TYPE_IQ2_XXS, LM_GGML_TYPE_IQ2_XS, LM_GGML_TYPE_IQ2_S, LM_GGML_TYPE_IQ1_S}) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        const size_t row = lm_ggml_row_size(t, 256);
        std::vector<uint8_t> a(row), b(row);
        lm_iq2xs_init_impl(t);
        ASSERT_EQ(lm_ggml_quantize_chunk(t, x.data(), a.data(), 0, 1, 256, imat.data()), row);
        lm_iq2xs_free_impl(t);
        ASSERT_EQ(lm_ggml_quantize_chunk(t, x.data(), b.data(), 0, 1, 256, imat.data()), row);
        EXPECT_EQ(a, b);
    }
}

} // namespace

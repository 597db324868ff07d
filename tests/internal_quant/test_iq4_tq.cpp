// IQ4_NL, IQ4_XS, TQ1_0, TQ2_0: type traits, dequantization against the
// test-side decoder (lmtest_iq4_tq.h, from the format description), exact
// round trips of ternary data, error bounds of the 4-bit quantizers with and
// without an importance matrix, lm_ggml_quantize_chunk and validation.
#include "quant/q_iq4_tq.h"
#include "quant/quants.h"
#include "quant_test_util.h"
#include "lmtest_iq4_tq.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

namespace ref = lmtest::iq4tq;

const lm_ggml_type kTypes[] = {LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_IQ4_XS, LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0};

struct LogCapture {
    std::vector<std::string> errors;
    static void cb(lm_ggml_log_level level, const char * text, void * ud) {
        if (level == LM_GGML_LOG_LEVEL_ERROR) static_cast<LogCapture *>(ud)->errors.emplace_back(text);
    }
    LogCapture() { lm_ggml_log_set(cb, this); }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
};

std::vector<double> decode(lm_ggml_type t, const uint8_t * bytes, int64_t n) {
    int64_t be;
    size_t bb;
    ref::layout(t, &be, &bb);
    std::vector<double> y((size_t) n);
    for (int64_t i = 0; i < n / be; ++i) ref::dequantize_block(t, bytes + i * bb, y.data() + i * be);
    return y;
}

std::vector<uint8_t> quantize(lm_ggml_type t, const std::vector<float> & x, int64_t n_per_row, const float * imatrix) {
    const int64_t nrows = (int64_t) x.size() / n_per_row;
    std::vector<uint8_t> q(lm_ggml_row_size(t, n_per_row) * nrows);
    EXPECT_EQ(lm_ggml_quantize_chunk(t, x.data(), q.data(), 0, nrows, n_per_row, imatrix), q.size());
    return q;
}

// q4_0 from its format: d f16 | qs[16]; value j = d * (nibble - 8), low nibbles first
std::vector<double> lmtest_decode_q4_0(const uint8_t * p, int64_t n) {
    std::vector<double> y((size_t) n);
    for (int64_t b = 0; b < n / 32; ++b, p += 18) {
        for (int j = 0; j < 16; ++j) {
            y[32 * b + j] = ref::half(p) * ((p[2 + j] & 15) - 8);
            y[32 * b + j + 16] = ref::half(p) * ((p[2 + j] >> 4) - 8);
        }
    }
    return y;
}

// sum w (x - y)^2 / sum w x^2 in double
double weighted_nmse(const std::vector<float> & x, const std::vector<double> & y, const std::vector<float> & w) {
    double num = 0, den = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        const double wi = w[i % w.size()];
        num += wi * (x[i] - y[i]) * (x[i] - y[i]);
        den += wi * (double) x[i] * x[i];
    }
    return num / den;
}

TEST(QuantIq4Tq, TraitsAndLayout) {
    for (lm_ggml_type t : kTypes) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        int64_t be;
        size_t bb;
        ref::layout(t, &be, &bb);
        EXPECT_EQ(lm_ggml_blck_size(t), be);
        EXPECT_EQ(lm_ggml_type_size(t), bb);
        const lm_ggml_type_traits * tr = lm_ggml_get_type_traits(t);
        EXPECT_TRUE(tr->is_quantized);
        EXPECT_NE(tr->to_float, nullptr);
        EXPECT_NE(tr->from_float_ref, nullptr);
        const lm_quant_type_fns * f = lm_quant_get_fns(t);
        ASSERT_NE(f, nullptr);
        EXPECT_EQ(f->type_size, bb);
        EXPECT_NE(f->quantize, nullptr);
        EXPECT_FALSE(lm_ggml_quantize_requires_imatrix(t)); // as in ggml
    }
}

// Random blocks decode exactly as the format says (every product is exact in float).
TEST(QuantIq4Tq, DequantizeMatchesFormat) {
    for (lm_ggml_type t : kTypes) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        lmtest::Rng rng(lmtest::seed_from_name(lm_ggml_type_name(t)));
        const int64_t nb = 9, be = lm_ggml_blck_size(t);
        const size_t bb = lm_ggml_type_size(t);
        std::vector<uint8_t> q(bb * nb);
        for (int64_t i = 0; i < nb; ++i) ref::random_block(t, rng, q.data() + i * bb);
        // also one block of raw random bytes with a finite scale: every bit pattern decodes
        for (size_t i = 0; i < bb; ++i) q[i] = (uint8_t) (rng.next() >> 56);
        const size_t d_at = (t == LM_GGML_TYPE_TQ1_0 || t == LM_GGML_TYPE_TQ2_0) ? bb - 2 : 0;
        ref::put_half(q.data() + d_at, 0.0625);
        std::vector<float> y((size_t) (nb * be), NAN);
        lm_ggml_get_type_traits(t)->to_float(q.data(), y.data(), nb * be);
        const std::vector<double> want = decode(t, q.data(), nb * be);
        for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ((double) y[i], want[i]) << "value " << i;
    }
}

// Ternary data (d * {-1, 0, 1}, d an fp16 value, each block reaching +-d) survives exactly.
TEST(QuantIq4Tq, TernaryRoundTripIsExact) {
    for (lm_ggml_type t : {LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0}) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        lmtest::Rng rng(7);
        const int64_t n = 256 * 5;
        std::vector<float> x((size_t) n);
        for (int64_t b = 0; b < n / 256; ++b) {
            const double d = std::ldexp(1.0 + (double) rng.int_in(0, 1023) / 1024, (int) rng.int_in(-6, 3));
            for (int j = 0; j < 256; ++j) x[256 * b + j] = (float) (d * (double) (rng.int_in(0, 2) - 1));
            x[256 * b + rng.int_in(0, 255)] = (float) (b % 2 ? -d : d);
        }
        std::vector<uint8_t> q(lm_ggml_row_size(t, n)), q2(q.size());
        lm_ggml_get_type_traits(t)->from_float_ref(x.data(), q.data(), n);
        const std::vector<double> y = decode(t, q.data(), n);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], (double) x[i]) << "value " << i;
        // the imatrix changes nothing for these formats
        const std::vector<float> w = qtest::make_weights((size_t) n, 5);
        EXPECT_EQ(lm_ggml_quantize_chunk(t, x.data(), q2.data(), 0, 1, n, w.data()), q.size());
        EXPECT_EQ(q, q2);
    }
}

// General data: value = fp16(amax) * round_half_away(x / amax) per 256 values.
TEST(QuantIq4Tq, TernaryRoundsToNearestTrit) {
    const int64_t n = 256 * 8;
    const std::vector<float> x = qtest::make_input((size_t) n, 11);
    for (lm_ggml_type t : {LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0}) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        const std::vector<uint8_t> q = quantize(t, x, n, nullptr);
        const std::vector<double> y = decode(t, q.data(), n);
        for (int64_t b = 0; b < n / 256; ++b) {
            double amax = 0;
            for (int j = 0; j < 256; ++j) amax = std::fmax(amax, std::fabs((double) x[256 * b + j]));
            const float d = lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16((float) amax));
            for (int j = 0; j < 256; ++j) {
                const double r = amax > 0 ? x[256 * b + j] / amax : 0;
                if (std::fabs(std::fabs(r) - 0.5) < 1e-6) continue; // float and double may round a tie apart
                const double tr = std::fabs(r) < 0.5 ? 0 : (r > 0 ? 1 : -1);
                ASSERT_EQ(y[256 * b + j], d * tr) << "block " << b << " value " << j;
            }
        }
    }
}

// Values that are exactly a scale times the 16 levels come back (up to the fp16 scale).
TEST(QuantIq4Tq, Iq4OnItsGridIsReproduced) {
    lmtest::Rng rng(3);
    for (lm_ggml_type t : {LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_IQ4_XS}) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        const int64_t n = 512;
        std::vector<float> x((size_t) n);
        for (int64_t b = 0; b < n / 32; ++b) {
            // one scale for the whole row: iq4_xs's sub-block scales are then all equal
            for (int j = 0; j < 32; ++j) x[32 * b + j] = 0.01f * (float) ref::kLevels[rng.int_in(0, 15)];
            x[32 * b + 7] = -1.27f; // the level of largest magnitude in every block
        }
        for (int path = 0; path < 2; ++path) {
            std::vector<uint8_t> q(lm_ggml_row_size(t, n));
            if (path == 0) {
                lm_ggml_get_type_traits(t)->from_float_ref(x.data(), q.data(), n);
            } else {
                q = quantize(t, x, n, nullptr);
            }
            const std::vector<double> y = decode(t, q.data(), n);
            for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], x[i], 1e-3 * std::fabs(x[i]) + 1e-7) << path << " " << i;
        }
    }
}

// Error bounds on bell-shaped data with outliers (measured NMSE ~0.5 of these limits).
TEST(QuantIq4Tq, Iq4ErrorBoundsWithAndWithoutImatrix) {
    const int64_t n_per_row = 1024, nrows = 8;
    const std::vector<float> x = qtest::make_input((size_t) (n_per_row * nrows), 21);
    const std::vector<float> w = qtest::make_weights((size_t) n_per_row, 22);
    const std::vector<float> ones((size_t) n_per_row, 1.0f);
    for (lm_ggml_type t : {LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_IQ4_XS}) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        const int64_t n = n_per_row * nrows;
        std::vector<uint8_t> qref(lm_ggml_row_size(t, n));
        lm_ggml_get_type_traits(t)->from_float_ref(x.data(), qref.data(), n);
        const std::vector<uint8_t> qplain = quantize(t, x, n_per_row, nullptr);
        const std::vector<uint8_t> qimat = quantize(t, x, n_per_row, w.data());
        const double e_ref = weighted_nmse(x, decode(t, qref.data(), n), ones);
        const double e_plain = weighted_nmse(x, decode(t, qplain.data(), n), ones);
        const double e_imat = weighted_nmse(x, decode(t, qimat.data(), n), ones);
        // q4_0 (same bits per value, uniform levels) on the same data: the non-linear levels do better
        std::vector<uint8_t> q4(lm_ggml_row_size(LM_GGML_TYPE_Q4_0, n));
        lm_ggml_get_type_traits(LM_GGML_TYPE_Q4_0)->from_float_ref(x.data(), q4.data(), n);
        const double e_q4_0 = weighted_nmse(x, lmtest_decode_q4_0(q4.data(), n), ones);
        EXPECT_LT(e_ref, 0.018); // measured 0.0145 (iq4_nl), 0.0147 (iq4_xs); q4_0 0.027
        EXPECT_LT(e_plain, 0.018);
        EXPECT_LT(e_imat, 0.018);
        EXPECT_LT(e_ref, 0.7 * e_q4_0);
        // the trial-scale search only improves on the reference quantizer's single scale
        EXPECT_LE(e_plain, e_ref * 1.0001);
        // the imatrix trades plain error for error where the weights are large
        EXPECT_LT(weighted_nmse(x, decode(t, qimat.data(), n), w), weighted_nmse(x, decode(t, qplain.data(), n), w));
        if (t == LM_GGML_TYPE_IQ4_XS) {
            EXPECT_EQ(qref, qplain); // ggml: iq4_xs's reference quantizer is the imatrix path without one
        }
    }
}

TEST(QuantIq4Tq, ZeroRowsGiveZeros) {
    for (lm_ggml_type t : kTypes) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        const std::vector<float> x(512, 0.0f);
        for (const float * imatrix : {(const float *) nullptr, x.data()}) {
            const std::vector<uint8_t> q = quantize(t, x, 512, imatrix);
            for (double v : decode(t, q.data(), 512)) ASSERT_EQ(v, 0.0);
            EXPECT_TRUE(lm_ggml_validate_row_data(t, q.data(), q.size()));
        }
    }
}

TEST(QuantIq4Tq, ChunkWritesOnlyItsRows) {
    const int64_t n_per_row = 768, nrows = 5;
    const std::vector<float> x = qtest::make_input((size_t) (n_per_row * nrows), 31);
    const std::vector<float> w = qtest::make_weights((size_t) n_per_row, 32);
    for (lm_ggml_type t : kTypes) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        for (const float * imatrix : {(const float *) nullptr, w.data()}) {
            const size_t row = lm_ggml_row_size(t, n_per_row);
            std::vector<uint8_t> whole(row * nrows), parts(row * nrows, 0xCD);
            ASSERT_EQ(lm_ggml_quantize_chunk(t, x.data(), whole.data(), 0, nrows, n_per_row, imatrix), row * nrows);
            ASSERT_EQ(lm_ggml_quantize_chunk(t, x.data(), parts.data(), 1 * n_per_row, 3, n_per_row, imatrix), row * 3);
            for (size_t i = 0; i < row * nrows; ++i) {
                const bool inside = i >= row && i < 4 * row;
                ASSERT_EQ(parts[i], inside ? whole[i] : 0xCD) << "byte " << i;
            }
            // the imatrix-aware path, called directly, agrees
            std::vector<uint8_t> direct(row * nrows);
            EXPECT_EQ(lm_quant_get_fns(t)->quantize(x.data(), direct.data(), nrows, n_per_row, imatrix), row * nrows);
            EXPECT_EQ(direct, whole);
        }
        LogCapture log; // a partial block is refused
        std::vector<uint8_t> q(4096);
        EXPECT_EQ(lm_ggml_quantize_chunk(t, x.data(), q.data(), 0, 1, lm_ggml_blck_size(t) + 16, nullptr), 0u);
        EXPECT_EQ(log.errors.size(), 1u);
    }
}

TEST(QuantIq4Tq, ValidateRowData) {
    for (lm_ggml_type t : kTypes) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        const std::vector<float> x = qtest::make_input(1024, 41);
        std::vector<uint8_t> q = quantize(t, x, 1024, nullptr);
        EXPECT_TRUE(lm_ggml_validate_row_data(t, q.data(), q.size()));
        const size_t bb = lm_ggml_type_size(t);
        const size_t d_at = (t == LM_GGML_TYPE_TQ1_0 || t == LM_GGML_TYPE_TQ2_0) ? bb - 2 : 0;
        for (uint16_t bad : {(uint16_t) 0x7c00, (uint16_t) 0xfe00}) { // +inf, a NaN
            std::vector<uint8_t> c = q;
            c[2 * bb + d_at] = (uint8_t) bad;
            c[2 * bb + d_at + 1] = (uint8_t) (bad >> 8);
            LogCapture log;
            EXPECT_FALSE(lm_ggml_validate_row_data(t, c.data(), c.size()));
            EXPECT_EQ(log.errors.size(), 1u);
        }
        LogCapture log;
        EXPECT_FALSE(lm_ggml_validate_row_data(t, q.data(), q.size() - 1)); // not whole blocks
    }
}

} // namespace

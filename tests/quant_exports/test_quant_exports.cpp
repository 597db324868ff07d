// ggml-quants.h's exports (quantize_row_X_ref, dequantize_row_X, quantize_X)
// for the legacy, K-quant, IQ4 and ternary types, called through the shared
// library as a backend plugin would: dequantization against decoders written
// from the block formats (lmtest_quant.h, and the ones below), quantizers
// against those decoders (error bounds) and against the library's own entry
// points (same bytes), the block structs' layout, and argument checks.
#include "ggml-quants.h"

#include "lmtest_quant.h"
#include "lmtest_rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

extern "C" int lm_test_quants_header_c(void); // header_c.c

namespace {

// ---------------------------------------------------------------- test-side decoders
float half(uint16_t h) { return lm_ggml_fp16_to_fp32(h); }

// q8_1: d, s (f16), qs[32]; value = d * q
void deq_q8_1(const uint8_t * b, double * y) {
    uint16_t d;
    std::memcpy(&d, b, 2);
    for (int j = 0; j < 32; ++j) y[j] = (double) half(d) * (int8_t) b[4 + j];
}
// q8_K: d (f32), qs[256], bsums[16]; value = d * q
void deq_q8_K(const uint8_t * b, double * y) {
    float d;
    std::memcpy(&d, b, 4);
    for (int j = 0; j < 256; ++j) y[j] = (double) d * (int8_t) b[4 + j];
}
// q2_K: scales[16] (low nibble scale, high nibble min per 16 values), qs[64], d, dmin.
// Value 128h + 32s + l: q = (qs[32h + l] >> 2s) & 3, group g = 8h + 2s + l / 16;
// value = d * scale_g * q - dmin * min_g.
void deq_q2_K(const uint8_t * b, double * y) {
    uint16_t d, dmin;
    std::memcpy(&d, b + 80, 2);
    std::memcpy(&dmin, b + 82, 2);
    for (int h = 0; h < 2; ++h)
        for (int s = 0; s < 4; ++s)
            for (int l = 0; l < 32; ++l) {
                const uint8_t sc = b[8 * h + 2 * s + l / 16];
                const int q = (b[16 + 32 * h + l] >> (2 * s)) & 3;
                y[128 * h + 32 * s + l] = (double) half(d) * (sc & 15) * q - (double) half(dmin) * (sc >> 4);
            }
}
// q3_K: hmask[32], qs[64], scales[12], d. Scale j (0..15) has low 4 bits from
// scales[j] (j < 8) or scales[j - 8] >> 4, high 2 bits (scales[8 + j % 4] >> 2 (j / 4)) & 3, minus 32.
// Value 128h + 32s + l: low bits (qs[32h + l] >> 2s) & 3, minus 4 unless hmask[l] bit 4h + s is set;
// scale index 8h + 2s + l / 16.
void deq_q3_K(const uint8_t * b, double * y) {
    const uint8_t * hm = b;
    const uint8_t * qs = b + 32;
    const uint8_t * sc = b + 96;
    uint16_t d;
    std::memcpy(&d, b + 108, 2);
    int scale[16];
    for (int j = 0; j < 16; ++j) {
        const int lo = j < 8 ? (sc[j] & 15) : (sc[j - 8] >> 4);
        const int hi = (sc[8 + j % 4] >> (2 * (j / 4))) & 3;
        scale[j] = (lo | (hi << 4)) - 32;
    }
    for (int h = 0; h < 2; ++h)
        for (int s = 0; s < 4; ++s)
            for (int l = 0; l < 32; ++l) {
                const int q = ((qs[32 * h + l] >> (2 * s)) & 3) - ((hm[l] >> (4 * h + s)) & 1 ? 0 : 4);
                y[128 * h + 32 * s + l] = (double) half(d) * scale[8 * h + 2 * s + l / 16] * q;
            }
}
// q5_K: d, dmin, scales[12] (as q4_K), qh[32], qs[128]. Value 64c + l (l < 32):
// low nibble of qs[32c + l] | bit 2c of qh[l] << 4, sub-block 2c; value 64c + 32 + l:
// high nibble | bit 2c + 1 << 4, sub-block 2c + 1. value = d * sc * q - dmin * m.
void scale_min(int j, const uint8_t * q, int * sc, int * m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}
void deq_q5_K(const uint8_t * b, double * y) {
    uint16_t d, dmin;
    std::memcpy(&d, b, 2);
    std::memcpy(&dmin, b + 2, 2);
    const uint8_t * qh = b + 16;
    const uint8_t * qs = b + 48;
    for (int c = 0; c < 4; ++c) {
        int sc0, m0, sc1, m1;
        scale_min(2 * c, b + 4, &sc0, &m0);
        scale_min(2 * c + 1, b + 4, &sc1, &m1);
        for (int l = 0; l < 32; ++l) {
            const int q0 = (qs[32 * c + l] & 15) | (((qh[l] >> (2 * c)) & 1) << 4);
            const int q1 = (qs[32 * c + l] >> 4) | (((qh[l] >> (2 * c + 1)) & 1) << 4);
            y[64 * c + l] = (double) half(d) * sc0 * q0 - (double) half(dmin) * m0;
            y[64 * c + 32 + l] = (double) half(d) * sc1 * q1 - (double) half(dmin) * m1;
        }
    }
}

std::vector<double> decode(lm_ggml_type t, const uint8_t * q, int64_t n) {
    std::vector<double> y((size_t) n);
    const int64_t be = lm_ggml_blck_size(t);
    const size_t bb = lm_ggml_type_size(t);
    void (*own)(const uint8_t *, double *) = nullptr;
    switch (t) {
        case LM_GGML_TYPE_Q8_1: own = deq_q8_1; break;
        case LM_GGML_TYPE_Q8_K: own = deq_q8_K; break;
        case LM_GGML_TYPE_Q2_K: own = deq_q2_K; break;
        case LM_GGML_TYPE_Q3_K: own = deq_q3_K; break;
        case LM_GGML_TYPE_Q5_K: own = deq_q5_K; break;
        default: break;
    }
    if (own) {
        for (int64_t i = 0; i < n / be; ++i) own(q + i * bb, y.data() + i * be);
    } else {
        lmtest::BlockLayout L{};
        EXPECT_TRUE(lmtest::quant_layout(t, &L)) << lm_ggml_type_name(t);
        lmtest::quant_dequantize(t, q, n, y.data());
    }
    return y;
}

// ---------------------------------------------------------------- the exports, by type
struct Fns {
    lm_ggml_type t;
    void (*ref)(const float *, void *, int64_t);
    void (*deq)(const void *, float *, int64_t);
    size_t (*quant)(const float *, void *, int64_t, int64_t, const float *); // NULL: ggml has none
    std::vector<size_t> f16_at;                                              // byte offsets of fp16 scales in a block
    double max_nmse; // round trip of uniform [-1, 1) data (about twice the measured NMSE)
};

#define LM_ROW_FNS(t)                                                                                                  \
    [](const float * x, void * y, int64_t k) { quantize_row_##t##_ref(x, static_cast<block_##t *>(y), k); },           \
        [](const void * x, float * y, int64_t k) { dequantize_row_##t(static_cast<const block_##t *>(x), y, k); }

const std::vector<Fns> & all_fns() {
    static const std::vector<Fns> v = {
        {LM_GGML_TYPE_Q4_0, LM_ROW_FNS(q4_0), quantize_q4_0, {0}, 8e-3},
        {LM_GGML_TYPE_Q4_1, LM_ROW_FNS(q4_1), quantize_q4_1, {0, 2}, 8e-3},
        {LM_GGML_TYPE_Q5_0, LM_ROW_FNS(q5_0), quantize_q5_0, {0}, 2e-3},
        {LM_GGML_TYPE_Q5_1, LM_ROW_FNS(q5_1), quantize_q5_1, {0, 2}, 2e-3},
        {LM_GGML_TYPE_Q8_0, LM_ROW_FNS(q8_0), quantize_q8_0, {0}, 3e-5},
        {LM_GGML_TYPE_Q8_1, LM_ROW_FNS(q8_1), nullptr, {0, 2}, 3e-5},
        {LM_GGML_TYPE_Q2_K, LM_ROW_FNS(q2_K), quantize_q2_K, {80, 82}, 9e-2},
        {LM_GGML_TYPE_Q3_K, LM_ROW_FNS(q3_K), quantize_q3_K, {108}, 3e-2},
        {LM_GGML_TYPE_Q4_K, LM_ROW_FNS(q4_K), quantize_q4_K, {0, 2}, 6e-3},
        {LM_GGML_TYPE_Q5_K, LM_ROW_FNS(q5_K), quantize_q5_K, {0, 2}, 2e-3},
        {LM_GGML_TYPE_Q6_K, LM_ROW_FNS(q6_K), quantize_q6_K, {208}, 4e-4},
        {LM_GGML_TYPE_Q8_K, LM_ROW_FNS(q8_K), nullptr, {}, 3e-5},
        {LM_GGML_TYPE_TQ1_0, LM_ROW_FNS(tq1_0), quantize_tq1_0, {52}, 0.3},
        {LM_GGML_TYPE_TQ2_0, LM_ROW_FNS(tq2_0), quantize_tq2_0, {64}, 0.3},
        {LM_GGML_TYPE_IQ4_NL, LM_ROW_FNS(iq4_nl), quantize_iq4_nl, {0}, 8e-3},
        {LM_GGML_TYPE_IQ4_XS, LM_ROW_FNS(iq4_xs), quantize_iq4_xs, {0}, 8e-3},
    };
    return v;
}

#undef LM_ROW_FNS

std::vector<float> uniform(size_t n, uint64_t seed) {
    lmtest::Rng rng(seed);
    std::vector<float> x(n);
    for (float & v : x) v = (float) rng.uniform(-1.0, 1.0);
    return x;
}

double nmse(const std::vector<float> & x, const std::vector<double> & y) {
    double num = 0, den = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        num += (x[i] - y[i]) * (x[i] - y[i]);
        den += (double) x[i] * x[i];
    }
    return num / den;
}

struct LogCapture {
    int errors = 0;
    static void cb(lm_ggml_log_level level, const char *, void * ud) {
        if (level == LM_GGML_LOG_LEVEL_ERROR) ++static_cast<LogCapture *>(ud)->errors;
    }
    LogCapture() { lm_ggml_log_set(cb, this); }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
};

TEST(QuantExports, DequantizeMatchesFormat) {
    for (const Fns & f : all_fns()) {
        SCOPED_TRACE(lm_ggml_type_name(f.t));
        const int64_t nb = 5, be = lm_ggml_blck_size(f.t), n = nb * be;
        const size_t bb = lm_ggml_type_size(f.t);
        lmtest::Rng rng(lmtest::seed_from_name(lm_ggml_type_name(f.t)));
        std::vector<uint8_t> q(bb * nb);
        for (uint8_t & b : q) b = (uint8_t) (rng.next() >> 56);
        for (int64_t i = 0; i < nb; ++i) {
            for (size_t at : f.f16_at) {
                const uint16_t h = lm_ggml_fp32_to_fp16((float) rng.uniform(-0.05, 0.05));
                std::memcpy(q.data() + i * bb + at, &h, 2);
            }
            if (f.t == LM_GGML_TYPE_Q8_K) {
                const float d = (float) rng.uniform(-0.01, 0.01);
                std::memcpy(q.data() + i * bb, &d, 4);
            }
        }
        std::vector<float> y((size_t) n, NAN);
        f.deq(q.data(), y.data(), n);
        const std::vector<double> want = decode(f.t, q.data(), n);
        double mag = 0;
        for (double w : want) mag = std::fmax(mag, std::fabs(w));
        for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], want[i], 1e-6 * mag) << "value " << i;
    }
}

TEST(QuantExports, ReferenceQuantizers) {
    const int64_t n = 1024;
    const std::vector<float> x = uniform((size_t) n, 5);
    for (const Fns & f : all_fns()) {
        SCOPED_TRACE(lm_ggml_type_name(f.t));
        std::vector<uint8_t> q(lm_ggml_row_size(f.t, n), 0xCD), traits(q.size(), 0x11);
        f.ref(x.data(), q.data(), n);
        lm_ggml_get_type_traits(f.t)->from_float_ref(x.data(), traits.data(), n);
        EXPECT_EQ(q, traits); // the same quantizer as the type traits'
        EXPECT_LT(nmse(x, decode(f.t, q.data(), n)), f.max_nmse);
    }
}

TEST(QuantExports, QuantizeRowsWithAndWithoutImatrix) {
    const int64_t n_per_row = 512, nrows = 3;
    const std::vector<float> x = uniform((size_t) (n_per_row * nrows), 6);
    std::vector<float> w((size_t) n_per_row);
    lmtest::Rng rng(8);
    for (float & v : w) v = (float) rng.uniform(0.1, 2.0);
    for (const Fns & f : all_fns()) {
        if (!f.quant) continue;
        SCOPED_TRACE(lm_ggml_type_name(f.t));
        const size_t row = lm_ggml_row_size(f.t, n_per_row);
        for (const float * imatrix : {(const float *) nullptr, (const float *) w.data()}) {
            std::vector<uint8_t> q(row * nrows + 7, 0xCD), chunk(row * nrows, 0x11);
            ASSERT_EQ(f.quant(x.data(), q.data(), nrows, n_per_row, imatrix), row * nrows);
            for (size_t i = row * nrows; i < q.size(); ++i) ASSERT_EQ(q[i], 0xCD) << "wrote past the rows";
            q.resize(row * nrows);
            ASSERT_EQ(lm_ggml_quantize_chunk(f.t, x.data(), chunk.data(), 0, nrows, n_per_row, imatrix), row * nrows);
            EXPECT_EQ(q, chunk); // ggml's quantize_chunk is quantize_X
            EXPECT_LT(nmse(x, decode(f.t, q.data(), n_per_row * nrows)), f.max_nmse);
        }
    }
}

TEST(QuantExports, BadArgumentsLogAndDoNothing) {
    std::vector<float> x(512, 0.5f), y(512, 7.0f);
    std::vector<uint8_t> q(4096, 0xCD);
    for (const Fns & f : all_fns()) {
        SCOPED_TRACE(lm_ggml_type_name(f.t));
        const int64_t bad = lm_ggml_blck_size(f.t) + 16; // not whole blocks
        LogCapture log;
        f.ref(x.data(), q.data(), bad);
        f.ref(nullptr, q.data(), 256);
        f.deq(q.data(), y.data(), bad);
        f.deq(nullptr, y.data(), 256);
        int want = 4;
        if (f.quant) {
            EXPECT_EQ(f.quant(x.data(), q.data(), 1, bad, nullptr), 0u);
            EXPECT_EQ(f.quant(x.data(), nullptr, 1, 256, nullptr), 0u);
            EXPECT_EQ(f.quant(x.data(), q.data(), -1, 256, nullptr), 0u);
            want += 3;
        }
        EXPECT_EQ(log.errors, want);
        for (uint8_t b : q) ASSERT_EQ(b, 0xCD);
        for (float v : y) ASSERT_EQ(v, 7.0f);
    }
}

TEST(QuantExports, BlockStructLayout) {
    EXPECT_EQ(offsetof(block_q4_1, m), 2u);
    EXPECT_EQ(offsetof(block_q5_1, qh), 4u);
    EXPECT_EQ(offsetof(block_q2_K, dmin), 82u);
    EXPECT_EQ(offsetof(block_q3_K, d), 108u);
    EXPECT_EQ(offsetof(block_q4_K, scales), 4u);
    EXPECT_EQ(offsetof(block_q5_K, qs), 48u);
    EXPECT_EQ(offsetof(block_q6_K, d), 208u);
    EXPECT_EQ(offsetof(block_iq4_xs, scales_h), 2u);
    EXPECT_EQ(offsetof(block_tq2_0, d), 64u);
    const struct {
        lm_ggml_type t;
        size_t size;
    } sizes[] = {
        {LM_GGML_TYPE_Q4_0, sizeof(block_q4_0)},       {LM_GGML_TYPE_Q4_1, sizeof(block_q4_1)},
        {LM_GGML_TYPE_Q5_0, sizeof(block_q5_0)},       {LM_GGML_TYPE_Q5_1, sizeof(block_q5_1)},
        {LM_GGML_TYPE_Q8_0, sizeof(block_q8_0)},       {LM_GGML_TYPE_Q8_1, sizeof(block_q8_1)},
        {LM_GGML_TYPE_Q2_K, sizeof(block_q2_K)},       {LM_GGML_TYPE_Q3_K, sizeof(block_q3_K)},
        {LM_GGML_TYPE_Q4_K, sizeof(block_q4_K)},       {LM_GGML_TYPE_Q5_K, sizeof(block_q5_K)},
        {LM_GGML_TYPE_Q6_K, sizeof(block_q6_K)},       {LM_GGML_TYPE_Q8_K, sizeof(block_q8_K)},
        {LM_GGML_TYPE_TQ1_0, sizeof(block_tq1_0)},     {LM_GGML_TYPE_TQ2_0, sizeof(block_tq2_0)},
        {LM_GGML_TYPE_IQ4_NL, sizeof(block_iq4_nl)},   {LM_GGML_TYPE_IQ4_XS, sizeof(block_iq4_xs)},
        {LM_GGML_TYPE_IQ2_XXS, sizeof(block_iq2_xxs)}, {LM_GGML_TYPE_IQ2_XS, sizeof(block_iq2_xs)},
        {LM_GGML_TYPE_IQ2_S, sizeof(block_iq2_s)},     {LM_GGML_TYPE_IQ3_XXS, sizeof(block_iq3_xxs)},
        {LM_GGML_TYPE_IQ3_S, sizeof(block_iq3_s)},     {LM_GGML_TYPE_IQ1_S, sizeof(block_iq1_s)},
        {LM_GGML_TYPE_IQ1_M, sizeof(block_iq1_m)},
    };
    for (const auto & s : sizes) EXPECT_EQ(lm_ggml_type_size(s.t), s.size) << lm_ggml_type_name(s.t);
}

TEST(QuantExports, HeadersCompileAsC) { EXPECT_EQ(lm_test_quants_header_c(), 0); }

} // namespace

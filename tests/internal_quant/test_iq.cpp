// The grid I-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M):
// tables pinned to ggml's, dequantization against a decoder written here
// from the block layouts, round-trip quality, imatrix rules, and the CPU
// dots of every ISA level against a double reference.
#include "ggml-quants.h"

#include "cpu/arch/kernels.h"
#include "cpu/kernels/q_dot.h"
#include "quant/q_iq.h"
#include "quant/q_iq_grids.h"
#include "lmtest_iq_grid.h"
#include "quant_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace lm_quant::iq;

const lm_ggml_type kIqTypes[] = {LM_GGML_TYPE_IQ2_XXS, LM_GGML_TYPE_IQ2_XS, LM_GGML_TYPE_IQ2_S, LM_GGML_TYPE_IQ3_XXS,
                                 LM_GGML_TYPE_IQ3_S,   LM_GGML_TYPE_IQ1_S,  LM_GGML_TYPE_IQ1_M};

struct LogCapture {
    std::vector<std::string> errors;
    static void cb(lm_ggml_log_level level, const char * text, void * ud) {
        if (level == LM_GGML_LOG_LEVEL_ERROR) static_cast<LogCapture *>(ud)->errors.emplace_back(text);
    }
    LogCapture() { lm_ggml_log_set(cb, this); }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
};

std::string name_of(const ::testing::TestParamInfo<lm_ggml_type> & p) { return lm_ggml_type_name(p.param); }

// ---------------------------------------------------------------- tables
TEST(IqTables, DigestsMatchGgml) {
    // FNV-1a of each table's little-endian bytes, computed from ggml-common.h
    struct T {
        const char * name;
        const void * p;
        size_t n;
        uint64_t want;
    };
    const T tables[] = {
        {"ksigns_iq2xs", ksigns_iq2xs, sizeof(ksigns_iq2xs), 0x100b4e510a867c83ull},
        {"iq2xxs_grid", iq2xxs_grid, sizeof(iq2xxs_grid), 0x5bd45ef8a547a7e8ull},
        {"iq2xs_grid", iq2xs_grid, sizeof(iq2xs_grid), 0xa3e52388268ca2a3ull},
        {"iq2s_grid", iq2s_grid, sizeof(iq2s_grid), 0xcdb5ae5bcfe7fb32ull},
        {"iq3xxs_grid", iq3xxs_grid, sizeof(iq3xxs_grid), 0x2748ed45beb63233ull},
        {"iq3s_grid", iq3s_grid, sizeof(iq3s_grid), 0x5f1781aa06d14fbfull},
        {"iq1s_grid", iq1s_grid, sizeof(iq1s_grid), 0x31aaba1fc89a41d0ull},
    };
    for (const T & t : tables) EXPECT_EQ(qtest::fnv1a64(t.p, t.n), t.want) << t.name;
    namespace tg = lmtest::iqgrid; // the test-side copies the decoder uses
    const T copies[] = {
        {"iq2xxs_grid", tg::iq2xxs_grid, sizeof(tg::iq2xxs_grid), tables[1].want},
        {"iq2xs_grid", tg::iq2xs_grid, sizeof(tg::iq2xs_grid), tables[2].want},
        {"iq2s_grid", tg::iq2s_grid, sizeof(tg::iq2s_grid), tables[3].want},
        {"iq3xxs_grid", tg::iq3xxs_grid, sizeof(tg::iq3xxs_grid), tables[4].want},
        {"iq3s_grid", tg::iq3s_grid, sizeof(tg::iq3s_grid), tables[5].want},
        {"iq1s_grid", tg::iq1s_grid, sizeof(tg::iq1s_grid), tables[6].want},
    };
    for (const T & t : copies) EXPECT_EQ(qtest::fnv1a64(t.p, t.n), t.want) << "test copy " << t.name;
    for (int s7 = 0; s7 < 128; ++s7) EXPECT_EQ(ksigns_iq2xs[s7], tg::even8((unsigned) s7)) << s7;
    for (int j = 0; j < 8; ++j) EXPECT_EQ(kmask_iq2xs[j], 1u << j);
}

TEST(IqTables, SizesAndTraitsAsGgml) {
    const struct {
        lm_ggml_type t;
        size_t size;
        bool has_ref;
    } want[] = {
        {LM_GGML_TYPE_IQ2_XXS, 66, false}, {LM_GGML_TYPE_IQ2_XS, 74, false}, {LM_GGML_TYPE_IQ2_S, 82, true},
        {LM_GGML_TYPE_IQ3_XXS, 98, true},  {LM_GGML_TYPE_IQ3_S, 110, true},  {LM_GGML_TYPE_IQ1_S, 50, false},
        {LM_GGML_TYPE_IQ1_M, 56, false},
    };
    for (const auto & w : want) {
        SCOPED_TRACE(lm_ggml_type_name(w.t));
        EXPECT_EQ(lm_ggml_type_size(w.t), w.size);
        EXPECT_EQ(lm_ggml_blck_size(w.t), 256);
        const lm_ggml_type_traits * tr = lm_ggml_get_type_traits(w.t);
        EXPECT_NE(tr->to_float, nullptr);
        EXPECT_EQ(tr->from_float_ref != nullptr, w.has_ref);
        const lm_cpu_qtype_ops * ops = lm_cpu_get_qtype_ops(w.t);
        ASSERT_NE(ops, nullptr);
        EXPECT_EQ(ops->vec_dot_type, LM_GGML_TYPE_Q8_K);
        EXPECT_EQ(ops->from_float, nullptr); // no F32 -> I-quant copies on the CPU, as in ggml
        EXPECT_TRUE(lm_ggml_quantize_requires_imatrix(w.t) ==
                    (w.t == LM_GGML_TYPE_IQ2_XXS || w.t == LM_GGML_TYPE_IQ2_XS || w.t == LM_GGML_TYPE_IQ1_S));
    }
}

// The neighbour maps: grid points written as levels match the test-side
// grids; keys on the grid find their point; every other key lists exactly
// the points at its nwant smallest distances (ggml: 1 for IQ2_S, 3 for IQ1
// and IQ3_S, else 2), nearest first.
TEST(IqMaps, MatchGridsAndBruteForceNeighbours) {
    namespace tg = lmtest::iqgrid;
    struct G {
        Grid g;
        int nwant, nlev;
        std::vector<uint8_t> mags;
        const void * entries;
    };
    const std::vector<uint8_t> m2 = {8, 25, 43}, m1 = {255, 0, 1};
    const std::vector<uint8_t> m3x = {4, 12, 20, 28, 36, 44, 52, 62}, m3s = {1, 3, 5, 7, 9, 11, 13, 15};
    const G grids[] = {{Grid::iq2xxs, 2, 3, m2, tg::iq2xxs_grid},  {Grid::iq2xs, 2, 3, m2, tg::iq2xs_grid},
                       {Grid::iq2s, 1, 3, m2, tg::iq2s_grid},      {Grid::iq1s, 3, 3, m1, tg::iq1s_grid},
                       {Grid::iq3xxs, 2, 8, m3x, tg::iq3xxs_grid}, {Grid::iq3s, 3, 8, m3s, tg::iq3s_grid}};
    qtest::Rng r(5);
    for (const G & gr : grids) {
        const GridMap * m = grid_map(gr.g);
        ASSERT_NE(m, nullptr);
        for (int p = 0; p < m->size; ++p) {
            const uint64_t e = m->dim == 8 ? static_cast<const uint64_t *>(gr.entries)[p]
                                           : static_cast<const uint32_t *>(gr.entries)[p];
            int key = 0;
            for (int j = 0; j < m->dim; ++j) {
                const int l = m->levels[p * m->dim + j];
                ASSERT_LT(l, gr.nlev);
                ASSERT_EQ(gr.mags[l], (uint8_t) (e >> (8 * j))) << "point " << p;
                key |= l << (m->bits * j);
            }
            ASSERT_EQ(m->index_of[key], p);
        }
        for (int trial = 0; trial < 300; ++trial) {
            int key = 0, lv[8];
            for (int j = 0; j < m->dim; ++j) {
                lv[j] = (int) (r.next() % (uint32_t) gr.nlev);
                key |= lv[j] << (m->bits * j);
            }
            if (m->index_of[key] >= 0) continue;
            std::vector<int> d2(m->size);
            std::vector<int> dist;
            for (int p = 0; p < m->size; ++p) {
                int d = 0;
                for (int j = 0; j < m->dim; ++j)
                    d += (m->levels[p * m->dim + j] - lv[j]) * (m->levels[p * m->dim + j] - lv[j]);
                d2[p] = d;
                dist.push_back(d);
            }
            std::sort(dist.begin(), dist.end());
            dist.erase(std::unique(dist.begin(), dist.end()), dist.end());
            const int limit = dist[std::min<size_t>(gr.nwant, dist.size()) - 1];
            std::vector<std::pair<int, int>> want;
            for (int p = 0; p < m->size; ++p) {
                if (d2[p] <= limit) want.emplace_back(d2[p], p);
            }
            std::sort(want.begin(), want.end());
            const uint16_t * nb = m->neighbours - m->index_of[key] - 1;
            ASSERT_EQ((size_t) nb[0], want.size()) << "key " << key;
            for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(nb[1 + i], want[i].second) << "key " << key;
        }
    }
}

// ---------------------------------------------------------------- reference decoder
// lmtest_iq_grid.h: written from the block layouts, with its own table copies
std::vector<double> decode_row(lm_ggml_type t, const uint8_t * row, int64_t n) {
    std::vector<double> y((size_t) n);
    for (int64_t i = 0; i < n / 256; ++i)
        lmtest::iqgrid::dequantize_block(t, row + i * lm_ggml_type_size(t), y.data() + 256 * i);
    return y;
}

// ---------------------------------------------------------------- data
std::vector<float> gaussian(size_t n, uint32_t seed) {
    qtest::Rng r(seed);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; i += 2) {
        const double u1 = ((r.next() >> 8) + 1) * (1.0 / 16777217.0), u2 = (r.next() >> 8) * (1.0 / 16777216.0);
        const double rad = std::sqrt(-2 * std::log(u1));
        x[i] = (float) (rad * std::cos(6.283185307179586 * u2));
        if (i + 1 < n) x[i + 1] = (float) (rad * std::sin(6.283185307179586 * u2));
    }
    return x;
}

std::vector<uint8_t> quantize(lm_ggml_type t, const std::vector<float> & x, int64_t n_per_row, const float * imatrix) {
    const int64_t nrows = (int64_t) x.size() / n_per_row;
    std::vector<uint8_t> q(lm_ggml_row_size(t, n_per_row) * nrows);
    const size_t got = lm_ggml_quantize_chunk(t, x.data(), q.data(), 0, nrows, n_per_row, imatrix);
    EXPECT_EQ(got, q.size()) << lm_ggml_type_name(t);
    return q;
}

class IqType : public ::testing::TestWithParam<lm_ggml_type> {};

// ---------------------------------------------------------------- dequantization
// nb blocks of random bytes with finite d (2^-6..2^1, random mantissa and sign)
std::vector<uint8_t> random_blocks(lm_ggml_type t, int nb, uint32_t seed) {
    const size_t bs = lm_ggml_type_size(t);
    std::vector<uint8_t> raw(bs * nb);
    qtest::Rng r(seed);
    for (auto & v : raw) v = (uint8_t) (r.next() >> 24);
    for (int i = 0; i < nb; ++i) {
        const uint16_t h = (uint16_t) (((9 + (r.next() >> 29)) << 10) | ((r.next() >> 22) & 0x3FF) | ((i & 1) << 15));
        uint8_t * blk = raw.data() + i * bs;
        if (t == LM_GGML_TYPE_IQ1_M) {
            for (int k = 0; k < 4; ++k)
                blk[49 + 2 * k] = (uint8_t) ((blk[49 + 2 * k] & 0x0F) | (((h >> (4 * k)) & 0xF) << 4));
        } else {
            blk[0] = (uint8_t) (h & 0xFF);
            blk[1] = (uint8_t) (h >> 8);
        }
    }
    return raw;
}

TEST_P(IqType, DequantizeMatchesLayoutDecoder) {
    const lm_ggml_type t = GetParam();
    const int nb = 64;
    const std::vector<uint8_t> raw = random_blocks(t, nb, 1234 + (uint32_t) t);
    std::vector<float> got(256 * nb);
    lm_ggml_get_type_traits(t)->to_float(raw.data(), got.data(), 256 * nb);
    const std::vector<double> want = decode_row(t, raw.data(), 256 * nb);
    for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-6 * std::fabs(want[i])) << "value " << i;
    }
}

// ---------------------------------------------------------------- round trip
// Relative squared error bounds on N(0, 1) data with a random importance
// matrix: 10% above what ggml v1.4.1's own quantizers measure on exactly
// this data (its ggml-quants.c built on the side: IQ2_XXS 0.1405, IQ2_XS
// 0.1075, IQ2_S 0.0700, IQ3_XXS 0.0413, IQ3_S 0.0213, IQ1_S 0.2695, IQ1_M
// 0.2406). For scale: Lloyd-Max scalar quantizers of a Gaussian reach 0.0345
// (3 bits), 0.1175 (2 bits), 0.190 (3 levels).
double nmse_bound(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_IQ3_S: return 0.0234;
        case LM_GGML_TYPE_IQ3_XXS: return 0.0454;
        case LM_GGML_TYPE_IQ2_S: return 0.0770;
        case LM_GGML_TYPE_IQ2_XS: return 0.1182;
        case LM_GGML_TYPE_IQ2_XXS: return 0.1545;
        case LM_GGML_TYPE_IQ1_M: return 0.2646;
        case LM_GGML_TYPE_IQ1_S: return 0.2964;
        default: return 0;
    }
}

// The trivial baseline at about the same bits per value: per 256 values one
// absmax scale onto `levels` evenly spaced levels (3 for IQ1, 4 for IQ2, 8
// for IQ3), rounding to nearest.
double baseline_nmse(const std::vector<float> & x, int levels) {
    double num = 0, den = 0;
    for (size_t b = 0; b < x.size(); b += 256) {
        float amax = 0;
        for (int i = 0; i < 256; ++i) amax = std::fmax(amax, std::fabs(x[b + i]));
        const double step = 2.0 * amax / (levels - 1);
        for (int i = 0; i < 256; ++i) {
            const double v = x[b + i];
            const double q = step > 0 ? -amax + std::round((v + amax) / step) * step : 0.0;
            num += (q - v) * (q - v);
            den += v * v;
        }
    }
    return num / den;
}

int baseline_levels(lm_ggml_type t) {
    if (t == LM_GGML_TYPE_IQ1_S || t == LM_GGML_TYPE_IQ1_M) return 3;
    if (t == LM_GGML_TYPE_IQ3_S || t == LM_GGML_TYPE_IQ3_XXS) return 8;
    return 4;
}

TEST_P(IqType, RoundTripQuality) {
    const lm_ggml_type t = GetParam();
    const int64_t n = 1024;
    const std::vector<float> x = gaussian(8 * n, 99);
    const std::vector<float> imat = qtest::make_weights(n, 5);
    const std::vector<uint8_t> q = quantize(t, x, n, imat.data());
    std::vector<float> y(x.size());
    lm_ggml_get_type_traits(t)->to_float(q.data(), y.data(), (int64_t) y.size());
    for (float v : y) ASSERT_TRUE(std::isfinite(v));
    const double e = qtest::nmse(y.data(), x.data(), x.size());
    const double base = baseline_nmse(x, baseline_levels(t));
    std::printf("[ %s ] nmse %.4f (bound %.3f, baseline %.4f)\n", lm_ggml_type_name(t), e, nmse_bound(t), base);
    EXPECT_LT(e, nmse_bound(t));
    EXPECT_LT(e, base);
}

// Heavy-tailed data with zero blocks (make_input): finite output, zero blocks stay zero.
TEST_P(IqType, OutliersAndZeroBlocks) {
    const lm_ggml_type t = GetParam();
    const int64_t n = 2048;
    std::vector<float> x = qtest::make_input(2 * n, 7);
    std::fill(x.begin() + n, x.begin() + n + 256, 0.0f); // one all-zero super-block
    const std::vector<float> imat = qtest::make_weights(n, 6);
    const std::vector<uint8_t> q = quantize(t, x, n, imat.data());
    std::vector<float> y(x.size());
    lm_ggml_get_type_traits(t)->to_float(q.data(), y.data(), (int64_t) y.size());
    for (float v : y) ASSERT_TRUE(std::isfinite(v));
    for (int i = 0; i < 256; ++i) ASSERT_EQ(y[n + i], 0.0f);
    EXPECT_LT(qtest::nmse(y.data(), x.data(), x.size()), baseline_nmse(x, baseline_levels(t)));
    EXPECT_TRUE(lm_ggml_validate_row_data(t, q.data(), q.size()));
}

// NaN and infinite inputs: the quantizers neither crash nor read or write
// out of bounds (what the poisoned blocks decode to is unspecified).
TEST_P(IqType, NonFiniteInputIsSurvived) {
    const lm_ggml_type t = GetParam();
    std::vector<float> x = gaussian(1024, 17);
    x[3] = NAN;
    x[300] = INFINITY;
    x[600] = -INFINITY;
    for (int i = 768; i < 1024; ++i) x[i] = NAN;
    const std::vector<float> imat = qtest::make_weights(1024, 18);
    std::vector<uint8_t> q(lm_ggml_row_size(t, 1024) + 64, 0xCD);
    EXPECT_EQ(lm_ggml_quantize_chunk(t, x.data(), q.data(), 0, 1, 1024, imat.data()), q.size() - 64);
    for (size_t i = q.size() - 64; i < q.size(); ++i) ASSERT_EQ(q[i], 0xCD);
}

// Deterministic, and the same after the maps are freed and rebuilt.
TEST_P(IqType, DeterministicAcrossInitFree) {
    const lm_ggml_type t = GetParam();
    const std::vector<float> x = gaussian(512, 3);
    const std::vector<float> imat = qtest::make_weights(512, 4);
    lm_ggml_quantize_init(t);
    const std::vector<uint8_t> a = quantize(t, x, 512, imat.data());
    lm_ggml_quantize_free();
    const std::vector<uint8_t> b = quantize(t, x, 512, imat.data()); // rebuilds on first use
    lm_ggml_quantize_free();
    lm_ggml_quantize_init(t);
    lm_ggml_quantize_init(t);
    const std::vector<uint8_t> c = quantize(t, x, 512, imat.data());
    EXPECT_EQ(a, b);
    EXPECT_EQ(a, c);
}

// ---------------------------------------------------------------- dots
// q8_K row of n values from N(0, 1) data, and its decoded values
std::vector<uint8_t> q8k_row(int64_t n, uint32_t seed, std::vector<double> & act) {
    const std::vector<float> a = gaussian((size_t) n, seed);
    std::vector<uint8_t> qa(lm_ggml_row_size(LM_GGML_TYPE_Q8_K, n));
    lm_quant_quantize_row_q8_K_ref(a.data(), qa.data(), n);
    act.assign((size_t) n, 0.0);
    for (int64_t b = 0; b < n / 256; ++b) { // q8_K: float d, 256 int8
        const uint8_t * blk = qa.data() + b * sizeof(lm_block_q8_K);
        float d;
        std::memcpy(&d, blk, sizeof(d));
        for (int i = 0; i < 256; ++i) act[256 * b + i] = d * (double) (int8_t) blk[4 + i];
    }
    return qa;
}

// Every ISA level's dot of each row against the double dot of the decoded
// rows. The integer sums of all levels are equal; only the float update of
// the running sum may round differently (FMA contraction in vector code).
void check_dots(lm_ggml_type t, const uint8_t * rows, int nrows, int64_t n, uint32_t seed) {
    std::vector<double> act;
    const std::vector<uint8_t> qa = q8k_row(n, seed, act);
    const size_t rs = lm_ggml_row_size(t, n);
    const auto * scalar = lmggml::cpu::arch::kernels_for(lmggml::cpu::arch::Isa::scalar);
    ASSERT_NE(scalar, nullptr);
    for (int r = 0; r < nrows; ++r) {
        const std::vector<double> w = decode_row(t, rows + r * rs, n);
        double want = 0, mag = 0;
        for (int64_t i = 0; i < n; ++i) {
            want += w[i] * act[i];
            mag += std::fabs(w[i] * act[i]);
        }
        float twin = NAN;
        scalar->vec_dot[t]((int) n, &twin, 0, rows + r * rs, 0, qa.data(), 0, 1);
        EXPECT_NEAR(twin, want, 2e-6 * mag + 1e-30) << "scalar row " << r;
        for (int isa = 1; isa < lmggml::cpu::arch::kIsaCount; ++isa) {
            const auto * k = lmggml::cpu::arch::kernels_for((lmggml::cpu::arch::Isa) isa);
            if (!k) continue;
            float got = NAN;
            k->vec_dot[t]((int) n, &got, 0, rows + r * rs, 0, qa.data(), 0, 1);
            EXPECT_NEAR(got, twin, 1e-6 * mag + 1e-30) << k->name << " row " << r;
        }
    }
}

TEST_P(IqType, DotMatchesDoubleAtEveryIsa) {
    const lm_ggml_type t = GetParam();
    const int64_t n = 1024;
    const std::vector<float> x = gaussian(4 * n, 11);
    const std::vector<float> imat = qtest::make_weights(n, 12);
    const std::vector<uint8_t> q = quantize(t, x, n, imat.data());
    check_dots(t, q.data(), 4, n, 13);
    // random bytes reach every index bit, sign and scale pattern
    const std::vector<uint8_t> raw = random_blocks(t, 6 * 4, 77 + (uint32_t) t);
    check_dots(t, raw.data(), 6, 4 * 256, 14);
}

INSTANTIATE_TEST_SUITE_P(Iq, IqType, ::testing::ValuesIn(kIqTypes), name_of);

// ---------------------------------------------------------------- imatrix rules
TEST(IqQuantize, RefusesWithoutImatrixWhereGgmlDoes) {
    const std::vector<float> x = gaussian(256, 1);
    std::vector<uint8_t> q(1024, 0xAB);
    for (lm_ggml_type t : {LM_GGML_TYPE_IQ2_XXS, LM_GGML_TYPE_IQ2_XS, LM_GGML_TYPE_IQ1_S}) {
        LogCapture log;
        EXPECT_EQ(lm_ggml_quantize_chunk(t, x.data(), q.data(), 0, 1, 256, nullptr), 0u);
        EXPECT_EQ(log.errors.size(), 1u) << lm_ggml_type_name(t);
        EXPECT_EQ(lm_quant_get_fns(t)->quantize(x.data(), q.data(), 1, 256, nullptr), 0u);
        EXPECT_EQ(q[0], 0xAB); // nothing written
    }
    for (lm_ggml_type t : {LM_GGML_TYPE_IQ2_S, LM_GGML_TYPE_IQ3_XXS, LM_GGML_TYPE_IQ3_S, LM_GGML_TYPE_IQ1_M}) {
        LogCapture log;
        EXPECT_EQ(lm_ggml_quantize_chunk(t, x.data(), q.data(), 0, 1, 256, nullptr), lm_ggml_type_size(t));
        EXPECT_TRUE(log.errors.empty()) << lm_ggml_type_name(t);
        std::vector<float> y(256);
        lm_ggml_get_type_traits(t)->to_float(q.data(), y.data(), 256);
        EXPECT_LT(qtest::nmse(y.data(), x.data(), 256), 2 * nmse_bound(t)) << lm_ggml_type_name(t);
    }
}

// An importance matrix that stresses some columns makes their error smaller.
TEST(IqQuantize, ImatrixLowersWeightedError) {
    const int64_t n = 1024;
    const std::vector<float> x = gaussian(8 * n, 21);
    std::vector<float> imat((size_t) n, 1.0f);
    for (int64_t i = 0; i < n; i += 4) imat[i] = 50.0f;
    for (lm_ggml_type t : {LM_GGML_TYPE_IQ2_S, LM_GGML_TYPE_IQ3_XXS, LM_GGML_TYPE_IQ3_S, LM_GGML_TYPE_IQ1_M}) {
        double err[2];
        for (int with = 0; with < 2; ++with) {
            const std::vector<uint8_t> q = quantize(t, x, n, with ? imat.data() : nullptr);
            std::vector<float> y(x.size());
            lm_ggml_get_type_traits(t)->to_float(q.data(), y.data(), (int64_t) y.size());
            double e = 0;
            for (size_t i = 0; i < x.size(); ++i) e += imat[i % n] * (y[i] - x[i]) * (y[i] - x[i]);
            err[with] = e;
        }
        EXPECT_LT(err[1], 0.9 * err[0]) << lm_ggml_type_name(t);
    }
}

// ---------------------------------------------------------------- exports
TEST(IqExports, GgmlQuantsEntryPoints) {
    const std::vector<float> x = gaussian(512, 8);
    const std::vector<float> imat = qtest::make_weights(512, 9);
    std::vector<uint8_t> a(2 * 110), b(2 * 110);
    quantize_row_iq3_s_ref(x.data(), reinterpret_cast<block_iq3_s *>(a.data()), 512);
    ASSERT_EQ(lm_ggml_quantize_chunk(LM_GGML_TYPE_IQ3_S, x.data(), b.data(), 0, 1, 512, nullptr), b.size());
    EXPECT_EQ(a, b);
    std::vector<float> y1(512), y2(512);
    dequantize_row_iq3_s(reinterpret_cast<const block_iq3_s *>(a.data()), y1.data(), 512);
    lm_ggml_get_type_traits(LM_GGML_TYPE_IQ3_S)->to_float(a.data(), y2.data(), 512);
    EXPECT_EQ(y1, y2);

    std::vector<uint8_t> m(2 * 56);
    EXPECT_EQ(quantize_iq1_m(x.data(), m.data(), 2, 256, imat.data()), m.size());
    dequantize_row_iq1_m(reinterpret_cast<const block_iq1_m *>(m.data()), y1.data(), 512);
    EXPECT_LT(qtest::nmse(y1.data(), x.data(), 512), 2 * nmse_bound(LM_GGML_TYPE_IQ1_M));

    LogCapture log;
    std::vector<uint8_t> z(2 * 66);
    EXPECT_EQ(quantize_iq2_xxs(x.data(), z.data(), 2, 256, nullptr), 0u);     // needs an imatrix
    EXPECT_EQ(quantize_iq2_xxs(x.data(), z.data(), 1, 100, imat.data()), 0u); // not whole blocks
    dequantize_row_iq3_s(nullptr, y1.data(), 256);
    lm_iq3xs_init_impl(100);
    lm_iq3xs_free_impl(7);
    lm_iq2xs_init_impl(LM_GGML_TYPE_Q4_0);
    EXPECT_EQ(log.errors.size(), 6u);
    EXPECT_EQ(quantize_iq2_xxs(x.data(), z.data(), 2, 256, imat.data()), z.size());
}

} // namespace

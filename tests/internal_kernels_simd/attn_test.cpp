// F16 attention kernels (arch/kernels.h AttnF16): every level, the scalar
// twin included, against double-precision loops written here, for head
// dimensions around the vector width, key counts around the block sizes,
// 1-9 query rows per KV head, and caches whose last row ends at an
// unreadable page (nothing may be read past the n rows).
#include "cpu/arch/ref.h"
#include "simd_test_util.h"

#include "ggml.h"

#include <string>

namespace {

using namespace simdtest;

// n rows of d F16 values, ld bytes apart, the last row flush against a guard page
struct HalfRows {
    GuardedBytes bytes;
    size_t ld;
    std::vector<double> values; // what each F16 holds, row-major n x d
    HalfRows(int64_t n, int64_t d, size_t ld_, uint64_t seed)
        : bytes((size_t) (n - 1) * ld_ + (size_t) d * 2), ld(ld_), values((size_t) (n * d)) {
        lmtest::Rng rng(seed);
        for (int64_t j = 0; j < n; ++j) {
            for (int64_t c = 0; c < d; ++c) {
                const lm_ggml_fp16_t h = lm_ggml_fp32_to_fp16((float) rng.uniform(-2.0, 2.0));
                std::memcpy(bytes.data() + j * (int64_t) ld + c * 2, &h, 2);
                values[(size_t) (j * d + c)] = lm_ggml_fp16_to_fp32(h);
            }
        }
    }
    double at(int64_t j, int64_t c, int64_t d) const { return values[(size_t) (j * d + c)]; }
};

struct Shape {
    int64_t d, n, g;
};

std::vector<Shape> shapes() {
    std::vector<Shape> v;
    for (int64_t d : {8, 16, 24, 64, 128, 256})
        for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 9, 33, 130})
            for (int64_t g : {1, 2, 3, 4, 5, 7, 9}) v.push_back({d, n, g});
    return v;
}

// The ARM i8mm level (arm/fhm_i8mm.cpp) rounds q (scores) and p (accumulate)
// to F16 for its FMLALs. Round to nearest: |f16(x) - x| <= 2^-11 |x| for
// normal values, <= 2^-25 (half the subnormal step 2^-24) below, so the
// product with an F16 value y is off by at most 2^-11 |x y| + 2^-25 |y|:
// summed over the products, 2^-11 of the magnitude plus 2^-25 sum |y|.
bool rounds_to_f16(const arch::KernelSet * lv) { return lv->isa == arch::Isa::i8mm; }

double rounding_slack(const arch::KernelSet * lv, double mag, double sum_abs_half) {
    return rounds_to_f16(lv) ? 0x1p-11 * mag + 0x1p-25 * sum_abs_half : 0.0;
}

} // namespace

TEST(SimdAttn, ScoresMatchDoubleDots) {
    for (const arch::KernelSet * lv : all_levels()) {
        for (const Shape & sh : shapes()) {
            const size_t ld = (size_t) sh.d * 2 * 3; // rows of a 3-head cache: one head's slice
            HalfRows k(sh.n, sh.d, ld, (uint64_t) (sh.d * 1000 + sh.n));
            const std::vector<float> q = activations((size_t) (sh.g * sh.d), (uint64_t) sh.g);
            std::vector<float> s((size_t) (sh.g * sh.n), -1.0f);
            lv->attn_f16.scores(sh.d, sh.n, k.bytes.data(), ld, q.data(), sh.g, s.data());
            for (int64_t i = 0; i < sh.g; ++i) {
                for (int64_t j = 0; j < sh.n; ++j) {
                    double want = 0.0, mag = 0.0, kabs = 0.0;
                    for (int64_t c = 0; c < sh.d; ++c) {
                        want += (double) q[(size_t) (i * sh.d + c)] * k.at(j, c, sh.d);
                        mag += std::fabs((double) q[(size_t) (i * sh.d + c)] * k.at(j, c, sh.d));
                        kabs += std::fabs(k.at(j, c, sh.d));
                    }
                    ASSERT_NEAR(s[(size_t) (i * sh.n + j)], want, 1e-6 * mag + rounding_slack(lv, mag, kabs) + 1e-30)
                        << lv->name << " d " << sh.d << " n " << sh.n << " g " << sh.g << " query " << i << " key "
                        << j;
                }
            }
        }
    }
}

// Head dims past the F16 kernel's q buffer, and query values past F16's
// range (65504), which it must not round to infinity.
TEST(SimdAttn, ScoresOfWideHeadsAndLargeQueries) {
    for (const arch::KernelSet * lv : all_levels()) {
        for (const Shape & sh : {Shape{520, 3, 5}, Shape{64, 9, 6}}) {
            const size_t ld = (size_t) sh.d * 2;
            HalfRows k(sh.n, sh.d, ld, (uint64_t) sh.d);
            std::vector<float> q = activations((size_t) (sh.g * sh.d), 4);
            if (sh.d == 64) q[(size_t) (5 * sh.d + 7)] = 1.0e5f; // the second block of 4 rows
            std::vector<float> s((size_t) (sh.g * sh.n), -1.0f);
            lv->attn_f16.scores(sh.d, sh.n, k.bytes.data(), ld, q.data(), sh.g, s.data());
            for (int64_t i = 0; i < sh.g; ++i) {
                for (int64_t j = 0; j < sh.n; ++j) {
                    double want = 0.0, mag = 0.0, kabs = 0.0;
                    for (int64_t c = 0; c < sh.d; ++c) {
                        want += (double) q[(size_t) (i * sh.d + c)] * k.at(j, c, sh.d);
                        mag += std::fabs((double) q[(size_t) (i * sh.d + c)] * k.at(j, c, sh.d));
                        kabs += std::fabs(k.at(j, c, sh.d));
                    }
                    ASSERT_NEAR(s[(size_t) (i * sh.n + j)], want, 1e-6 * mag + rounding_slack(lv, mag, kabs) + 1e-30)
                        << lv->name << " d " << sh.d << " query " << i << " key " << j;
                }
            }
        }
    }
}

TEST(SimdAttn, AccumulateMatchesDoubleSums) {
    for (const arch::KernelSet * lv : all_levels()) {
        for (const Shape & sh : shapes()) {
            const size_t ld = (size_t) sh.d * 2 * 2;
            HalfRows v(sh.n, sh.d, ld, (uint64_t) (sh.d * 77 + sh.n));
            std::vector<float> p = activations((size_t) (sh.g * sh.n), (uint64_t) (sh.n + 5));
            for (float & x : p) x = std::fabs(x);                            // softmax weights are >= 0
            std::vector<float> acc = activations((size_t) (sh.g * sh.d), 9); // added to, not overwritten
            const std::vector<float> before = acc;
            lv->attn_f16.accumulate(sh.d, sh.n, v.bytes.data(), ld, p.data(), sh.g, acc.data());
            for (int64_t i = 0; i < sh.g; ++i) {
                for (int64_t c = 0; c < sh.d; ++c) {
                    double want = before[(size_t) (i * sh.d + c)], mag = std::fabs(want), prod = 0.0, vabs = 0.0;
                    for (int64_t j = 0; j < sh.n; ++j) {
                        prod += std::fabs((double) p[(size_t) (i * sh.n + j)] * v.at(j, c, sh.d));
                        want += (double) p[(size_t) (i * sh.n + j)] * v.at(j, c, sh.d);
                        vabs += std::fabs(v.at(j, c, sh.d));
                    }
                    mag += prod;
                    ASSERT_NEAR(acc[(size_t) (i * sh.d + c)], want, 1e-6 * mag + rounding_slack(lv, prod, vabs) + 1e-30)
                        << lv->name << " d " << sh.d << " n " << sh.n << " g " << sh.g << " row " << i << " col " << c;
                }
            }
        }
    }
}

// The scalar twin and each vector level agree closely (the twin is what the
// scalar level runs, and what a new level is checked against first).
TEST(SimdAttn, VectorLevelsMatchTheTwin) {
    for (const arch::KernelSet * lv : vector_levels()) {
        const Shape sh{64, 37, 3};
        HalfRows k(sh.n, sh.d, (size_t) sh.d * 2, 1), v(sh.n, sh.d, (size_t) sh.d * 2, 2);
        const std::vector<float> q = activations((size_t) (sh.g * sh.d), 3);
        std::vector<float> s1((size_t) (sh.g * sh.n)), s2 = s1;
        lv->attn_f16.scores(sh.d, sh.n, k.bytes.data(), k.ld, q.data(), sh.g, s1.data());
        arch::ref::attn_f16_scores(sh.d, sh.n, k.bytes.data(), k.ld, q.data(), sh.g, s2.data());
        for (int64_t i = 0; i < sh.g; ++i) {
            for (int64_t j = 0; j < sh.n; ++j) {
                double mag = 0.0, kabs = 0.0;
                for (int64_t c = 0; c < sh.d; ++c) {
                    mag += std::fabs((double) q[(size_t) (i * sh.d + c)] * k.at(j, c, sh.d));
                    kabs += std::fabs(k.at(j, c, sh.d));
                }
                const size_t at = (size_t) (i * sh.n + j);
                ASSERT_NEAR(s1[at], s2[at], 1e-4 * (1.0 + std::fabs(s2[at])) + rounding_slack(lv, mag, kabs))
                    << lv->name << " " << at;
            }
        }
        std::vector<float> a1((size_t) (sh.g * sh.d), 0.0f), a2 = a1;
        lv->attn_f16.accumulate(sh.d, sh.n, v.bytes.data(), v.ld, s2.data(), sh.g, a1.data());
        arch::ref::attn_f16_accumulate(sh.d, sh.n, v.bytes.data(), v.ld, s2.data(), sh.g, a2.data());
        for (int64_t i = 0; i < sh.g; ++i) {
            for (int64_t c = 0; c < sh.d; ++c) {
                double mag = 0.0, vabs = 0.0;
                for (int64_t j = 0; j < sh.n; ++j) {
                    mag += std::fabs((double) s2[(size_t) (i * sh.n + j)] * v.at(j, c, sh.d));
                    vabs += std::fabs(v.at(j, c, sh.d));
                }
                const size_t at = (size_t) (i * sh.d + c);
                ASSERT_NEAR(a1[at], a2[at], 1e-4 * (1.0 + std::fabs(a2[at])) + rounding_slack(lv, mag, vabs))
                    << lv->name << " " << at;
            }
        }
    }
}

// The all-heads forms (scores_heads, accumulate_heads), where a level has
// them: each head's results bit for bit what the one-head kernel gives for
// that head (the kernels.h contract, which the per-head tests above check
// against double), and near double themselves; on a cache whose rows hold
// every head side by side (as the runner keeps it) and on one head after
// another (planes), nothing read past the last row.
TEST(SimdAttn, HeadsFormsMatchOneHeadAtATime) {
    int checked = 0;
    for (const arch::KernelSet * lv : all_levels()) {
        if (lv->attn_f16.scores_heads == nullptr || lv->attn_f16.accumulate_heads == nullptr) {
            continue; // the op calls the one-head kernels per head there
        }
        for (int64_t d : {8, 16, 64, 128, 256})
            for (int64_t n : {1, 2, 3, 5, 33, 130})
                for (int64_t g : {1, 2, 3, 4, 5})
                    for (int64_t nh : {1, 2, 3})
                        for (bool planes : {false, true}) {
                            // head h's key j, column c: rows.at(planes ? h*n + j : j, planes ? c : h*d + c)
                            const int64_t width = planes ? d : nh * d, n_rows = planes ? nh * n : n;
                            const size_t ld = (size_t) width * 2;
                            const size_t hs = planes ? (size_t) n * ld : (size_t) d * 2;
                            HalfRows rows(n_rows, width, ld, (uint64_t) (d * 7 + n * 3 + g + nh));
                            const auto at = [&](int64_t h, int64_t j, int64_t c) {
                                return planes ? rows.at(h * n + j, c, width) : rows.at(j, h * d + c, width);
                            };
                            const std::vector<float> q = activations((size_t) (nh * g * d), (uint64_t) g);
                            std::vector<float> s((size_t) (nh * g * n), -1.0f), s1((size_t) (g * n));
                            lv->attn_f16.scores_heads(d, n, rows.bytes.data(), ld, hs, nh, q.data(), g, s.data());
                            std::vector<float> p = s;
                            for (float & x : p) x = std::fabs(x) * 0.01f;
                            std::vector<float> acc = activations((size_t) (nh * g * d), 9), a1;
                            const std::vector<float> before = acc;
                            lv->attn_f16.accumulate_heads(d, n, rows.bytes.data(), ld, hs, nh, p.data(), g, acc.data());
                            const std::string where = std::string(lv->name) + " d " + std::to_string(d) + " n " +
                                                      std::to_string(n) + " g " + std::to_string(g) + " heads " +
                                                      std::to_string(nh) + (planes ? " planes" : " rows");
                            for (int64_t h = 0; h < nh; ++h) {
                                const uint8_t * head = rows.bytes.data() + h * (int64_t) hs;
                                lv->attn_f16.scores(d, n, head, ld, q.data() + h * g * d, g, s1.data());
                                a1.assign(before.begin() + h * g * d, before.begin() + (h + 1) * g * d);
                                lv->attn_f16.accumulate(d, n, head, ld, p.data() + h * g * n, g, a1.data());
                                for (int64_t i = 0; i < g * n; ++i) {
                                    ASSERT_EQ(s[(size_t) (h * g * n + i)], s1[(size_t) i]) << where << " head " << h;
                                    const int64_t r = i / n, j = i % n;
                                    double want = 0.0, mag = 0.0;
                                    for (int64_t c = 0; c < d; ++c) {
                                        const double x = (double) q[(size_t) ((h * g + r) * d + c)] * at(h, j, c);
                                        want += x;
                                        mag += std::fabs(x);
                                    }
                                    ASSERT_NEAR(s[(size_t) (h * g * n + i)], want, 1e-6 * mag + 1e-30) << where;
                                }
                                for (int64_t i = 0; i < g * d; ++i) {
                                    ASSERT_EQ(acc[(size_t) (h * g * d + i)], a1[(size_t) i]) << where << " head " << h;
                                    const int64_t r = i / d, c = i % d;
                                    double want = before[(size_t) (h * g * d + i)], mag = std::fabs(want);
                                    for (int64_t j = 0; j < n; ++j) {
                                        const double x = (double) p[(size_t) ((h * g + r) * n + j)] * at(h, j, c);
                                        want += x;
                                        mag += std::fabs(x);
                                    }
                                    ASSERT_NEAR(acc[(size_t) (h * g * d + i)], want, 1e-6 * mag + 1e-30) << where;
                                }
                            }
                            ++checked;
                        }
    }
    for (const arch::KernelSet * lv : all_levels()) {
        if (lv->isa == arch::Isa::avx2) {
            EXPECT_GT(checked, 0) << "the AVX2 level has the all-heads forms";
        }
    }
}

// The layer split arithmetic of -ts / --tensor-split (lmllm/split.h):
// parsing the proportions, and the contiguous ranges they give, checked
// against counts worked out by hand and against the exact shares.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "lmllm/split.h"

namespace {

std::vector<uint32_t> split(uint32_t n, const std::vector<float> & p) {
    auto r = lmllm::split_layers(n, p);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r.value() : std::vector<uint32_t>{};
}

void expect_parse_error(const std::string & text, const std::string & part) {
    auto r = lmllm::parse_tensor_split(text);
    ASSERT_FALSE(r.ok()) << "'" << text << "' was accepted";
    EXPECT_NE(r.status().message().find(part), std::string::npos) << r.status().message();
}

TEST(LayerSplit, ParsesProportions) {
    auto r = lmllm::parse_tensor_split("3,1");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r.value(), (std::vector<float>{3.0f, 1.0f}));
    r = lmllm::parse_tensor_split("0.5,0,0.25");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r.value(), (std::vector<float>{0.5f, 0.0f, 0.25f}));
    r = lmllm::parse_tensor_split("7");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), std::vector<float>{7.0f});
}

TEST(LayerSplit, RefusesBadText) {
    expect_parse_error("1,x", "'x' is not a number");
    expect_parse_error("1,2a", "'2a' is not a number");
    expect_parse_error("1,,2", "'' is not a number");
    expect_parse_error("1,", "'' is not a number");
    expect_parse_error("nan,1", "'nan' is not a number");
    expect_parse_error("inf", "'inf' is not a number");
    expect_parse_error("1e40", "'1e40' is not a number");
    expect_parse_error("1,-1", "'-1' is negative");
    expect_parse_error("0,0", "every proportion is zero");
    expect_parse_error("0", "every proportion is zero");
}

TEST(LayerSplit, WorkedExamples) {
    EXPECT_EQ(split(30, {1, 1}), (std::vector<uint32_t>{15, 15}));
    // 3:1 of 10 is 7.5 : 2.5; layer j goes to the first device whose share reaches past j/10
    EXPECT_EQ(split(10, {3, 1}), (std::vector<uint32_t>{8, 2}));
    EXPECT_EQ(split(7, {1, 1, 1}), (std::vector<uint32_t>{3, 2, 2}));
    EXPECT_EQ(split(30, {0.5f, 0.25f, 0.25f}), (std::vector<uint32_t>{15, 8, 7}));
    EXPECT_EQ(split(5, {1}), std::vector<uint32_t>{5});
    EXPECT_EQ(split(0, {1, 1}), (std::vector<uint32_t>{0, 0}));
}

TEST(LayerSplit, ZeroSharesGetNoLayers) {
    EXPECT_EQ(split(6, {0, 1, 0, 1}), (std::vector<uint32_t>{0, 3, 0, 3}));
    EXPECT_EQ(split(5, {1, 0}), (std::vector<uint32_t>{5, 0}));
    EXPECT_EQ(split(4, {0, 0, 1}), (std::vector<uint32_t>{0, 0, 4}));
}

TEST(LayerSplit, MoreDevicesThanLayers) {
    EXPECT_EQ(split(2, {1, 1, 1, 1}), (std::vector<uint32_t>{1, 0, 1, 0}));
    EXPECT_EQ(split(1, {1, 1, 1}), (std::vector<uint32_t>{1, 0, 0}));
}

// Every device's count is within one layer of its exact share, and the
// counts add up to the layers.
TEST(LayerSplit, CountsFollowTheProportions) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> share(0.0f, 4.0f);
    for (int trial = 0; trial < 500; trial++) {
        const size_t n_dev = 1 + rng() % 6;
        const uint32_t n = rng() % 100;
        std::vector<float> p(n_dev);
        double total = 0;
        for (float & v : p) {
            v = rng() % 4 == 0 ? 0.0f : share(rng);
            total += v;
        }
        if (total == 0) {
            p[0] = 1.0f;
            total = 1.0;
        }
        const std::vector<uint32_t> c = split(n, p);
        ASSERT_EQ(c.size(), n_dev);
        uint32_t sum = 0;
        for (size_t i = 0; i < n_dev; i++) {
            sum += c[i];
            EXPECT_LT(std::fabs(double(c[i]) - double(n) * p[i] / total), 1.0) << "trial " << trial << " device " << i;
            if (p[i] == 0.0f) {
                EXPECT_EQ(c[i], 0u);
            }
        }
        EXPECT_EQ(sum, n) << "trial " << trial;
    }
}

TEST(LayerSplit, RefusesBadProportions) {
    EXPECT_FALSE(lmllm::split_layers(4, {}).ok());
    EXPECT_FALSE(lmllm::split_layers(4, {0, 0}).ok());
    EXPECT_FALSE(lmllm::split_layers(4, {1, -1}).ok());
    EXPECT_FALSE(lmllm::split_layers(4, {1, NAN}).ok());
    EXPECT_FALSE(lmllm::split_layers(4, {INFINITY, 1}).ok());
}

} // namespace

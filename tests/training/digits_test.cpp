// End to end: the digits MLP and CNN of examples/train-digits, trained with
// ggml-opt on the CPU backend through the scheduler, must classify at least
// 95 % of the held-out images (every fifth image of each digit, 355 of the
// 1,797, never trained on).
// The accuracy is ggml-opt's count of lmggml's argmax against the labels,
// and is recounted here from the predictions.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "digits.h"

namespace {

const std::string kFixture = std::string(LMGGML_TEST_DATA_DIR) + "/digits/digits.u8";

struct Split {
    digits::Data train, heldout;
};

const Split & fixture() {
    static const Split s = [] {
        Split r;
        digits::Data all;
        const std::string err = digits::load(kFixture, all);
        EXPECT_EQ(err, "");
        digits::split(all, r.train, r.heldout);
        return r;
    }();
    return s;
}

// trains; returns the held-out accuracy of each epoch
std::vector<double> train_and_check(const digits::Options & opt) {
    const Split & s = fixture();
    EXPECT_EQ(s.heldout.size(), 355);
    std::vector<double> acc;
    std::vector<int32_t> pred;
    const std::string err = digits::train(
        opt, s.train, s.heldout, [&](const digits::EpochStats & e) { acc.push_back(e.heldout_accuracy); }, &pred);
    EXPECT_EQ(err, "");
    EXPECT_EQ(acc.size(), (size_t) opt.epochs);
    if (acc.empty() || pred.size() != s.heldout.y.size()) {
        ADD_FAILURE() << "no result";
        return acc;
    }
    int64_t hits = 0;
    for (size_t i = 0; i < pred.size(); i++) hits += pred[i] == s.heldout.y[i];
    EXPECT_NEAR(acc.back(), (double) hits / (double) pred.size(), 1e-12) << "accuracy and predictions disagree";
    return acc;
}

} // namespace

TEST(Digits, FixtureLoadsAndSplits) {
    const Split & s = fixture();
    ASSERT_EQ(s.train.size(), 1442);
    ASSERT_EQ(s.heldout.size(), 355);
    std::vector<int> count(digits::kClasses, 0);
    for (int32_t y : s.heldout.y) count[(size_t) y]++;
    // every fifth image of each digit (counted with NumPy from the file)
    EXPECT_EQ(count, (std::vector<int>{35, 36, 35, 36, 36, 36, 36, 35, 34, 36}));
    float lo = 1.0f, hi = 0.0f;
    for (float x : s.train.x) lo = std::min(lo, x), hi = std::max(hi, x);
    EXPECT_EQ(lo, 0.0f);
    EXPECT_EQ(hi, 1.0f);
}

TEST(Digits, BadFilesAreOneLineErrors) {
    digits::Data d;
    std::string err = digits::load("/nonexistent/digits.u8", d);
    EXPECT_NE(err.find("cannot open /nonexistent/digits.u8"), std::string::npos) << err;
    const std::filesystem::path tmp =
        std::filesystem::temp_directory_path() /
        ("digits_short_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    std::vector<char> bytes;
    {
        std::ifstream f(kFixture, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(f), {});
    }
    ASSERT_EQ(bytes.size(), 116805u);
    for (size_t n : {size_t(0), size_t(100), bytes.size() - 1, bytes.size() + 1}) {
        std::vector<char> b(bytes.begin(), bytes.begin() + (std::ptrdiff_t) std::min(n, bytes.size()));
        b.resize(n, 0);
        std::ofstream(tmp, std::ios::binary).write(b.data(), (std::streamsize) b.size());
        err = digits::load(tmp.string(), d);
        EXPECT_NE(err.find("expected 116805"), std::string::npos) << n << ": " << err;
        EXPECT_EQ(err.find('\n'), std::string::npos);
    }
    bytes[64] = 10; // a label out of range
    std::ofstream(tmp, std::ios::binary).write(bytes.data(), (std::streamsize) bytes.size());
    err = digits::load(tmp.string(), d);
    EXPECT_NE(err.find("record 0 has label 10"), std::string::npos) << err;
    std::filesystem::remove(tmp);
}

TEST(Digits, MlpReaches95PercentHeldOut) {
    const digits::Options opt = digits::default_options(digits::Arch::MLP);
    const std::vector<double> acc = train_and_check(opt);
    ASSERT_FALSE(acc.empty());
    EXPECT_GE(acc.back(), 0.95);
    EXPECT_GT(acc.back(), acc.front());
}

TEST(Digits, CnnReaches95PercentHeldOut) {
    const digits::Options opt = digits::default_options(digits::Arch::CNN);
    const std::vector<double> acc = train_and_check(opt);
    ASSERT_FALSE(acc.empty());
    EXPECT_GE(acc.back(), 0.95);
    EXPECT_GT(acc.back(), acc.front());
}

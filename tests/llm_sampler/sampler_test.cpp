// Sampler tests: filtered sets and empirical frequencies against probabilities
// computed here by hand (double precision), greedy ties, penalties, seeding.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "lmllm/sampler.h"

using lmllm::Sampler;
using lmllm::SamplerParams;
using lmllm::Token;

namespace {

// Every filter off: plain softmax(logits / T) sampling.
SamplerParams plain(float temp, uint64_t seed = 1234) {
    SamplerParams p;
    p.temperature = temp;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.repeat_penalty = 1.0f;
    p.seed = seed;
    return p;
}

std::vector<float> logits_of(const std::vector<double> & probs) {
    std::vector<float> l;
    for (double p : probs) l.push_back(float(std::log(p)));
    return l;
}

// softmax(l / T) restricted to `keep` ids (renormalised), in double.
std::map<Token, double> expected(const std::vector<float> & l, double temp, const std::set<Token> & keep) {
    std::map<Token, double> e;
    double sum = 0;
    for (Token id : keep) sum += std::exp(double(l[size_t(id)]) / temp);
    for (Token id : keep) e[id] = std::exp(double(l[size_t(id)]) / temp) / sum;
    return e;
}

std::map<Token, double> frequencies(Sampler & s, const std::vector<float> & l, int n,
                                    const std::vector<Token> & history = {}) {
    std::map<Token, double> f;
    for (int i = 0; i < n; i++) f[s.sample(l.data(), int32_t(l.size()), history)] += 1.0 / n;
    return f;
}

// Every drawn token is in `want`, and each frequency is within 5 sigma of its probability.
void expect_matches(const std::map<Token, double> & freq, const std::map<Token, double> & want, int n) {
    for (const auto & [id, f] : freq) EXPECT_TRUE(want.count(id)) << "token " << id << " drawn but filtered out";
    for (const auto & [id, p] : want) {
        const double f = freq.count(id) ? freq.at(id) : 0.0;
        const double tol = 5.0 * std::sqrt(p * (1 - p) / n) + 1e-3;
        EXPECT_NEAR(f, p, tol) << "token " << id;
    }
}

const std::vector<double> kProbs = {0.5, 0.3, 0.15, 0.05};
constexpr int kDraws = 60000;

} // namespace

TEST(Sampler, GreedyPicksArgmax) {
    Sampler s(plain(0.0f));
    std::vector<float> l = {0.1f, -3.0f, 2.5f, 2.4f, 1.0f};
    EXPECT_EQ(s.sample(l.data(), 5, {}), 2);
    l[4] = 7.0f;
    EXPECT_EQ(s.sample(l.data(), 5, {}), 4);
}

TEST(Sampler, GreedyTieGoesToLowestId) {
    Sampler s(plain(-1.0f));
    std::vector<float> l = {1.0f, 3.0f, 0.0f, 3.0f, 3.0f};
    EXPECT_EQ(s.sample(l.data(), 5, {}), 1);
}

TEST(Sampler, RepeatPenaltyDividesPositiveLogits) {
    SamplerParams p = plain(0.0f);
    p.repeat_penalty = 1.1f;
    Sampler s(p);
    std::vector<float> l = {2.0f, 1.9f, -1.0f};
    // 2.0 / 1.1 = 1.818 < 1.9
    EXPECT_EQ(s.sample(l.data(), 3, {0}), 1);
    EXPECT_EQ(s.sample(l.data(), 3, {}), 0);
    // 2.0 / 1.02 = 1.96 > 1.9
    p.repeat_penalty = 1.02f;
    Sampler s2(p);
    EXPECT_EQ(s2.sample(l.data(), 3, {0}), 0);
}

TEST(Sampler, RepeatPenaltyMultipliesNegativeLogits) {
    SamplerParams p = plain(0.0f);
    p.repeat_penalty = 1.1f;
    Sampler s(p);
    std::vector<float> l = {-1.0f, -1.05f, -5.0f};
    // -1.0 * 1.1 = -1.1 < -1.05 (dividing would have raised it to -0.91)
    EXPECT_EQ(s.sample(l.data(), 3, {0}), 1);
}

TEST(Sampler, RepeatPenaltyOnlyLooksAtTheLastNTokens) {
    SamplerParams p = plain(0.0f);
    p.repeat_penalty = 2.0f;
    p.repeat_last_n = 2;
    Sampler s(p);
    std::vector<float> l = {2.0f, 1.5f, 0.0f};
    EXPECT_EQ(s.sample(l.data(), 3, {0, 2, 2}), 0); // token 0 is outside the window
    EXPECT_EQ(s.sample(l.data(), 3, {2, 0, 2}), 1); // inside: 2.0 / 2 = 1.0 < 1.5
}

TEST(Sampler, TemperatureOneMatchesSoftmax) {
    const std::vector<float> l = logits_of(kProbs);
    Sampler s(plain(1.0f));
    expect_matches(frequencies(s, l, kDraws), expected(l, 1.0, {0, 1, 2, 3}), kDraws);
}

TEST(Sampler, TemperatureSharpensAndFlattens) {
    const std::vector<float> l = logits_of(kProbs);
    for (double t : {0.5, 2.0}) {
        Sampler s(plain(float(t)));
        expect_matches(frequencies(s, l, kDraws), expected(l, t, {0, 1, 2, 3}), kDraws);
    }
}

TEST(Sampler, TopKKeepsTheKBest) {
    const std::vector<float> l = {0.0f, 2.0f, -1.0f, 1.0f, 0.5f};
    SamplerParams p = plain(1.0f);
    p.top_k = 2;
    Sampler s(p);
    expect_matches(frequencies(s, l, kDraws), expected(l, 1.0, {1, 3}), kDraws);
}

TEST(Sampler, TopKOneIsGreedy) {
    SamplerParams p = plain(1.5f);
    p.top_k = 1;
    Sampler s(p);
    const std::vector<float> l = {0.0f, 0.3f, 0.2f};
    for (int i = 0; i < 50; i++) EXPECT_EQ(s.sample(l.data(), 3, {}), 1);
}

TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
    const std::vector<float> l = logits_of(kProbs); // 0.5 0.3 0.15 0.05
    struct Case {
        float top_p;
        std::set<Token> keep;
    };
    for (const Case & c :
         {Case{0.75f, {0, 1}}, Case{0.85f, {0, 1, 2}}, Case{0.4f, {0}}, Case{0.0f, {0}}, Case{0.99f, {0, 1, 2, 3}}}) {
        SamplerParams p = plain(1.0f);
        p.top_p = c.top_p;
        Sampler s(p);
        expect_matches(frequencies(s, l, kDraws), expected(l, 1.0, c.keep), kDraws);
    }
}

TEST(Sampler, TopPSeesTemperatureScaledProbabilities) {
    // At T = 0.5 the probabilities are proportional to p^2: 0.685 0.247 0.062 0.007,
    // so top-p 0.9 keeps two tokens (at T = 1 it would keep three: 0.5+0.3 < 0.9).
    const std::vector<float> l = logits_of(kProbs);
    SamplerParams p = plain(0.5f);
    p.top_p = 0.9f;
    Sampler s(p);
    expect_matches(frequencies(s, l, kDraws), expected(l, 0.5, {0, 1}), kDraws);
    p.temperature = 1.0f;
    Sampler s1(p);
    expect_matches(frequencies(s1, l, kDraws), expected(l, 1.0, {0, 1, 2}), kDraws);
}

TEST(Sampler, MinPDropsTokensBelowAFractionOfTheBest) {
    const std::vector<float> l = logits_of(kProbs);
    struct Case {
        float min_p;
        std::set<Token> keep;
    };
    // thresholds 0.5 * min_p: 0.125 keeps 0.15; 0.25 drops it; 0.09 keeps all but 0.05
    for (const Case & c : {Case{0.25f, {0, 1, 2}}, Case{0.5f, {0, 1}}, Case{0.18f, {0, 1, 2}},
                           Case{0.05f, {0, 1, 2, 3}}, Case{1.0f, {0}}}) {
        SamplerParams p = plain(1.0f);
        p.min_p = c.min_p;
        Sampler s(p);
        expect_matches(frequencies(s, l, kDraws), expected(l, 1.0, c.keep), kDraws);
    }
}

TEST(Sampler, FiltersCompose) {
    // 8 tokens; top-k 6 drops ids 6,7; top-p 0.9 over the 6 then min-p 0.2.
    const std::vector<double> probs = {0.30, 0.25, 0.15, 0.10, 0.08, 0.05, 0.04, 0.03};
    const std::vector<float> l = logits_of(probs);
    SamplerParams p = plain(1.0f);
    p.top_k = 6;
    p.top_p = 0.9f;
    p.min_p = 0.3f;
    Sampler s(p);
    // after top-k, renormalised over 0.93: 0.3226 0.2688 0.1613 0.1075 0.0860 0.0538
    // cumulative: .3226 .5914 .7527 .8602 .9462 -> top-p keeps ids 0..4
    // min-p 0.3 * 0.3226 = 0.0968: drops id 4 (0.0860)
    expect_matches(frequencies(s, l, kDraws), expected(l, 1.0, {0, 1, 2, 3}), kDraws);
}

TEST(Sampler, RepeatPenaltyShiftsTheDistribution) {
    const std::vector<float> l = {1.0f, 1.0f, -0.5f};
    SamplerParams p = plain(1.0f);
    p.repeat_penalty = 2.0f;
    Sampler s(p);
    const std::vector<float> penalised = {0.5f, 1.0f, -1.0f}; // 1/2 and -0.5*2
    expect_matches(frequencies(s, l, kDraws, {0, 2}), expected(penalised, 1.0, {0, 1, 2}), kDraws);
}

TEST(Sampler, SameSeedSameSequence) {
    std::vector<float> l(100);
    for (size_t i = 0; i < l.size(); i++) l[i] = float(std::sin(double(i)));
    Sampler a(plain(1.0f, 42)), b(plain(1.0f, 42)), c(plain(1.0f, 43));
    std::vector<Token> sa, sb, sc;
    for (int i = 0; i < 200; i++) {
        sa.push_back(a.sample(l.data(), 100, {}));
        sb.push_back(b.sample(l.data(), 100, {}));
        sc.push_back(c.sample(l.data(), 100, {}));
    }
    EXPECT_EQ(sa, sb);
    EXPECT_NE(sa, sc);
}

TEST(Sampler, RandomSeedStillSamplesValidTokens) {
    SamplerParams p = plain(1.0f, 0xFFFFFFFFu);
    Sampler s(p);
    const std::vector<float> l = {0.0f, 0.0f, 0.0f};
    for (int i = 0; i < 20; i++) {
        const Token t = s.sample(l.data(), 3, {});
        EXPECT_GE(t, 0);
        EXPECT_LT(t, 3);
    }
}

TEST(Sampler, BadInputReturnsMinusOne) {
    Sampler s(plain(1.0f));
    const float l[1] = {0.0f};
    EXPECT_EQ(s.sample(nullptr, 5, {}), -1);
    EXPECT_EQ(s.sample(l, 0, {}), -1);
}

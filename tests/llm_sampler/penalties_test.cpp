// The presence and frequency penalties (llama.cpp's formulas): a token seen
// c > 0 times in the last repeat_last_n tokens loses c * frequency + presence
// from its logit, after the repeat penalty. Checked against logits penalised
// here by hand: greedy winners at both sides of each threshold, and sampled
// frequencies against the softmax of the penalised logits.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "lmllm/sampler.h"

using lmllm::Sampler;
using lmllm::SamplerParams;
using lmllm::Token;

namespace {

SamplerParams greedy() {
    SamplerParams p;
    p.temperature = 0.0f;
    p.repeat_penalty = 1.0f;
    p.seed = 7;
    return p;
}

Token pick(const SamplerParams & p, const std::vector<float> & l, const std::vector<Token> & history) {
    Sampler s(p);
    return s.sample(l.data(), int32_t(l.size()), history);
}

const std::vector<float> kLogits = {2.0f, 1.9f, 1.0f, -0.5f};

} // namespace

TEST(SamplerPenalties, FrequencyScalesWithTheCount) {
    const std::vector<Token> h = {0, 0, 0, 3}; // token 0 three times
    SamplerParams p = greedy();
    p.frequency_penalty = 0.05f; // 2.0 - 3 * 0.05 = 1.85 < 1.9
    EXPECT_EQ(pick(p, kLogits, h), 1);
    p.frequency_penalty = 0.03f; // 2.0 - 0.09 = 1.91 > 1.9
    EXPECT_EQ(pick(p, kLogits, h), 0);
}

TEST(SamplerPenalties, PresenceCountsATokenOnce) {
    const std::vector<Token> h = {0, 0, 0, 3};
    SamplerParams p = greedy();
    p.presence_penalty = 0.05f; // 2.0 - 0.05 = 1.95 > 1.9 (a frequency of 0.05 would lose)
    EXPECT_EQ(pick(p, kLogits, h), 0);
    p.presence_penalty = 0.15f; // 1.85 < 1.9
    EXPECT_EQ(pick(p, kLogits, h), 1);
}

TEST(SamplerPenalties, OnlyTheLastNTokensCount) {
    SamplerParams p = greedy();
    p.presence_penalty = 1.0f;
    p.repeat_last_n = 1;
    EXPECT_EQ(pick(p, kLogits, {0, 0, 0, 3}), 0); // only token 3 is in the window
    p.repeat_last_n = 0;                          // off
    EXPECT_EQ(pick(p, kLogits, {0}), 0);
    p.repeat_last_n = -1; // the whole history
    EXPECT_EQ(pick(p, kLogits, {0, 3, 3, 3, 3}), 1);
}

TEST(SamplerPenalties, AppliedAfterTheRepeatPenalty) {
    // token 0: 2.0 / 1.25 - 2 * 0.1 - 0.2 = 1.2; token 1: 1.9 / 1.25 - 0.1 - 0.2 = 1.22
    // wins. Subtracting before dividing would tie them at 1.28 (token 0 wins ties).
    SamplerParams p = greedy();
    p.repeat_penalty = 1.25f;
    p.frequency_penalty = 0.1f;
    p.presence_penalty = 0.2f;
    EXPECT_EQ(pick(p, kLogits, {0, 0, 1}), 1);
    // a negative logit is multiplied by the repeat penalty, then shifted
    const std::vector<float> neg = {-1.0f, -1.3f};
    p.repeat_penalty = 1.2f; // -1.2 - 0.1 - 0.2 = -1.5 < -1.3
    EXPECT_EQ(pick(p, neg, {0}), 1);
}

TEST(SamplerPenalties, SampledFrequenciesFollowThePenalisedSoftmax) {
    SamplerParams p;
    p.temperature = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.repeat_penalty = 1.0f;
    p.presence_penalty = 0.5f;
    p.frequency_penalty = 0.25f;
    p.seed = 99;
    const std::vector<float> l = {0.5f, 0.4f, 0.0f, -0.2f};
    const std::vector<Token> h = {0, 1, 1};
    std::vector<double> want = {0.5 - 0.25 - 0.5, 0.4 - 0.5 - 0.5, 0.0, -0.2}; // by hand
    double sum = 0;
    for (double & w : want) sum += (w = std::exp(w));
    for (double & w : want) w /= sum;

    Sampler s(p);
    const int n = 40000;
    std::map<Token, int> count;
    for (int i = 0; i < n; i++) count[s.sample(l.data(), int32_t(l.size()), h)]++;
    for (Token id = 0; id < 4; id++) {
        const double f = double(count[id]) / n, q = want[size_t(id)];
        EXPECT_NEAR(f, q, 5.0 * std::sqrt(q * (1 - q) / n) + 1e-3) << "token " << id;
    }
}

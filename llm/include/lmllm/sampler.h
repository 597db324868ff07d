#pragma once
// Token sampling: greedy, temperature, top-k, top-p, min-p, repetition /
// presence / frequency penalties, seed.

#include <cstdint>
#include <random>
#include <vector>

#include "lmllm/vocab.h"

namespace lmllm {

struct SamplerParams {
    float temperature = 0.8f;    // <= 0: greedy (argmax)
    int32_t top_k = 40;          // <= 0: disabled
    float top_p = 0.95f;         // >= 1: disabled
    float min_p = 0.05f;         // <= 0: disabled
    float repeat_penalty = 1.0f; // 1: disabled
    int32_t repeat_last_n = 64;  // window of previous tokens the penalties look at (-1: all)
    // llama.cpp's additive penalties over the same window: a token seen c > 0
    // times loses c * frequency_penalty + presence_penalty from its logit.
    float presence_penalty = 0.0f;  // 0: disabled
    float frequency_penalty = 0.0f; // 0: disabled
    uint64_t seed = 0xFFFFFFFFu;    // 0xFFFFFFFF: random seed
};

class Sampler {
public:
    explicit Sampler(SamplerParams params);
    // logits: (n_vocab). history: tokens seen so far (prompt + generated).
    Token sample(const float * logits, int32_t n_vocab, const std::vector<Token> & history);
    const SamplerParams & params() const { return params_; }

private:
    SamplerParams params_;
    std::mt19937_64 rng_;
};

} // namespace lmllm

// Token sampling. The pipeline, in order (each stage optional):
//   penalties (repeat, frequency, presence) -> top-k -> softmax(logits / T) -> top-p -> min-p -> draw
// Candidates are kept sorted by (logit desc, id asc) so every tie is broken
// the same way on every platform, and the draw uses our own uniform mapping
// of mt19937_64 output (std::*_distribution differ between standard libraries).
#include "lmllm/sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace lmllm {

namespace {

constexpr uint64_t kRandomSeed = 0xFFFFFFFFu;

struct Candidate {
    Token id;
    float logit;
};

bool before(const Candidate & a, const Candidate & b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

uint64_t initial_seed(uint64_t seed) {
    if (seed != kRandomSeed) return seed;
    std::random_device rd;
    return (uint64_t(rd()) << 32) ^ rd();
}

// Uniform double in [0, 1) from the top 53 bits of one 64-bit draw.
double uniform01(std::mt19937_64 & rng) { return double(rng() >> 11) * (1.0 / 9007199254740992.0); }

Token argmax(const float * logits, int32_t n_vocab) {
    Token best = 0;
    for (int32_t i = 1; i < n_vocab; i++) {
        if (logits[i] > logits[best]) best = i; // strict: the lowest id wins ties
    }
    return best;
}

bool penalties_off(const SamplerParams & p) {
    return p.repeat_penalty == 1.0f && p.presence_penalty == 0.0f && p.frequency_penalty == 0.0f;
}

// llama.cpp's penalties over the last `repeat_last_n` tokens. The repeat
// penalty pushes a seen token down whatever its sign (divides a positive
// logit, multiplies a negative one) and counts it once; the frequency
// penalty scales with how often it was seen, the presence penalty does not.
void apply_penalties(std::vector<Candidate> & cand, const SamplerParams & p, const std::vector<Token> & history) {
    if (penalties_off(p) || p.repeat_last_n == 0 || history.empty()) return;
    const size_t n = p.repeat_last_n < 0 ? history.size() : std::min(history.size(), size_t(p.repeat_last_n));
    std::unordered_map<Token, int32_t> count;
    for (auto it = history.end() - ptrdiff_t(n); it != history.end(); ++it) count[*it]++;
    for (Candidate & c : cand) {
        const auto it = count.find(c.id);
        if (it == count.end()) continue;
        if (p.repeat_penalty != 1.0f)
            c.logit = c.logit > 0.0f ? c.logit / p.repeat_penalty : c.logit * p.repeat_penalty;
        c.logit -= float(it->second) * p.frequency_penalty + p.presence_penalty;
    }
}

} // namespace

Sampler::Sampler(SamplerParams params) : params_(params), rng_(initial_seed(params.seed)) {}

Token Sampler::sample(const float * logits, int32_t n_vocab, const std::vector<Token> & history) {
    if (!logits || n_vocab <= 0) return -1;
    if (params_.temperature <= 0.0f) {
        // Greedy ignores every other stage except the penalties, which can change the winner.
        if (penalties_off(params_) || history.empty()) return argmax(logits, n_vocab);
    }

    std::vector<Candidate> cand(static_cast<size_t>(n_vocab));
    for (int32_t i = 0; i < n_vocab; i++) cand[size_t(i)] = {i, logits[i]};
    apply_penalties(cand, params_, history);

    if (params_.temperature <= 0.0f) {
        return std::min_element(cand.begin(), cand.end(), before)->id;
    }

    // top-k: keep the k best (the whole vocabulary when disabled), sorted best first
    size_t keep = cand.size();
    if (params_.top_k > 0) keep = std::min(keep, size_t(params_.top_k));
    std::partial_sort(cand.begin(), cand.begin() + ptrdiff_t(keep), cand.end(), before);
    cand.resize(keep);

    // softmax with temperature, in double so tiny probabilities still add up
    const double max_l = cand.front().logit;
    double sum = 0.0;
    std::vector<double> p(cand.size());
    for (size_t i = 0; i < cand.size(); i++) {
        p[i] = std::exp((double(cand[i].logit) - max_l) / double(params_.temperature));
        sum += p[i];
    }
    for (double & v : p) v /= sum;

    // top-p: the smallest prefix whose mass reaches top_p (at least one token)
    if (params_.top_p < 1.0f) {
        double cum = 0.0;
        size_t n = 0;
        while (n < p.size()) {
            cum += p[n++];
            if (cum >= double(params_.top_p)) break;
        }
        p.resize(n);
    }

    // min-p: drop tokens far less likely than the best one (p[0] is the best)
    if (params_.min_p > 0.0f) {
        const double threshold = double(params_.min_p) * p[0];
        size_t n = 1;
        while (n < p.size() && p[n] >= threshold) n++;
        p.resize(n);
    }

    // draw from the survivors, renormalised
    double total = 0.0;
    for (double v : p) total += v;
    const double u = uniform01(rng_) * total;
    double acc = 0.0;
    for (size_t i = 0; i < p.size(); i++) {
        acc += p[i];
        if (u < acc) return cand[i].id;
    }
    return cand[p.size() - 1].id; // u rounded up to total
}

} // namespace lmllm

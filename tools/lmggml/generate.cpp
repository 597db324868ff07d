// The generation loop (see generate.h).
#include "generate.h"

#include "common.h"
#include "console.h"

#include <cmath>
#include <string>

namespace cli {

using lmllm::Status;
using lmllm::Token;

Status generate(lmllm::Context & ctx, const lmllm::Vocab & vocab, lmllm::Sampler & sampler,
                const std::vector<Token> & input, int32_t n_predict, std::vector<Token> & history, std::FILE * out,
                std::string & reply, GenerationStats & stats) {
    stats = GenerationStats();
    reply.clear();
    if (input.empty()) return Status::error("nothing to decode (empty input)");

    double t0 = now_seconds();
    if (Status s = ctx.decode(input); !s.ok()) return s;
    stats.n_prompt = static_cast<int32_t>(input.size());
    stats.t_prompt = now_seconds() - t0;
    history.insert(history.end(), input.begin(), input.end());

    lmllm::Detokenizer detok(vocab);
    t0 = now_seconds();
    while (n_predict < 0 || stats.n_gen < n_predict) {
        if (interrupt_requested()) {
            stats.interrupted = true;
            break;
        }
        if (Status s = check_logits(ctx.logits(), ctx.n_vocab()); !s.ok()) return s;
        const Token t = sampler.sample(ctx.logits(), ctx.n_vocab(), history);
        if (t < 0) return Status::error("sampling failed");
        if (vocab.is_eog(t)) {
            stats.hit_eog = true;
            break;
        }
        history.push_back(t);
        stats.n_gen++;
        const std::string piece = detok.push(t);
        if (!piece.empty()) {
            reply += piece;
            std::fputs(piece.c_str(), out);
            std::fflush(out);
        }
        // the last sampled token needs no decode unless generation goes on
        if (n_predict >= 0 && stats.n_gen >= n_predict) break;
        if (ctx.n_past() >= ctx.n_ctx()) {
            stats.context_full = true;
            break;
        }
        if (Status s = ctx.decode({t}); !s.ok()) return s;
    }
    const std::string rest = detok.flush();
    reply += rest;
    std::fputs(rest.c_str(), out);
    std::fflush(out);
    stats.t_gen = now_seconds() - t0;
    return Status();
}

Status check_logits(const float * logits, int32_t n_vocab) {
    for (int32_t i = 0; i < n_vocab; i++) {
        if (!std::isfinite(logits[i])) {
            return Status::error(std::string("the model produced ") + (std::isnan(logits[i]) ? "NaN" : "infinite") +
                                 " logits: its weights are likely corrupted (check the file with `lmggml info MODEL --check`)");
        }
    }
    return Status();
}

std::string speed_summary(const GenerationStats & s) {
    auto rate = [](int32_t n, double t) { return t > 0.0 ? double(n) / t : 0.0; };
    char buf[256];
    std::snprintf(buf, sizeof buf, "prompt: %d tokens in %.2f s (%.1f t/s) | generation: %d tokens in %.2f s (%.1f t/s)",
                  s.n_prompt, s.t_prompt, rate(s.n_prompt, s.t_prompt), s.n_gen, s.t_gen, rate(s.n_gen, s.t_gen));
    return buf;
}

} // namespace cli

// The generation loop (see generate.h).
#include "generate.h"

#include "common.h"
#include "console.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace cli {

using lmllm::Status;
using lmllm::Token;

namespace {

// True when `text` (whose last `n_new` bytes just arrived) now holds a stop
// string that ends inside the new bytes.
bool reached_stop(const std::string & text, size_t n_new, const std::vector<std::string> & stop) {
    for (const std::string & s : stop) {
        if (s.empty() || text.size() < s.size()) continue;
        const size_t from = text.size() - n_new >= s.size() - 1 ? text.size() - n_new - (s.size() - 1) : 0;
        if (text.find(s, from) != std::string::npos) return true;
    }
    return false;
}

// Keeps the first n_keep cached tokens and the newer half of the rest; the
// kept tokens are decoded again into an emptied cache. False when nothing
// can be dropped.
lmllm::Result<bool> shift_context(lmllm::Context & ctx, std::vector<Token> & cached, int32_t n_keep) {
    const size_t keep = std::min(cached.size(), size_t(std::max(0, n_keep)));
    const size_t n_discard = (cached.size() - keep) / 2;
    if (n_discard == 0) return false;
    cached.erase(cached.begin() + ptrdiff_t(keep), cached.begin() + ptrdiff_t(keep + n_discard));
    ctx.clear();
    if (Status s = ctx.decode(cached); !s.ok()) return s;
    return true;
}

} // namespace

Status generate(lmllm::Context & ctx, const lmllm::Vocab & vocab, lmllm::Sampler & sampler,
                const std::vector<Token> & input, const GenerateOptions & opts, std::vector<Token> & history,
                std::FILE * out, std::string & reply, GenerationStats & stats) {
    stats = GenerationStats();
    reply.clear();
    if (input.empty()) return Status::error("nothing to decode (empty input)");
    if (opts.context_shift && ctx.n_past() != 0)
        return Status::error("a context shift needs generation to start from an empty cache");
    const int32_t n_predict = opts.n_predict;
    const int32_t n_vocab = ctx.n_vocab();

    const double t_start = now_seconds();
    if (Status s = ctx.decode(input); !s.ok()) return s;
    stats.n_prompt = static_cast<int32_t>(input.size());
    stats.t_prompt = now_seconds() - t_start;
    history.insert(history.end(), input.begin(), input.end());
    std::vector<Token> cached; // what the cache holds, for a context shift
    if (opts.context_shift) cached = input;

    std::vector<Token> eog; // with ignore_eos: the tokens masked out
    std::vector<float> masked;
    if (opts.ignore_eos) {
        for (Token i = 0; i < n_vocab; i++) {
            if (vocab.is_eog(i)) eog.push_back(i);
        }
    }

    lmllm::Detokenizer detok(vocab);
    const double t0 = now_seconds();
    while (n_predict < 0 || stats.n_gen < n_predict) {
        if (interrupt_requested()) {
            stats.interrupted = true;
            break;
        }
        const float * logits = ctx.logits();
        if (Status s = check_logits(logits, n_vocab); !s.ok()) return s;
        if (!eog.empty()) {
            masked.assign(logits, logits + n_vocab);
            for (Token e : eog) masked[size_t(e)] = -INFINITY;
            logits = masked.data();
        }
        const Token t = sampler.sample(logits, n_vocab, history);
        if (t < 0) return Status::error("sampling failed");
        if (stats.n_gen == 0) stats.t_first = now_seconds() - t_start;
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
            if (reached_stop(reply, piece.size(), opts.stop)) {
                stats.hit_stop = true;
                break;
            }
        }
        // the last sampled token needs no decode unless generation goes on
        if (n_predict >= 0 && stats.n_gen >= n_predict) break;
        if (ctx.n_past() >= ctx.n_ctx()) {
            bool shifted = false;
            if (opts.context_shift) {
                auto r = shift_context(ctx, cached, opts.n_keep);
                if (!r.ok()) return r.status();
                shifted = r.value();
            }
            if (!shifted) {
                stats.context_full = true;
                break;
            }
            stats.n_shift++;
        }
        if (Status s = ctx.decode({t}); !s.ok()) return s;
        if (opts.context_shift) cached.push_back(t);
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
            return Status::error(
                std::string("the model produced ") + (std::isnan(logits[i]) ? "NaN" : "infinite") +
                " logits: its weights are likely corrupted (check the file with `lmggml info MODEL --check`)");
        }
    }
    return Status();
}

std::string process_escapes(const std::string & s) {
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] != '\\' || i + 1 == s.size()) {
            out += s[i];
            continue;
        }
        const char c = s[++i];
        switch (c) {
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'a': out += '\a'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'v': out += '\v'; break;
            case '\'':
            case '"':
            case '?':
            case '\\': out += c; break;
            case 'x':
                if (i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
                    out += char(hex(s[i + 1]) * 16 + hex(s[i + 2]));
                    i += 2;
                    break;
                }
                [[fallthrough]];
            default: out += '\\', out += c; break;
        }
    }
    return out;
}

std::string speed_summary(const GenerationStats & s) {
    auto rate = [](int32_t n, double t) { return t > 0.0 ? double(n) / t : 0.0; };
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "prompt: %d tokens in %.2f s (%.1f t/s) | generation: %d tokens in %.2f s (%.1f t/s)", s.n_prompt,
                  s.t_prompt, rate(s.n_prompt, s.t_prompt), s.n_gen, s.t_gen, rate(s.n_gen, s.t_gen));
    return buf;
}

} // namespace cli

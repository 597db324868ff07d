#pragma once
// The generation loop shared by `run` and `chat`: decode the new input, then
// sample, stream and feed back one token at a time.

#include <cstdio>
#include <string>
#include <vector>

#include "lmllm/context.h"
#include "lmllm/sampler.h"

namespace cli {

struct GenerationStats {
    int32_t n_prompt = 0;
    double t_prompt = 0.0; // seconds
    int32_t n_gen = 0;
    double t_gen = 0.0;
    bool hit_eog = false;      // stopped at an end-of-generation token
    bool context_full = false; // stopped because the KV cache is full
    bool interrupted = false;  // stopped by Ctrl-C (see console.h); every sampled token is decoded
    bool hit_stop = false;     // stopped because the output reached a stop string (-r)
    double t_first = 0.0;      // seconds from the start (prompt decode included) to the first sampled token
    int32_t n_shift = 0;       // context shifts made (GenerateOptions::context_shift)
};

struct GenerateOptions {
    int32_t n_predict = -1; // < 0: until end of generation (or a full context without shift)
    // llama.cpp's reverse prompts: generation stops once the text generated
    // so far ends with one of them (the token that completes it is printed
    // whole and left undecoded, as a token cut by n_predict).
    std::vector<std::string> stop;
    bool ignore_eos = false; // end-of-generation tokens get a logit of -inf
    // With context_shift, a full cache keeps its first n_keep tokens, drops
    // half of the others (the oldest) and generation goes on: the kept
    // tokens are decoded again into an emptied cache (positions stay
    // contiguous, no RoPE rotation of cached keys is needed). Requires the
    // cache to be empty when generate() starts.
    bool context_shift = false;
    int32_t n_keep = 0;
};

// Decodes `input` after what the context already holds, then generates up to
// opts.n_predict tokens (< 0: until end of generation or a full context), writing
// text to `out` as it becomes valid UTF-8. `history` (prompt + generated, for
// the repetition penalty) is extended; the end-of-generation token is not
// decoded into the cache. `reply` receives the generated text. A Ctrl-C
// (interrupt_requested()) stops generation before the next token.
lmllm::Status generate(lmllm::Context & ctx, const lmllm::Vocab & vocab, lmllm::Sampler & sampler,
                       const std::vector<lmllm::Token> & input, const GenerateOptions & opts,
                       std::vector<lmllm::Token> & history, std::FILE * out, std::string & reply,
                       GenerationStats & stats);

// An error naming the likely cause (corrupted weights) when any logit is NaN
// or infinite: sampling from them would print garbage and exit 0.
lmllm::Status check_logits(const float * logits, int32_t n_vocab);

// llama.cpp's -e: \n \r \t \a \b \f \v \' \" \? \\ and \xNN (two hex digits) become
// the characters they name; any other backslash sequence is kept as written.
std::string process_escapes(const std::string & s);

// "prompt: 12 tokens in 0.05 s (240.0 t/s) | generation: 64 tokens in 1.20 s (53.3 t/s)"
std::string speed_summary(const GenerationStats & s);

} // namespace cli

// Records reference fixtures from llama.cpp (built outside this tree) for
// tests/llm_model: greedy continuations and the tokenization of the
// perplexity text. Not part of the lmggml build.
//
//   llamacpp_fixtures greedy MODEL N_PREDICT PROMPTS_FILE > smollm2_greedy.txt
//     PROMPTS_FILE: one prompt per line; "\n" in a line is a newline; a line
//     starting with "special:" is tokenized with special tokens parsed.
//   llamacpp_fixtures tokens MODEL TEXT_FILE > smollm2_ppl_tokens.txt
//     the ids llama-perplexity evaluates (add_special = true, parse_special = false)
//
// Greedy: argmax of the logits (ties to the lowest id), with the top logit
// and its margin over the runner-up at each step; flash attention
// off (lmllm uses soft_max_ext attention), 2 threads, prompt in one batch.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "llama.h"

static std::vector<llama_token> tokenize(const llama_vocab * vocab, const std::string & text, bool parse_special) {
    std::vector<llama_token> ids(text.size() + 16);
    int n =
        llama_tokenize(vocab, text.c_str(), int32_t(text.size()), ids.data(), int32_t(ids.size()), true, parse_special);
    if (n < 0) {
        ids.resize(size_t(-n));
        n = llama_tokenize(vocab, text.c_str(), int32_t(text.size()), ids.data(), int32_t(ids.size()), true,
                           parse_special);
    }
    ids.resize(size_t(n));
    return ids;
}

static std::string unescape(const std::string & s) {
    std::string out;
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == 'n') {
            out += '\n';
            i++;
        } else {
            out += s[i];
        }
    }
    return out;
}

static void print_ids(const char * key, const std::vector<llama_token> & ids) {
    std::printf("%s", key);
    for (llama_token t : ids) {
        std::printf(" %d", t);
    }
    std::printf("\n");
}

int main(int argc, char ** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s greedy MODEL N PROMPTS | tokens MODEL TEXT\n", argv[0]);
        return 1;
    }
    const std::string mode = argv[1];
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model * model = llama_model_load_from_file(argv[2], mp);
    if (model == nullptr) {
        return 1;
    }
    const llama_vocab * vocab = llama_model_get_vocab(model);

    if (mode == "tokens") {
        std::ifstream in(argv[3], std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        print_ids("ids:", tokenize(vocab, ss.str(), false));
        llama_model_free(model);
        return 0;
    }

    const int n_predict = std::atoi(argv[3]);
    std::ifstream in(argv[4]);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) {
            continue;
        }
        bool special = false;
        if (line.rfind("special:", 0) == 0) {
            special = true;
            line = line.substr(8);
        }
        const std::string prompt = unescape(line);
        std::vector<llama_token> ids = tokenize(vocab, prompt, special);

        llama_context_params cp = llama_context_default_params();
        cp.n_ctx = 512;
        cp.n_batch = 512;
        cp.n_threads = 2;
        cp.n_threads_batch = 2;
        cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
        llama_context * ctx = llama_init_from_model(model, cp);
        std::vector<llama_token> out;
        std::vector<float> top, margin; // llama.cpp's top logit and its lead over the runner-up
        std::vector<llama_token> cur = ids;
        for (int i = 0; i < n_predict; i++) {
            if (llama_decode(ctx, llama_batch_get_one(cur.data(), int32_t(cur.size()))) != 0) {
                std::fprintf(stderr, "decode failed\n");
                return 1;
            }
            const float * logits = llama_get_logits_ith(ctx, -1);
            llama_token best = 0;
            for (llama_token v = 1; v < llama_vocab_n_tokens(vocab); v++) {
                if (logits[v] > logits[best]) {
                    best = v;
                }
            }
            float second = -INFINITY;
            for (llama_token v = 0; v < llama_vocab_n_tokens(vocab); v++) {
                if (v != best && logits[v] > second) {
                    second = logits[v];
                }
            }
            out.push_back(best);
            top.push_back(logits[best]);
            margin.push_back(logits[best] - second);
            cur = {best};
        }
        std::printf("prompt: %s\n", line.c_str());
        std::printf("special: %d\n", special ? 1 : 0);
        print_ids("prompt_ids:", ids);
        print_ids("greedy_ids:", out);
        std::printf("greedy_top_logits:");
        for (float f : top) {
            std::printf(" %.4f", f);
        }
        std::printf("\ngreedy_margins:");
        for (float f : margin) {
            std::printf(" %.4f", f);
        }
        std::printf("\n");
        llama_free(ctx);
    }
    llama_model_free(model);
    return 0;
}

// libFuzzer target for the tokenizer (lmllm::Vocab, lmllm::Detokenizer):
// arbitrary bytes through SmolLM2's byte-level BPE vocabulary and the
// SentencePiece test vocabulary (tests/data/tokenizer/mistral-v3-spm.vocab.gguf).
//
// Beyond "no crash, no sanitizer report" it checks:
//  - every id is inside the vocabulary;
//  - the streaming Detokenizer only ever releases valid UTF-8;
//  - valid UTF-8 text comes back unchanged from detokenize(tokenize(text))
//    with special tokens rendered, unless the text holds U+2581 "▁" (which
//    SentencePiece writes back as a space), a SentencePiece user-defined
//    token (text after it gets a leading space, as after any special token;
//    in the test vocabulary they all start with '['), or, for byte-level BPE, a byte
//    the vocabulary has no token for (SmolLM2 lacks a few, e.g. 0x04; such
//    bytes are dropped, as llama.cpp does).
// A violated check calls __builtin_trap(), which libFuzzer reports as a crash.
//
// The first input byte picks add_special (bit 0) and parse_special (bit 1).
// SmolLM2 is found through LMGGML_MODEL or ~/.cache/lmggml (scripts/fetch-model);
// without it only the SentencePiece vocabulary is fuzzed.
//
// Build and run (fuzz-only build directory, clang with libFuzzer):
//   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DLMGGML_BUILD_FUZZ=ON \
//     -DLMGGML_SANITIZE=address,undefined -DLMGGML_BUILD_TESTS=OFF \
//     -DLMGGML_BUILD_TOOLS=OFF -DLMGGML_BUILD_BENCH=OFF
//   cmake --build build-fuzz --target fuzz_tokenizer -j2
//   build-fuzz/fuzz/fuzz_tokenizer -max_len=512 -max_total_time=60

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gguf.h"
#include "lmllm/vocab.h"
#include "unicode.h"

namespace {

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            std::fprintf(stderr, "fuzz_tokenizer: check failed: %s (line %d)\n", #cond, __LINE__);                     \
            __builtin_trap();                                                                                          \
        }                                                                                                              \
    } while (0)

std::unique_ptr<lmllm::Vocab> load(const std::string & path) {
    lm_gguf_init_params params = {true, nullptr};
    lm_gguf_context * g = lm_gguf_init_from_file(path.c_str(), params);
    if (!g) {
        return nullptr;
    }
    auto r = lmllm::Vocab::load(g);
    lm_gguf_free(g);
    if (!r.ok()) {
        std::fprintf(stderr, "fuzz_tokenizer: %s: %s\n", path.c_str(), r.status().message().c_str());
        return nullptr;
    }
    return std::move(r.value());
}

std::vector<std::unique_ptr<lmllm::Vocab>> & vocabs() {
    static std::vector<std::unique_ptr<lmllm::Vocab>> v = [] {
        std::vector<std::unique_ptr<lmllm::Vocab>> out;
        std::string model;
        if (const char * env = std::getenv("LMGGML_MODEL"); env && *env) {
            model = env;
        } else if (const char * home = std::getenv("HOME")) {
            model = std::string(home) + "/.cache/lmggml/SmolLM2-135M-Instruct.Q4_1.gguf";
        }
        if (auto bpe = load(model)) {
            out.push_back(std::move(bpe));
        } else {
            std::fprintf(stderr, "fuzz_tokenizer: SmolLM2 not found (%s); fuzzing the SentencePiece vocabulary only\n",
                         model.c_str());
        }
        if (auto spm = load(LMGGML_TOKENIZER_SPM_VOCAB)) {
            out.push_back(std::move(spm));
        }
        if (out.empty()) {
            std::fprintf(stderr, "fuzz_tokenizer: no vocabulary could be loaded\n");
            std::abort();
        }
        return out;
    }();
    return v;
}

// Whether byte-level BPE can spell every byte of `text`.
bool all_bytes_spellable(const lmllm::Vocab & v, const std::string & text) {
    if (v.type() != lmllm::VocabType::BPE) {
        return true;
    }
    for (unsigned char c : text) {
        if (v.token_id(lmllm::uni::byte_to_utf8(c)) < 0) {
            return false;
        }
    }
    return true;
}

void fuzz_one(const lmllm::Vocab & v, const std::string & text, bool add_special, bool parse_special) {
    const std::vector<lmllm::Token> ids = v.tokenize(text, add_special, parse_special);
    for (lmllm::Token id : ids) {
        CHECK(id >= 0 && id < v.n_tokens());
    }

    lmllm::Detokenizer stream(v, parse_special);
    for (lmllm::Token id : ids) {
        const std::string chunk = stream.push(id);
        CHECK(lmllm::uni::sanitize(chunk) == chunk);
    }
    const std::string rest = stream.flush();
    CHECK(lmllm::uni::sanitize(rest) == rest);

    const std::string back = v.detokenize(ids, true);
    const bool valid = lmllm::uni::sanitize(text) == text;
    const bool spm_marker = v.type() == lmllm::VocabType::SPM &&
                            (text.find("\xE2\x96\x81") != std::string::npos || text.find('[') != std::string::npos);
    if (!add_special && !parse_special && valid && !spm_marker && all_bytes_spellable(v, text)) {
        CHECK(back == text);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (size == 0) {
        return 0;
    }
    const bool add_special = data[0] & 1;
    const bool parse_special = data[0] & 2;
    const std::string text(reinterpret_cast<const char *>(data + 1), size - 1);
    for (const auto & v : vocabs()) {
        fuzz_one(*v, text, add_special, parse_special);
    }
    return 0;
}

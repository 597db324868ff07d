#pragma once
// Vocabulary and tokenizer read from GGUF metadata (tokenizer.ggml.*):
// SentencePiece-style ("llama") and byte-level BPE ("gpt2") with the
// pre-tokenizers the supported models declare (tokenizer.ggml.pre).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lmllm/status.h"

struct lm_gguf_context;

namespace lmllm {

using Token = int32_t;

enum class VocabType { SPM, BPE };

enum TokenAttr : uint32_t { // from tokenizer.ggml.token_type (GGUF values)
    TOKEN_NORMAL = 1,
    TOKEN_UNKNOWN = 2,
    TOKEN_CONTROL = 3,
    TOKEN_USER_DEFINED = 4,
    TOKEN_UNUSED = 5,
    TOKEN_BYTE = 6,
};

class Vocab {
public:
    // Reads the vocabulary from an open GGUF file; errors name the bad key.
    static Result<std::unique_ptr<Vocab>> load(const lm_gguf_context * gguf);
    ~Vocab();

    VocabType type() const;
    const std::string & pre_tokenizer() const; // e.g. "smollm", "llama-bpe", "qwen2", "default"
    int32_t n_tokens() const;

    // add_special: prepend BOS / append EOS as the model's metadata asks.
    // parse_special: text like "<|im_start|>" becomes the special token.
    std::vector<Token> tokenize(const std::string & text, bool add_special, bool parse_special) const;

    // The bytes of one token as they appear in text (special tokens rendered
    // only when `special`). Bytes may be a partial UTF-8 sequence: use
    // Detokenizer to stream valid UTF-8.
    std::string token_to_piece(Token id, bool special) const;
    std::string detokenize(const std::vector<Token> & ids, bool special) const;

    const std::string & token_text(Token id) const;
    Token token_id(const std::string & text) const; // -1 if absent

    Token bos() const; // -1 when the model has none
    Token eos() const;
    Token eot() const; // end of turn (e.g. <|im_end|>), -1 if none
    Token unk() const;
    bool add_bos() const;
    bool add_eos() const;
    bool is_eog(Token id) const; // ends generation (eos, eot, ...)
    bool is_control(Token id) const;

    struct Impl;

private:
    explicit Vocab(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Accumulates token pieces and releases only complete UTF-8 sequences, so a
// streamed character split across tokens is printed once, whole.
class Detokenizer {
public:
    explicit Detokenizer(const Vocab & vocab, bool special = false) : vocab_(vocab), special_(special) {}
    std::string push(Token id); // text that became complete with this token
    std::string flush();        // whatever is left (invalid bytes as U+FFFD)

private:
    const Vocab & vocab_;
    bool special_;
    std::string pending_;
};

} // namespace lmllm

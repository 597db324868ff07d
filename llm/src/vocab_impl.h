#pragma once
// Internal state of lmllm::Vocab, shared by vocab.cpp (loading, accessors),
// vocab_tokenize.cpp (text -> ids) and vocab_detok.cpp (ids -> text).

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "lmllm/vocab.h"
#include "unicode_split.h"

namespace lmllm {

// Token attributes as bits (a token can gain CONTROL or UNUSED on top of
// its GGUF type, e.g. an end-of-turn token the file left NORMAL).
enum AttrBit : uint32_t {
    ATTR_UNDEFINED = 0,
    ATTR_UNKNOWN = 1u << 0,
    ATTR_UNUSED = 1u << 1,
    ATTR_NORMAL = 1u << 2,
    ATTR_CONTROL = 1u << 3,
    ATTR_USER_DEFINED = 1u << 4,
    ATTR_BYTE = 1u << 5,
};

struct Vocab::Impl {
    struct TokenData {
        std::string text;
        float score = 0.0f;
        uint32_t attr = ATTR_NORMAL;
    };

    VocabType type = VocabType::SPM;
    std::string pre; // tokenizer.ggml.pre as written
    std::vector<TokenData> tokens;
    std::unordered_map<std::string, Token> text_to_id;
    std::unordered_map<std::string, int32_t> merge_rank; // key: merge_key(left, right)
    std::vector<uni::SplitRule> split_rules;             // BPE only

    Token bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, pad = -1;
    bool add_bos = false;
    bool add_eos = false;
    bool add_space_prefix = false; // SPM: a space before text that follows BOS/special
    bool clean_spaces = false;     // detokenize: " ," -> "," and similar (some BPE vocabs)
    bool ignore_merges = false;    // BPE: a word that is a token is taken whole

    std::vector<Token> special_by_length; // control/user-defined/unknown, longest text first
    std::set<Token> eog;
    std::vector<std::string> piece_cache; // token_to_piece(id, special = true)

    bool valid(Token id) const { return id >= 0 && static_cast<size_t>(id) < tokens.size(); }
    Token find(const std::string & text) const {
        auto it = text_to_id.find(text);
        return it == text_to_id.end() ? -1 : it->second;
    }
    static std::string merge_key(const std::string & left, const std::string & right) {
        // length prefix keeps ("a b", "c") and ("a", "b c") apart
        return std::to_string(left.size()) + ':' + left + right;
    }

    // vocab_tokenize.cpp
    std::vector<Token> tokenize(const std::string & text, bool add_special, bool parse_special) const;
    Token byte_token(uint8_t byte) const;
    // vocab_detok.cpp
    std::string make_piece(Token id) const; // uncached piece with special = true
    std::string detokenize(const std::vector<Token> & ids, bool special) const;
};

} // namespace lmllm

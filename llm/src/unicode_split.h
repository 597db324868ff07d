#pragma once
// Pre-tokenizer for byte-level BPE: cuts text into words before merging, by
// hand-written equivalents of the split regexes the supported models declare.
// Each rule refines the pieces the previous rule produced, as the models'
// "Split" pre-tokenizers chained in sequence do.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lmllm::uni {

enum class SplitRule {
    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    GPT2,
    // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
    //  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
    LLAMA3,
    // as LLAMA3 with \p{N} (single digits) instead of \p{N}{1,3}
    QWEN2,
    DIGIT_EACH,     // \p{N}          every number character alone
    DIGIT_RUNS,     // \p{N}+
    PUNCT_RUNS,     // [\p{P}\$\+<=>\^~\|]+
    ASCII_DIGITS_3, // [0-9][0-9][0-9]
};

// The rules for a tokenizer.ggml.pre name; false when the name is unknown.
bool split_rules_for(const std::string & pre, std::vector<SplitRule> & rules);

// Splits `text` (decoded leniently, see decode()) into words. With
// byte_encode, every byte of each word is written in GPT-2's alphabet.
std::vector<std::string> split_words(std::string_view text, const std::vector<SplitRule> & rules, bool byte_encode);

} // namespace lmllm::uni

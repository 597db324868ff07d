#pragma once
// Unicode helpers for the tokenizer: lenient UTF-8 decoding (the way
// llama.cpp's tokenizer reads text, so ids agree on odd input), code point
// classes for the pre-tokenizer rules, and GPT-2's byte <-> code point map.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lmllm::uni {

// General-category family of a code point (one bit each, so sets of classes
// can be tested with a mask). UNDEFINED: unassigned (Cn) or past U+10FFFF.
enum Category : uint8_t {
    UNDEFINED = 0x01,
    NUMBER = 0x02,      // \p{N}
    LETTER = 0x04,      // \p{L}
    SEPARATOR = 0x08,   // \p{Z}
    MARK = 0x10,        // \p{M}
    PUNCTUATION = 0x20, // \p{P}
    SYMBOL = 0x40,      // \p{S}
    CONTROL = 0x80,     // \p{C} other than Cn
};

struct CategoryRange {
    uint32_t first;
    Category cat;
};

// Generated table (unicode_data.cpp), sorted by `first`, starting at 0.
extern const CategoryRange k_category_ranges[];
extern const size_t k_n_category_ranges;

constexpr uint32_t REPLACEMENT = 0xFFFD;

Category category(uint32_t cpt);
bool is_whitespace(uint32_t cpt); // Unicode White_Space property (\s)

// Length of the UTF-8 sequence a byte starts, judged from its high nibble
// alone (continuation and invalid bytes count 1): how text is cut into
// characters before SentencePiece/BPE merging.
size_t seq_len(uint8_t lead);

// Decodes one code point at `pos` and advances it. Checks the lead byte and
// that enough continuation bytes follow; anything else gives U+FFFD and
// advances one byte. Overlong forms and surrogates decode to their value
// (as llama.cpp does); values past U+10FFFF are invalid.
uint32_t decode_one(std::string_view s, size_t & pos);
std::vector<uint32_t> decode(std::string_view s);

void append_utf8(std::string & out, uint32_t cpt); // cpt <= 0x10FFFF
std::string to_utf8(const std::vector<uint32_t> & cpts, size_t begin, size_t end);

// GPT-2 byte-level BPE alphabet: every byte maps to one printable code point.
uint32_t byte_to_cpt(uint8_t b);
const std::string & byte_to_utf8(uint8_t b);
int cpt_to_byte(uint32_t cpt); // -1 when cpt is not in the alphabet

// Number of leading bytes of `s` that form complete UTF-8 sequences; an
// incomplete sequence at the very end is left out (it may still complete).
size_t complete_prefix(std::string_view s);
// Valid UTF-8 with each invalid or truncated sequence replaced by U+FFFD.
std::string sanitize(std::string_view s);

} // namespace lmllm::uni

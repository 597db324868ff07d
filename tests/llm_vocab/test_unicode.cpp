// Unit tests of the tokenizer's Unicode helpers and pre-tokenizer rules,
// with expectations worked out by hand from the Unicode Character Database
// and the split regexes (comments show the reasoning).

#include <gtest/gtest.h>

#include "unicode.h"
#include "unicode_split.h"

namespace {

using namespace lmllm::uni;

TEST(Unicode, Categories) {
    EXPECT_EQ(category('A'), LETTER);
    EXPECT_EQ(category('z'), LETTER);
    EXPECT_EQ(category('5'), NUMBER);
    EXPECT_EQ(category(' '), SEPARATOR);
    EXPECT_EQ(category('\n'), CONTROL);
    EXPECT_EQ(category('!'), PUNCTUATION);
    EXPECT_EQ(category('$'), SYMBOL);
    EXPECT_EQ(category('+'), SYMBOL);
    EXPECT_EQ(category(0x00E9), LETTER);      // é
    EXPECT_EQ(category(0x0301), MARK);        // combining acute
    EXPECT_EQ(category(0x0663), NUMBER);      // Arabic-Indic three
    EXPECT_EQ(category(0x00BD), NUMBER);      // ½ (No)
    EXPECT_EQ(category(0x216B), NUMBER);      // Ⅻ (Nl)
    EXPECT_EQ(category(0x4E2D), LETTER);      // 中
    EXPECT_EQ(category(0x3002), PUNCTUATION); // 。
    EXPECT_EQ(category(0x1F600), SYMBOL);     // 😀
    EXPECT_EQ(category(0x200D), CONTROL);     // zero width joiner (Cf)
    EXPECT_EQ(category(0xE000), CONTROL);     // private use (Co)
    EXPECT_EQ(category(0xD800), CONTROL);     // surrogate (Cs)
    EXPECT_EQ(category(0x0378), UNDEFINED);   // unassigned
    EXPECT_EQ(category(0x2EBF0), LETTER);     // CJK Extension I: new in Unicode 15.1
    EXPECT_EQ(category(0x1C89), UNDEFINED);   // assigned only in Unicode 16
    EXPECT_EQ(category(0x10FFFF), UNDEFINED);
    EXPECT_EQ(category(0x110000), UNDEFINED);
}

TEST(Unicode, Whitespace) {
    for (uint32_t c : {0x09u, 0x0Au, 0x0Bu, 0x0Cu, 0x0Du, 0x20u, 0x85u, 0xA0u, 0x1680u, 0x2000u, 0x200Au, 0x2028u,
                       0x2029u, 0x202Fu, 0x205Fu, 0x3000u}) {
        EXPECT_TRUE(is_whitespace(c)) << std::hex << c;
    }
    for (uint32_t c : {0x00u, 0x1Cu, 0x1Fu, 0x61u, 0x200Bu, 0x180Eu, 0xFEFFu}) {
        EXPECT_FALSE(is_whitespace(c)) << std::hex << c;
    }
}

TEST(Unicode, LenientDecoding) {
    EXPECT_EQ(decode("a\xC3\xA9"), (std::vector<uint32_t>{'a', 0xE9}));
    EXPECT_EQ(decode("\xF0\x9F\x98\x80"), (std::vector<uint32_t>{0x1F600}));
    EXPECT_EQ(decode("\xFF"), (std::vector<uint32_t>{REPLACEMENT}));
    // a truncated sequence: the lead byte and the orphan continuation each
    EXPECT_EQ(decode("\xE2\x82"), (std::vector<uint32_t>{REPLACEMENT, REPLACEMENT}));
    EXPECT_EQ(decode("\xC3("), (std::vector<uint32_t>{REPLACEMENT, '('}));
    // overlong forms and surrogates keep their value (as llama.cpp reads them)
    EXPECT_EQ(decode("\xC0\x80"), (std::vector<uint32_t>{0}));
    EXPECT_EQ(decode("\xED\xA0\x80"), (std::vector<uint32_t>{0xD800}));
    // past U+10FFFF: invalid, byte by byte
    EXPECT_EQ(decode("\xF5\x80\x80\x80").size(), 4u);
    EXPECT_EQ(decode("\xF5\x80\x80\x80")[0], REPLACEMENT);
}

TEST(Unicode, SeqLen) {
    EXPECT_EQ(seq_len('a'), 1u);
    EXPECT_EQ(seq_len(0x80), 1u);
    EXPECT_EQ(seq_len(0xC3), 2u);
    EXPECT_EQ(seq_len(0xE2), 3u);
    EXPECT_EQ(seq_len(0xF0), 4u);
    EXPECT_EQ(seq_len(0xFF), 4u);
}

TEST(Unicode, ByteAlphabet) {
    // printable bytes are themselves; the 68 others take U+0100.. in order:
    // 0x00..0x20 -> U+0100..U+0120, 0x7F -> U+0121, 0x80..0xA0 -> U+0122..U+0142, 0xAD -> U+0143
    EXPECT_EQ(byte_to_cpt('A'), uint32_t('A'));
    EXPECT_EQ(byte_to_cpt(0x00), 0x100u);
    EXPECT_EQ(byte_to_cpt('\n'), 0x10Au);
    EXPECT_EQ(byte_to_cpt(' '), 0x120u); // "Ġ"
    EXPECT_EQ(byte_to_cpt(0x7F), 0x121u);
    EXPECT_EQ(byte_to_cpt(0x80), 0x122u);
    EXPECT_EQ(byte_to_cpt(0xA0), 0x142u);
    EXPECT_EQ(byte_to_cpt(0xA1), 0xA1u);
    EXPECT_EQ(byte_to_cpt(0xAD), 0x143u);
    EXPECT_EQ(byte_to_cpt(0xFF), 0xFFu);
    EXPECT_EQ(byte_to_utf8(' '), "\xC4\xA0");
    for (int b = 0; b < 256; ++b) {
        EXPECT_EQ(cpt_to_byte(byte_to_cpt(static_cast<uint8_t>(b))), b);
    }
    EXPECT_EQ(cpt_to_byte(0x144), -1);
    EXPECT_EQ(cpt_to_byte(0xAD), -1);
    EXPECT_EQ(cpt_to_byte(0x20), -1);
}

TEST(Unicode, CompletePrefixAndSanitize) {
    EXPECT_EQ(complete_prefix("ab\xE2\x82"), 2u); // euro sign waiting for its last byte
    EXPECT_EQ(complete_prefix("ab\xE2\x82\xAC"), 5u);
    EXPECT_EQ(complete_prefix("a\xF0\x9F"), 1u);
    EXPECT_EQ(complete_prefix("\xFF"), 1u);     // never valid: released (as U+FFFD)
    EXPECT_EQ(complete_prefix("\xE0\x80"), 2u); // E0 80 can never complete
    EXPECT_EQ(complete_prefix("\xE2\x82x"), 3u);
    const std::string fffd = "\xEF\xBF\xBD";
    EXPECT_EQ(sanitize("a\xFF"
                       "b"),
              "a" + fffd + "b");
    EXPECT_EQ(sanitize("\xE2\x82"), fffd);                   // one maximal subpart
    EXPECT_EQ(sanitize("\xED\xA0\x80"), fffd + fffd + fffd); // surrogates are not UTF-8
    EXPECT_EQ(sanitize("\xC0\x80"), fffd + fffd);            // nor are overlong forms
    EXPECT_EQ(sanitize("\xF0\x9F\x98\x80 \xC3\xA9"), "\xF0\x9F\x98\x80 \xC3\xA9");
}

std::vector<std::string> split(const std::string & text, std::vector<SplitRule> rules) {
    return split_words(text, rules, false);
}
using W = std::vector<std::string>;

TEST(PreTokenizer, Gpt2) {
    const std::vector<SplitRule> r = {SplitRule::GPT2};
    // "\s+(?!\S)": the last space of a run goes with the next word
    EXPECT_EQ(split("Hello  world", r), (W{"Hello", " ", " world"}));
    EXPECT_EQ(split("x  ", r), (W{"x", "  "})); // a run at the end stays whole
    EXPECT_EQ(split("I'm you're", r), (W{"I", "'m", " you", "'re"}));
    EXPECT_EQ(split("don'T", r), (W{"don", "'", "T"})); // contractions are lower case only
    EXPECT_EQ(split("a1b 22", r), (W{"a", "1", "b", " 22"}));
    EXPECT_EQ(split("f(x);\n", r), (W{"f", "(", "x", ");", "\n"}));
    EXPECT_EQ(split("caf\xC3\xA9!", r), (W{"caf\xC3\xA9", "!"}));
}

TEST(PreTokenizer, Llama3AndQwen2) {
    const std::vector<SplitRule> l3 = {SplitRule::LLAMA3}, q2 = {SplitRule::QWEN2};
    EXPECT_EQ(split("12345", l3), (W{"123", "45"}));
    EXPECT_EQ(split("12345", q2), (W{"1", "2", "3", "4", "5"}));
    // punctuation takes the line breaks after it; a letter run may take one
    // leading non-letter
    EXPECT_EQ(split("Hi!\n\nthere", l3), (W{"Hi", "!\n\n", "there"}));
    EXPECT_EQ(split("(abc", l3), (W{"(abc"}));
    EXPECT_EQ(split("don'T", l3), (W{"don", "'T"})); // case-insensitive
    // "\s*[\r\n]+": whitespace up to the last line break
    EXPECT_EQ(split("a \n \nb", l3), (W{"a", " \n \n", "b"}));
}

TEST(PreTokenizer, SmolLMAndDefault) {
    // smollm: every digit alone, then GPT-2
    EXPECT_EQ(split("ab 123", {SplitRule::DIGIT_EACH, SplitRule::GPT2}), (W{"ab", " ", "1", "2", "3"}));
    // default: punctuation runs, GPT-2, digit runs, then ASCII digit triples
    const std::vector<SplitRule> d = {SplitRule::PUNCT_RUNS, SplitRule::GPT2, SplitRule::DIGIT_RUNS,
                                      SplitRule::ASCII_DIGITS_3};
    EXPECT_EQ(split("x=1234;", d), (W{"x", "=", "123", "4", ";"}));
}

TEST(PreTokenizer, ByteEncodingAndRuleNames) {
    EXPECT_EQ(split_words(" hi\n", {SplitRule::GPT2}, true), (W{"\xC4\xA0hi", "\xC4\x8A"})); // Ġhi, Ċ
    EXPECT_TRUE(split_words("", {SplitRule::GPT2}, true).empty());
    std::vector<SplitRule> r;
    EXPECT_TRUE(split_rules_for("smollm", r));
    EXPECT_EQ(r, (std::vector<SplitRule>{SplitRule::DIGIT_EACH, SplitRule::GPT2}));
    EXPECT_TRUE(split_rules_for("llama-bpe", r));
    EXPECT_EQ(r, (std::vector<SplitRule>{SplitRule::LLAMA3}));
    EXPECT_TRUE(split_rules_for("qwen2", r));
    EXPECT_EQ(r, (std::vector<SplitRule>{SplitRule::QWEN2}));
    EXPECT_TRUE(split_rules_for("default", r));
    EXPECT_EQ(r.size(), 4u);
    EXPECT_FALSE(split_rules_for("no-such-pre", r));
}

} // namespace

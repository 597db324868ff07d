// Any bytes in, no crash out: random and hostile inputs through both
// vocabularies, out-of-range ids, and the accessors' answers for them.

#include <gtest/gtest.h>

#include <random>

#include "unicode.h"
#include "vocab_fixture.h"

namespace {

using lmllm::Token;

void check_any_input(const lmllm::Vocab & v, const std::string & s) {
    for (int add = 0; add < 2; ++add) {
        for (int parse = 0; parse < 2; ++parse) {
            const auto ids = v.tokenize(s, add, parse);
            for (Token id : ids) {
                ASSERT_GE(id, 0);
                ASSERT_LT(id, v.n_tokens());
            }
            if (!s.empty() && !add) {
                EXPECT_FALSE(ids.empty()) << "input " << vt::hex(s);
            }
            (void) v.detokenize(ids, parse);
            lmllm::Detokenizer d(v, parse);
            std::string out;
            for (Token id : ids) out += d.push(id);
            out += d.flush();
            EXPECT_EQ(lmllm::uni::sanitize(out), out);
        }
    }
}

std::vector<std::string> hostile_inputs() {
    std::vector<std::string> in = {
        std::string("\0", 1),
        std::string(5, '\0'),
        "\xFF\xFE\xFD",
        "\xF5\x80\x80\x80",
        "\xF7\xBF\xBF\xBF",
        "\xF4\x90\x80\x80",
        "\xF0\x9F\x98",
        "\xE2",
        "\xC0",
        "\x80\x80\x80",
        "\xED\xA0\x80\xED\xB0\x80",
        "\xC0\xAF",
        "\xE0\x80\xAF",
        "<|im_start|<|im_start|>>",
        "<|im_end|><|im_end|><|im_end|>",
        "[INST][/INST][INST]",
        "<s><s></s>",
        "<0xFF><0x00>",
        "\xEF\xBB\xBF"
        "bom",
        "\xE2\x96\x81\xE2\x96\x81 \xE2\x96\x81",
        "'''''''''",
        "'s's's",
        "\r\r\r\n\n\r",
        "\xC2\x85\xC2\x85",
        "\xE2\x80\xA8\xE2\x80\xA9",
    };
    in.push_back(std::string(5000, ' '));
    in.push_back(std::string(3000, '\n'));
    in.push_back(std::string(4000, '7'));
    in.push_back(std::string(3000, 'a'));
    std::string mix;
    for (int i = 0; i < 500; ++i)
        mix += "\xE4\xB8\xAD"
               " \xF0\x9F\x98\x80";
    in.push_back(mix);
    return in;
}

void check_hostile(const lmllm::Vocab & v) {
    for (const std::string & s : hostile_inputs()) {
        SCOPED_TRACE("input bytes " + vt::hex(s.substr(0, 32)));
        check_any_input(v, s);
    }
    std::mt19937 rng(42);
    std::uniform_int_distribution<int> byte(0, 255), len(0, 48);
    for (int it = 0; it < 400; ++it) {
        std::string s;
        for (int i = 0, n = len(rng); i < n; ++i) s += static_cast<char>(byte(rng));
        SCOPED_TRACE("input bytes " + vt::hex(s));
        check_any_input(v, s);
    }
}

TEST(Robust, AnyBytesSmolLM2) {
    VT_REQUIRE_VOCAB(v, smollm2);
    check_hostile(*v);
}

TEST(Robust, AnyBytesSpm) {
    VT_REQUIRE_VOCAB(v, spm);
    check_hostile(*v);
}

TEST(Robust, OutOfRangeIds) {
    VT_REQUIRE_VOCAB(v, smollm2);
    for (Token id : {-1, -100, v->n_tokens(), 1 << 30}) {
        EXPECT_EQ(v->token_to_piece(id, true), "");
        EXPECT_EQ(v->token_text(id), "");
        EXPECT_FALSE(v->is_eog(id));
        EXPECT_FALSE(v->is_control(id));
    }
    EXPECT_EQ(v->detokenize({-1, 19556, 1 << 30, 905}, false), "Hello world");
    EXPECT_EQ(v->token_id("definitely not a token \xFF"), -1);
    EXPECT_EQ(v->token_id("Hello"), 19556);
    EXPECT_EQ(v->token_text(19556), "Hello");
}

TEST(Robust, SmolLM2SpecialTokens) {
    VT_REQUIRE_VOCAB(v, smollm2);
    // the chat markers exist and are control tokens that end generation
    const Token start = v->token_id("<|im_start|>"), end = v->token_id("<|im_end|>");
    EXPECT_EQ(start, 1);
    EXPECT_EQ(end, 2);
    EXPECT_EQ(v->bos(), 1);
    EXPECT_EQ(v->eos(), 2);
    EXPECT_EQ(v->eot(), 2); // <|im_end|> is the end-of-turn token
    EXPECT_TRUE(v->is_control(start));
    EXPECT_TRUE(v->is_eog(end));
    EXPECT_FALSE(v->is_eog(start));
    EXPECT_FALSE(v->add_bos());
    EXPECT_FALSE(v->add_eos());
    EXPECT_EQ(v->tokenize("<|im_start|>user", false, true).front(), start);
    EXPECT_NE(v->tokenize("<|im_start|>user", false, false).front(), start);
    EXPECT_EQ(v->token_to_piece(end, true), "<|im_end|>");
    EXPECT_EQ(v->token_to_piece(end, false), "");
}

} // namespace

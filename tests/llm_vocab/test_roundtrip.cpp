// detokenize(tokenize(s)) == s, and the streaming Detokenizer: characters
// split over several tokens come out once, whole; bad bytes become U+FFFD.

#include <gtest/gtest.h>

#include <random>

#include "unicode.h"
#include "vocab_fixture.h"

namespace {

using lmllm::Token;

bool valid_utf8(const std::string & s) { return lmllm::uni::sanitize(s) == s; }

// Streams ids through a Detokenizer; every chunk must be valid UTF-8.
std::string stream(const lmllm::Vocab & v, const std::vector<Token> & ids, bool special,
                   size_t * empty_pushes = nullptr) {
    lmllm::Detokenizer d(v, special);
    std::string out;
    for (Token id : ids) {
        const std::string chunk = d.push(id);
        EXPECT_TRUE(valid_utf8(chunk)) << "chunk " << vt::hex(chunk);
        if (chunk.empty() && empty_pushes) ++*empty_pushes;
        out += chunk;
    }
    const std::string rest = d.flush();
    EXPECT_TRUE(valid_utf8(rest));
    return out + rest;
}

// Wherever llama.cpp's detokenize gives the input back, ours must too, and
// streaming the same ids must give the same text.
void roundtrip_fixture_cases(const lmllm::Vocab & v, const std::string & fixture) {
    vt::Fixture fx;
    std::string err;
    ASSERT_TRUE(vt::read_fixture(vt::data_path(fixture), fx, err)) << err;
    int n_roundtrip = 0;
    for (const vt::Case & c : fx.cases) {
        SCOPED_TRACE("input bytes " + vt::hex(c.text));
        const auto ids = v.tokenize(c.text, false, false);
        if (c.detok_plain == c.text) {
            EXPECT_EQ(vt::hex(v.detokenize(ids, false)), vt::hex(c.text));
            ++n_roundtrip;
        }
        if (valid_utf8(c.text) && v.type() == lmllm::VocabType::BPE) {
            EXPECT_EQ(vt::hex(stream(v, ids, false)), vt::hex(v.detokenize(ids, false)));
        }
    }
    EXPECT_GE(n_roundtrip, 25); // most inputs round-trip
}

TEST(RoundTrip, FixtureInputsSmolLM2) {
    VT_REQUIRE_VOCAB(v, smollm2);
    roundtrip_fixture_cases(*v, "smollm2.txt");
}

TEST(RoundTrip, FixtureInputsSpm) {
    VT_REQUIRE_VOCAB(v, spm);
    roundtrip_fixture_cases(*v, "mistral-v3-spm.txt");
}

// Random valid UTF-8 from a mixed alphabet: byte-level BPE and SentencePiece
// with byte fallback are both lossless on it.
std::string random_text(std::mt19937 & rng) {
    static const char * const pieces[] = {
        "a",
        "Z",
        "q",
        "7",
        "0",
        " ",
        " ",
        "  ",
        "\n",
        "\t",
        "\r\n",
        ".",
        ",",
        "'",
        "'s",
        "!",
        "(",
        ")",
        "-",
        "_",
        "\xC3\xA9",
        "\xC3\x9F",
        "\xCE\xB1",
        "\xD0\xB4",
        "\xE4\xB8\xAD",
        "\xE6\x97\xA5",
        "\xE3\x81\x82",
        "\xEA\xB0\x80",
        "\xF0\x9F\x98\x80",
        "\xF0\x9F\x8E\x89",
        "\xE2\x80\x8D",
        "\xCC\x81",
        "\xC2\xA0",
        "\xE3\x80\x80",
        "\xD9\xA3",
        "\xF0\x9D\x94\x98",
        "\xE2\x82\xAC",
        "the",
        " the",
        "ing",
        "1234",
    };
    std::uniform_int_distribution<size_t> pick(0, std::size(pieces) - 1), len(0, 24);
    std::string s;
    for (size_t i = 0, n = len(rng); i < n; ++i) s += pieces[pick(rng)];
    return s;
}

void roundtrip_random(const lmllm::Vocab & v, uint32_t seed) {
    std::mt19937 rng(seed);
    for (int it = 0; it < 300; ++it) {
        const std::string s = random_text(rng);
        const auto ids = v.tokenize(s, false, false);
        ASSERT_EQ(vt::hex(v.detokenize(ids, false)), vt::hex(s)) << "ids " << vt::ids_str(ids);
        // streaming gives the same bytes (SentencePiece keeps its added
        // leading space when streaming: no token is "first" in a stream)
        const std::string streamed = stream(v, ids, false);
        const std::string expect = (v.type() == lmllm::VocabType::SPM && !s.empty()) ? " " + s : s;
        ASSERT_EQ(vt::hex(streamed), vt::hex(expect)) << "ids " << vt::ids_str(ids);
    }
}

TEST(RoundTrip, RandomTextSmolLM2) {
    VT_REQUIRE_VOCAB(v, smollm2);
    roundtrip_random(*v, 1234);
}

TEST(RoundTrip, RandomTextSpm) {
    VT_REQUIRE_VOCAB(v, spm);
    roundtrip_random(*v, 5678);
}

// A character the vocabulary spells in byte tokens: the stream stays quiet
// until its last byte, then gives the whole character.
void expect_split_character(const lmllm::Vocab & v, const std::string & ch) {
    const auto ids = v.tokenize(ch, false, false);
    std::vector<std::string> partial;
    for (Token id : ids) {
        const std::string p = v.token_to_piece(id, false);
        if (!valid_utf8(p)) partial.push_back(p);
    }
    ASSERT_GE(partial.size(), 2u) << ch << " is not split into partial byte pieces: " << vt::ids_str(ids);

    lmllm::Detokenizer d(v);
    std::string out;
    for (size_t i = 0; i < ids.size(); ++i) {
        const std::string chunk = d.push(ids[i]);
        if (i + 1 < ids.size()) {
            EXPECT_EQ(chunk.find(ch), std::string::npos);
            EXPECT_TRUE(valid_utf8(chunk));
        }
        out += chunk;
    }
    EXPECT_EQ(d.flush(), "");
    EXPECT_NE(out.find(ch), std::string::npos);
    EXPECT_EQ(out.size() - out.find(ch), ch.size()); // the character comes last, once
}

TEST(Detokenizer, SplitCharacterSmolLM2) {
    VT_REQUIRE_VOCAB(v, smollm2);
    expect_split_character(*v, "\xF0\x9D\x94\x98"); // 𝔘 MATHEMATICAL FRAKTUR CAPITAL U
}

TEST(Detokenizer, SplitCharacterSpm) {
    VT_REQUIRE_VOCAB(v, spm);
    expect_split_character(*v, "\xF0\x9D\x94\x98");
}

TEST(Detokenizer, TruncatedAndInvalidBytesBecomeReplacementCharacters) {
    VT_REQUIRE_VOCAB(v, spm);
    const Token e6 = v->token_id("<0xE6>"), ff = v->token_id("<0xFF>"), a = v->token_id("a");
    ASSERT_GE(e6, 0);
    ASSERT_GE(ff, 0);
    ASSERT_GE(a, 0);
    const std::string fffd = "\xEF\xBF\xBD";
    {
        lmllm::Detokenizer d(*v);
        EXPECT_EQ(d.push(e6), "");  // could still become a character
        EXPECT_EQ(d.flush(), fffd); // never did
        EXPECT_EQ(d.flush(), "");
    }
    {
        lmllm::Detokenizer d(*v);
        EXPECT_EQ(d.push(ff), fffd); // 0xFF can never start a character
        EXPECT_EQ(d.push(e6), "");
        EXPECT_EQ(d.push(a), fffd + "a"); // the unfinished sequence is broken by "a"
    }
    {
        lmllm::Detokenizer d(*v, true);
        EXPECT_EQ(d.push(v->bos()), "<s>");
        lmllm::Detokenizer quiet(*v, false);
        EXPECT_EQ(quiet.push(v->bos()), "");
        EXPECT_EQ(quiet.push(-1), "");
        EXPECT_EQ(quiet.push(1 << 30), "");
    }
}

} // namespace

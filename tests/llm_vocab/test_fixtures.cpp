// Token ids, detokenized text and token pieces compared with what llama.cpp
// (the independent implementation) gives for the same inputs, recorded in
// tests/data/tokenizer/*.txt by scripts/peer/make-tokenizer-fixtures.

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "vocab_fixture.h"

namespace {

uint64_t fnv_pieces(const lmllm::Vocab & v, bool special) {
    uint64_t h = 1469598103934665603ull;
    for (lmllm::Token id = 0; id < v.n_tokens(); ++id) {
        const std::string p = v.token_to_piece(id, special);
        const std::string rec = std::to_string(p.size()) + ":" + p;
        for (unsigned char c : rec) {
            h = (h ^ c) * 1099511628211ull;
        }
    }
    return h;
}

void check_against(const lmllm::Vocab & v, const std::string & fixture_name) {
    vt::Fixture fx;
    std::string err;
    ASSERT_TRUE(vt::read_fixture(vt::data_path(fixture_name), fx, err)) << err;
    ASSERT_GE(fx.cases.size(), 20u);

    EXPECT_EQ(v.n_tokens(), fx.meta["n_tokens"].at(0));
    EXPECT_EQ(v.bos(), fx.meta["bos"].at(0));
    EXPECT_EQ(v.eos(), fx.meta["eos"].at(0));
    EXPECT_EQ(v.add_bos() ? 1 : 0, fx.meta["add_bos"].at(0));
    // eot is not compared: with several candidates (SmolLM2 has both
    // <|endoftext|> and <|im_end|>) llama.cpp takes whichever its hash map
    // yields first; both are end-of-generation tokens either way.
    std::set<int64_t> eog, control;
    for (lmllm::Token id = 0; id < v.n_tokens(); ++id) {
        if (v.is_eog(id)) eog.insert(id);
        if (v.is_control(id)) control.insert(id);
    }
    EXPECT_EQ(eog, std::set<int64_t>(fx.meta["eog"].begin(), fx.meta["eog"].end()));
    EXPECT_EQ(control, std::set<int64_t>(fx.meta["control"].begin(), fx.meta["control"].end()));

    for (const vt::Case & c : fx.cases) {
        SCOPED_TRACE("input bytes " + vt::hex(c.text));
        for (int add = 0; add < 2; ++add) {
            for (int parse = 0; parse < 2; ++parse) {
                EXPECT_EQ(vt::ids_str(v.tokenize(c.text, add, parse)), vt::ids_str(c.ids[add][parse]))
                    << "add_special=" << add << " parse_special=" << parse;
            }
        }
        EXPECT_EQ(vt::hex(v.detokenize(c.ids[0][0], false)), vt::hex(c.detok_plain));
        EXPECT_EQ(vt::hex(v.detokenize(c.ids[1][1], true)), vt::hex(c.detok_special));
    }

    ASSERT_FALSE(fx.pieces.empty());
    for (const auto & [id, p] : fx.pieces) {
        EXPECT_EQ(vt::hex(v.token_to_piece(id, false)), vt::hex(p.first)) << "token " << id;
        EXPECT_EQ(vt::hex(v.token_to_piece(id, true)), vt::hex(p.second)) << "token " << id;
    }
    ASSERT_EQ(fx.fnv_n, v.n_tokens());
    EXPECT_EQ(fnv_pieces(v, false), fx.fnv[0]) << "some token piece (special=false) differs from llama.cpp";
    EXPECT_EQ(fnv_pieces(v, true), fx.fnv[1]) << "some token piece (special=true) differs from llama.cpp";
}

TEST(VocabFixtures, SmolLM2MatchesLlamaCpp) {
    VT_REQUIRE_VOCAB(v, smollm2);
    EXPECT_EQ(v->type(), lmllm::VocabType::BPE);
    EXPECT_EQ(v->pre_tokenizer(), "smollm");
    check_against(*v, "smollm2.txt");
}

TEST(VocabFixtures, SentencePieceMatchesLlamaCpp) {
    VT_REQUIRE_VOCAB(v, spm);
    EXPECT_EQ(v->type(), lmllm::VocabType::SPM);
    check_against(*v, "mistral-v3-spm.txt");
}

} // namespace

namespace {

// More pre-tokenizers (Llama 3, Qwen2, GPT-2, default, StarCoder) and a
// real Llama SentencePiece vocabulary, using llama.cpp's own vocabulary-only
// files, which are not part of this repository: this runs only when
// LMGGML_PEER_VOCAB_DIR names llama.cpp's models/ folder (see
// tests/data/tokenizer/README.md) and is skipped, saying so, otherwise.
TEST(VocabFixtures, LlamaCppVocabFiles) {
    const char * dir = std::getenv("LMGGML_PEER_VOCAB_DIR");
    if (!dir || !*dir) {
        GTEST_SKIP() << "LMGGML_PEER_VOCAB_DIR is not set (llama.cpp's models/ folder with ggml-vocab-*.gguf)";
    }
    for (const char * name : {"llama-bpe", "qwen2", "gpt-2", "aquila", "llama-spm", "starcoder"}) {
        SCOPED_TRACE(name);
        std::string err;
        auto v = vt::load_vocab(std::string(dir) + "/ggml-vocab-" + name + ".gguf", err);
        ASSERT_NE(v, nullptr) << err;
        check_against(*v, std::string("peer-") + name + ".txt");
    }
}

} // namespace

// Tiny hand-made vocabularies whose tokenization can be worked out by hand:
// SentencePiece score-ordered merging (ties: leftmost first), byte
// fallback, BOS/EOS, special-token matching, BPE merge ranks, and the
// loader's errors for bad metadata.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gguf.h"
#include "lmllm/vocab.h"

namespace {

using lmllm::Token;
using Ids = std::vector<Token>;

struct Gguf {
    lm_gguf_context * g = lm_gguf_init_empty();
    ~Gguf() { lm_gguf_free(g); }
    void tokens(const std::vector<std::string> & t) {
        std::vector<const char *> p;
        for (const auto & s : t) p.push_back(s.c_str());
        lm_gguf_set_arr_str(g, "tokenizer.ggml.tokens", p.data(), p.size());
    }
    void strs(const char * key, const std::vector<std::string> & t) {
        std::vector<const char *> p;
        for (const auto & s : t) p.push_back(s.c_str());
        lm_gguf_set_arr_str(g, key, p.data(), p.size());
    }
    std::unique_ptr<lmllm::Vocab> load(std::string * error = nullptr) {
        auto r = lmllm::Vocab::load(g);
        if (!r.ok()) {
            if (error) *error = r.status().message();
            return nullptr;
        }
        return std::move(r.value());
    }
};

const std::string SP = "\xe2\x96\x81"; // ▁

// ids: 0 <unk>, 1 <s>, 2 </s>, 3..258 <0x00>..<0xFF>, then the pieces below
struct SpmVocab {
    std::vector<std::string> text = {"<unk>", "<s>", "</s>"};
    std::vector<float> score = {0, 0, 0};
    std::vector<int32_t> type = {2, 3, 3};
    SpmVocab() {
        static const char hex[] = "0123456789ABCDEF";
        for (int b = 0; b < 256; ++b) {
            text.push_back(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">");
            score.push_back(0);
            type.push_back(6);
        }
    }
    Token add(const std::string & t, float s, int32_t ty = 1) {
        text.push_back(t);
        score.push_back(s);
        type.push_back(ty);
        return static_cast<Token>(text.size() - 1);
    }
    std::unique_ptr<lmllm::Vocab> build() {
        Gguf f;
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.model", "llama");
        f.tokens(text);
        lm_gguf_set_arr_data(f.g, "tokenizer.ggml.scores", LM_GGUF_TYPE_FLOAT32, score.data(), score.size());
        lm_gguf_set_arr_data(f.g, "tokenizer.ggml.token_type", LM_GGUF_TYPE_INT32, type.data(), type.size());
        std::string err;
        auto v = f.load(&err);
        EXPECT_NE(v, nullptr) << err;
        return v;
    }
};

TEST(SyntheticSpm, HighestScoreMergesFirst) {
    SpmVocab s;
    const Token sp = s.add(SP, -1), a = s.add("a", -2), b = s.add("b", -3), c = s.add("c", -4);
    const Token ab = s.add("ab", -5), spa = s.add(SP + "a", -6), bc = s.add("bc", -0.5f);
    s.add("a" + SP, -7);
    auto v = s.build();
    ASSERT_NE(v, nullptr);
    (void) sp;
    (void) a;
    (void) c;
    (void) ab;
    // "▁abc": candidates ▁a (-6), ab (-5), bc (-0.5): bc first, then ▁a; "▁abc" is no token
    EXPECT_EQ(v->tokenize("abc", false, false), (Ids{spa, bc}));
    // BOS by default for "llama" vocabularies, no EOS
    EXPECT_EQ(v->tokenize("abc", true, false), (Ids{1, spa, bc}));
    EXPECT_TRUE(v->add_bos());
    EXPECT_FALSE(v->add_eos());
    // "▁a▁b": candidates ▁a (-6) and a▁ (-7) overlap on "a": ▁a wins; ▁b is no token
    EXPECT_EQ(v->tokenize("a b", false, false), (Ids{spa, sp, b}));
    // detokenizing drops the space SentencePiece added in front
    EXPECT_EQ(v->detokenize({spa, bc}, false), "abc");
    // only the first token's space is dropped, even when that token is a
    // hidden BOS (llama.cpp's detokenize does the same)
    EXPECT_EQ(v->detokenize({1, spa, bc}, false), " abc");
    EXPECT_EQ(v->detokenize({1, spa, bc}, true), "<s> abc");
    EXPECT_EQ(v->token_to_piece(spa, false), " a");
}

TEST(SyntheticSpm, EqualScoresMergeLeftmostFirst) {
    SpmVocab s;
    const Token sp = s.add(SP, -1), a = s.add("a", -2), aa = s.add("aa", -1.5f);
    s.add(SP + "a", -3);
    auto v = s.build();
    ASSERT_NE(v, nullptr);
    // "▁aaa": aa at (1,2) and (2,3) tie; the left one merges, leaving ▁ aa a
    // (▁a is stale once its "a" is merged; ▁aa and aaa are no tokens).
    // Had the right one won: ▁ a aa, then ▁a would merge: [▁a, aa].
    EXPECT_EQ(v->tokenize("aaa", false, false), (Ids{sp, aa, a}));
}

TEST(SyntheticSpm, ByteFallbackAndSpecialTokens) {
    SpmVocab s;
    const Token sp = s.add(SP, -1), a = s.add("a", -2), spa = s.add(SP + "a", -3);
    const Token inst = s.add("[INST]", 0, 3), doc = s.add("[DOC]", 0, 4);
    auto v = s.build();
    ASSERT_NE(v, nullptr);
    (void) sp;
    (void) a;
    // é (C3 A9) has no piece: its bytes <0xC3> = 3 + 0xC3, <0xA9> = 3 + 0xA9
    EXPECT_EQ(v->tokenize("a\xC3\xA9", false, false), (Ids{spa, 3 + 0xC3, 3 + 0xA9}));
    EXPECT_EQ(v->detokenize({spa, 3 + 0xC3, 3 + 0xA9}, false), "a\xC3\xA9");
    // control tokens are matched only with parse_special; user-defined always.
    // After a special token the text again gets a leading space.
    EXPECT_EQ(v->tokenize("[INST]a", false, true), (Ids{inst, spa}));
    EXPECT_EQ(v->tokenize("[DOC]a", false, false), (Ids{doc, spa}));
    const Ids plain = v->tokenize("[INST]", false, false);
    EXPECT_EQ(plain.front(), spa - 2); // "▁" first, then the characters one by one
    EXPECT_EQ(plain.size(), 7u);       // ▁ [ I N S T ] with [, I, N, S, T, ] as bytes
    EXPECT_EQ(v->token_to_piece(inst, false), "");
    EXPECT_EQ(v->token_to_piece(inst, true), "[INST]");
    EXPECT_EQ(v->token_to_piece(doc, false), "[DOC]");
    EXPECT_TRUE(v->is_control(inst));
    EXPECT_FALSE(v->is_control(doc));
    EXPECT_TRUE(v->is_eog(2)); // </s> is the default EOS
}

// byte-level BPE with the GPT-2 pre-tokenizer: Ġ is the space byte
struct BpeVocab {
    std::vector<std::string> text = {"a",
                                     "b",
                                     "c",
                                     "\xC4\xA0",
                                     ",",
                                     "ab",
                                     "bc",
                                     "\xC4\xA0"
                                     "a",
                                     "abc",
                                     "<|end|>"};
    std::vector<std::string> merges = {"a b", "b c", "\xC4\xA0 a", "ab c"};
    std::unique_ptr<lmllm::Vocab> build(const char * pre = "gpt-2") {
        Gguf f;
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.model", "gpt2");
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.pre", pre);
        f.tokens(text);
        f.strs("tokenizer.ggml.merges", merges);
        std::vector<int32_t> type(text.size(), 1);
        type.back() = 3;
        lm_gguf_set_arr_data(f.g, "tokenizer.ggml.token_type", LM_GGUF_TYPE_INT32, type.data(), type.size());
        lm_gguf_set_val_u32(f.g, "tokenizer.ggml.eos_token_id", 9);
        std::string err;
        auto v = f.load(&err);
        EXPECT_NE(v, nullptr) << err;
        return v;
    }
};

TEST(SyntheticBpe, LowestRankMergesFirst) {
    auto v = BpeVocab().build();
    ASSERT_NE(v, nullptr);
    // a b c: "a b" (rank 0) before "b c" (1), then "ab c" (3)
    EXPECT_EQ(v->tokenize("abc", false, false), (Ids{8}));
    // " abc" is one word: Ġ a b c -> Ġ ab c -> Ġ abc ("Ġ ab" is no merge)
    EXPECT_EQ(v->tokenize(" abc", false, false), (Ids{3, 8}));
    EXPECT_EQ(v->tokenize("cab", false, false), (Ids{2, 5}));
    // a byte that has no token is dropped, as llama.cpp does
    EXPECT_EQ(v->tokenize("d", false, false), Ids{});
    EXPECT_EQ(v->tokenize("<|end|>", false, true), Ids{9});
    EXPECT_EQ(v->token_to_piece(7, false), " a");
    EXPECT_FALSE(v->add_bos());
    EXPECT_TRUE(v->is_eog(9));
    EXPECT_EQ(v->eot(), 9); // found by its text, as llama.cpp does
}

TEST(SyntheticBpe, CleanSpacesDependsOnPreTokenizer) {
    // gpt-2 cleans " ," to ","; smollm does not
    auto g = BpeVocab().build("gpt-2");
    auto s = BpeVocab().build("smollm");
    ASSERT_NE(g, nullptr);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(g->detokenize({0, 3, 4}, false), "a,");
    EXPECT_EQ(s->detokenize({0, 3, 4}, false), "a ,");
}

TEST(SyntheticBpe, LlamaBpeIgnoresMergesForWholeWordsAndAddsBos) {
    BpeVocab b;
    b.text.push_back("ca"); // a token no merge can build
    b.text.push_back("<|begin|>");
    Gguf f;
    lm_gguf_set_val_str(f.g, "tokenizer.ggml.model", "gpt2");
    lm_gguf_set_val_str(f.g, "tokenizer.ggml.pre", "llama-bpe");
    f.tokens(b.text);
    f.strs("tokenizer.ggml.merges", b.merges);
    lm_gguf_set_val_u32(f.g, "tokenizer.ggml.bos_token_id", 11);
    std::string err;
    auto v = f.load(&err);
    ASSERT_NE(v, nullptr) << err;
    EXPECT_EQ(v->tokenize("ca", false, false), Ids{10});
    EXPECT_EQ(v->tokenize("ca", true, false), (Ids{11, 10}));
}

TEST(VocabLoad, BadMetadataIsAnErrorNamingTheKey) {
    const auto expect_error = [](Gguf & f, const char * needle) {
        std::string err;
        EXPECT_EQ(f.load(&err), nullptr);
        EXPECT_NE(err.find(needle), std::string::npos) << "error: " << err;
    };
    {
        Gguf f;
        f.tokens({"a"});
        expect_error(f, "tokenizer.ggml.model");
    }
    {
        Gguf f;
        lm_gguf_set_val_u32(f.g, "tokenizer.ggml.model", 3);
        expect_error(f, "tokenizer.ggml.model");
    }
    {
        Gguf f;
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.model", "bert");
        f.tokens({"a"});
        expect_error(f, "bert");
    }
    {
        Gguf f;
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.model", "gpt2");
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.pre", "gpt-2");
        f.tokens({"a"});
        expect_error(f, "tokenizer.ggml.merges");
    }
    {
        Gguf f;
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.model", "gpt2");
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.pre", "martian");
        f.tokens({"a"});
        f.strs("tokenizer.ggml.merges", {});
        expect_error(f, "martian");
    }
    {
        Gguf f;
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.model", "llama");
        const int32_t ints[2] = {1, 2};
        lm_gguf_set_arr_data(f.g, "tokenizer.ggml.tokens", LM_GGUF_TYPE_INT32, ints, 2);
        expect_error(f, "tokenizer.ggml.tokens");
    }
    {
        Gguf f;
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.model", "llama");
        expect_error(f, "tokenizer.ggml.tokens");
    }
    {
        Gguf f;
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.model", "llama");
        f.tokens({"a", "b", "c"});
        const float sc[2] = {0, 0};
        lm_gguf_set_arr_data(f.g, "tokenizer.ggml.scores", LM_GGUF_TYPE_FLOAT32, sc, 2);
        expect_error(f, "tokenizer.ggml.scores");
    }
    {
        Gguf f;
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.model", "llama");
        f.tokens({"a", "b", "c"});
        lm_gguf_set_val_str(f.g, "tokenizer.ggml.add_bos_token", "yes");
        expect_error(f, "tokenizer.ggml.add_bos_token");
    }
    auto r = lmllm::Vocab::load(nullptr);
    EXPECT_FALSE(r.ok());
}

TEST(VocabLoad, OutOfRangeSpecialIdsAreIgnored) {
    Gguf f;
    lm_gguf_set_val_str(f.g, "tokenizer.ggml.model", "llama");
    f.tokens({"<unk>", "x"}); // defaults bos = 1, eos = 2: 2 is out of range
    lm_gguf_set_val_u32(f.g, "tokenizer.ggml.bos_token_id", 99);
    std::string err;
    auto v = f.load(&err);
    ASSERT_NE(v, nullptr) << err;
    EXPECT_EQ(v->bos(), 1); // the key was out of range: default kept
    EXPECT_EQ(v->eos(), -1);
    EXPECT_EQ(v->unk(), 0);
    EXPECT_EQ(v->tokenize("x", true, false).front(), 1);
}

} // namespace

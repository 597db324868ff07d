// llama.cpp's generation options on `run` and `chat`, on the tiny generated
// model: stop strings (-r), --ignore-eos, -e escapes, the presence and
// frequency penalties, --n-keep (the context shift), the time to the first
// token; and `tokenize`, checked against the runner library's tokenizer.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "cli_util.h"
#include "lmllm/context.h"
#include "lmllm/model.h"
#include "lmllm/sampler.h"

using clitest::lines;
using clitest::run_cli;

namespace {

#define REQUIRE_TINY(var)                                                                                              \
    REQUIRE_CLI();                                                                                                     \
    const std::string var = clitest::tiny_model("tiny.gguf");                                                          \
    ASSERT_FALSE(var.empty()) << "cannot write the tiny model"

int int_after(const std::string & s, const std::string & re) {
    std::smatch m;
    return std::regex_search(s, m, std::regex(re)) ? std::stoi(m[1]) : -1;
}

// stdout of `run` without its final newline
std::string text_of(const clitest::RunResult & r) {
    std::string t = r.out;
    if (!t.empty() && t.back() == '\n') t.pop_back();
    return t;
}

size_t occurrences(const std::string & s, const std::string & what) {
    size_t n = 0;
    for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) n++;
    return n;
}

std::vector<lmllm::Token> library_tokens(const std::string & model, const std::string & text, bool bos) {
    auto m = lmllm::Model::load(model, {});
    EXPECT_TRUE(m.ok()) << m.status().message();
    return m.ok() ? m.value()->vocab().tokenize(text, bos, true) : std::vector<lmllm::Token>{};
}

const std::vector<std::string> kGreedy = {"--temp", "0", "--no-summary"};
// The tiny model repeats its input token; a presence penalty far above its
// logits makes greedy text where no token repeats: varied, and deterministic.
const std::vector<std::string> kVaried = {"--temp", "0", "--presence-penalty", "1000"};

// A 3-byte ASCII stop string from the second half of `text`, at its first
// occurrence; npos when there is none.
size_t pick_stop(const std::string & text) {
    for (size_t at = text.size() / 2; at + 3 <= text.size(); at++) {
        const std::string s = text.substr(at, 3);
        bool ascii = true;
        for (char c : s) ascii &= c > ' ' && c < 127;
        if (ascii && text.find(s) == at) return at;
    }
    return std::string::npos;
}

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string> & b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

} // namespace

TEST(CliGeneration, StopStringEndsTheOutputOnce) {
    REQUIRE_TINY(model);
    const auto base = cat(cat({"run", "-m", model, "-p", "Once upon a time", "-n", "60"}, kVaried), {"--no-summary"});
    auto full = run_cli(base);
    ASSERT_EQ(full.rc, 0) << full.err;
    const std::string all = text_of(full);
    ASSERT_GT(all.size(), 40u) << all;
    // a stop string taken from the second half of the output, at its first occurrence
    const size_t at = pick_stop(all);
    ASSERT_NE(at, std::string::npos) << all;
    const std::string stop = all.substr(at, 3);
    auto r = run_cli(cat(base, {"-r", "zzzz-never", "-r", stop}));
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string cut = text_of(r);
    EXPECT_EQ(all.compare(0, cut.size(), cut), 0) << "not a prefix of the full output:\n" << cut << "\n" << all;
    EXPECT_LT(cut.size(), all.size());
    EXPECT_EQ(occurrences(cut, stop), 1u) << cut;
    EXPECT_GE(cut.size(), at + stop.size());             // the token that completes it is printed whole
    EXPECT_LE(cut.size(), at + stop.size() + 16) << cut; // and nothing after it
    // a stop string that never appears changes nothing
    auto none = run_cli(cat(base, {"--reverse-prompt", "zzzz-never"}));
    EXPECT_EQ(none.out, full.out);
    auto empty = run_cli(cat(base, {"-r", ""}));
    EXPECT_EQ(empty.rc, 1);
    EXPECT_NE(empty.err.find("-r needs a non-empty text"), std::string::npos) << empty.err;
}

TEST(CliGeneration, IgnoreEosGeneratesEveryRequestedToken) {
    REQUIRE_TINY(model);
    // at a huge temperature every token is about as likely: the end-of-text
    // token (one of 300) comes up long before 2000 tokens, unless it is ignored
    const std::vector<std::string> args = {"run", "-m",      model,    "-p",   "a",       "-n", "2000",
                                           "-c",  "2048",    "--temp", "1000", "--top-k", "0",  "--top-p",
                                           "1",   "--min-p", "0",      "-s",   "5"};
    auto plain = run_cli(args);
    ASSERT_EQ(plain.rc, 0) << plain.err;
    const int n_plain = int_after(plain.err, "generation: ([0-9]+) tokens");
    EXPECT_GE(n_plain, 0) << plain.err;
    EXPECT_LT(n_plain, 2000) << "the seed never drew an end-of-generation token; pick another";
    auto ignored = run_cli(cat(args, {"--ignore-eos"}));
    ASSERT_EQ(ignored.rc, 0) << ignored.err;
    EXPECT_EQ(int_after(ignored.err, "generation: ([0-9]+) tokens"), 2000) << ignored.err;
}

TEST(CliGeneration, EscapesAreProcessedWithE) {
    REQUIRE_TINY(model);
    const std::string literal = std::string("line one\nline\ttwo \"q\" 'a' \\ ") + "\x41" + "\x7f" + " \\z";
    const std::string escaped = "line one\\nline\\ttwo \\\"q\\\" \\'a\\' \\\\ \\x41\\x7f \\z";
    auto want = run_cli({"run", "-m", model, "-p", literal, "-n", "12", "--temp", "0"});
    auto got = run_cli({"run", "-m", model, "-e", "-p", escaped, "-n", "12", "--temp", "0"});
    auto raw = run_cli({"run", "-m", model, "-p", escaped, "-n", "12", "--temp", "0"});
    ASSERT_EQ(want.rc, 0) << want.err;
    ASSERT_EQ(got.rc, 0) << got.err;
    EXPECT_EQ(got.out, want.out);
    // the model mostly repeats the prompt's last token: the prompts' sizes tell them apart
    const int n_want = int_after(want.err, "prompt: ([0-9]+) tokens");
    EXPECT_EQ(int_after(got.err, "prompt: ([0-9]+) tokens"), n_want) << got.err;
    EXPECT_GT(int_after(raw.err, "prompt: ([0-9]+) tokens"), n_want) << raw.err;
    // tokenize shows the processed text exactly
    auto ids_e = run_cli({"tokenize", "-m", model, "-e", "-p", "x\\ty\\x41\\n", "--ids"});
    auto ids = run_cli({"tokenize", "-m", model, "-p", "x\tyA\n", "--ids"});
    ASSERT_EQ(ids.rc, 0) << ids.err;
    EXPECT_EQ(ids_e.out, ids.out);
    // without -e the backslashes stay
    auto raw_ids = run_cli({"tokenize", "-m", model, "-p", "x\\ty", "--ids"});
    EXPECT_NE(raw_ids.out, run_cli({"tokenize", "-m", model, "-p", "x\ty", "--ids"}).out);
}

TEST(CliGeneration, PresenceAndFrequencyPenaltiesChangeTheOutput) {
    REQUIRE_TINY(model);
    const auto base = cat({"run", "-m", model, "-p", "the the the", "-n", "40"}, kGreedy);
    auto plain = run_cli(base);
    ASSERT_EQ(plain.rc, 0) << plain.err;
    // the model repeats its input ("eeee..."); a presence penalty far above the
    // logits' spread forbids every token seen in the last 64 (the formula itself
    // is checked in tests/llm_sampler/penalties_test.cpp)
    auto presence = run_cli(cat(base, {"--presence-penalty", "1000"}));
    ASSERT_EQ(presence.rc, 0) << presence.err;
    EXPECT_NE(presence.out, plain.out);
    EXPECT_EQ(text_of(presence).find("eee"), std::string::npos) << presence.out;
    EXPECT_NE(text_of(plain).find("eee"), std::string::npos) << plain.out;
    auto freq = run_cli(cat(base, {"--frequency-penalty", "1000"}));
    ASSERT_EQ(freq.rc, 0) << freq.err;
    EXPECT_EQ(freq.out, presence.out); // any count >= 1 is as bad at that size
    auto off = run_cli(cat(base, {"--presence-penalty", "0", "--frequency-penalty", "0"}));
    EXPECT_EQ(off.out, plain.out);
    auto bad = run_cli(cat(base, {"--frequency-penalty", "x"}));
    EXPECT_EQ(bad.rc, 1);
    EXPECT_NE(bad.err.find("--frequency-penalty"), std::string::npos) << bad.err;
}

TEST(CliGeneration, NKeepShiftsAFullContextAndGoesOn) {
    REQUIRE_TINY(model);
    const auto base = cat({"run", "-m", model, "-p", "Once upon a time", "-c", "64", "-n", "150"}, {"--temp", "0"});
    // without --n-keep, a full context stops generation
    auto stop = run_cli(base);
    ASSERT_EQ(stop.rc, 0) << stop.err;
    EXPECT_NE(stop.err.find("the context is full"), std::string::npos) << stop.err;
    const int n_stop = int_after(stop.err, "generation: ([0-9]+) tokens");
    ASSERT_GT(n_stop, 10);
    ASSERT_LT(n_stop, 64);
    for (const char * keep : {"-1", "0", "2"}) {
        auto r = run_cli(cat(base, {"--n-keep", keep}));
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_EQ(r.err.find("the context is full"), std::string::npos) << r.err;
        EXPECT_EQ(int_after(r.err, "generation: ([0-9]+) tokens"), 150) << r.err;
        EXPECT_GE(int_after(r.err, "context shifts: ([0-9]+)"), 2) << r.err;
        // up to the first shift the output is the one that stopped
        EXPECT_EQ(r.out.compare(0, stop.out.size() - 1, stop.out, 0, stop.out.size() - 1), 0) << keep << "\n" << r.out;
        EXPECT_GT(r.out.size(), stop.out.size());
    }
    // the kept part matters: keeping nothing but BOS differs from keeping the prompt
    EXPECT_NE(run_cli(cat(base, {"--n-keep", "0"})).out, run_cli(cat(base, {"--n-keep", "-1"})).out);
    auto bad = run_cli(cat(base, {"--n-keep", "-2"}));
    EXPECT_EQ(bad.rc, 1);
    EXPECT_NE(bad.err.find("--n-keep must be >= -1"), std::string::npos) << bad.err;
    // keeping the whole prompt in a context one token larger leaves nothing to drop
    const size_t n_prompt = library_tokens(model, "Once upon a time", true).size();
    auto all =
        run_cli(cat({"run", "-m", model, "-p", "Once upon a time", "-c", std::to_string(n_prompt + 1), "-n", "4"},
                    {"--n-keep", "-1"}));
    EXPECT_EQ(all.rc, 1);
    EXPECT_NE(all.err.find("leaves nothing to drop"), std::string::npos) << all.err;
}

// --n-keep's documented semantics spelled out through the library: when the
// cache is full, keep its first n_keep tokens (BOS counted on top of the
// user's N) and the newer half of the rest, decode them into an emptied
// cache, go on. Greedy with a presence penalty, so the text depends on what
// is kept.
std::string shifted_reference(const std::string & model, const std::string & prompt, uint32_t n_ctx, int n_gen,
                              int user_keep) {
    auto m = lmllm::Model::load(model, {});
    EXPECT_TRUE(m.ok());
    if (!m.ok()) return "";
    const lmllm::Vocab & vocab = m.value()->vocab();
    lmllm::ContextParams cp;
    cp.n_ctx = n_ctx;
    auto ctx = lmllm::Context::create(*m.value(), cp);
    EXPECT_TRUE(ctx.ok());
    if (!ctx.ok()) return "";
    lmllm::SamplerParams sp;
    sp.temperature = 0.0f;
    sp.presence_penalty = 1000.0f;
    lmllm::Sampler sampler(sp);
    std::vector<lmllm::Token> cache = vocab.tokenize(prompt, true, true), history = cache;
    const size_t keep = user_keep < 0 ? cache.size() : std::min(cache.size(), size_t(user_keep) + 1); // + BOS
    EXPECT_TRUE(ctx.value()->decode(cache).ok());
    lmllm::Detokenizer detok(vocab);
    std::string out;
    for (int i = 0; i < n_gen; i++) {
        const lmllm::Token t = sampler.sample(ctx.value()->logits(), ctx.value()->n_vocab(), history);
        if (vocab.is_eog(t)) break;
        history.push_back(t);
        out += detok.push(t);
        if (i + 1 == n_gen) break;
        if (cache.size() == n_ctx) {
            const size_t discard = (cache.size() - keep) / 2;
            cache.erase(cache.begin() + long(keep), cache.begin() + long(keep + discard));
            ctx.value()->clear();
            EXPECT_TRUE(ctx.value()->decode(cache).ok());
        }
        EXPECT_TRUE(ctx.value()->decode({t}).ok());
        cache.push_back(t);
    }
    return out + detok.flush();
}

TEST(CliGeneration, NKeepKeepsWhatItSays) {
    REQUIRE_TINY(model);
    for (int keep : {-1, 0, 3}) {
        auto r = run_cli(cat({"run", "-m", model, "-p", "Once upon a time", "-c", "48", "-n", "100", "--n-keep",
                              std::to_string(keep), "--no-summary"},
                             kVaried));
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_EQ(text_of(r), shifted_reference(model, "Once upon a time", 48, 100, keep)) << "--n-keep " << keep;
    }
}

TEST(CliGeneration, SummaryHasTheTimeToFirstToken) {
    REQUIRE_TINY(model);
    auto r = run_cli({"run", "-m", model, "-p", "hello", "-n", "4", "--temp", "0"});
    ASSERT_EQ(r.rc, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        r.err, m, std::regex("prompt: [0-9]+ tokens in ([0-9.]+) s .* \\| time to first token: ([0-9.]+) ms")))
        << r.err;
    const double prompt_s = std::stod(m[1]), ttft_ms = std::stod(m[2]);
    EXPECT_GT(ttft_ms, 0.0);
    EXPECT_GE(ttft_ms + 10.0, prompt_s * 1e3); // the prompt is decoded before the first token
}

TEST(CliGeneration, ChatStopStringEndsTheReplyAndTheChatGoesOn) {
    REQUIRE_TINY(model);
    const std::vector<std::string> base = cat({"chat", "-m", model, "-n", "40"}, kVaried);
    auto full = run_cli(base, "hello\nagain\n");
    ASSERT_EQ(full.rc, 0) << full.err;
    const auto ls = lines(full.out);
    ASSERT_GE(ls.size(), 2u) << full.out;
    const std::string first = ls[0];
    ASSERT_GT(first.size(), 20u) << first;
    const size_t at = pick_stop(first);
    ASSERT_NE(at, std::string::npos) << first;
    const std::string stop = first.substr(at, 3);
    auto r = run_cli(cat(base, {"-r", stop}), "hello\nagain\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto cut = lines(r.out);
    ASSERT_GE(cut.size(), 2u) << r.out;
    EXPECT_LT(cut[0].size(), first.size());
    EXPECT_EQ(first.compare(0, cut[0].size(), cut[0]), 0) << cut[0];
    EXPECT_EQ(occurrences(cut[0], stop), 1u) << cut[0];
    EXPECT_LE(cut[0].size(), at + stop.size() + 16) << cut[0];
    // the first reply was cut, the second message was answered too (its own reply)
    EXPECT_LT(int_after(r.err, "generation: ([0-9]+) tokens"), int_after(full.err, "generation: ([0-9]+) tokens"))
        << r.err;
    EXPECT_FALSE(cut[1].empty());
}

TEST(CliGeneration, ChatNKeepZeroLetsTheSystemMessageGo) {
    REQUIRE_TINY(model);
    std::string input;
    for (int i = 0; i < 10; i++) input += "message number " + std::to_string(i) + "\n";
    const std::vector<std::string> base = {"chat", "-m",  model,      "--temp",          "0", "-n", "40",
                                           "-c",   "400", "--system", "Answer briefly.", "-v"};
    auto kept = run_cli(base, input);
    ASSERT_EQ(kept.rc, 0) << kept.err;
    EXPECT_NE(kept.err.find("chat: keeping system user"), std::string::npos) << kept.err;
    auto dropped = run_cli(cat(base, {"--n-keep", "0"}), input);
    ASSERT_EQ(dropped.rc, 0) << dropped.err;
    EXPECT_EQ(dropped.err.find("chat: keeping system"), std::string::npos) << dropped.err;
    EXPECT_NE(dropped.err.find("chat: keeping user"), std::string::npos) << dropped.err;
    EXPECT_NE(dropped.err.find("generation: 400 tokens"), std::string::npos) << dropped.err;
    // a budget that holds the system message and the first exchange (about 125
    // tokens) keeps both, while the rest leaves room for the new message
    auto first = run_cli(cat(base, {"--n-keep", "150"}), input);
    ASSERT_EQ(first.rc, 0) << first.err;
    EXPECT_NE(first.err.find("chat: keeping system user assistant user"), std::string::npos) << first.err;
}

TEST(CliTokenize, PrintsTheLibrarysTokens) {
    REQUIRE_TINY(model);
    const std::string text = "<|im_start|>hello world";
    const auto want = library_tokens(model, text, true);
    ASSERT_GE(want.size(), 3u);
    auto ids = run_cli({"tokenize", "-m", model, "-p", text, "--ids"});
    ASSERT_EQ(ids.rc, 0) << ids.err;
    std::string list = "[";
    for (size_t i = 0; i < want.size(); i++) list += (i ? ", " : "") + std::to_string(want[i]);
    EXPECT_EQ(ids.out, list + "]\n");
    // one "    ID -> 'piece'" line per token, the special token rendered
    auto pieces = run_cli({"tokenize", "-m", model, "-p", text});
    ASSERT_EQ(pieces.rc, 0) << pieces.err;
    const auto ls = lines(pieces.out);
    ASSERT_EQ(ls.size(), want.size()) << pieces.out;
    for (size_t i = 0; i < want.size(); i++) {
        char head[32];
        std::snprintf(head, sizeof head, "%6d -> '", want[i]);
        EXPECT_EQ(ls[i].rfind(head, 0), 0u) << ls[i];
    }
    EXPECT_NE(pieces.out.find("-> '<|im_start|>'"), std::string::npos) << pieces.out;
    // --no-bos drops the BOS the model adds
    const auto no_bos = library_tokens(model, text, false);
    auto nb = run_cli({"tokenize", "-m", model, "-p", text, "--ids", "--no-bos", "--show-count"});
    ASSERT_EQ(nb.rc, 0) << nb.err;
    std::string head = "[";
    head += std::to_string(want[1]);
    EXPECT_EQ(nb.out.rfind(head, 0), 0u) << nb.out;
    EXPECT_EQ(no_bos.size() + 1, want.size());
    EXPECT_NE(nb.out.find("Total number of tokens: " + std::to_string(no_bos.size())), std::string::npos) << nb.out;
    // errors
    auto none = run_cli({"tokenize", "-m", model});
    EXPECT_EQ(none.rc, 1);
    EXPECT_NE(none.err.find("no text given"), std::string::npos) << none.err;
    auto missing = run_cli({"tokenize", "-m", "/nonexistent.gguf", "-p", "x"});
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.err.find("/nonexistent.gguf"), std::string::npos) << missing.err;
}
TEST(CliGeneration, ChatProcessesEscapesInMessagesWithE) {
    REQUIRE_TINY(model);
    // the random model answers anything alike: the tokens fed tell the texts apart
    // ("\\t" is two bytes, a tab one)
    const std::vector<std::string> base = {"chat", "-m", model, "--temp", "0", "-n", "4"};
    auto want = run_cli(cat(base, {"--system", "be\tbrief"}), "one\ttwo\n");
    auto got = run_cli(cat(base, {"-e", "--system", "be\\tbrief"}), "one\\ttwo\n");
    auto raw = run_cli(cat(base, {"--system", "be\\tbrief"}), "one\\ttwo\n");
    ASSERT_EQ(want.rc, 0) << want.err;
    ASSERT_EQ(got.rc, 0) << got.err;
    const int n_want = int_after(want.err, "prompt: ([0-9]+) tokens");
    ASSERT_GT(n_want, 0) << want.err;
    EXPECT_EQ(int_after(got.err, "prompt: ([0-9]+) tokens"), n_want) << got.err;
    EXPECT_GT(int_after(raw.err, "prompt: ([0-9]+) tokens"), n_want) << raw.err;
}

TEST(CliGeneration, NewCommandsAndOptionsHaveHelp) {
    REQUIRE_CLI();
    for (const char * c : {"quantize", "tokenize"}) {
        auto r = run_cli({c, "--help"});
        EXPECT_EQ(r.rc, 0) << c << ": " << r.err;
        EXPECT_NE(r.out.find(std::string("usage: lmggml ") + c), std::string::npos) << r.out;
    }
    auto top = run_cli({"--help"});
    EXPECT_NE(top.out.find("quantize"), std::string::npos);
    EXPECT_NE(top.out.find("tokenize"), std::string::npos);
    const auto run_help = run_cli({"run", "--help"}).out;
    for (const char * o :
         {"--reverse-prompt", "--ignore-eos", "--escape", "--n-keep", "--presence-penalty", "--frequency-penalty"})
        EXPECT_NE(run_help.find(o), std::string::npos) << o;
    const auto bench_help = run_cli({"bench", "--help"}).out;
    for (const char * o : {"-pg", "--n-depth", "-dev"}) EXPECT_NE(bench_help.find(o), std::string::npos) << o;
    EXPECT_NE(run_cli({"perplexity", "--help"}).out.find("--kl-divergence-base"), std::string::npos);
}

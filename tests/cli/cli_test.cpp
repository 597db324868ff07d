// End-to-end tests of the `lmggml` program: help, errors and exit codes,
// and each subcommand on the default model (SmolLM2-135M-Instruct Q4_1).
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "cli_util.h"
#include "gguf.h"

using clitest::Json;
using clitest::lines;
using clitest::run_cli;

namespace {

#ifdef LMGGML_CLI
#define REQUIRE_CLI() (void) 0
#else
// The sanitizer builds configure LMGGML_BUILD_TOOLS=OFF (they test the library);
// the plain build, the one CI runs first, has the program and runs these tests.
#define REQUIRE_CLI() GTEST_SKIP() << "the lmggml program is not built (LMGGML_BUILD_TOOLS=OFF)"
#endif

// The model is a hard requirement: scripts/test fetches it and exports LMGGML_MODEL.
#define REQUIRE_MODEL(var)                                                                                      \
    REQUIRE_CLI();                                                                                              \
    const std::string var = clitest::default_model();                                                           \
    ASSERT_FALSE(var.empty()) << "default model missing: set LMGGML_MODEL or run scripts/fetch-model "          \
                                 "(expected ~/.cache/lmggml/SmolLM2-135M-Instruct.Q4_1.gguf)"

const char * kText =
    "The sea is the connected body of salty water that covers over 70 percent of the Earth's surface. "
    "It moderates the climate, provides food and oxygen, and supports a vast variety of life. The word sea "
    "is also used for smaller, partly landlocked parts of the ocean. Ships have crossed the sea for thousands "
    "of years, carrying people and goods between distant lands. Its waves are driven mostly by the wind, and "
    "its tides by the pull of the Moon and the Sun.\n";

// stderr holds exactly one line, an error naming `what`.
void expect_one_error_line(const clitest::RunResult & r, const std::string & what) {
    EXPECT_EQ(r.rc, 1) << r.err;
    const auto ls = lines(r.err);
    ASSERT_EQ(ls.size(), 1u) << r.err;
    EXPECT_NE(ls[0].find("error"), std::string::npos) << ls[0];
    EXPECT_NE(ls[0].find(what), std::string::npos) << ls[0];
}

} // namespace

TEST(Cli, HelpForEveryCommandExitsZero) {
    REQUIRE_CLI();
    for (const char * c : {"run", "chat", "bench", "perplexity", "info", "devices"}) {
        auto r = run_cli({c, "--help"});
        EXPECT_EQ(r.rc, 0) << c << ": " << r.err;
        EXPECT_NE(r.out.find(std::string("usage: lmggml ") + c), std::string::npos) << r.out;
        EXPECT_TRUE(r.err.empty()) << r.err;
    }
    auto top = run_cli({"--help"});
    EXPECT_EQ(top.rc, 0);
    for (const char * c : {"run", "chat", "bench", "perplexity", "info", "devices"}) EXPECT_NE(top.out.find(c), std::string::npos);
}

TEST(Cli, NoCommandOrUnknownCommandFails) {
    REQUIRE_CLI();
    EXPECT_EQ(run_cli({}).rc, 1);
    expect_one_error_line(run_cli({"frobnicate"}), "unknown command 'frobnicate'");
}

TEST(Cli, MissingModelFileIsOneErrorLine) {
    REQUIRE_CLI();
    const std::string path = "/nonexistent/dir/model.gguf";
    expect_one_error_line(run_cli({"run", "-m", path, "-p", "hi"}), path);
    expect_one_error_line(run_cli({"chat", "-m", path}), path);
    expect_one_error_line(run_cli({"bench", "-m", path}), path);
    expect_one_error_line(run_cli({"perplexity", "-m", path, "-f", clitest::temp_file("t.txt", kText)}), path);
    expect_one_error_line(run_cli({"info", path}), path);
    expect_one_error_line(run_cli({"run", "-p", "hi"}), "no model");
}

TEST(Cli, BadArgumentsAreOneErrorLine) {
    REQUIRE_CLI();
    expect_one_error_line(run_cli({"run", "-m", "x.gguf", "--bogus"}), "unknown option '--bogus'");
    expect_one_error_line(run_cli({"run", "-m", "x.gguf", "-p", "hi", "-n", "ten"}), "invalid value 'ten'");
    expect_one_error_line(run_cli({"run", "-m", "x.gguf", "-p"}), "needs a value");
    expect_one_error_line(run_cli({"run", "-m", "x.gguf", "--temp", "0.5x"}), "invalid value '0.5x'");
    expect_one_error_line(run_cli({"bench", "-m", "x.gguf", "-o", "xml"}), "unknown output format 'xml'");
    expect_one_error_line(run_cli({"bench", "-m", "x.gguf", "-t", "1,,2"}), "invalid value '1,,2'");
    expect_one_error_line(run_cli({"bench", "-m", "x.gguf", "-r", "0"}), "-r must be >= 1");
    expect_one_error_line(run_cli({"info", "a.gguf", "b.gguf"}), "unexpected argument 'b.gguf'");
    expect_one_error_line(run_cli({"perplexity", "-m", "x.gguf"}), "no text given");
}

TEST(Cli, UnsupportedArchitectureIsAnError) {
    REQUIRE_CLI();
    const std::string path = clitest::temp_file("foo_arch.gguf", "");
    lm_gguf_context * g = lm_gguf_init_empty();
    lm_gguf_set_val_str(g, "general.architecture", "mamba9");
    ASSERT_TRUE(lm_gguf_write_to_file(g, path.c_str(), false));
    lm_gguf_free(g);
    auto r = run_cli({"run", "-m", path, "-p", "hi"});
    expect_one_error_line(r, "unsupported architecture 'mamba9'");
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(Cli, NotAGgufFileIsAnError) {
    REQUIRE_CLI();
    const std::string path = clitest::temp_file("garbage.gguf", "this is not a gguf file at all");
    auto r = run_cli({"info", path});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("not a valid GGUF file"), std::string::npos) << r.err;
    EXPECT_EQ(run_cli({"run", "-m", path, "-p", "hi"}).rc, 1);
}

TEST(Cli, InfoListsMetadataAndTensors) {
    REQUIRE_MODEL(model);
    auto r = run_cli({"info", model});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("general.architecture = llama\n"), std::string::npos);
    EXPECT_NE(r.out.find("llama.block_count = 30\n"), std::string::npos);
    // a 49152-entry array is abbreviated, not printed whole
    EXPECT_NE(r.out.find("(49152 "), std::string::npos);
    EXPECT_LT(r.out.size(), 100000u);
    // token_embd: Q8_0 in this file, 576 x 49152, 34-byte blocks of 32
    EXPECT_TRUE(std::regex_search(r.out, std::regex("token_embd\\.weight +Q8_0 +\\[576, 49152\\] +30081024\\n"))) << r.out;
    EXPECT_NE(r.out.find("272 tensors"), std::string::npos);
}

TEST(Cli, DevicesListsTheCpu) {
    REQUIRE_CLI();
    auto r = run_cli({"devices"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("CPU"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("memory:"), std::string::npos) << r.out;
}

TEST(Cli, RunGreedyIsDeterministic) {
    REQUIRE_MODEL(model);
    const std::vector<std::string> args = {"run", "-m", model, "-p", "The capital of France is", "-n", "16", "--temp", "0"};
    auto a = run_cli(args);
    auto b = run_cli(args);
    ASSERT_EQ(a.rc, 0) << a.err;
    ASSERT_EQ(b.rc, 0) << b.err;
    EXPECT_GT(a.out.size(), 2u);
    EXPECT_EQ(a.out, b.out);
    // the speed summary goes to stderr, with 16 generated tokens (no EOS that early here)
    EXPECT_NE(a.err.find("generation: 16 tokens"), std::string::npos) << a.err;
    EXPECT_EQ(a.out.find("generation:"), std::string::npos);
}

TEST(Cli, RunSeededSamplingIsReproducible) {
    REQUIRE_MODEL(model);
    const std::vector<std::string> args = {"run", "-m", model, "--chat", "-p", "Name a color.", "-n", "8",
                                           "--temp", "1.0", "--seed", "7", "--no-summary"};
    auto a = run_cli(args);
    auto b = run_cli(args);
    ASSERT_EQ(a.rc, 0) << a.err;
    EXPECT_FALSE(a.out.empty());
    EXPECT_EQ(a.out, b.out);
}

TEST(Cli, PromptLongerThanTheContextIsAnError) {
    REQUIRE_MODEL(model);
    auto r = run_cli({"run", "-m", model, "-c", "16", "-p", kText});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("longer than the context"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(Cli, BenchJsonHasPositiveRates) {
    REQUIRE_MODEL(model);
    auto r = run_cli({"bench", "-m", model, "-p", "32", "-n", "8", "-r", "1", "-o", "json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    Json j;
    ASSERT_TRUE(clitest::parse_json(r.out, j)) << r.out;
    ASSERT_EQ(j.kind, Json::ARRAY);
    ASSERT_EQ(j.items.size(), 2u);
    std::map<std::string, double> rate;
    for (const Json & t : j.items) {
        ASSERT_EQ(t.kind, Json::OBJECT);
        rate[t.fields.at("test").str] = t.fields.at("avg_ts").number;
        EXPECT_EQ(t.fields.at("samples_ts").items.size(), 1u);
        EXPECT_EQ(t.fields.at("model_type").str.rfind("llama", 0), 0u);
        EXPECT_GT(t.fields.at("model_n_params").number, 1e8);
    }
    ASSERT_TRUE(rate.count("pp32") && rate.count("tg8")) << r.out;
    EXPECT_GT(rate["pp32"], 0.0);
    EXPECT_GT(rate["tg8"], 0.0);
    EXPECT_TRUE(std::isfinite(rate["pp32"]) && std::isfinite(rate["tg8"]));
}

TEST(Cli, BenchMarkdownTable) {
    REQUIRE_MODEL(model);
    auto r = run_cli({"bench", "-m", model, "-p", "8", "-n", "0", "-r", "2", "--no-warmup"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("| model"), std::string::npos);
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\\| +pp8 \\| +[0-9.]+ ± [0-9.]+ \\|"))) << r.out;
    EXPECT_EQ(r.out.find("tg"), std::string::npos);
    EXPECT_NE(r.out.find("build: lmggml"), std::string::npos);
}

TEST(Cli, PerplexityIsFinite) {
    REQUIRE_MODEL(model);
    const std::string text = clitest::temp_file("ppl.txt", kText);
    auto r = run_cli({"perplexity", "-m", model, "-f", text, "-c", "32"});
    ASSERT_EQ(r.rc, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("Final estimate: PPL = ([0-9.]+)"))) << r.out;
    const double ppl = std::stod(m[1]);
    EXPECT_TRUE(std::isfinite(ppl));
    // far better than chance (49152), and >= 1 by definition
    EXPECT_GT(ppl, 1.0);
    EXPECT_LT(ppl, 1000.0);
    EXPECT_NE(r.out.find("[1]"), std::string::npos); // running estimate per chunk
    // too short for the default context of 512
    auto s = run_cli({"perplexity", "-m", model, "-f", text});
    EXPECT_EQ(s.rc, 1);
    EXPECT_NE(s.err.find("needs at least 1024"), std::string::npos) << s.err;
}

TEST(Cli, ChatAnswersEachLineAndStopsAtExit) {
    REQUIRE_MODEL(model);
    auto r = run_cli({"chat", "-m", model, "-n", "8", "--temp", "0", "-v"}, "Hello!\nWhat is 2+2?\n/exit\nnever read\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    // the cache keeps the conversation: the second turn feeds only its own tokens
    std::vector<std::pair<int, int>> turns; // (fed, cached before)
    const std::regex turn_re("chat: feeding ([0-9]+) new tokens after ([0-9]+) cached");
    for (std::sregex_iterator it(r.err.begin(), r.err.end(), turn_re), end; it != end; ++it)
        turns.emplace_back(std::stoi((*it)[1]), std::stoi((*it)[2]));
    ASSERT_EQ(turns.size(), 2u) << r.err;
    EXPECT_EQ(turns[0].second, 0);
    EXPECT_GT(turns[1].second, turns[0].first); // first turn's input + its reply
    EXPECT_LE(turns[1].second, turns[0].first + 8);
    const auto ls = lines(r.out);
    // two replies (each ends with a newline); the line after /exit is not answered
    int non_empty = 0;
    for (const auto & l : ls) non_empty += !l.empty();
    EXPECT_GE(non_empty, 2) << r.out;
    EXPECT_NE(r.err.find("chat template: chatml"), std::string::npos) << r.err;
    // the same conversation is deterministic at temperature 0
    auto again = run_cli({"chat", "-m", model, "-n", "8", "--temp", "0"}, "Hello!\nWhat is 2+2?\n");
    EXPECT_EQ(again.rc, 0);
    EXPECT_EQ(again.out, r.out);
}

TEST(Cli, ChatResetStartsOverAndSetChangesSampling) {
    REQUIRE_MODEL(model);
    // after /reset the same question is answered from an empty cache, exactly as the first time
    auto r = run_cli({"chat", "-m", model, "-n", "8", "--temp", "0", "-v"},
                     "What is 2+2?\n/reset\nWhat is 2+2?\n/set temp=bad\n/set nope=1\n/set top-p=2\n"
                     "/set temp=1.5 top-k=0 top-p=1 min-p=0 seed=7\n/reset\nName a color.\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    std::vector<std::pair<int, int>> turns; // (fed, cached before)
    const std::regex turn_re("chat: feeding ([0-9]+) new tokens after ([0-9]+) cached");
    for (std::sregex_iterator it(r.err.begin(), r.err.end(), turn_re), end; it != end; ++it)
        turns.emplace_back(std::stoi((*it)[1]), std::stoi((*it)[2]));
    ASSERT_EQ(turns.size(), 3u) << r.err;
    EXPECT_EQ(turns[1], turns[0]);
    EXPECT_EQ(turns[2].second, 0);
    const auto ls = lines(r.out);
    ASSERT_GE(ls.size(), 3u) << r.out;
    EXPECT_EQ(ls[0], ls[1]); // greedy, same conversation
    // each bad /set is one error line and changes nothing
    EXPECT_NE(r.err.find("'bad' is not a number"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("unknown key or bad value 'nope=1'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--top-p must be in [0, 1]"), std::string::npos) << r.err;
    // the sampling set by /set is seeded: the same script gives the same third reply
    auto again = run_cli({"chat", "-m", model, "-n", "8", "--temp", "0"},
                         "/set temp=1.5 top-k=0 top-p=1 min-p=0 seed=7\nName a color.\n");
    ASSERT_EQ(again.rc, 0) << again.err;
    EXPECT_EQ(lines(again.out).at(0), ls[2]);
}

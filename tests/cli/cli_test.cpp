// Tests of the `lmggml` program: help, errors and exit codes, and each
// subcommand on a tiny generated model (cli_util.h), so that they need no
// download; cli_e2e_test.cpp runs the real default model.
#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <regex>

#include "cli_util.h"
#include "gguf.h"

using clitest::Json;
using clitest::lines;
using clitest::run_cli;

namespace {

// A tiny model written by the test itself: nothing to download.
#define REQUIRE_TINY(var)                                                                                              \
    REQUIRE_CLI();                                                                                                     \
    const std::string var = clitest::tiny_model("tiny.gguf");                                                          \
    ASSERT_FALSE(var.empty()) << "cannot write the tiny model"

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
    for (const char * c : {"run", "chat", "bench", "perplexity", "info", "devices"})
        EXPECT_NE(top.out.find(c), std::string::npos);
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
    REQUIRE_TINY(model);
    auto r = run_cli({"info", model});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("general.architecture = llama\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("llama.block_count = 2\n"), std::string::npos) << r.out;
    // a 300-entry array is abbreviated, not printed whole
    EXPECT_NE(r.out.find("(300 items"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("w150"), std::string::npos) << r.out;
    // token_embd: F32, 64 x 300
    EXPECT_TRUE(std::regex_search(r.out, std::regex("token_embd\\.weight +F32 +\\[64, 300\\] +76800\\n"))) << r.out;
    EXPECT_NE(r.out.find("\n20 tensors, "), std::string::npos) << r.out; // 2 layers of 9, embeddings, output norm
}

TEST(Cli, DevicesListsTheCpu) {
    REQUIRE_CLI();
    auto r = run_cli({"devices"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("CPU"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("memory:"), std::string::npos) << r.out;
}

TEST(Cli, DevicesVerboseSaysWhereItLookedForPlugins) {
    REQUIRE_CLI();
    auto r = run_cli({"devices", "-v"});
    ASSERT_EQ(r.rc, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, std::regex("plugin search path: ([^\n]+)\n"))) << r.err;
    // the program's own folder comes first (next to it: the build tree's or install's plugins)
#ifdef LMGGML_CLI
    const std::string exe = LMGGML_CLI;
#else
    const std::string exe;
#endif
    const std::string exe_dir = exe.substr(0, exe.rfind('/'));
    EXPECT_EQ(m[1].str().rfind(exe_dir, 0), 0u) << m[1];
    EXPECT_EQ(run_cli({"devices"}).err.find("search path"), std::string::npos);
}

TEST(Cli, TheModelCacheHonoursXdgCacheHome) {
    REQUIRE_CLI();
    const std::string dir = clitest::temp_file("xdg_marker", "");
    const std::string xdg = dir.substr(0, dir.rfind('/')) + "/xdg";
    ASSERT_EQ(std::system(("mkdir -p '" + xdg + "/lmggml'").c_str()), 0);
    const std::string model = xdg + "/lmggml/SmolLM2-135M-Instruct.Q4_1.gguf";
    ASSERT_EQ(std::system(("cp '" + clitest::tiny_model("tiny.gguf") + "' '" + model + "'").c_str()), 0);
    const char * saved = std::getenv("LMGGML_MODEL");
    const std::string saved_model = saved ? saved : "";
    const char * saved_xdg_env = std::getenv("XDG_CACHE_HOME");
    const std::string saved_xdg = saved_xdg_env ? saved_xdg_env : "";
    unsetenv("LMGGML_MODEL");
    setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
    const std::string found = clitest::default_model();
    if (saved) setenv("LMGGML_MODEL", saved_model.c_str(), 1);
    if (saved_xdg_env)
        setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
    else
        unsetenv("XDG_CACHE_HOME");
    EXPECT_EQ(found, model);
}

TEST(Cli, RunGreedyIsDeterministic) {
    REQUIRE_TINY(model);
    const std::vector<std::string> args = {"run", "-m", model,    "-p", "The capital of France is",
                                           "-n",  "16", "--temp", "0"};
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
    REQUIRE_TINY(model);
    const std::vector<std::string> args = {"run", "-m",     model, "--chat", "-p", "Name a color.", "-n",
                                           "8",   "--temp", "1.0", "--seed", "7",  "--no-summary"};
    auto a = run_cli(args);
    auto b = run_cli(args);
    ASSERT_EQ(a.rc, 0) << a.err;
    EXPECT_FALSE(a.out.empty());
    EXPECT_EQ(a.out, b.out);
}

TEST(Cli, PromptLongerThanTheContextIsAnError) {
    REQUIRE_TINY(model);
    auto r = run_cli({"run", "-m", model, "-c", "16", "-p", kText});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("longer than the context"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(Cli, BenchJsonHasPositiveRates) {
    REQUIRE_TINY(model);
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
        EXPECT_GT(t.fields.at("model_n_params").number, 1e4);
    }
    ASSERT_TRUE(rate.count("pp32") && rate.count("tg8")) << r.out;
    EXPECT_GT(rate["pp32"], 0.0);
    EXPECT_GT(rate["tg8"], 0.0);
    EXPECT_TRUE(std::isfinite(rate["pp32"]) && std::isfinite(rate["tg8"]));
}

TEST(Cli, BenchMarkdownTable) {
    REQUIRE_TINY(model);
    auto r = run_cli({"bench", "-m", model, "-p", "8", "-n", "0", "-r", "2", "--no-warmup"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("| model"), std::string::npos);
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\\| +pp8 \\| +[0-9.]+ ± [0-9.]+ \\|"))) << r.out;
    EXPECT_EQ(r.out.find("tg"), std::string::npos);
    EXPECT_NE(r.out.find("build: lmggml"), std::string::npos);
}

TEST(Cli, PerplexityIsFinite) {
    REQUIRE_TINY(model);
    const std::string text = clitest::temp_file("ppl.txt", kText);
    auto r = run_cli({"perplexity", "-m", model, "-f", text, "-c", "32"});
    ASSERT_EQ(r.rc, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("Final estimate: PPL = ([0-9.]+)"))) << r.out;
    const double ppl = std::stod(m[1]);
    EXPECT_TRUE(std::isfinite(ppl));
    EXPECT_GE(ppl, 1.0);                             // by definition
    EXPECT_NE(r.out.find("[1]"), std::string::npos); // running estimate per chunk
    // too short for the default context of 512
    auto s = run_cli({"perplexity", "-m", model, "-f", text});
    EXPECT_EQ(s.rc, 1);
    EXPECT_NE(s.err.find("needs at least 1024"), std::string::npos) << s.err;
}

TEST(Cli, ChatAnswersEachLineAndStopsAtExit) {
    REQUIRE_TINY(model);
    auto r =
        run_cli({"chat", "-m", model, "-n", "8", "--temp", "0", "-v"}, "Hello!\nWhat is 2+2?\n/exit\nnever read\n");
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
    // each reply ends with a newline (the random model's replies may hold newlines too)
    ASSERT_FALSE(r.out.empty());
    EXPECT_EQ(r.out.back(), '\n');
    EXPECT_NE(r.err.find("chat template: chatml"), std::string::npos) << r.err;
    // the same conversation is deterministic at temperature 0
    auto again = run_cli({"chat", "-m", model, "-n", "8", "--temp", "0"}, "Hello!\nWhat is 2+2?\n");
    EXPECT_EQ(again.rc, 0);
    EXPECT_EQ(again.out, r.out);
}

TEST(Cli, ChatResetStartsOverAndSetChangesSampling) {
    REQUIRE_TINY(model);
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
    // each bad /set is one error line and changes nothing
    EXPECT_NE(r.err.find("'bad' is not a number"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("unknown key or bad value 'nope=1'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--top-p must be in [0, 1]"), std::string::npos) << r.err;
    // the sampling set by /set is seeded: the same script gives the same third reply
    auto again = run_cli({"chat", "-m", model, "-n", "8", "--temp", "0"},
                         "/set temp=1.5 top-k=0 top-p=1 min-p=0 seed=7\nName a color.\n");
    ASSERT_EQ(again.rc, 0) << again.err;
    // stdout: the first reply twice (greedy, same conversation), then the third
    // (replies of the random model may hold newlines: compare the text whole)
    ASSERT_GT(r.out.size(), again.out.size());
    EXPECT_EQ(r.out.substr(r.out.size() - again.out.size()), again.out);
    const std::string first_two = r.out.substr(0, r.out.size() - again.out.size());
    ASSERT_EQ(first_two.size() % 2, 0u) << first_two;
    EXPECT_EQ(first_two.substr(0, first_two.size() / 2), first_two.substr(first_two.size() / 2));
}

TEST(Cli, TheDefaultThreadCountLeavesOutACoreABusyLoopHolds) {
    REQUIRE_TINY(model);
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &allowed)) last = c;
    }
    ASSERT_GE(last, 0);
    // another process spinning on one of our cores
    const pid_t busy = fork();
    ASSERT_GE(busy, 0);
    if (busy == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(last, &one);
        sched_setaffinity(0, sizeof one, &one);
        std::atomic<unsigned long> spin{0};
        while (true) spin.fetch_add(1, std::memory_order_relaxed);
    }
    usleep(300000);
    auto r = run_cli({"run", "-m", model, "-p", "Hello", "-n", "1", "--temp", "0", "-v"});
    kill(busy, SIGKILL);
    waitpid(busy, nullptr, 0);
    ASSERT_EQ(r.rc, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        r.err, m, std::regex("threads: ([0-9]+) \\(([0-9]+) usable cores, ([0-9]+) busy with other work")))
        << r.err;
    const int threads = std::stoi(m[1]), usable = std::stoi(m[2]), n_busy = std::stoi(m[3]);
    EXPECT_EQ(usable, CPU_COUNT(&allowed));
    EXPECT_GE(n_busy, 1);
    EXPECT_EQ(threads, std::max(1, usable - n_busy));
    if (usable > 1) {
        EXPECT_LT(threads, usable);
    }
    // an explicit -t is taken as given
    auto t = run_cli({"run", "-m", model, "-p", "Hello", "-n", "1", "-t", "2", "-v"});
    EXPECT_EQ(t.err.find("busy with other work"), std::string::npos) << t.err;
}

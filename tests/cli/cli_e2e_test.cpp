// End-to-end layer of the CLI tests: the program on the real default model
// (SmolLM2-135M-Instruct Q4_1), which scripts/test fetches. A missing model
// is a failure, not a skip. Everything else runs on tiny generated models.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>

#include "cli_util.h"

using clitest::Json;
using clitest::lines;
using clitest::run_cli;

namespace {

#define REQUIRE_MODEL(var)                                                                                             \
    REQUIRE_CLI();                                                                                                     \
    const std::string var = clitest::default_model();                                                                  \
    ASSERT_FALSE(var.empty()) << "default model missing: set LMGGML_MODEL or run scripts/fetch-model "                 \
                                 "(expected $XDG_CACHE_HOME/lmggml/SmolLM2-135M-Instruct.Q4_1.gguf, "                  \
                                 "XDG_CACHE_HOME defaulting to ~/.cache)"

} // namespace

TEST(CliEndToEnd, InfoListsAndChecksTheModel) {
    REQUIRE_MODEL(model);
    auto r = run_cli({"info", model});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("general.architecture = llama\n"), std::string::npos);
    EXPECT_NE(r.out.find("llama.block_count = 30\n"), std::string::npos);
    // a 49152-entry array is abbreviated, not printed whole
    EXPECT_NE(r.out.find("(49152 "), std::string::npos);
    EXPECT_LT(r.out.size(), 100000u);
    // token_embd: Q8_0 in this file, 576 x 49152, 34-byte blocks of 32
    EXPECT_TRUE(std::regex_search(r.out, std::regex("token_embd\\.weight +Q8_0 +\\[576, 49152\\] +30081024\\n")))
        << r.out;
    EXPECT_NE(r.out.find("272 tensors"), std::string::npos);
    auto check = run_cli({"info", model, "--check"});
    EXPECT_EQ(check.rc, 0) << check.err;
    EXPECT_NE(check.out.find("check: the data of all 272 tensors"), std::string::npos) << check.out;
}

TEST(CliEndToEnd, RunAnswersInTheModelsTemplate) {
    REQUIRE_MODEL(model);
    const std::vector<std::string> args = {"run", "-m", model,    "--chat", "-p", "What is the capital of France?",
                                           "-n",  "16", "--temp", "0"};
    auto a = run_cli(args);
    auto b = run_cli(args);
    ASSERT_EQ(a.rc, 0) << a.err;
    EXPECT_EQ(a.out, b.out);
    EXPECT_NE(a.out.find("Paris"), std::string::npos) << a.out;
    EXPECT_NE(a.err.find("chat template: chatml (the model's tokenizer.chat_template)"), std::string::npos) << a.err;
    EXPECT_NE(a.err.find("generation: "), std::string::npos) << a.err;
}

TEST(CliEndToEnd, ChatKeepsTheConversationInTheCache) {
    REQUIRE_MODEL(model);
    auto r =
        run_cli({"chat", "-m", model, "-n", "8", "--temp", "0", "-v"}, "Hello!\nWhat is 2+2?\n/exit\nnever read\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    std::vector<std::pair<int, int>> turns; // (fed, cached before)
    const std::regex turn_re("chat: feeding ([0-9]+) new tokens after ([0-9]+) cached");
    for (std::sregex_iterator it(r.err.begin(), r.err.end(), turn_re), end; it != end; ++it)
        turns.emplace_back(std::stoi((*it)[1]), std::stoi((*it)[2]));
    ASSERT_EQ(turns.size(), 2u) << r.err;
    EXPECT_EQ(turns[0].second, 0);
    EXPECT_GT(turns[1].second, turns[0].first);
    EXPECT_LE(turns[1].second, turns[0].first + 8);
    int non_empty = 0;
    for (const auto & l : lines(r.out)) non_empty += !l.empty();
    EXPECT_GE(non_empty, 2) << r.out;
    EXPECT_NE(r.err.find("chat template: chatml"), std::string::npos) << r.err;
}

TEST(CliEndToEnd, BenchMeasuresTheModel) {
    REQUIRE_MODEL(model);
    auto r = run_cli({"bench", "-m", model, "-p", "32", "-n", "8", "-r", "1", "-o", "json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    Json j;
    ASSERT_TRUE(clitest::parse_json(r.out, j)) << r.out;
    ASSERT_EQ(j.kind, Json::ARRAY);
    ASSERT_EQ(j.items.size(), 2u);
    for (const Json & t : j.items) {
        EXPECT_EQ(t.fields.at("model_type").str, "llama 135M Q4_1");
        EXPECT_EQ(t.fields.at("model_n_params").number, 134515008.0);
        EXPECT_GT(t.fields.at("avg_ts").number, 0.0);
        EXPECT_TRUE(std::isfinite(t.fields.at("avg_ts").number));
    }
}

TEST(CliEndToEnd, FetchModelUsesXdgCacheHome) {
    REQUIRE_MODEL(model);
    // a cache under XDG_CACHE_HOME already holding the model: fetch-model checks it and prints its path
    const std::string marker = clitest::temp_file("fetch_marker", "");
    const std::string xdg = marker.substr(0, marker.rfind('/')) + "/xdg_fetch";
    ASSERT_EQ(std::system(("mkdir -p '" + xdg + "/lmggml' && ln -sf '" + model + "' '" + xdg +
                           "/lmggml/SmolLM2-135M-Instruct.Q4_1.gguf'")
                              .c_str()),
              0);
    const std::string script = std::string(LMGGML_TEST_DATA_DIR) + "/../../scripts/fetch-model";
    const std::string out = clitest::temp_file("fetch_out", "");
    const std::string cmd = "env -u LMGGML_MODEL_DIR XDG_CACHE_HOME='" + xdg + "' '" + script + "' > '" + out + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::ifstream in(out);
    const std::string printed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(printed, xdg + "/lmggml/SmolLM2-135M-Instruct.Q4_1.gguf\n");
}

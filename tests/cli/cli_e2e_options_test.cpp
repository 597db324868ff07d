// End-to-end layer of the llama.cpp options and the quantize / tokenize
// commands: the real default model (SmolLM2-135M-Instruct Q4_1, fetched by
// scripts/test; a missing model is a failure) requantized to Q8_0, a stop
// string on its answer, its tokenizer through `tokenize`, and the KL
// divergence of the Q4_1 file against the Q8_0 one.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "cli_util.h"
#include "lmllm/model.h"

using clitest::run_cli;

namespace {

#define REQUIRE_MODEL(var)                                                                                             \
    REQUIRE_CLI();                                                                                                     \
    const std::string var = clitest::default_model();                                                                  \
    ASSERT_FALSE(var.empty()) << "default model missing: set LMGGML_MODEL or run scripts/fetch-model"

double number_after(const std::string & s, const std::string & re) {
    std::smatch m;
    return std::regex_search(s, m, std::regex(re)) ? std::stod(m[1]) : NAN;
}

} // namespace

TEST(CliEndToEndOptions, RequantizedModelAnswersAndStopsAtTheStopString) {
    REQUIRE_MODEL(model);
    const std::string q8 = clitest::temp_file("smol-q8.gguf", "");
    auto refused = run_cli({"quantize", model, q8, "Q8_0"});
    EXPECT_EQ(refused.rc, 1);
    EXPECT_NE(refused.err.find("--allow-requantize"), std::string::npos) << refused.err;
    auto q = run_cli({"quantize", model, q8, "Q8_0", "--allow-requantize"});
    ASSERT_EQ(q.rc, 0) << q.err;

    const std::vector<std::string> ask = {"run", "-m", q8,       "--chat", "-p", "What is the capital of France?",
                                          "-n",  "32", "--temp", "0"};
    auto full = run_cli(ask);
    ASSERT_EQ(full.rc, 0) << full.err;
    ASSERT_NE(full.out.find("Paris"), std::string::npos) << full.out;
    auto cut = run_cli(
        {"run", "-m", q8, "--chat", "-p", "What is the capital of France?", "-n", "32", "--temp", "0", "-r", "Paris"});
    ASSERT_EQ(cut.rc, 0) << cut.err;
    EXPECT_EQ(cut.out, full.out.substr(0, full.out.find("Paris") + 5) + "\n");
    EXPECT_TRUE(std::regex_search(cut.err, std::regex("time to first token: [0-9.]+ ms"))) << cut.err;

    // perplexity: the Q4_1 file against the Q8_0 one as the base
    const std::string para =
        "The sea is the connected body of salty water that covers over 70 percent of the Earth's "
        "surface. It moderates the climate, provides food and oxygen, and supports a vast variety of "
        "life. Ships have crossed the sea for thousands of years, carrying people and goods.\n";
    const std::string text = clitest::temp_file("e2e-kld.txt", para + para + para);
    const std::string logits = clitest::temp_file("e2e.kld", "");
    auto base = run_cli({"perplexity", "-m", q8, "-f", text, "-c", "32", "--kl-divergence-base", logits});
    ASSERT_EQ(base.rc, 0) << base.err;
    auto cmp = run_cli({"perplexity", "-m", model, "--kl-divergence-base", logits, "--kl-divergence"});
    ASSERT_EQ(cmp.rc, 0) << cmp.err;
    const double kld = number_after(cmp.out, "Mean    KLD: +([0-9.]+)");
    EXPECT_GT(kld, 0.0) << cmp.out; // Q4_1 differs from its Q8_0 copy...
    EXPECT_LT(kld, 0.5) << cmp.out; // ...but only by rounding
    EXPECT_GT(number_after(cmp.out, "Same top p: +([0-9.]+)"), 60.0) << cmp.out;
}

TEST(CliEndToEndOptions, TokenizeMatchesTheLibrary) {
    REQUIRE_MODEL(model);
    const std::string text = "<|im_start|>user\nHello, world!";
    auto m = lmllm::Model::load(model, {});
    ASSERT_TRUE(m.ok()) << m.status().message();
    const auto want = m.value()->vocab().tokenize(text, true, true);
    std::string list = "[";
    for (size_t i = 0; i < want.size(); i++) list += (i ? ", " : "") + std::to_string(want[i]);
    auto r = run_cli({"tokenize", "-m", model, "-p", text, "--ids"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, list + "]\n");
    auto pieces = run_cli({"tokenize", "-m", model, "-p", text});
    EXPECT_NE(pieces.out.find("-> '<|im_start|>'"), std::string::npos) << pieces.out;
    EXPECT_NE(pieces.out.find("-> 'Hello'"), std::string::npos) << pieces.out;
}

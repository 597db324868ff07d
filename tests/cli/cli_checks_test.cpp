// The program's checks on what a user gives it: option values every
// subcommand validates the same way, and a corrupted model file, which must
// fail with a message naming the cause instead of printing garbage. They run
// on tiny generated models (cli_util.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "gguf.h"

using clitest::lines;
using clitest::run_cli;

namespace {

// exit code 1 and one stderr line that is an error containing `what`
void expect_error(const clitest::RunResult & r, const std::string & what) {
    EXPECT_EQ(r.rc, 1) << r.err;
    const auto ls = lines(r.err);
    ASSERT_EQ(ls.size(), 1u) << r.err;
    EXPECT_NE(ls[0].find("error"), std::string::npos) << ls[0];
    EXPECT_NE(ls[0].find(what), std::string::npos) << ls[0];
}

// A copy of `src` with `n` bytes of 0xFF written at the start of tensor
// `name`'s data: every fp16 scale there becomes NaN. Returns "" on failure.
std::string corrupt_copy(const std::string & src, const std::string & name, size_t n) {
    lm_gguf_init_params gp = {true, nullptr};
    lm_gguf_context * g = lm_gguf_init_from_file(src.c_str(), gp);
    if (!g) return "";
    const int64_t id = lm_gguf_find_tensor(g, name.c_str());
    const size_t at = id < 0 ? 0 : lm_gguf_get_data_offset(g) + lm_gguf_get_tensor_offset(g, id);
    lm_gguf_free(g);
    if (id < 0) return "";
    std::ifstream in(src, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() < at + n) return "";
    for (size_t i = 0; i < n; i++) bytes[at + i] = char(0xFF);
    return clitest::temp_file("corrupt.gguf", bytes);
}

} // namespace

TEST(CliChecks, ThreadBatchAndDeviceOptionsAreCheckedByEveryCommand) {
    REQUIRE_CLI();
    // the checks come before the model is opened: no model needed
    for (const char * cmd : {"run", "chat", "perplexity"}) {
        SCOPED_TRACE(cmd);
        std::vector<std::string> base = {cmd, "-m", "x.gguf"};
        if (std::string(cmd) == "run") base.insert(base.end(), {"-p", "hi"});
        if (std::string(cmd) == "perplexity") base.insert(base.end(), {"-f", "x.txt"});
        auto with = [&](std::vector<std::string> extra) {
            std::vector<std::string> a = base;
            a.insert(a.end(), extra.begin(), extra.end());
            return run_cli(a);
        };
        expect_error(with({"-t", "0"}), "-t must be between 1 and 512 (got 0)");
        expect_error(with({"-t", "10000"}), "-t must be between 1 and 512 (got 10000)");
        expect_error(with({"-b", "0"}), "-b must be >= 1");
        expect_error(with({"-ngl", "4"}), "-ngl places layers on a device");
        expect_error(with({"-ngl", "-5", "-d", "X"}), "-ngl must be >= 0");
    }
    expect_error(run_cli({"bench", "-m", "x.gguf", "-ngl", "4"}), "-ngl places layers on a device");
    expect_error(run_cli({"bench", "-m", "x.gguf", "-t", "0"}), "-t");
}

TEST(CliChecks, AnIntegerTooLargeSaysOutOfRange) {
    REQUIRE_CLI();
    expect_error(run_cli({"run", "-m", "x.gguf", "-p", "hi", "-n", "99999999999"}),
                 "invalid value '99999999999' for --n-predict (out of range: -2147483648 to 2147483647)");
    expect_error(run_cli({"run", "-m", "x.gguf", "-p", "hi", "-c", "-1"}),
                 "invalid value '-1' for --ctx-size (expected a non-negative integer)");
}

TEST(CliChecks, AContextBeyondTheTrainingContextWarns) {
    REQUIRE_CLI();
    const std::string model = clitest::tiny_model("tiny.gguf"); // trained on 4096
    ASSERT_FALSE(model.empty());
    auto r = run_cli({"run", "-m", model, "-p", "Hello", "-n", "1", "-c", "5000", "--temp", "0"});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("warning: a context of 5000 tokens exceeds the model's training context (4096)"),
              std::string::npos)
        << r.err;
    auto ok = run_cli({"run", "-m", model, "-p", "Hello", "-n", "1", "-c", "4096", "--temp", "0"});
    EXPECT_EQ(ok.rc, 0) << ok.err;
    EXPECT_EQ(ok.err.find("warning"), std::string::npos) << ok.err;
}

TEST(CliChecks, ACorruptedModelFailsWithTheCauseInsteadOfPrintingGarbage) {
    REQUIRE_CLI();
    tiny::Spec spec = clitest::tiny_spec();
    spec.wtype = LM_GGML_TYPE_Q4_1;
    const std::string model = clitest::tiny_model("tiny_q4_1.gguf", spec);
    ASSERT_FALSE(model.empty());
    // NaN block scales in the first rows of a layer's output: the residual stream turns NaN
    const std::string bad = corrupt_copy(model, "blk.0.ffn_down.weight", 1024);
    ASSERT_FALSE(bad.empty());

    auto good = run_cli({"info", model, "--check"});
    EXPECT_EQ(good.rc, 0) << good.err;
    EXPECT_NE(good.out.find("check: the data of all"), std::string::npos) << good.out;

    auto info = run_cli({"info", bad, "--check"});
    expect_error(info, "tensor 'blk.0.ffn_down.weight' (q4_1) has invalid data: found nan scale at block 0");

    auto run = run_cli({"run", "-m", bad, "-p", "Once upon a time", "-n", "8", "--temp", "0"});
    EXPECT_EQ(run.rc, 1) << run.err;
    EXPECT_NE(run.err.find("the model produced NaN logits: its weights are likely corrupted"), std::string::npos)
        << run.err;
    EXPECT_TRUE(run.out.empty() || run.out == "\n") << run.out;

    const std::string text(2000, 'a');
    auto ppl = run_cli({"perplexity", "-m", bad, "-f", clitest::temp_file("ppl.txt", text), "-c", "64"});
    EXPECT_EQ(ppl.rc, 1) << ppl.err;
    EXPECT_NE(ppl.err.find("NaN logits"), std::string::npos) << ppl.err;
    EXPECT_EQ(ppl.out.find("PPL = nan"), std::string::npos) << ppl.out;

    auto chat = run_cli({"chat", "-m", bad, "--temp", "0"}, "Hello\n");
    EXPECT_EQ(chat.rc, 1) << chat.err;
    EXPECT_NE(chat.err.find("NaN logits"), std::string::npos) << chat.err;
}

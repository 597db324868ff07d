// `lmggml perplexity` against a reference computed here through the runner
// library, following llama.cpp's procedure step by step: chunks of n_ctx
// tokens from an empty cache, BOS in front when the model adds one, only the
// second half of each chunk scored, log-softmax in double precision.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "cli_util.h"
#include "lmllm/context.h"
#include "lmllm/model.h"

namespace {

const char * kText =
    "A lighthouse is a tower, building, or other type of physical structure designed to emit light from a "
    "system of lamps and lenses and to serve as a beacon for navigational aid for maritime pilots at sea or "
    "on inland waterways. Lighthouses mark dangerous coastlines, hazardous shoals, reefs, rocks, and safe "
    "entries to harbors; they also assist in aerial navigation. Once widely used, the number of operational "
    "lighthouses has declined due to the expense of maintenance and the use of modern electronic systems.\n";

void expect_reference_perplexity(const std::string & model_path) {
    constexpr int n_ctx = 32;

    // reference
    auto model = lmllm::Model::load(model_path, {});
    ASSERT_TRUE(model.ok()) << model.status().message();
    const lmllm::Vocab & vocab = model.value()->vocab();
    lmllm::ContextParams cp;
    cp.n_ctx = n_ctx;
    cp.n_batch = n_ctx;
    cp.all_logits = true;
    auto ctx = lmllm::Context::create(*model.value(), cp);
    ASSERT_TRUE(ctx.ok()) << ctx.status().message();
    const std::vector<lmllm::Token> tokens = vocab.tokenize(kText, true, false);
    const int n_chunk = int(tokens.size()) / n_ctx;
    ASSERT_GE(n_chunk, 2);
    std::vector<double> running;
    double nll = 0;
    int count = 0;
    for (int c = 0; c < n_chunk; c++) {
        std::vector<lmllm::Token> chunk(tokens.begin() + c * n_ctx, tokens.begin() + (c + 1) * n_ctx);
        if (vocab.add_bos()) chunk[0] = vocab.bos();
        ctx.value()->clear();
        ASSERT_TRUE(ctx.value()->decode(chunk).ok());
        for (int j = n_ctx / 2; j < n_ctx - 1; j++) {
            const float * l = ctx.value()->logits(j);
            double mx = l[0];
            for (int v = 1; v < ctx.value()->n_vocab(); v++) mx = std::max(mx, double(l[v]));
            double sum = 0;
            for (int v = 0; v < ctx.value()->n_vocab(); v++) sum += std::exp(double(l[v]) - mx);
            nll += mx + std::log(sum) - double(l[tokens[size_t(c * n_ctx + j + 1)]]);
            count++;
        }
        running.push_back(std::exp(nll / count));
    }

    // the program
    auto r = clitest::run_cli(
        {"perplexity", "-m", model_path, "-f", clitest::temp_file("ref.txt", kText), "-c", std::to_string(n_ctx)});
    ASSERT_EQ(r.rc, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("Final estimate: PPL = ([0-9.]+)"))) << r.out;
    EXPECT_NEAR(std::stod(m[1]), running.back(), 1e-3 * running.back());
    for (int c = 0; c < n_chunk; c++) {
        ASSERT_TRUE(std::regex_search(r.out, m, std::regex("\\[" + std::to_string(c + 1) + "\\]([0-9.]+),"))) << r.out;
        EXPECT_NEAR(std::stod(m[1]), running[size_t(c)], 1e-3 * running[size_t(c)]) << "chunk " << c + 1;
    }
}

} // namespace

// sanitizer builds leave the program out (LMGGML_BUILD_TOOLS=OFF); the plain build runs these

TEST(CliPerplexity, MatchesAReferenceOnATinyModel) {
    REQUIRE_CLI();
    const std::string model = clitest::tiny_model("tiny.gguf");
    ASSERT_FALSE(model.empty());
    expect_reference_perplexity(model);
}

TEST(CliPerplexity, MatchesAReferenceComputedThroughTheLibrary) {
    REQUIRE_CLI();
    const std::string model = clitest::default_model();
    ASSERT_FALSE(model.empty()) << "default model missing: set LMGGML_MODEL or run scripts/fetch-model";
    expect_reference_perplexity(model);
}

// SmolLM2 on the OpenCL device (every layer, and half of them: mixed
// placement through the scheduler) against the same model on the CPU.
// Greedy decoding runs in lockstep: both contexts are fed the CPU's token,
// and wherever the device's argmax differs the CPU's choice must have been
// a near-tie. Skips without the opencl plugin, an OpenCL device or the model.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <iostream>
#include <memory>

#include "ggml-backend.h"
#include "lmllm/context.h"
#include "lmllm/model.h"
#include "lmtest_backends.h"
#include "smollm2_util.h"
#include "test_paths.h"

namespace {

constexpr float kNearTie = 0.3f; // as the llama.cpp comparison uses

const char * opencl_device_name() {
    lmtest::load_backends_once(LMGGML_PLUGIN_DIR);
    return lm_ggml_backend_dev_by_name("OpenCL0") != nullptr ? "OpenCL0" : nullptr;
}

// SmolLM2 with n_layers on the OpenCL device (all: 1000), loaded once per count
const lmllm::Model * opencl_model(int n_layers) {
    static std::unique_ptr<lmllm::Model> models[2];
    const int slot = n_layers >= 1000 ? 0 : 1;
    if (models[slot] == nullptr && opencl_device_name() != nullptr && !lmtest_default_model().empty()) {
        lmllm::ModelParams mp;
        mp.devices = {opencl_device_name()};
        mp.n_gpu_layers = n_layers;
        auto m = lmllm::Model::load(lmtest_default_model(), mp);
        if (!m.ok()) {
            ADD_FAILURE() << "loading the model onto OpenCL0 failed: " << m.status().message();
            return nullptr;
        }
        models[slot] = std::move(m.value());
    }
    return models[slot].get();
}

bool skip_reason(std::string * why) {
    if (smollm2::model() == nullptr) {
        *why = smollm2::missing_message();
        return true;
    }
    if (opencl_device_name() == nullptr) {
        const char * req = std::getenv("LMGGML_REQUIRE_OPENCL");
        if (req != nullptr && std::strcmp(req, "1") == 0) {
            ADD_FAILURE() << "LMGGML_REQUIRE_OPENCL=1 but no OpenCL device is registered";
        }
        *why = "no OpenCL device (opencl plugin not built, or no OpenCL platform such as pocl-opencl-icd)";
        return true;
    }
    return false;
}

int32_t argmax(const float * l, int32_t n, float * margin) {
    int32_t best = 0, second = -1;
    for (int32_t v = 1; v < n; v++) {
        if (l[v] > l[best]) {
            second = best;
            best = v;
        } else if (second < 0 || l[v] > l[second]) {
            second = v;
        }
    }
    *margin = l[best] - l[second];
    return best;
}

// n greedy steps after the prompt, both contexts fed the CPU's choice
void lockstep(const lmllm::Model & cpu, const lmllm::Model & dev, const std::string & prompt, int n) {
    const std::vector<int32_t> ids = cpu.vocab().tokenize(prompt, true, false);
    lmllm::ContextParams cp;
    cp.n_ctx = uint32_t(ids.size() + n + 8);
    auto cc = lmllm::Context::create(cpu, cp);
    auto dc = lmllm::Context::create(dev, cp);
    ASSERT_TRUE(cc.ok()) << cc.status().message();
    ASSERT_TRUE(dc.ok()) << dc.status().message();
    ASSERT_TRUE(cc.value()->decode(ids).ok());
    ASSERT_TRUE(dc.value()->decode(ids).ok());
    const int32_t nv = cc.value()->n_vocab();
    int n_ties = 0;
    double sum_sq = 0.0, max_abs = 0.0;
    for (int i = 0; i < n; i++) {
        const float * lc = cc.value()->logits();
        const float * ld = dc.value()->logits();
        float mc = 0.0f, md = 0.0f;
        const int32_t bc = argmax(lc, nv, &mc);
        const int32_t bd = argmax(ld, nv, &md);
        for (int32_t v = 0; v < nv; v++) {
            const double d = double(ld[v]) - double(lc[v]);
            ASSERT_TRUE(std::isfinite(d)) << "step " << i << " token " << v;
            sum_sq += d * d;
            max_abs = std::max(max_abs, std::fabs(d));
        }
        if (bd != bc) {
            ASSERT_TRUE(mc < kNearTie && ld[bd] - ld[bc] < kNearTie)
                << "'" << prompt << "' step " << i << ": device " << bd << " (" << ld[bd] << "), CPU " << bc << " ("
                << lc[bc] << ", device " << ld[bc] << ", CPU margin " << mc << ")";
            n_ties++;
        }
        ASSERT_TRUE(cc.value()->decode({bc}).ok());
        ASSERT_TRUE(dc.value()->decode({bc}).ok());
    }
    const double rms = std::sqrt(sum_sq / (double(n) * nv));
    std::cout << "[ '" << prompt << "' ] " << n << " steps, " << n_ties << " near-tie(s); logits vs CPU: rms " << rms
              << ", max " << max_abs << "\n";
    // The CPU rounds activations to 8 bits before products with quantized
    // weights and the device does not, so they differ as two implementations
    // do: the rms bound the CPU meets against llama.cpp; the max is over
    // every vocabulary entry of every step (~1.4 seen on PoCL), not over the
    // chosen tokens only as there, hence a wider bound.
    EXPECT_LT(rms, 0.5);
    EXPECT_LT(max_abs, 2.5);
}

// Perplexity over the first n_chunks chunks of n_ctx tokens, each decoded
// from an empty cache with BOS first, scoring the second half (as
// llama-perplexity does).
double perplexity(const lmllm::Model & model, const std::vector<int32_t> & tokens, int n_ctx, int n_chunks) {
    lmllm::ContextParams cp;
    cp.n_ctx = uint32_t(n_ctx);
    cp.n_batch = uint32_t(n_ctx);
    cp.all_logits = true;
    auto ctx = lmllm::Context::create(model, cp);
    if (!ctx.ok()) {
        ADD_FAILURE() << ctx.status().message();
        return NAN;
    }
    const int n_vocab = ctx.value()->n_vocab();
    double nll = 0.0;
    int count = 0;
    for (int i = 0; i < n_chunks; i++) {
        std::vector<int32_t> chunk(tokens.begin() + i * n_ctx, tokens.begin() + (i + 1) * n_ctx);
        chunk[0] = model.vocab().bos();
        ctx.value()->clear();
        if (!ctx.value()->decode(chunk).ok()) {
            ADD_FAILURE() << "decode failed";
            return NAN;
        }
        for (int j = n_ctx / 2; j < n_ctx - 1; j++) {
            const float * l = ctx.value()->logits(j);
            double mx = l[0];
            for (int v = 1; v < n_vocab; v++) {
                mx = std::max(mx, double(l[v]));
            }
            double sum = 0.0;
            for (int v = 0; v < n_vocab; v++) {
                sum += std::exp(double(l[v]) - mx);
            }
            nll += -(double(l[tokens[size_t(i * n_ctx + j + 1)]]) - mx - std::log(sum));
            count++;
        }
    }
    return std::exp(nll / count);
}

std::vector<int32_t> ppl_tokens() {
    std::ifstream in(std::string(LMGGML_TEST_DATA_DIR) + "/llm/smollm2_ppl_tokens.txt");
    std::string line;
    std::vector<int32_t> ids;
    while (std::getline(in, line)) {
        if (line.rfind("ids:", 0) == 0) {
            std::istringstream is(line.substr(4));
            int32_t v;
            while (is >> v) {
                ids.push_back(v);
            }
        }
    }
    return ids;
}

} // namespace

TEST(SmolLM2OpenCL, PerplexityWithinOnePercentOfTheCpu) {
    std::string why;
    if (skip_reason(&why)) {
        GTEST_SKIP() << why;
    }
    const lmllm::Model * dev = opencl_model(1000);
    ASSERT_NE(dev, nullptr);
    const std::vector<int32_t> tokens = ppl_tokens();
    ASSERT_GE(tokens.size(), 256u) << "tests/data/llm/smollm2_ppl_tokens.txt";
    const double cpu = perplexity(*smollm2::model(), tokens, 128, 2);
    const double ocl = perplexity(*dev, tokens, 128, 2);
    std::cout << "[ perplexity ] CPU " << cpu << ", OpenCL0 " << ocl << "\n";
    EXPECT_NEAR(ocl, cpu, 0.01 * cpu);
}

TEST(SmolLM2OpenCL, AllLayersGiveTheCpusGreedyTokens) {
    std::string why;
    if (skip_reason(&why)) {
        GTEST_SKIP() << why;
    }
    const lmllm::Model * dev = opencl_model(1000);
    ASSERT_NE(dev, nullptr);
    lockstep(*smollm2::model(), *dev, "The capital of France is", 16);
    lockstep(*smollm2::model(), *dev, "def fibonacci(n):", 16);
}

// half the layers on the device, the rest and the output on the CPU
TEST(SmolLM2OpenCL, MixedPlacementGivesTheCpusGreedyTokens) {
    std::string why;
    if (skip_reason(&why)) {
        GTEST_SKIP() << why;
    }
    const lmllm::Model * dev = opencl_model(15);
    ASSERT_NE(dev, nullptr);
    lockstep(*smollm2::model(), *dev, "Once upon a time", 16);
}

// The real Gemma 3 270M (Q4_K_M: Q5_0, Q8_0, Q4_K and Q6_K weights, a
// 262144-row tied output head, sliding-window layers) on the OpenCL device
// against the same file on the CPU: greedy tokens in lockstep (tie-aware)
// and perplexity within 1 %. The file comes from
// `scripts/fetch-model gemma3-270m` (scripts/test fetches it and sets
// LMGGML_GEMMA3). Skips without it or an OpenCL device, except under
// LMGGML_REQUIRE_OPENCL=1 (CI), where either is a failure.

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "lmllm/model.h"
#include "opencl_compare.h"

namespace {

constexpr const char * kFile = "gemma-3-270m-q4_k_m.gguf";

// Bounds on the device's logits against the CPU's (see lockstep); seen on
// PoCL: rms 0.19 to 0.46, max 1.1 to 2.1. Wider than SmolLM2's: Gemma's
// activations are large, and the CPU's 8-bit rounding of them (llama.cpp's
// too) costs more. The device computes in f32 throughout: its perplexity is
// that of the CPU on this file's weights dequantized to F32 (docs/OPENCL.md).
constexpr opencl_compare::Bounds kBounds{0.75, 3.0};

bool is_file(const std::string & p) {
    struct stat st {};
    return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// LMGGML_GEMMA3, else where scripts/fetch-model caches it
std::string model_path() {
    if (const char * env = std::getenv("LMGGML_GEMMA3"); env != nullptr && *env != '\0') {
        return env;
    }
    std::string dir;
    if (const char * d = std::getenv("LMGGML_MODEL_DIR"); d != nullptr && *d != '\0') {
        dir = d;
    } else if (const char * x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
        dir = std::string(x) + "/lmggml";
    } else if (const char * h = std::getenv("HOME"); h != nullptr) {
        dir = std::string(h) + "/.cache/lmggml";
    }
    return dir + "/" + kFile;
}

bool require_opencl() {
    const char * req = std::getenv("LMGGML_REQUIRE_OPENCL");
    return req != nullptr && std::strcmp(req, "1") == 0;
}

bool skip_reason(std::string * why) {
    if (!is_file(model_path())) {
        *why = model_path() + " not found: run scripts/fetch-model gemma3-270m (or set LMGGML_GEMMA3)";
        if (require_opencl()) {
            ADD_FAILURE() << "LMGGML_REQUIRE_OPENCL=1 but " << *why;
        }
        return true;
    }
    return opencl_compare::no_device(why);
}

const lmllm::Model * cpu_model() {
    static const std::unique_ptr<lmllm::Model> m = [] {
        auto r = lmllm::Model::load(model_path(), {});
        if (!r.ok()) {
            ADD_FAILURE() << "loading " << model_path() << " failed: " << r.status().message();
            return std::unique_ptr<lmllm::Model>();
        }
        return std::move(r.value());
    }();
    return m.get();
}

// with n_layers on the OpenCL device (all: 1000), loaded once per count
const lmllm::Model * device_model(int n_layers) {
    static std::unique_ptr<lmllm::Model> models[2];
    const int slot = n_layers >= 1000 ? 0 : 1;
    if (models[slot] == nullptr) {
        models[slot] = opencl_compare::load_on_device(model_path(), n_layers);
    }
    return models[slot].get();
}

std::string read_text(const std::string & path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

TEST(Gemma3OpenCL, AllLayersGiveTheCpusGreedyTokens) {
    std::string why;
    if (skip_reason(&why)) {
        GTEST_SKIP() << why;
    }
    const lmllm::Model * cpu = cpu_model();
    const lmllm::Model * dev = device_model(1000);
    ASSERT_NE(cpu, nullptr);
    ASSERT_NE(dev, nullptr);
    opencl_compare::lockstep(*cpu, *dev, "The capital of France is", 16, kBounds);
    opencl_compare::lockstep(*cpu, *dev, "def fibonacci(n):", 16, kBounds);
}

// 9 of 18 layers on the device; the rest and the output head on the CPU
TEST(Gemma3OpenCL, MixedPlacementGivesTheCpusGreedyTokens) {
    std::string why;
    if (skip_reason(&why)) {
        GTEST_SKIP() << why;
    }
    const lmllm::Model * cpu = cpu_model();
    const lmllm::Model * dev = device_model(9);
    ASSERT_NE(cpu, nullptr);
    ASSERT_NE(dev, nullptr);
    opencl_compare::lockstep(*cpu, *dev, "Once upon a time", 8, kBounds);
}

// two chunks of 128 tokens of tests/data/llm/ppl_text.txt, as the SmolLM2 test
TEST(Gemma3OpenCL, PerplexityWithinOnePercentOfTheCpu) {
    std::string why;
    if (skip_reason(&why)) {
        GTEST_SKIP() << why;
    }
    const lmllm::Model * cpu = cpu_model();
    const lmllm::Model * dev = device_model(1000);
    ASSERT_NE(cpu, nullptr);
    ASSERT_NE(dev, nullptr);
    const std::string text = read_text(std::string(LMGGML_TEST_DATA_DIR) + "/llm/ppl_text.txt");
    const std::vector<int32_t> tokens = cpu->vocab().tokenize(text, true, false);
    const double c = opencl_compare::perplexity(*cpu, tokens, 128, 2);
    const double d = opencl_compare::perplexity(*dev, tokens, 128, 2);
    std::cout << "[ perplexity ] CPU " << c << ", OpenCL0 " << d << "\n";
    EXPECT_NEAR(d, c, 0.01 * c);
}

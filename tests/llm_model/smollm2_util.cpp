#include "smollm2_util.h"

#include <memory>

#include "lmllm/context.h"
#include "test_paths.h"

namespace smollm2 {

namespace {

struct Loaded {
    std::unique_ptr<lmllm::Model> model;
    std::string error;
};

const Loaded & loaded() {
    static const Loaded l = [] {
        Loaded r;
        const std::string path = lmtest_default_model();
        if (path.empty()) {
            r.error = "SmolLM2-135M-Instruct.Q4_1.gguf not found: set LMGGML_MODEL or run scripts/fetch-model "
                      "(expected at ~/.cache/lmggml/SmolLM2-135M-Instruct.Q4_1.gguf)";
            return r;
        }
        auto m = lmllm::Model::load(path, {});
        if (!m.ok()) {
            r.error = "loading " + path + " failed: " + m.status().message();
            return r;
        }
        r.model = std::move(m.value());
        return r;
    }();
    return l;
}

} // namespace

const lmllm::Model * model() { return loaded().model.get(); }
std::string missing_message() { return loaded().error; }

std::vector<lmllm::Token> greedy(const lmllm::Model & model, const std::vector<lmllm::Token> & prompt, int n,
                                 int n_threads) {
    lmllm::ContextParams cp;
    cp.n_ctx = static_cast<uint32_t>(prompt.size() + n + 8);
    cp.n_threads = n_threads;
    auto ctx = lmllm::Context::create(model, cp);
    if (!ctx.ok()) {
        return {};
    }
    std::vector<lmllm::Token> out;
    if (!ctx.value()->decode(prompt).ok()) {
        return out;
    }
    for (int i = 0; i < n; i++) {
        const float * l = ctx.value()->logits();
        lmllm::Token best = 0;
        for (int32_t v = 1; v < ctx.value()->n_vocab(); v++) {
            if (l[v] > l[best]) {
                best = v;
            }
        }
        out.push_back(best);
        if (i + 1 < n && !ctx.value()->decode({best}).ok()) {
            break;
        }
    }
    return out;
}

} // namespace smollm2

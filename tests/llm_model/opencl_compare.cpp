#include "opencl_compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "ggml-backend.h"
#include "lmllm/context.h"
#include "lmtest_backends.h"

namespace opencl_compare {

namespace {

constexpr float kNearTie = 0.3f;

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

} // namespace

const char * device_name() {
    lmtest::load_backends_once(LMGGML_PLUGIN_DIR);
    return lm_ggml_backend_dev_by_name("OpenCL0") != nullptr ? "OpenCL0" : nullptr;
}

bool no_device(std::string * why) {
    if (device_name() != nullptr) {
        return false;
    }
    const char * req = std::getenv("LMGGML_REQUIRE_OPENCL");
    if (req != nullptr && std::strcmp(req, "1") == 0) {
        ADD_FAILURE() << "LMGGML_REQUIRE_OPENCL=1 but no OpenCL device is registered";
    }
    *why = "no OpenCL device (opencl plugin not built, or no OpenCL platform such as pocl-opencl-icd)";
    return true;
}

std::unique_ptr<lmllm::Model> load_on_device(const std::string & path, int n_layers) {
    if (device_name() == nullptr) {
        return nullptr;
    }
    lmllm::ModelParams mp;
    mp.devices = {device_name()};
    mp.n_gpu_layers = n_layers;
    auto m = lmllm::Model::load(path, mp);
    if (!m.ok()) {
        ADD_FAILURE() << "loading " << path << " onto " << device_name() << " failed: " << m.status().message();
        return nullptr;
    }
    return std::move(m.value());
}

void lockstep(const lmllm::Model & cpu, const lmllm::Model & dev, const std::string & prompt, int n, Bounds bounds) {
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
    std::string ties; // steps where the device chose otherwise (the CPU had a near-tie)
    double sum_sq = 0.0, max_abs = 0.0;
    std::vector<int32_t> chosen;
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
            ties.append(" ").append(std::to_string(i));
        }
        chosen.push_back(bc);
        ASSERT_TRUE(cc.value()->decode({bc}).ok());
        ASSERT_TRUE(dc.value()->decode({bc}).ok());
    }
    const double rms = std::sqrt(sum_sq / (double(n) * nv));
    std::cout << "[ '" << prompt << "' ] -> '" << cpu.vocab().detokenize(chosen, false) << "': " << n
              << " steps, other argmax (a CPU near-tie) at steps:" << (ties.empty() ? " none" : ties)
              << "; logits vs CPU: rms " << rms << ", max " << max_abs << "\n";
    // The CPU rounds activations to 8 bits before products with quantized
    // weights and the device does not, so they differ as two implementations do.
    EXPECT_LT(rms, bounds.rms);
    EXPECT_LT(max_abs, bounds.max_abs);
}

double perplexity(const lmllm::Model & model, const std::vector<int32_t> & tokens, int n_ctx, int n_chunks) {
    if (tokens.size() < size_t(n_ctx) * size_t(n_chunks)) {
        ADD_FAILURE() << tokens.size() << " tokens, fewer than " << n_chunks << " chunks of " << n_ctx;
        return NAN;
    }
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

} // namespace opencl_compare

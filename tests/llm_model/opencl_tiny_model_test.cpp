// Tiny generated models of every architecture the runner has (llama, qwen2,
// gemma3) with their layers on the OpenCL device, against the naive
// double-precision forward pass (tests/common/tiny_reference.cpp): one
// batch, chunks, and token by token through the KV cache; fused attention
// and the separate-ops path; every layer on the device and only the last
// (mixed placement). Skips without the opencl plugin or an OpenCL device.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ggml-backend.h"
#include "lmllm/context.h"
#include "lmllm/model.h"
#include "lmtest_backends.h"
#include "test_paths.h"
#include "tiny_model.h"

namespace {

const std::vector<int32_t> kTokens = {1, 17, 260, 5, 299, 42, 42, 128, 3, 77, 200, 9};

struct Case {
    const char * name;
    tiny::Spec (*spec)();
    lm_ggml_type wtype;
    lm_ggml_type kv_type;
    bool flash_attn;
    int n_gpu_layers; // 1000: all
    double limit;
};

void PrintTo(const Case & c, std::ostream * os) { *os << c.name; }

std::string case_name(const testing::TestParamInfo<Case> & info) { return info.param.name; }

class OpenCLTinyModel : public testing::TestWithParam<Case> {
protected:
    void SetUp() override {
        lmtest::load_backends_once(LMGGML_PLUGIN_DIR);
        if (lm_ggml_backend_dev_by_name("OpenCL0") == nullptr) {
            const char * req = std::getenv("LMGGML_REQUIRE_OPENCL");
            if (req != nullptr && std::strcmp(req, "1") == 0) {
                FAIL() << "LMGGML_REQUIRE_OPENCL=1 but no OpenCL device is registered";
            }
            GTEST_SKIP() << "no OpenCL device (opencl plugin not built, or no OpenCL platform such as pocl-opencl-icd)";
        }
        spec_ = GetParam().spec();
        spec_.wtype = GetParam().wtype;
        weights_ = tiny::make_weights(spec_, 1234);
        path_ = lmtest_tmp_path(std::string("ocl_tiny_") + GetParam().name + ".gguf");
        ASSERT_TRUE(tiny::write_gguf(spec_, weights_, path_));
        want_ = tiny::reference_forward(spec_, weights_, kTokens);
        lmllm::ModelParams mp;
        mp.devices = {"OpenCL0"};
        mp.n_gpu_layers = GetParam().n_gpu_layers;
        auto m = lmllm::Model::load(path_, mp);
        ASSERT_TRUE(m.ok()) << m.status().message();
        model_ = std::move(m.value());
    }
    void TearDown() override {
        if (!path_.empty()) {
            std::remove(path_.c_str());
        }
    }

    std::unique_ptr<lmllm::Context> context(uint32_t n_batch, bool all_logits) {
        lmllm::ContextParams cp;
        cp.n_ctx = 64;
        cp.n_batch = n_batch;
        cp.all_logits = all_logits;
        cp.type_k = cp.type_v = GetParam().kv_type;
        cp.flash_attn = GetParam().flash_attn;
        auto c = lmllm::Context::create(*model_, cp);
        EXPECT_TRUE(c.ok()) << c.status().message();
        return c.ok() ? std::move(c.value()) : nullptr;
    }

    tiny::Spec spec_;
    tiny::Weights weights_;
    std::string path_;
    std::vector<std::vector<double>> want_;
    std::unique_ptr<lmllm::Model> model_;
};

TEST_P(OpenCLTinyModel, BatchedAndChunkedMatchReference) {
    for (uint32_t n_batch : {64u, 5u}) {
        auto ctx = context(n_batch, true);
        ASSERT_NE(ctx, nullptr);
        ASSERT_TRUE(ctx->decode(kTokens).ok());
        for (size_t t = 0; t < kTokens.size(); t++) {
            EXPECT_LT(tiny::nmse(ctx->logits(int32_t(t)), want_[t]), GetParam().limit)
                << "n_batch " << n_batch << " token " << t;
        }
    }
}

TEST_P(OpenCLTinyModel, TokenByTokenMatchesReference) {
    auto ctx = context(8, false);
    ASSERT_NE(ctx, nullptr);
    for (size_t t = 0; t < kTokens.size(); t++) {
        ASSERT_TRUE(ctx->decode({kTokens[t]}).ok());
        EXPECT_LT(tiny::nmse(ctx->logits(), want_[t]), GetParam().limit) << "token " << t;
    }
}

// F32 weights: accumulation order and the F16 KV cache separate the device
// from the reference. Quantized weights: the reference uses the dequantized
// values and the device does not round activations, so the limits stay low.
constexpr int kAll = 1000;
INSTANTIATE_TEST_SUITE_P(
    Archs, OpenCLTinyModel,
    testing::Values(
        Case{"llama_f32", tiny::llama_spec, LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, true, kAll, 1e-5},
        Case{"llama_f32_kvf32", tiny::llama_spec, LM_GGML_TYPE_F32, LM_GGML_TYPE_F32, true, kAll, 1e-9},
        Case{"llama_f32_noflash", tiny::llama_spec, LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, false, kAll, 1e-5},
        Case{"llama_q4_0", tiny::llama_spec, LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_F16, true, kAll, 1e-5},
        Case{"llama_q8_0_mixed", tiny::llama_spec, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_F16, true, 1, 1e-3},
        Case{"qwen2_f32", tiny::qwen2_spec, LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, true, kAll, 1e-5},
        Case{"qwen2_q8_0", tiny::qwen2_spec, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_F16, true, kAll, 1e-5},
        Case{"qwen2_q4_1_noflash", tiny::qwen2_spec, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_F16, false, kAll, 1e-5},
        Case{"gemma3_f32", tiny::gemma3_spec, LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, true, kAll, 1e-5},
        Case{"gemma3_f32_kvf32", tiny::gemma3_spec, LM_GGML_TYPE_F32, LM_GGML_TYPE_F32, true, kAll, 1e-8},
        Case{"gemma3_f32_noflash", tiny::gemma3_spec, LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, false, kAll, 1e-5},
        Case{"gemma3_q8_0_mixed", tiny::gemma3_spec, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_F16, true, 1, 1e-3}),
    case_name);

} // namespace

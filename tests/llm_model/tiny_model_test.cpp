// Tiny generated models (llama, qwen2, gemma3) decoded by lmllm and checked
// against the naive double-precision forward pass in tests/common/tiny_reference.cpp: the
// whole sequence in one batch, in several n_batch chunks, and token by
// token through the KV cache.

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <unistd.h>

#include "ggml-backend.h"
#include "lmllm/context.h"
#include "lmllm/model.h"
#include "test_paths.h"
#include "tiny_model.h"

namespace {

const std::vector<int32_t> kTokens = {1, 17, 260, 5, 299, 42, 42, 128, 3, 77, 200, 9};

struct Case {
    const char * name;
    tiny::Spec (*spec)();
    lm_ggml_type wtype;
    lm_ggml_type kv_type;
    double limit;
};

void PrintTo(const Case & c, std::ostream * os) { *os << c.name; }

std::string case_name(const testing::TestParamInfo<Case> & info) { return info.param.name; }

class TinyModel : public testing::TestWithParam<Case> {
protected:
    void SetUp() override {
        spec_ = GetParam().spec();
        spec_.wtype = GetParam().wtype;
        weights_ = tiny::make_weights(spec_, 1234);
        path_ = lmtest_tmp_path(std::string("tiny_") + GetParam().name + ".gguf");
        ASSERT_TRUE(tiny::write_gguf(spec_, weights_, path_));
        want_ = tiny::reference_forward(spec_, weights_, kTokens);
        auto m = lmllm::Model::load(path_, {});
        ASSERT_TRUE(m.ok()) << m.status().message();
        model_ = std::move(m.value());
    }
    void TearDown() override { std::remove(path_.c_str()); }

    std::unique_ptr<lmllm::Context> context(uint32_t n_batch, bool all_logits) {
        lmllm::ContextParams cp;
        cp.n_ctx = 64;
        cp.n_batch = n_batch;
        cp.all_logits = all_logits;
        cp.type_k = cp.type_v = GetParam().kv_type;
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

TEST_P(TinyModel, HParamsFromMetadata) {
    const lmllm::HParams & hp = model_->hparams();
    EXPECT_EQ(hp.arch_name, spec_.arch);
    EXPECT_EQ(hp.n_embd, uint32_t(spec_.n_embd));
    EXPECT_EQ(hp.n_layer, uint32_t(spec_.n_layer));
    EXPECT_EQ(hp.n_head, uint32_t(spec_.n_head));
    EXPECT_EQ(hp.n_head_kv, uint32_t(spec_.n_head_kv));
    EXPECT_EQ(hp.n_embd_head_k, uint32_t(spec_.head_dim));
    EXPECT_EQ(hp.n_ff, uint32_t(spec_.n_ff));
    EXPECT_EQ(hp.n_vocab, uint32_t(spec_.n_vocab));
    EXPECT_EQ(hp.n_ctx_train, uint32_t(spec_.n_ctx_train));
    EXPECT_FLOAT_EQ(hp.rope_freq_base, spec_.rope_base);
    EXPECT_FLOAT_EQ(hp.norm_rms_eps, spec_.eps);
    EXPECT_EQ(hp.rope_type, spec_.arch == "llama" ? 0 : LM_GGML_ROPE_TYPE_NEOX);
    if (spec_.arch == "gemma3") {
        EXPECT_EQ(hp.n_swa, uint32_t(spec_.n_swa));
        EXPECT_EQ(hp.swa_pattern, uint32_t(spec_.swa_pattern));
        EXPECT_FLOAT_EQ(hp.rope_freq_base_swa, spec_.rope_base_swa);
        EXPECT_FLOAT_EQ(hp.rope_freq_scale, 1.0f / spec_.rope_scale_factor);
        EXPECT_FLOAT_EQ(hp.f_final_logit_softcapping, spec_.final_softcap);
    }
    EXPECT_EQ(model_->vocab().n_tokens(), spec_.n_vocab);
}

TEST_P(TinyModel, BatchedMatchesReference) {
    auto ctx = context(64, true);
    ASSERT_NE(ctx, nullptr);
    ASSERT_TRUE(ctx->decode(kTokens).ok());
    EXPECT_EQ(ctx->n_past(), kTokens.size());
    for (size_t t = 0; t < kTokens.size(); t++) {
        const float * got = ctx->logits(int32_t(t));
        ASSERT_NE(got, nullptr);
        const double e = tiny::nmse(got, want_[t]);
        EXPECT_LT(e, GetParam().limit) << "token " << t;
    }
    EXPECT_EQ(ctx->logits(), ctx->logits(int32_t(kTokens.size() - 1)));
}

TEST_P(TinyModel, ChunkedBatchesMatchReference) {
    auto ctx = context(5, true); // 12 tokens in chunks of 5, 5, 2
    ASSERT_NE(ctx, nullptr);
    ASSERT_TRUE(ctx->decode(kTokens).ok());
    for (size_t t = 0; t < kTokens.size(); t++) {
        EXPECT_LT(tiny::nmse(ctx->logits(int32_t(t)), want_[t]), GetParam().limit) << "token " << t;
    }
}

TEST_P(TinyModel, TokenByTokenMatchesReference) {
    auto ctx = context(8, false);
    ASSERT_NE(ctx, nullptr);
    for (size_t t = 0; t < kTokens.size(); t++) {
        ASSERT_TRUE(ctx->decode({kTokens[t]}).ok());
        ASSERT_EQ(ctx->n_past(), t + 1);
        EXPECT_LT(tiny::nmse(ctx->logits(), want_[t]), GetParam().limit) << "token " << t;
    }
    // Cleared, the cache starts over at position 0.
    ctx->clear();
    EXPECT_EQ(ctx->n_past(), 0u);
    ASSERT_TRUE(ctx->decode({kTokens[0], kTokens[1], kTokens[2]}).ok());
    EXPECT_LT(tiny::nmse(ctx->logits(), want_[2]), GetParam().limit);
}

// Generation runs one built graph again while n_kv stays the same, moving
// only its KV stores: 40 tokens cross the 32-cell windows, and after clear()
// the stores move back to cell 0 in a graph of the same shape.
TEST_P(TinyModel, LongTokenByTokenAcrossWindowsAndClear) {
    std::vector<int32_t> seq;
    for (int i = 0; i < 40; i++) {
        seq.push_back((kTokens[size_t(i * 7) % kTokens.size()] + i % 3) % spec_.n_vocab);
    }
    const std::vector<std::vector<double>> want = tiny::reference_forward(spec_, weights_, seq);
    auto ctx = context(8, false);
    ASSERT_NE(ctx, nullptr);
    for (int round = 0; round < 2; round++) {
        const size_t n = round == 0 ? seq.size() : 20;
        for (size_t t = 0; t < n; t++) {
            const lmllm::Status st = ctx->decode({seq[t]});
            ASSERT_TRUE(st.ok()) << st.message();
            EXPECT_LT(tiny::nmse(ctx->logits(), want[t]), GetParam().limit) << "round " << round << " token " << t;
        }
        ctx->clear();
    }
}

TEST_P(TinyModel, PromptThenTokens) {
    auto ctx = context(64, false);
    ASSERT_NE(ctx, nullptr);
    ASSERT_TRUE(ctx->decode({kTokens.begin(), kTokens.begin() + 7}).ok());
    EXPECT_LT(tiny::nmse(ctx->logits(), want_[6]), GetParam().limit);
    EXPECT_EQ(ctx->logits(0), nullptr) << "only the last token's logits are kept";
    ASSERT_TRUE(ctx->decode({kTokens.begin() + 7, kTokens.end()}).ok());
    EXPECT_LT(tiny::nmse(ctx->logits(), want_.back()), GetParam().limit);
}

// F32 weights: only accumulation order and the F16 KV cache separate us
// from the reference. Q8_0: the reference uses the dequantized weights, the
// model also quantizes activations to 8 bits in the products (NMSE ~4e-4
// here; a wrong block scale or layout gives ~1).
INSTANTIATE_TEST_SUITE_P(
    Archs, TinyModel,
    testing::Values(Case{"llama_f32", tiny::llama_spec, LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, 1e-5},
                    Case{"llama_f32_kvf32", tiny::llama_spec, LM_GGML_TYPE_F32, LM_GGML_TYPE_F32, 1e-9},
                    Case{"qwen2_f32", tiny::qwen2_spec, LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, 1e-5},
                    Case{"gemma3_f32", tiny::gemma3_spec, LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, 1e-5},
                    Case{"gemma3_f32_kvf32", tiny::gemma3_spec, LM_GGML_TYPE_F32, LM_GGML_TYPE_F32, 1e-8},
                    Case{"llama_q8_0", tiny::llama_spec, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_F16, 1e-3},
                    Case{"qwen2_q8_0", tiny::qwen2_spec, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_F16, 1e-3}),
    case_name);

} // namespace

// The default model, SmolLM2-135M-Instruct Q4_1: loads zero-copy with the
// expected hyper-parameters and continues text sensibly. (Token-exact and
// perplexity checks against llama.cpp live in smollm2_llamacpp_test.cpp.)

#include <gtest/gtest.h>

#include <string>

#include "lmllm/context.h"
#include "lmllm/model.h"
#include "model_impl.h"
#include "smollm2_util.h"
#include "test_paths.h"

namespace {

TEST(SmolLM2, LoadsWithExpectedHParams) {
    const lmllm::Model * model = smollm2::model();
    ASSERT_NE(model, nullptr) << smollm2::missing_message();
    const lmllm::HParams & hp = model->hparams();
    EXPECT_EQ(hp.arch, lmllm::Arch::LLAMA);
    EXPECT_EQ(hp.n_embd, 576u);
    EXPECT_EQ(hp.n_layer, 30u);
    EXPECT_EQ(hp.n_head, 9u);
    EXPECT_EQ(hp.n_head_kv, 3u);
    EXPECT_EQ(hp.n_embd_head_k, 64u);
    EXPECT_EQ(hp.n_rot, 64u);
    EXPECT_EQ(hp.n_ff, 1536u);
    EXPECT_EQ(hp.n_vocab, 49152u);
    EXPECT_EQ(hp.n_ctx_train, 8192u);
    EXPECT_FLOAT_EQ(hp.rope_freq_base, 100000.0f);
    EXPECT_FLOAT_EQ(hp.norm_rms_eps, 1e-5f);
    EXPECT_EQ(model->description(), "llama 135M Q4_1");
    EXPECT_FALSE(model->chat_template().empty());
}

TEST(SmolLM2, WeightsAreZeroCopy) {
    const lmllm::Model * model = smollm2::model();
    ASSERT_NE(model, nullptr) << smollm2::missing_message();
    const lmllm::Model::Impl & m = model->impl();
    ASSERT_NE(m.mapping, nullptr);
    const uint8_t * lo = m.mapping->data();
    const uint8_t * hi = lo + m.mapping->size();
    size_t n_checked = 0;
    auto inside = [&](const lm_ggml_tensor * t) {
        const auto * p = static_cast<const uint8_t *>(t->data);
        EXPECT_TRUE(p >= lo && p + lm_ggml_nbytes(t) <= hi) << t->name;
        n_checked++;
    };
    inside(m.w.tok_embd);
    inside(m.w.output_norm);
    for (const lmllm::LayerWeights & l : m.w.layers) {
        for (const lm_ggml_tensor * t : {l.attn_norm, l.wq, l.wk, l.wv, l.wo, l.ffn_norm, l.ffn_gate, l.ffn_up, l.ffn_down}) {
            inside(t);
        }
    }
    EXPECT_EQ(n_checked, 2u + 30u * 9u);
    EXPECT_EQ(m.w.output, m.w.tok_embd) << "SmolLM2 ties its output projection to the embeddings";
    EXPECT_EQ(m.w.layers[0].wq->type, LM_GGML_TYPE_Q4_1);
}

// A factual prompt through the model's own tokenizer: the greedy answer
// names the city.
TEST(SmolLM2, GreedyContinuationIsSane) {
    const lmllm::Model * model = smollm2::model();
    ASSERT_NE(model, nullptr) << smollm2::missing_message();
    const std::vector<lmllm::Token> prompt = model->vocab().tokenize("The capital of France is", true, false);
    ASSERT_FALSE(prompt.empty());
    const std::vector<lmllm::Token> out = smollm2::greedy(*model, prompt, 8);
    ASSERT_EQ(out.size(), 8u);
    const std::string text = model->vocab().detokenize(out, false);
    EXPECT_NE(text.find("Paris"), std::string::npos) << "continuation: '" << text << "'";
}

} // namespace

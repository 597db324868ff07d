// Corrupted weights must show: 256 bytes of 0xFF written over the start of one
// layer-0 matrix in a tiny quantized llama (NaN F16 block scales in its first
// rows) make every logit NaN, whichever matrix it is, with flash attention on
// or off, repacked or mapped. Only some products see a NaN in the first rows
// (attn_q, attn_v, ffn_gate/up feed a few NaN channels into the next Q8
// activation block), which a NaN-dropping block max used to lose.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gguf.h"
#include "lmllm/context.h"
#include "lmllm/model.h"
#include "test_paths.h"
#include "tiny_model.h"

namespace {

// Overwrites the first n bytes of tensor `name`'s data in the GGUF file.
bool poison_tensor(const std::string & path, const std::string & name, size_t n) {
    const lm_gguf_init_params ip = {true, nullptr};
    lm_gguf_context * g = lm_gguf_init_from_file(path.c_str(), ip);
    if (g == nullptr) return false;
    const int64_t id = lm_gguf_find_tensor(g, name.c_str());
    const size_t off = id < 0 ? 0 : lm_gguf_get_data_offset(g) + lm_gguf_get_tensor_offset(g, id);
    lm_gguf_free(g);
    if (id < 0) return false;
    FILE * f = std::fopen(path.c_str(), "r+b");
    if (f == nullptr) return false;
    const std::vector<unsigned char> ff(n, 0xFF);
    const bool ok = std::fseek(f, long(off), SEEK_SET) == 0 && std::fwrite(ff.data(), 1, n, f) == n;
    return std::fclose(f) == 0 && ok;
}

class NanWeights : public testing::TestWithParam<lm_ggml_type> {};

TEST_P(NanWeights, EveryPoisonedMatrixGivesNanLogits) {
    tiny::Spec spec = tiny::llama_spec();
    spec.wtype = GetParam();
    const tiny::Weights w = tiny::make_weights(spec, 1234);
    const std::vector<int32_t> tokens = {1, 17, 260};
    for (const char * t : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}) {
        const std::string name = std::string("blk.0.") + t + ".weight";
        const std::string path =
            lmtest_tmp_path(std::string("nan_") + lm_ggml_type_name(GetParam()) + "_" + t + ".gguf");
        ASSERT_TRUE(tiny::write_gguf(spec, w, path));
        ASSERT_TRUE(poison_tensor(path, name, 256)) << name;
        for (bool repack : {false, true}) {
            lmllm::ModelParams mp;
            mp.repack = repack;
            auto m = lmllm::Model::load(path, mp);
            ASSERT_TRUE(m.ok()) << m.status().message();
            for (bool fa : {false, true}) {
                SCOPED_TRACE(name + (repack ? " repacked" : " mapped") + (fa ? " flash" : " separate ops"));
                lmllm::ContextParams cp;
                cp.n_ctx = 64;
                cp.n_batch = 64;
                cp.flash_attn = fa;
                auto c = lmllm::Context::create(*m.value(), cp);
                ASSERT_TRUE(c.ok()) << c.status().message();
                ASSERT_TRUE(c.value()->decode(tokens).ok());
                const float * logits = c.value()->logits();
                int n_nan = 0;
                for (int i = 0; i < spec.n_vocab; i++) n_nan += std::isnan(logits[i]) ? 1 : 0;
                EXPECT_EQ(n_nan, spec.n_vocab);
            }
        }
        std::remove(path.c_str());
    }
}

INSTANTIATE_TEST_SUITE_P(Types, NanWeights, testing::Values(LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q8_0),
                         [](const testing::TestParamInfo<lm_ggml_type> & i) {
                             return std::string(lm_ggml_type_name(i.param));
                         });

} // namespace

// Loading: clear errors for bad files and metadata, zero-copy CPU weights,
// reading without mmap, progress and cancel, offload to a second device
// (the refdev plugin), and context limits.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "ggml-backend.h"
#include "lmllm/context.h"
#include "lmllm/model.h"
#include "model_impl.h"
#include "test_paths.h"
#include "tiny_model.h"

namespace {

const std::vector<int32_t> kTokens = {1, 100, 7, 260, 33, 299, 5, 18};

// Writes spec's model to a scratch file and tries to load it.
lmllm::Result<std::unique_ptr<lmllm::Model>> load_spec(const tiny::Spec & spec, const std::string & name,
                                                       const lmllm::ModelParams & params = {}) {
    const std::string path = lmtest_tmp_path(name);
    EXPECT_TRUE(tiny::write_gguf(spec, tiny::make_weights(spec, 7), path));
    auto m = lmllm::Model::load(path, params);
    std::remove(path.c_str());
    return m;
}

// The logits after decoding kTokens (empty, with a failure, if that fails).
std::vector<float> decoded_logits(const lmllm::Model & m, int n_vocab) {
    auto c = lmllm::Context::create(m, {});
    if (!c.ok()) {
        ADD_FAILURE() << c.status().message();
        return {};
    }
    if (!c.value()->decode(kTokens).ok()) {
        ADD_FAILURE() << "decode failed";
        return {};
    }
    return std::vector<float>(c.value()->logits(), c.value()->logits() + n_vocab);
}

void expect_error(const lmllm::Result<std::unique_ptr<lmllm::Model>> & r, const std::string & part) {
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(part), std::string::npos) << "message: " << r.status().message();
}

TEST(ModelLoad, MissingFile) {
    expect_error(lmllm::Model::load("/nonexistent/dir/model.gguf", {}), "cannot open '/nonexistent/dir/model.gguf'");
}

TEST(ModelLoad, NotGguf) {
    const std::string path = lmtest_tmp_path("text.gguf");
    std::ofstream(path) << "this is not a model file at all";
    expect_error(lmllm::Model::load(path, {}), "not a GGUF file");
    std::remove(path.c_str());
}

TEST(ModelLoad, TruncatedGguf) {
    const tiny::Spec spec = tiny::llama_spec();
    const std::string path = lmtest_tmp_path("trunc.gguf");
    ASSERT_TRUE(tiny::write_gguf(spec, tiny::make_weights(spec, 7), path));
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size() / 2));
    auto r = lmllm::Model::load(path, {});
    EXPECT_FALSE(r.ok());
    std::remove(path.c_str());
}

TEST(ModelLoad, UnsupportedArchitecture) {
    tiny::Spec spec = tiny::llama_spec();
    spec.arch_override = "xyz";
    expect_error(load_spec(spec, "xyz.gguf"), "unsupported architecture 'xyz'");
}

TEST(ModelLoad, MissingKey) {
    tiny::Spec spec = tiny::llama_spec();
    spec.drop_keys.insert("llama.embedding_length");
    expect_error(load_spec(spec, "nokey.gguf"), "missing key 'llama.embedding_length'");
}

TEST(ModelLoad, MissingTensor) {
    tiny::Spec spec = tiny::qwen2_spec();
    spec.drop_tensors.insert("blk.1.attn_k.bias"); // required by qwen2
    expect_error(load_spec(spec, "notensor.gguf"), "missing tensor 'blk.1.attn_k.bias'");
}

TEST(ModelLoad, WrongShape) {
    tiny::Spec spec = tiny::llama_spec();
    spec.reshape["blk.0.ffn_up.weight"] = {64, 95};
    expect_error(load_spec(spec, "shape.gguf"), "tensor 'blk.0.ffn_up.weight' has shape (64, 95), expected (64, 96)");
}

TEST(ModelLoad, InconsistentHeads) {
    tiny::Spec spec = tiny::llama_spec();
    spec.n_head_kv = 3; // 4 heads cannot share 3 kv heads
    expect_error(load_spec(spec, "heads.gguf"), "not a multiple of head_count_kv");
}

// Checks of some weights per layer: inside the file mapping exactly when
// mapped(layer, tensor); weight usage either way.
template <class Mapped> void expect_mapped(const lmllm::Model::Impl & m, Mapped mapped) {
    const uint8_t * lo = m.mapping->data();
    const uint8_t * hi = lo + m.mapping->size();
    for (const lmllm::LayerWeights & l : m.w.layers) {
        for (const lm_ggml_tensor * t : {l.wq, l.wk, l.ffn_down, l.attn_norm}) {
            const auto * p = static_cast<const uint8_t *>(t->data);
            EXPECT_EQ(p >= lo && p + lm_ggml_nbytes(t) <= hi, mapped(l, t)) << t->name;
            EXPECT_EQ(lm_ggml_backend_buffer_get_usage(t->buffer), LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS) << t->name;
        }
    }
}

// repack off: every CPU weight aliases the mapping.
TEST(ModelLoad, ZeroCopyWeightsOnCpu) {
    lmllm::ModelParams mp;
    mp.repack = false;
    auto r = load_spec(tiny::llama_spec(), "zc.gguf", mp);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const lmllm::Model::Impl & m = r.value()->impl();
    ASSERT_NE(m.mapping, nullptr);
    expect_mapped(m, [](const lmllm::LayerWeights &, const lm_ggml_tensor *) { return true; });
    EXPECT_EQ(m.w.output, m.w.tok_embd) << "tied output shares the embedding bytes";
    EXPECT_EQ(r.value()->description().rfind("llama ", 0), 0u) << r.value()->description();
}

// repack on (the default): matrices are copies held in CPU memory, the
// norms still alias the mapping.
TEST(ModelLoad, RepackCopiesMatricesOnly) {
    auto r = load_spec(tiny::llama_spec(), "rp.gguf");
    ASSERT_TRUE(r.ok()) << r.status().message();
    const lmllm::Model::Impl & m = r.value()->impl();
    ASSERT_NE(m.mapping, nullptr);
    expect_mapped(m, [](const lmllm::LayerWeights & l, const lm_ggml_tensor * t) { return t == l.attn_norm; });
}

// Same logits with the file read into an allocated buffer.
TEST(ModelLoad, NoMmapMatchesMmap) {
    const tiny::Spec spec = tiny::qwen2_spec();
    const std::string path = lmtest_tmp_path("nommap.gguf");
    ASSERT_TRUE(tiny::write_gguf(spec, tiny::make_weights(spec, 9), path));
    lmllm::ModelParams no_mmap;
    no_mmap.use_mmap = false;
    std::vector<std::vector<float>> logits;
    for (const lmllm::ModelParams & mp : {lmllm::ModelParams(), no_mmap}) {
        auto m = lmllm::Model::load(path, mp);
        ASSERT_TRUE(m.ok()) << m.status().message();
        EXPECT_EQ(m.value()->impl().mapping != nullptr, mp.use_mmap);
        logits.push_back(decoded_logits(*m.value(), spec.n_vocab));
    }
    EXPECT_EQ(logits[0], logits[1]);
    std::remove(path.c_str());
}

// A file with general.alignment = 1: the tensors it leaves off 32-byte
// boundaries (what the kernels assume of weights) are copied, not mapped;
// the logits are those of the same weights in an aligned file.
TEST(ModelLoad, MisalignedTensorsAreCopied) {
    tiny::Spec spec = tiny::llama_spec();
    const tiny::Weights w = tiny::make_weights(spec, 11);
    const std::string aligned = lmtest_tmp_path("aligned.gguf"), odd = lmtest_tmp_path("odd.gguf");
    ASSERT_TRUE(tiny::write_gguf(spec, w, aligned));
    spec.alignment = 1;
    ASSERT_TRUE(tiny::write_gguf(spec, w, odd));
    lmllm::ModelParams mp;
    mp.repack = false; // else the matrices are copies anyway
    std::vector<std::vector<float>> logits;
    for (const std::string & path : {aligned, odd}) {
        auto m = lmllm::Model::load(path, mp);
        ASSERT_TRUE(m.ok()) << m.status().message();
        const lmllm::Model::Impl & impl = m.value()->impl();
        ASSERT_NE(impl.mapping, nullptr);
        const uint8_t * lo = impl.mapping->data();
        const uint8_t * hi = lo + impl.mapping->size();
        int copied = 0;
        for (const lmllm::LayerWeights & l : impl.w.layers) {
            for (const lm_ggml_tensor * t : {l.wq, l.wk, l.wv, l.wo, l.ffn_gate, l.ffn_down, l.attn_norm}) {
                const auto * p = static_cast<const uint8_t *>(t->data);
                EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 32, 0u) << path << ": " << t->name;
                copied += p < lo || p >= hi;
            }
        }
        if (path == aligned) {
            EXPECT_EQ(copied, 0);
        } else {
            EXPECT_GT(copied, 0) << "the test file should leave some tensors misaligned";
        }
        logits.push_back(decoded_logits(*m.value(), spec.n_vocab));
    }
    EXPECT_EQ(logits[0], logits[1]);
    std::remove(aligned.c_str());
    std::remove(odd.c_str());
}

TEST(ModelLoad, ProgressAndCancel) {
    const tiny::Spec spec = tiny::llama_spec();
    std::vector<float> seen;
    lmllm::ModelParams mp;
    mp.progress = [&](float p) {
        seen.push_back(p);
        return true;
    };
    ASSERT_TRUE(load_spec(spec, "progress.gguf", mp).ok());
    ASSERT_GE(seen.size(), 2u);
    for (size_t i = 1; i < seen.size(); i++) {
        EXPECT_GE(seen[i], seen[i - 1]);
    }
    EXPECT_FLOAT_EQ(seen.back(), 1.0f);

    int calls = 0;
    mp.progress = [&](float) { return ++calls < 3; };
    expect_error(load_spec(spec, "cancel.gguf", mp), "cancelled");
    EXPECT_EQ(calls, 3);
}

TEST(ModelLoad, UnknownDevice) {
    lmllm::ModelParams mp;
    mp.devices = {"NO_SUCH_DEVICE"};
    mp.n_gpu_layers = 1;
    expect_error(load_spec(tiny::llama_spec(), "nodev.gguf", mp), "unknown device 'NO_SUCH_DEVICE'");
}

// The last layer and the output on the refdev plugin (its own memory): the
// scheduler splits the graph and the logits stay those of the reference.
// A tiny model with its last layer offloaded to REFDEV0 (the refdev plugin),
// and the reference logits of kTokens; false (test skipped) without the plugin.
bool load_offloaded(const tiny::Spec & spec, uint64_t seed, const char * file,
                    lmllm::Result<std::unique_ptr<lmllm::Model>> * m, std::vector<std::vector<double>> * want) {
    lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR);
    if (lm_ggml_backend_dev_by_name("REFDEV0") == nullptr) return false;
    const tiny::Weights w = tiny::make_weights(spec, seed);
    const std::string path = lmtest_tmp_path(file);
    EXPECT_TRUE(tiny::write_gguf(spec, w, path));
    *want = tiny::reference_forward(spec, w, kTokens);
    lmllm::ModelParams mp;
    mp.devices = {"REFDEV0"};
    mp.n_gpu_layers = 1;
    *m = lmllm::Model::load(path, mp);
    std::remove(path.c_str());
    return true;
}

// Decodes kTokens in a fresh context and checks every position's logits.
void expect_logits(const lmllm::Model & m, const std::vector<std::vector<double>> & want, double limit) {
    lmllm::ContextParams cp;
    cp.n_ctx = 32;
    cp.all_logits = true;
    cp.type_k = cp.type_v = LM_GGML_TYPE_F32;
    auto c = lmllm::Context::create(m, cp);
    ASSERT_TRUE(c.ok()) << c.status().message();
    ASSERT_TRUE(c.value()->decode(kTokens).ok());
    for (size_t t = 0; t < kTokens.size(); t++) {
        EXPECT_LT(tiny::nmse(c.value()->logits(int32_t(t)), want[t]), limit) << "token " << t;
    }
}

TEST(ModelLoad, OffloadToSecondDevice) {
    lmllm::Result<std::unique_ptr<lmllm::Model>> m = lmllm::Status::error("not loaded");
    std::vector<std::vector<double>> want;
    if (!load_offloaded(tiny::llama_spec(), 11, "offload.gguf", &m, &want)) {
        GTEST_SKIP() << "refdev plugin not built in " << LMGGML_PLUGIN_DIR;
    }
    ASSERT_TRUE(m.ok()) << m.status().message();
    const lmllm::Model::Impl & mi = m.value()->impl();
    ASSERT_EQ(mi.devs.size(), 1u);
    EXPECT_FALSE(lm_ggml_backend_buffer_is_host(mi.w.layers[1].wq->buffer)) << "layer 1 lives on the device";
    EXPECT_TRUE(lm_ggml_backend_buffer_is_host(mi.w.layers[0].wq->buffer)) << "layer 0 stays on the CPU";
    EXPECT_FALSE(lm_ggml_backend_buffer_is_host(mi.w.output->buffer)) << "the output (a tied copy) is on the device";

    using counter_fn = uint64_t (*)();
    auto refdev_nodes = (counter_fn) lm_ggml_backend_reg_get_proc_address(lm_ggml_backend_dev_backend_reg(mi.devs[0]),
                                                                          "lm_ggml_backend_refdev_n_nodes_computed");
    ASSERT_NE(refdev_nodes, nullptr);
    const uint64_t nodes_before = refdev_nodes();

    expect_logits(*m.value(), want, 1e-9);
    EXPECT_GT(refdev_nodes(), nodes_before) << "the device computed part of the graph";
}

// Quantized weights the device cannot multiply with (refdev: F32 only) stay
// on the CPU, as llama.cpp does; the rest of the offloaded layer still goes
// to the device and the logits stay those of the reference.
TEST(ModelLoad, OffloadKeepsWeightsTheDeviceCannotUseOnTheCpu) {
    tiny::Spec spec = tiny::llama_spec();
    spec.wtype = LM_GGML_TYPE_Q8_0;
    lmllm::Result<std::unique_ptr<lmllm::Model>> m = lmllm::Status::error("not loaded");
    std::vector<std::vector<double>> want;
    if (!load_offloaded(spec, 12, "offload_q8.gguf", &m, &want)) {
        GTEST_SKIP() << "refdev plugin not built in " << LMGGML_PLUGIN_DIR;
    }
    ASSERT_TRUE(m.ok()) << m.status().message();
    const lmllm::Model::Impl & mi = m.value()->impl();
    ASSERT_EQ(mi.devs.size(), 1u);
    EXPECT_EQ(lm_ggml_backend_buft_get_device(lm_ggml_backend_buffer_get_type(mi.w.layers[1].wq->buffer)),
              lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU))
        << "a Q8_0 matrix stays on the CPU (in its repacked buffer type where it has one)";
    EXPECT_FALSE(lm_ggml_backend_buffer_is_host(mi.w.layers[1].attn_norm->buffer)) << "the F32 norm goes to the device";

    expect_logits(*m.value(), want, 5e-4); // Q8_0 products round activations (SPEC: 5e-4 for quantized MUL_MAT)
}

TEST(ContextLimits, PromptLongerThanContext) {
    auto m = load_spec(tiny::llama_spec(), "limits.gguf");
    ASSERT_TRUE(m.ok()) << m.status().message();
    lmllm::ContextParams cp;
    cp.n_ctx = 16;
    auto c = lmllm::Context::create(*m.value(), cp);
    ASSERT_TRUE(c.ok()) << c.status().message();
    std::vector<int32_t> long_prompt(20, 7);
    lmllm::Status s = c.value()->decode(long_prompt);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), "prompt of 20 tokens does not fit in the context of 16");
    EXPECT_EQ(c.value()->n_past(), 0u);

    ASSERT_TRUE(c.value()->decode(std::vector<int32_t>(10, 7)).ok());
    s = c.value()->decode(std::vector<int32_t>(7, 7));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("does not fit in the context of 16"), std::string::npos) << s.message();
    EXPECT_EQ(c.value()->n_past(), 10u) << "a refused decode leaves the cache as it was";
    EXPECT_TRUE(c.value()->decode(std::vector<int32_t>(6, 7)).ok()) << "exactly full is fine";
    EXPECT_EQ(c.value()->n_past(), 16u);
}

TEST(ContextLimits, TokenIdOutOfRange) {
    auto m = load_spec(tiny::llama_spec(), "range.gguf");
    ASSERT_TRUE(m.ok()) << m.status().message();
    auto c = lmllm::Context::create(*m.value(), {});
    ASSERT_TRUE(c.ok());
    for (int32_t bad : {300, -1, 1 << 30}) {
        lmllm::Status s = c.value()->decode({1, bad});
        ASSERT_FALSE(s.ok());
        EXPECT_NE(s.message().find("out of range"), std::string::npos) << s.message();
    }
    EXPECT_FALSE(c.value()->decode({}).ok());
    EXPECT_EQ(c.value()->n_past(), 0u);
    EXPECT_EQ(c.value()->logits(), nullptr);
}

TEST(ContextLimits, ContextDefaultsToTrainingLength) {
    auto m = load_spec(tiny::llama_spec(), "defctx.gguf");
    ASSERT_TRUE(m.ok());
    lmllm::ContextParams cp;
    cp.n_ctx = 0;
    auto c = lmllm::Context::create(*m.value(), cp);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c.value()->n_ctx(), 256u);
}

} // namespace

// A tiny model split over several devices (ModelParams::devices with
// tensor_split): the refdev plugin's REFDEV0 in this process, and two RPC
// servers started here on 127.0.0.1, each serving the CPU, whose devices
// join the registry through the RPC plugin. (Not REFDEV0 behind a server:
// the RPC client's supports_op cannot ask the server's device, which then
// refuses the norms refdev lacks.) Each layer's weights
// must sit on its device, and the logits and greedy tokens must be those of
// the CPU alone (tie-aware) and of the double-precision reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "ggml-backend-impl.h"
#include "ggml-backend.h"
#include "ggml-rpc.h"
#include "lmllm/context.h"
#include "kv_cache.h"
#include "lmllm/model.h"
#include "model_impl.h"
#include "test_paths.h"
#include "tiny_model.h"

namespace {

const std::vector<int32_t> kTokens = {1, 100, 7, 260, 33, 299, 5, 18};

// REFDEV0 and the names of two remote devices (the CPU behind two RPC
// servers), or an empty list when a plugin is missing.
std::vector<std::string> devices_or_skip() {
    static const std::vector<std::string> names = [] {
        lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR);
        lm_ggml_backend_dev_t cpu = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
        lm_ggml_backend_dev_t refdev = lm_ggml_backend_dev_by_name("REFDEV0");
        lm_ggml_backend_reg_t rpc = lm_ggml_backend_reg_by_name("RPC");
        auto start = rpc ? reinterpret_cast<decltype(&lm_ggml_backend_rpc_server_start)>(
                               lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_server_start"))
                         : nullptr;
        auto port_of = rpc ? reinterpret_cast<decltype(&lm_ggml_backend_rpc_server_port)>(
                                 lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_server_port"))
                           : nullptr;
        auto add_server = rpc ? reinterpret_cast<decltype(&lm_ggml_backend_rpc_add_server)>(
                                    lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_add_server"))
                              : nullptr;
        auto stop = rpc ? reinterpret_cast<decltype(&lm_ggml_backend_rpc_server_stop)>(
                              lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_server_stop"))
                        : nullptr;
        if (cpu == nullptr || refdev == nullptr || start == nullptr || port_of == nullptr || add_server == nullptr ||
            stop == nullptr) {
            return std::vector<std::string>{};
        }
        // the servers live until the process ends, then are stopped (this
        // static is made after the registry's, so it goes before it)
        struct Servers {
            decltype(stop) stop_fn;
            std::vector<lm_ggml_backend_rpc_server_t> all;
            ~Servers() {
                for (lm_ggml_backend_rpc_server_t s : all) stop_fn(s);
            }
        };
        static Servers servers{stop, {}};
        std::vector<std::string> out = {"REFDEV0"};
        for (lm_ggml_backend_dev_t served : {cpu, cpu}) {
            lm_ggml_backend_rpc_server_t s = start("127.0.0.1:0", nullptr, 2, 1, &served);
            if (s == nullptr) {
                return std::vector<std::string>{};
            }
            servers.all.push_back(s);
            lm_ggml_backend_reg_t reg = add_server(("127.0.0.1:" + std::to_string(port_of(s))).c_str());
            if (reg == nullptr || lm_ggml_backend_reg_dev_count(reg) != 1) {
                return std::vector<std::string>{};
            }
            lm_ggml_backend_register(reg);
            out.push_back(lm_ggml_backend_dev_name(lm_ggml_backend_reg_dev_get(reg, 0)));
        }
        return out;
    }();
    return names;
}

#define DEVICES_OR_SKIP(v)                                                                                             \
    const std::vector<std::string> v = devices_or_skip();                                                              \
    if (v.empty()) GTEST_SKIP() << "the refdev and RPC plugins are not built in " << LMGGML_PLUGIN_DIR

tiny::Spec six_layers() {
    tiny::Spec spec = tiny::llama_spec();
    spec.n_layer = 6;
    return spec;
}

struct Loaded {
    std::unique_ptr<lmllm::Model> model;
    std::string error;
};

Loaded load(const tiny::Spec & spec, const std::string & file, const lmllm::ModelParams & mp) {
    const std::string path = lmtest_tmp_path(file);
    EXPECT_TRUE(tiny::write_gguf(spec, tiny::make_weights(spec, 21), path));
    auto r = lmllm::Model::load(path, mp);
    std::remove(path.c_str());
    Loaded l;
    if (r.ok()) {
        l.model = std::move(r.value());
    } else {
        l.error = r.status().message();
    }
    return l;
}

std::string device_of(const lm_ggml_tensor * t) {
    return lm_ggml_backend_dev_name(lm_ggml_backend_buft_get_device(lm_ggml_backend_buffer_get_type(t->buffer)));
}

// Logits of every token of kTokens, then 8 greedy tokens after them
// (flash_attn off: the remote layers' caches live on their servers).
struct Outcome {
    std::vector<std::vector<float>> logits;
    std::vector<std::vector<float>> step_logits; // before each greedy token
    std::vector<int32_t> greedy;
};

Outcome run(const lmllm::Model & m, bool flash_attn = true) {
    Outcome r;
    lmllm::ContextParams cp;
    cp.flash_attn = flash_attn;
    cp.n_ctx = 64;
    cp.all_logits = true;
    cp.type_k = cp.type_v = LM_GGML_TYPE_F32;
    auto c = lmllm::Context::create(m, cp);
    if (!c.ok()) {
        ADD_FAILURE() << c.status().message();
        return r;
    }
    lmllm::Context & ctx = *c.value();
    if (!ctx.decode(kTokens).ok()) {
        ADD_FAILURE() << "decode failed";
        return r;
    }
    const int n_vocab = ctx.n_vocab();
    for (size_t t = 0; t < kTokens.size(); t++) {
        r.logits.emplace_back(ctx.logits(int32_t(t)), ctx.logits(int32_t(t)) + n_vocab);
    }
    for (int i = 0; i < 8; i++) {
        const float * l = ctx.logits();
        r.step_logits.emplace_back(l, l + n_vocab);
        const int32_t next = int32_t(std::max_element(l, l + n_vocab) - l);
        r.greedy.push_back(next);
        if (!ctx.decode({next}).ok()) {
            ADD_FAILURE() << "decode of a generated token failed";
            break;
        }
    }
    return r;
}

// Logits within tol of the CPU's; greedy tokens the same until a step where
// the CPU's own best two were within tol (a tie either may break).
void expect_same_as_cpu(const Outcome & got, const Outcome & cpu, double tol) {
    ASSERT_EQ(got.logits.size(), cpu.logits.size());
    for (size_t t = 0; t < cpu.logits.size(); t++) {
        for (size_t i = 0; i < cpu.logits[t].size(); i++) {
            ASSERT_NEAR(got.logits[t][i], cpu.logits[t][i], tol) << "token " << t << " logit " << i;
        }
    }
    ASSERT_EQ(got.greedy.size(), cpu.greedy.size());
    for (size_t i = 0; i < cpu.greedy.size(); i++) {
        if (got.greedy[i] != cpu.greedy[i]) {
            const std::vector<float> & l = cpu.step_logits[i];
            EXPECT_LT(std::abs(l[size_t(got.greedy[i])] - l[size_t(cpu.greedy[i])]), tol)
                << "step " << i << ": not a tie";
            return; // the sequences part here
        }
    }
}

TEST(MultiDevice, ThreeDevicesEvenSplitGiveTheCpusTokens) {
    DEVICES_OR_SKIP(dev);
    const tiny::Spec spec = six_layers();
    Loaded cpu = load(spec, "md_cpu.gguf", {});
    ASSERT_TRUE(cpu.model) << cpu.error;
    lmllm::ModelParams mp;
    mp.devices = dev; // REFDEV0, the two remote CPUs
    mp.n_gpu_layers = -1;
    mp.tensor_split = {1, 1, 1};
    Loaded split = load(spec, "md_split.gguf", mp);
    ASSERT_TRUE(split.model) << split.error;
    EXPECT_EQ(split.model->placement(),
              "layers 0-1: " + dev[0] + ", 2-3: " + dev[1] + ", 4-5: " + dev[2] + "; output: " + dev[2]);
    const lmllm::Model::Impl & mi = split.model->impl();
    for (uint32_t il = 0; il < 6; il++) {
        EXPECT_EQ(device_of(mi.w.layers[il].wq), dev[il / 2]) << "layer " << il;
        EXPECT_EQ(device_of(mi.w.layers[il].ffn_norm), dev[il / 2]) << "layer " << il;
    }
    EXPECT_EQ(device_of(mi.w.output), dev[2]) << "the output goes with the last layer";
    EXPECT_EQ(device_of(mi.w.tok_embd), "CPU");

    // each layer's cache on its layer's device where that device runs the
    // ops over it, else on the CPU: refdev lacks them; the RPC devices take
    // the separate products but not FLASH_ATTN_EXT with lmllm's F32 mask
    for (bool fa : {false, true}) {
        const auto kv_dev = lmllm::KvCache::layer_devices(mi, 32, LM_GGML_TYPE_F16, LM_GGML_TYPE_F16, fa);
        auto kv = lmllm::KvCache::create(mi, 32, LM_GGML_TYPE_F16, LM_GGML_TYPE_F16, kv_dev);
        ASSERT_TRUE(kv.ok()) << kv.status().message();
        for (uint32_t il = 0; il < 6; il++) {
            const std::string want = il >= 2 && !fa ? dev[il / 2] : "CPU";
            EXPECT_EQ(lm_ggml_backend_dev_name(kv_dev[il]), want) << "layer " << il << " fa " << fa;
            EXPECT_EQ(device_of(kv.value()->k(il)), want) << "layer " << il;
            EXPECT_EQ(device_of(kv.value()->v(il)), want) << "layer " << il;
        }
    }

    const Outcome want = run(*cpu.model), got = run(*split.model);
    const tiny::Weights w = tiny::make_weights(spec, 21);
    const auto ref = tiny::reference_forward(spec, w, kTokens);
    for (size_t t = 0; t < kTokens.size(); t++) {
        EXPECT_LT(tiny::nmse(got.logits[t].data(), ref[t]), 1e-9) << "token " << t;
    }
    expect_same_as_cpu(got, want, 1e-4);
    expect_same_as_cpu(run(*split.model, false), run(*cpu.model, false), 1e-4);
}

// -ngl 4 of 6: layers 0-1 stay on the CPU; the CPU listed among the devices
// takes its share; a zero share gets nothing (and no backend).
TEST(MultiDevice, PartialOffloadWithTheCpuListedAndAZeroShare) {
    DEVICES_OR_SKIP(dev);
    const tiny::Spec spec = six_layers();
    Loaded cpu = load(spec, "md_cpu2.gguf", {});
    ASSERT_TRUE(cpu.model) << cpu.error;
    lmllm::ModelParams mp;
    mp.devices = {dev[1], "CPU", dev[0], dev[2]};
    mp.n_gpu_layers = 4;
    mp.tensor_split = {1, 1, 0, 2};
    Loaded split = load(spec, "md_split2.gguf", mp);
    ASSERT_TRUE(split.model) << split.error;
    EXPECT_EQ(split.model->placement(),
              "layers 0-1: CPU, 2: " + dev[1] + ", 3: CPU, 4-5: " + dev[2] + "; output: " + dev[2]);
    EXPECT_EQ(split.model->impl().devs.size(), 2u) << "REFDEV0 took no layer";
    expect_same_as_cpu(run(*split.model), run(*cpu.model), 1e-4);
}

// Without tensor_split the layers are split by the devices' free memory;
// whatever the shares, every layer lands on a listed device, in list order.
TEST(MultiDevice, DefaultSplitKeepsTheListOrder) {
    DEVICES_OR_SKIP(dev);
    lmllm::ModelParams mp;
    mp.devices = {dev[1], dev[2]};
    mp.n_gpu_layers = -1;
    Loaded split = load(six_layers(), "md_default.gguf", mp);
    ASSERT_TRUE(split.model) << split.error;
    const lmllm::Model::Impl & mi = split.model->impl();
    ASSERT_EQ(mi.layer_dev.size(), 6u);
    int last = 0;
    for (uint32_t il = 0; il < 6; il++) {
        const std::string name = lm_ggml_backend_dev_name(mi.layer_dev[il]);
        const int idx = name == dev[1] ? 1 : name == dev[2] ? 2 : -1;
        ASSERT_GE(idx, last) << "layer " << il << " on " << name;
        last = idx;
    }
}

TEST(MultiDevice, BadSplitsAreRefused) {
    DEVICES_OR_SKIP(dev);
    lmllm::ModelParams mp;
    mp.devices = {dev[1], dev[2]};
    mp.n_gpu_layers = -1;
    mp.tensor_split = {1, 1, 1};
    Loaded l = load(six_layers(), "md_bad1.gguf", mp);
    EXPECT_FALSE(l.model);
    EXPECT_NE(l.error.find("--tensor-split has 3 proportions for 2 devices"), std::string::npos) << l.error;
    mp.tensor_split = {0, 0};
    l = load(six_layers(), "md_bad2.gguf", mp);
    EXPECT_FALSE(l.model);
    EXPECT_NE(l.error.find("every proportion is zero"), std::string::npos) << l.error;
    mp.tensor_split = {1, -2};
    l = load(six_layers(), "md_bad3.gguf", mp);
    EXPECT_FALSE(l.model);
    EXPECT_NE(l.error.find(">= 0"), std::string::npos) << l.error;
    mp.tensor_split = {};
    mp.devices = {dev[1], dev[1]};
    l = load(six_layers(), "md_bad4.gguf", mp);
    EXPECT_FALSE(l.model);
    EXPECT_NE(l.error.find("listed twice"), std::string::npos) << l.error;
}

} // namespace

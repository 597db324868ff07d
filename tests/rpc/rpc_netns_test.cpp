// Several machines, for real: three `lmggml rpc-server` processes, each in a
// network namespace of its own (rpc_netns.h), reached over veth links and
// requiring a key; this process is the client. A tiny token model with one
// layer per server (the embeddings and the output stay here) must give the
// tokens and logits of the same model run locally; then one server is killed
// mid-run, and the next step must fail, quickly, without a crash.

#include "rpc_netns.h"
#include "rpc-client.h"
#include "rpc-net.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-rpc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sys/stat.h>
#include <thread>

namespace {

constexpr int kVocab = 48, kEmbd = 32, kFf = 64, kLayers = 3, kSteps = 8;

struct HostWeights {
    std::vector<float> emb, out, norm_out;
    std::vector<float> norm[kLayers], w1[kLayers], w2[kLayers];
};

HostWeights make_weights() {
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.0f, 0.3f);
    auto fill = [&](std::vector<float> & v, size_t n, float bias = 0.0f) {
        v.resize(n);
        for (float & x : v) x = bias + nd(rng);
    };
    HostWeights w;
    fill(w.emb, kEmbd * kVocab);
    fill(w.out, kEmbd * kVocab);
    fill(w.norm_out, kEmbd, 1.0f);
    for (int l = 0; l < kLayers; l++) {
        fill(w.norm[l], kEmbd, 1.0f);
        fill(w.w1[l], kEmbd * kFf);
        fill(w.w2[l], kFf * kEmbd);
    }
    return w;
}

// The model's weights, layer l's in a buffer of layer_be[l], the rest on the
// CPU; step() runs one token through the scheduler.
class TinyModel {
public:
    TinyModel(const HostWeights & hw, std::vector<lm_ggml_backend_t> layer_be, lm_ggml_backend_t cpu) {
        lm_ggml_init_params ip = {lm_ggml_tensor_overhead() * 8, nullptr, true};
        ctx_cpu_ = lm_ggml_init(ip);
        emb_ = lm_ggml_new_tensor_2d(ctx_cpu_, LM_GGML_TYPE_F32, kEmbd, kVocab);
        out_ = lm_ggml_new_tensor_2d(ctx_cpu_, LM_GGML_TYPE_F32, kEmbd, kVocab);
        norm_out_ = lm_ggml_new_tensor_1d(ctx_cpu_, LM_GGML_TYPE_F32, kEmbd);
        bufs_.push_back(lm_ggml_backend_alloc_ctx_tensors(ctx_cpu_, cpu));
        for (int l = 0; l < kLayers; l++) {
            ctx_l_[l] = lm_ggml_init(ip);
            norm_[l] = lm_ggml_new_tensor_1d(ctx_l_[l], LM_GGML_TYPE_F32, kEmbd);
            w1_[l] = lm_ggml_new_tensor_2d(ctx_l_[l], LM_GGML_TYPE_F32, kEmbd, kFf);
            w2_[l] = lm_ggml_new_tensor_2d(ctx_l_[l], LM_GGML_TYPE_F32, kFf, kEmbd);
            bufs_.push_back(lm_ggml_backend_alloc_ctx_tensors(ctx_l_[l], layer_be[l]));
        }
        for (lm_ggml_backend_buffer_t b : bufs_) {
            if (b == nullptr) return;
            lm_ggml_backend_buffer_set_usage(b, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        }
        auto set = [](lm_ggml_tensor * t, const std::vector<float> & v) {
            lm_ggml_backend_tensor_set(t, v.data(), 0, v.size() * 4);
        };
        set(emb_, hw.emb);
        set(out_, hw.out);
        set(norm_out_, hw.norm_out);
        for (int l = 0; l < kLayers; l++) {
            set(norm_[l], hw.norm[l]);
            set(w1_[l], hw.w1[l]);
            set(w2_[l], hw.w2[l]);
        }
        std::vector<lm_ggml_backend_t> all = layer_be;
        all.push_back(cpu); // the CPU last, as the scheduler wants
        std::vector<lm_ggml_backend_t> uniq;
        for (lm_ggml_backend_t b : all) {
            if (std::find(uniq.begin(), uniq.end(), b) == uniq.end()) uniq.push_back(b);
        }
        sched_ = lm_ggml_backend_sched_new(uniq.data(), nullptr, (int) uniq.size(), 256, false);
        ok_ = sched_ != nullptr;
    }

    ~TinyModel() {
        if (sched_) lm_ggml_backend_sched_free(sched_);
        for (lm_ggml_backend_buffer_t b : bufs_) lm_ggml_backend_buffer_free(b);
        lm_ggml_free(ctx_cpu_);
        for (lm_ggml_context * c : ctx_l_) lm_ggml_free(c);
    }

    bool ok() const { return ok_; }

    // the logits after `token`; false when the compute failed
    bool step(int32_t token, std::vector<float> & logits) {
        lm_ggml_init_params ip = {lm_ggml_tensor_overhead() * 64 + lm_ggml_graph_overhead(), nullptr, true};
        lm_ggml_context * ctx = lm_ggml_init(ip);
        lm_ggml_tensor * id = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 1);
        lm_ggml_set_input(id);
        lm_ggml_tensor * h = lm_ggml_get_rows(ctx, emb_, id);
        for (int l = 0; l < kLayers; l++) {
            lm_ggml_tensor * x = lm_ggml_mul(ctx, lm_ggml_rms_norm(ctx, h, 1e-5f), norm_[l]);
            x = lm_ggml_mul_mat(ctx, w2_[l], lm_ggml_silu(ctx, lm_ggml_mul_mat(ctx, w1_[l], x)));
            h = lm_ggml_add(ctx, h, x);
        }
        lm_ggml_tensor * y = lm_ggml_mul_mat(ctx, out_, lm_ggml_mul(ctx, lm_ggml_rms_norm(ctx, h, 1e-5f), norm_out_));
        lm_ggml_set_output(y);
        lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
        lm_ggml_build_forward_expand(gf, y);
        lm_ggml_backend_sched_reset(sched_);
        bool ok = lm_ggml_backend_sched_alloc_graph(sched_, gf);
        if (ok) {
            lm_ggml_backend_tensor_set(id, &token, 0, sizeof(token));
            ok = lm_ggml_backend_sched_graph_compute(sched_, gf) == LM_GGML_STATUS_SUCCESS;
        }
        if (ok) {
            logits.resize(kVocab);
            lm_ggml_backend_tensor_get(y, logits.data(), 0, kVocab * 4);
        }
        lm_ggml_free(ctx);
        return ok;
    }

private:
    lm_ggml_context * ctx_cpu_ = nullptr;
    lm_ggml_context * ctx_l_[kLayers] = {};
    lm_ggml_tensor *emb_ = nullptr, *out_ = nullptr, *norm_out_ = nullptr;
    lm_ggml_tensor *norm_[kLayers] = {}, *w1_[kLayers] = {}, *w2_[kLayers] = {};
    std::vector<lm_ggml_backend_buffer_t> bufs_;
    lm_ggml_backend_sched_t sched_ = nullptr;
    bool ok_ = false;
};

int argmax(const std::vector<float> & v) { return (int) (std::max_element(v.begin(), v.end()) - v.begin()); }

bool wait_listening(const std::string & host, int port, int seconds) {
    for (int i = 0; i < seconds * 10; i++) {
        const int fd = rpc::tcp_connect(host, port, 500);
        if (fd >= 0) {
            rpc::tcp_close(fd);
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

TEST(RpcNetns, ThreeHostsGiveTheLocalTokensAndAKilledOneIsAnError) {
#ifndef LMGGML_CLI
    GTEST_SKIP() << "the lmggml program is not built (LMGGML_BUILD_TOOLS=OFF)";
#else
    // .ci/run sets LMGGML_REQUIRE_NETNS=1: there the test must run, not skip
    const bool required = std::getenv("LMGGML_REQUIRE_NETNS") != nullptr;
    if (const std::string why = rpctest::netns_unavailable(); !why.empty()) {
        if (required) FAIL() << why;
        GTEST_SKIP() << why;
    }
    rpctest::Hosts hosts(kLayers);
    if (!hosts.error().empty()) { // e.g. root in a container without the rights to make namespaces
        if (required) FAIL() << "cannot make network namespaces here: " << hosts.error();
        GTEST_SKIP() << "cannot make network namespaces here: " << hosts.error();
    }
    const std::string dir = testing::TempDir() + "lmrpc_netns_" + std::to_string(getpid());
    std::filesystem::create_directories(dir);
    struct Cleanup {
        std::string dir;
        ~Cleanup() { std::filesystem::remove_all(dir); }
    } cleanup{dir};
    const std::string key_file = dir + "/key";
    const std::string key = "netns-test-key-0123456789abcdef";
    {
        std::ofstream(key_file) << key << "\n";
        chmod(key_file.c_str(), 0600);
    }
    // a port per run: endpoints (and their dead connections) outlive a run
    // in this process, e.g. under --gtest_repeat
    static int run = 0;
    const int port = 50052 + run++;
    std::vector<pid_t> pids;
    for (int k = 0; k < kLayers; k++) {
        pids.push_back(hosts.spawn(k,
                                   {LMGGML_CLI, "rpc-server", "-H", hosts.address(k), "-p", std::to_string(port), "-d",
                                    "CPU", "-t", "1", "--auth-key", key_file},
                                   dir + "/server" + std::to_string(k) + ".log"));
        ASSERT_GT(pids.back(), 0);
    }
    for (int k = 0; k < kLayers; k++) {
        if (!wait_listening(hosts.address(k), port, 20)) {
            std::ifstream f(dir + "/server" + std::to_string(k) + ".log");
            FAIL() << "server " << k << " did not come up; its log:\n"
                   << std::string(std::istreambuf_iterator<char>(f), {});
        }
    }

    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    ASSERT_NE(cpu, nullptr);
    lm_ggml_backend_rpc_set_auth_key(key.c_str()); // for every (re)connection of the run
    struct KeyReset {
        ~KeyReset() { lm_ggml_backend_rpc_set_auth_key(nullptr); }
    } key_reset;
    std::vector<lm_ggml_backend_t> remote;
    for (int k = 0; k < kLayers; k++) {
        const std::string ep = hosts.address(k) + ":" + std::to_string(port);
        lm_ggml_backend_t be = lm_ggml_backend_rpc_init(ep.c_str(), 0);
        ASSERT_NE(be, nullptr) << ep;
        remote.push_back(be);
    }

    const HostWeights hw = make_weights();
    std::vector<int> local_tokens, remote_tokens;
    std::vector<std::vector<float>> local_logits;
    {
        TinyModel local(hw, {cpu, cpu, cpu}, cpu);
        ASSERT_TRUE(local.ok());
        int32_t t = 1;
        for (int s = 0; s < kSteps; s++) {
            std::vector<float> lg;
            ASSERT_TRUE(local.step(t, lg));
            local_logits.push_back(lg);
            t = argmax(lg);
            local_tokens.push_back(t);
        }
    }
    {
        TinyModel split(hw, remote, cpu);
        ASSERT_TRUE(split.ok());
        int32_t t = 1;
        for (int s = 0; s < kSteps; s++) {
            std::vector<float> lg;
            ASSERT_TRUE(split.step(t, lg)) << "step " << s;
            for (int v = 0; v < kVocab; v++)
                ASSERT_NEAR(lg[v], local_logits[s][v], 1e-4) << "step " << s << " token " << v;
            t = argmax(lg);
            remote_tokens.push_back(t);
        }
        EXPECT_EQ(remote_tokens, local_tokens);
        for (int k = 0; k < kLayers; k++) { // the layers did run there
            const rpc::Endpoint * ep = rpc::endpoint_get(hosts.address(k) + ":" + std::to_string(port));
            ASSERT_NE(ep, nullptr);
            EXPECT_GE(ep->graphs_sent, 1u) << "host " << k;
            EXPECT_EQ(ep->graphs_sent + ep->recomputes_sent, (uint64_t) kSteps)
                << "host " << k << ": one graph per step";
            std::printf("[ netns    ] host %d: %llu graphs sent, %llu recomputed\n", k,
                        (unsigned long long) ep->graphs_sent, (unsigned long long) ep->recomputes_sent);
        }

        // a server dies at some point of a running generation: a step fails
        // soon after, and so does the next one (no hang, no crash)
        std::atomic<bool> kill_sent{false};
        std::chrono::steady_clock::time_point killed_at;
        std::thread killer([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(150));
            killed_at = std::chrono::steady_clock::now();
            kill_sent = true;
            hosts.kill_now(pids[1]);
        });
        const auto t0 = std::chrono::steady_clock::now();
        bool failed = false, failed_after_kill = false;
        int steps = 0;
        std::vector<float> lg;
        while (!failed && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) {
            failed = !split.step(t, lg);
            failed_after_kill = kill_sent; // a failure the kill caused comes after kill_sent
            if (!failed) t = argmax(lg), steps++;
        }
        killer.join();
        ASSERT_TRUE(failed) << "steps through a killed server kept succeeding";
        EXPECT_TRUE(failed_after_kill) << "a step failed before any server was killed";
        std::printf("[ netns    ] %d steps ran before the kill took effect\n", steps);
        EXPECT_LT(std::chrono::steady_clock::now() - killed_at, std::chrono::seconds(15));
        EXPECT_FALSE(split.step(t, lg)) << "the next step must fail too";
    }
    for (lm_ggml_backend_t be : remote) lm_ggml_backend_free(be);
    lm_ggml_backend_free(cpu);
    for (int k = 0; k < kLayers; k++) {
        std::ifstream f(dir + "/server" + std::to_string(k) + ".log");
        const std::string log((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        EXPECT_NE(log.find("authenticated"), std::string::npos) << "server " << k << "'s log:\n" << log;
    }
#endif
}

} // namespace

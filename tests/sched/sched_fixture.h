#pragma once
// Shared setup of the scheduler tests: a CPU backend plus the REFDEV plugin
// (non-host memory, reached only through set/get/copy), a small two-layer
// "ping-pong" model whose nodes alternate between the devices, and a plain
// double-precision reference of it. All values are small integers (or
// halves), so every float result is exact and compared with == (up to two
// layers; deeper stacks are compared with a relative tolerance).
//
// Ping-pong graph, tokens T, width n (= 8):
//   x   (n, T)  INPUT leaf                        -> CPU
//   h1 = mul_mat(W1, x)         W1 on REFDEV      -> REFDEV
//   h2 = add(h1, b1)            b1 on REFDEV      -> REFDEV
//   h3 = abs(h2)                REFDEV lacks ABS  -> CPU
//   h4 = mul_mat(W2, h3)                          -> REFDEV
//   h5 = neg(h4)                REFDEV lacks NEG  -> CPU
//   h6 = add(h5, b2)                              -> REFDEV
//   out = scale(h6, 0.5)        (expansion)       -> REFDEV
// (layers > 1 repeats h1..h6 with the same weights, with s = scale(h6, 1/1024)
// between layers.)

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

namespace schedtest {

constexpr int kN = 8;

// Collects log lines while alive (restores the default logger after).
class LogCapture {
public:
    LogCapture() { lm_ggml_log_set(&LogCapture::cb, this); }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
    LogCapture(const LogCapture &) = delete;
    LogCapture & operator=(const LogCapture &) = delete;
    const std::string & text() const { return text_; }
    int errors() const { return errors_; }
    bool contains(const std::string & s) const { return text_.find(s) != std::string::npos; }

private:
    static void cb(lm_ggml_log_level level, const char * t, void * ud) {
        auto * self = static_cast<LogCapture *>(ud);
        self->text_ += t;
        if (level == LM_GGML_LOG_LEVEL_ERROR) self->errors_++;
    }
    std::string text_;
    int errors_ = 0;
};

// Weights of the ping-pong model, in one buffer flagged WEIGHTS.
struct Weights {
    lm_ggml_context * ctx = nullptr;
    lm_ggml_backend_buffer_t buf = nullptr;
    lm_ggml_tensor * W1 = nullptr;     // (n, n): W1[i + o*n] = weight from input i to output o
    lm_ggml_tensor * W2 = nullptr;     // (n, n)
    lm_ggml_tensor * b1 = nullptr;     // (n)
    lm_ggml_tensor * b2 = nullptr;     // (n)
    std::vector<float> w1, w2, c1, c2; // host values

    Weights() = default;
    Weights(const Weights &) = delete;
    Weights & operator=(const Weights &) = delete;
    ~Weights() {
        lm_ggml_backend_buffer_free(buf);
        lm_ggml_free(ctx);
    }
    // places the weights in backend's default buffer type; false on failure
    bool init(lm_ggml_backend_t backend);
};

// The graph of one evaluation; owns its context.
struct PingPong {
    lm_ggml_context * ctx = nullptr;
    lm_ggml_cgraph * graph = nullptr;
    lm_ggml_tensor * x = nullptr;
    lm_ggml_tensor * out = nullptr;
    std::vector<lm_ggml_tensor *> layer_nodes; // h1..h6 of every layer, in order
    int T = 0;

    PingPong() = default;
    PingPong(const PingPong &) = delete;
    PingPong & operator=(const PingPong &) = delete;
    ~PingPong() { lm_ggml_free(ctx); }
    void build(const Weights & w, int tokens, int layers = 1);
};

// Reference values of every node by name (x, h1.., out), in double.
std::map<std::string, std::vector<double>> reference(const Weights & w, const std::vector<float> & x, int T,
                                                     int layers = 1);

// Deterministic small-integer inputs for evaluation `seed`.
std::vector<float> make_input(int T, int seed);

std::vector<float> read(const lm_ggml_tensor * t);

// Nodes REFDEV has computed since it was loaded (its test hook).
uint64_t refdev_nodes_computed();

class SchedTest : public ::testing::Test {
protected:
    void SetUp() override;
    void TearDown() override;

    // scheduler over {REFDEV, CPU} (or CPU alone)
    lm_ggml_backend_sched_t make_sched(bool parallel = false, bool with_ref = true, size_t graph_size = 256);

    lm_ggml_backend_t ref = nullptr;
    lm_ggml_backend_t cpu = nullptr;
    std::vector<lm_ggml_backend_sched_t> scheds;
};

// comparison of a computed tensor with its reference: exact by default
void expect_exact(const lm_ggml_tensor * t, const std::vector<double> & want, const std::string & what,
                  double rel_tol = 0.0);

} // namespace schedtest

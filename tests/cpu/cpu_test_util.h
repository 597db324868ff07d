#pragma once
// Small helpers for the CPU backend tests: log capture, a graph fixture whose
// tensors live in a CPU backend buffer, and float I/O.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <gtest/gtest.h>

#include <dirent.h>

#include <cmath>
#include <string>
#include <vector>

namespace cputest {

// Collects log lines while alive; restores the default logger afterwards.
class LogCapture {
public:
    LogCapture() { lm_ggml_log_set(callback, this); }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
    LogCapture(const LogCapture &) = delete;
    LogCapture & operator=(const LogCapture &) = delete;

    int errors() const { return n_errors_; }
    const std::string & text() const { return text_; }
    bool contains(const std::string & s) const { return text_.find(s) != std::string::npos; }

private:
    static void callback(enum lm_ggml_log_level level, const char * text, void * user) {
        LogCapture * self = static_cast<LogCapture *>(user);
        if (level == LM_GGML_LOG_LEVEL_ERROR) {
            self->n_errors_++;
        }
        self->text_ += text ? text : "";
    }
    std::string text_;
    int n_errors_ = 0;
};

// A no_alloc context for building graphs; tensors are placed in a backend
// buffer by alloc(). Frees everything on destruction.
struct GraphCtx {
    lm_ggml_context * ctx = nullptr;
    lm_ggml_backend_buffer_t buffer = nullptr;

    explicit GraphCtx(size_t n_tensors = 256) {
        lm_ggml_init_params p = {lm_ggml_tensor_overhead() * n_tensors + lm_ggml_graph_overhead(), nullptr, true};
        ctx = lm_ggml_init(p);
    }
    ~GraphCtx() {
        if (buffer) lm_ggml_backend_buffer_free(buffer);
        if (ctx) lm_ggml_free(ctx);
    }
    GraphCtx(const GraphCtx &) = delete;
    GraphCtx & operator=(const GraphCtx &) = delete;

    bool alloc(lm_ggml_backend_t backend) {
        buffer = lm_ggml_backend_alloc_ctx_tensors(ctx, backend);
        return buffer != nullptr;
    }
};

inline void set_f32(lm_ggml_tensor * t, const std::vector<float> & v) {
    ASSERT_EQ(v.size() * sizeof(float), lm_ggml_nbytes(t));
    lm_ggml_backend_tensor_set(t, v.data(), 0, lm_ggml_nbytes(t));
}

inline std::vector<float> get_f32(const lm_ggml_tensor * t) {
    std::vector<float> v(lm_ggml_nbytes(t) / sizeof(float));
    lm_ggml_backend_tensor_get(t, v.data(), 0, lm_ggml_nbytes(t));
    return v;
}

// Deterministic values in [-1, 1) (no RNG state shared between tests).
inline std::vector<float> ramp(size_t n, float seed) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; i++) {
        const double x = std::sin(seed * 12.9898 + (double) i * 78.233) * 43758.5453;
        v[i] = (float) (2.0 * (x - std::floor(x)) - 1.0);
    }
    return v;
}

// Threads in this process (entries of /proc/self/task), -1 if unreadable.
inline int process_thread_count() {
    DIR * d = opendir("/proc/self/task");
    if (d == nullptr) return -1;
    int n = 0;
    while (dirent * e = readdir(d)) {
        if (e->d_name[0] != '.') n++;
    }
    closedir(d);
    return n;
}

} // namespace cputest

#pragma once
// Helpers for the concurrency tests: start N threads at the same instant (a
// latch, so the racing calls really overlap) and collect failures as
// counters, since gtest assertions are only safe on the main thread.

#include "ggml.h"
#include "ggml-backend.h"

#include <atomic>
#include <functional>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace conc {

// Runs body(thread_index) on n threads released together; joins them.
inline void run_together(int n, const std::function<void(int)> & body) {
    std::latch start(n);
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (int i = 0; i < n; ++i) {
        threads.emplace_back([&, i] {
            start.arrive_and_wait();
            body(i);
        });
    }
    for (std::thread & t : threads) t.join();
}

// A failure seen on a worker thread: counted, the first message kept.
class Failures {
public:
    void add(const std::string & what) {
        if (count_.fetch_add(1) == 0) {
            std::lock_guard<std::mutex> lock(mutex_);
            first_ = what;
        }
    }
    int count() const { return count_.load(); }
    std::string first() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return first_;
    }

private:
    std::atomic<int> count_{0};
    mutable std::mutex mutex_;
    std::string first_;
};

// Counts error lines logged from any thread (the log callback may be called
// concurrently; it only touches atomics).
struct ErrorCounter {
    std::atomic<int> errors{0};
    ErrorCounter() { lm_ggml_log_set(&ErrorCounter::callback, this); }
    ~ErrorCounter() { lm_ggml_log_set(nullptr, nullptr); }
    ErrorCounter(const ErrorCounter &) = delete;
    ErrorCounter & operator=(const ErrorCounter &) = delete;
    static void callback(lm_ggml_log_level level, const char *, void * user) {
        if (level == LM_GGML_LOG_LEVEL_ERROR) static_cast<ErrorCounter *>(user)->errors.fetch_add(1);
    }
};

inline const char * refdev_path() { return LMGGML_PLUGIN_DIR "/liblmggml-refdev.so"; }

} // namespace conc

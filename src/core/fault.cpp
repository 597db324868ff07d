// Fault injection counter (see fault.h). Compiled to nothing unless the build
// enables LMGGML_FAULT_INJECTION.
#include "fault.h"

#ifdef LMGGML_FAULT_INJECTION

#include <atomic>

namespace {

// Plain atomics, constant-initialised: allocation sites may run before any
// static constructor (and from any thread).
std::atomic<long> g_count{0};
std::atomic<long> g_fail_at{0};
std::atomic<long> g_injected{0};

} // namespace

extern "C" bool lm_fault_should_fail(void) {
    const long n = g_count.fetch_add(1, std::memory_order_relaxed) + 1;
    const long at = g_fail_at.load(std::memory_order_relaxed);
    if (at > 0 && n == at) {
        g_injected.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    return false;
}

extern "C" void lm_fault_set_fail_at(long n) {
    g_fail_at.store(0, std::memory_order_relaxed); // never fire while resetting
    g_count.store(0, std::memory_order_relaxed);
    g_injected.store(0, std::memory_order_relaxed);
    g_fail_at.store(n > 0 ? n : 0, std::memory_order_relaxed);
}

extern "C" long lm_fault_count(void) { return g_count.load(std::memory_order_relaxed); }

extern "C" long lm_fault_injected(void) { return g_injected.load(std::memory_order_relaxed); }

#endif // LMGGML_FAULT_INJECTION

// Allocation-failure walk (docs/RELIABILITY.md, "Fault injection").
//
// For a scenario that loads a GGUF model and computes a graph through the
// backend API (scenario.h), first count the allocations it makes, then for
// every N make the N-th one fail and check, in a fresh child process each:
//   - the scenario stops with a clean error (no crash, no abort, no hang) and
//     at least one error line went through the log callback;
//   - or, if the library absorbed the failure, the result is still correct;
//   - nothing leaked (LeakSanitizer, in the ASan fault build);
//   - the next attempt, with no fault, succeeds with the right numbers.
// Two kinds of allocations are counted: the library's hook sites
// (lm_fault_should_fail in lm_ggml_aligned_malloc, lm_ggml_init,
// lm_ggml_backend_buffer_init) and, in the "+new" modes, every C++ operator
// new made in the process while the scenario runs (std::vector, std::string,
// new in the library) -- this proves std::bad_alloc never crosses the C ABI.
// Built only with -DLMGGML_FAULT_INJECTION=ON (scripts/sanitize fault).
#include "child.h"
#include "scenario.h"

#include "ggml.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unistd.h>

#ifndef LMGGML_FAULT_INJECTION

TEST(FaultInjection, NeedsTheFaultInjectionBuild) {
    GTEST_SKIP() << "configure with -DLMGGML_FAULT_INJECTION=ON (scripts/sanitize fault)";
}

#else

#include "fault.h"

#include <new>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

// ------------------------------------------------ operator new as a counted site

namespace rel {
// Set in a child before a scenario runs: every operator new then asks the
// library's counter whether to fail (fault_runner_test.cpp uses it too).
bool g_count_new = false;
} // namespace rel

namespace {
using rel::g_count_new;

// LMGGML_FAULT_TRACE=1 prints the stack of each injected operator-new
// failure (ASan builds), to find where an escaping exception came from.
bool inject_new_failure() {
    if (!g_count_new || !lm_fault_should_fail()) return false;
#if defined(__SANITIZE_ADDRESS__)
    if (std::getenv("LMGGML_FAULT_TRACE")) __sanitizer_print_stack_trace();
#endif
    return true;
}

void * counted_alloc(std::size_t n) {
    if (inject_new_failure()) return nullptr;
    return std::malloc(n ? n : 1);
}

void * counted_aligned_alloc(std::size_t n, std::align_val_t al) {
    if (inject_new_failure()) return nullptr;
    void * p = nullptr;
    const std::size_t a = (std::size_t) al < sizeof(void *) ? sizeof(void *) : (std::size_t) al;
    return posix_memalign(&p, a, n ? n : 1) == 0 ? p : nullptr;
}
} // namespace

void * operator new(std::size_t n) {
    void * p = counted_alloc(n);
    if (!p) throw std::bad_alloc();
    return p;
}
void * operator new[](std::size_t n) {
    void * p = counted_alloc(n);
    if (!p) throw std::bad_alloc();
    return p;
}
void * operator new(std::size_t n, const std::nothrow_t &) noexcept { return counted_alloc(n); }
void * operator new[](std::size_t n, const std::nothrow_t &) noexcept { return counted_alloc(n); }
void * operator new(std::size_t n, std::align_val_t al) {
    void * p = counted_aligned_alloc(n, al);
    if (!p) throw std::bad_alloc();
    return p;
}
void * operator new[](std::size_t n, std::align_val_t al) {
    void * p = counted_aligned_alloc(n, al);
    if (!p) throw std::bad_alloc();
    return p;
}
void * operator new(std::size_t n, std::align_val_t al, const std::nothrow_t &) noexcept {
    return counted_aligned_alloc(n, al);
}
void * operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t &) noexcept {
    return counted_aligned_alloc(n, al);
}
// The replacements pair malloc/posix_memalign with free, which GCC cannot see.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void * p) noexcept { std::free(p); }
void operator delete[](void * p) noexcept { std::free(p); }
void operator delete(void * p, std::size_t) noexcept { std::free(p); }
void operator delete[](void * p, std::size_t) noexcept { std::free(p); }
void operator delete(void * p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void * p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void * p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void * p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void * p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void * p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void * p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void * p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }
#pragma GCC diagnostic pop

// ------------------------------------------------ the walk

namespace {

using rel::Planner;

// Error lines seen by the log callback in a child (no heap use: the callback
// runs while allocations are failing).
struct LogTally {
    int errors = 0;
    char first[160] = {0};
};
LogTally g_log;

void tally_log(lm_ggml_log_level level, const char * text, void *) {
    if (level != LM_GGML_LOG_LEVEL_ERROR) return;
    if (g_log.errors++ == 0 && text) std::snprintf(g_log.first, sizeof(g_log.first), "%s", text);
}

// What one child reports back.
struct Outcome {
    long count = 0;    // allocations counted during the faulted run
    long injected = 0; // 1 when the N-th allocation happened (and failed)
    int step = -1;     // rel::Step of the faulted run
    double nmse = 0;   // of the faulted run when it succeeded
    int errors = 0;    // error lines it logged
    int retry_step = -1;
    double retry_nmse = 0;
    int leaked = 0;
    char first_error[160] = {0};
};

struct Mode {
    const char * name;
    Planner planner;
    int n_threads;
    bool count_new;
};

// Output NMSE limit against the double reference. The CPU rounds activations
// to fp16 / Q8_0 for the F16 / Q8_0 weight products (SPEC: 5e-4 for
// quantized MUL_MAT); a wrong, partial or missing computation is far above.
constexpr double kMaxNmse = 1e-3;

class FaultWalk : public ::testing::TestWithParam<Mode> {
protected:
    void SetUp() override {
        std::snprintf(path_, sizeof(path_), "/tmp/lmggml-fault-%d-%s.gguf", (int) getpid(), GetParam().name);
        rel::reference_output(ref_);
        // the model file is written in a child too: the parent never touches
        // the library, so every child starts from the same untouched state
        // (lazy statics included) and sees the same allocation sequence.
        bool ok = false;
        const std::string p = path_;
        rel::ChildStatus st =
            rel::run_in_child([&](void * out) { *(bool *) out = rel::write_model(p.c_str()); }, &ok, sizeof(ok));
        ASSERT_TRUE(st.clean() && ok) << "writing the model: " << st.describe();
    }
    void TearDown() override { std::remove(path_); }

    // Runs the scenario in a child with the n-th allocation failing (n = 0:
    // none), then once more without faults, then checks for leaks.
    Outcome run_child(long n, rel::ChildStatus & st) {
        Outcome o;
        const Mode m = GetParam();
        const char * path = path_;
        const double * ref = ref_;
        st = rel::run_in_child(
            [&](void * out) {
                Outcome & r = *(Outcome *) out;
                float result[rel::kOut];
                lm_ggml_log_set(tally_log, nullptr);
                g_count_new = m.count_new;
                lm_fault_set_fail_at(n);
                r.step = rel::run_scenario(path, m.planner, m.n_threads, result);
                r.count = lm_fault_count();
                r.injected = lm_fault_injected();
                lm_fault_set_fail_at(0);
                r.nmse = r.step == rel::kStepOk ? rel::nmse(result, ref, rel::kOut) : 0;
                r.errors = g_log.errors;
                std::memcpy(r.first_error, g_log.first, sizeof(r.first_error));
                r.retry_step = rel::run_scenario(path, m.planner, m.n_threads, result);
                r.retry_nmse = r.retry_step == rel::kStepOk ? rel::nmse(result, ref, rel::kOut) : 0;
                g_count_new = false;
                r.leaked = rel::leak_check_now() ? 1 : 0;
            },
            &o, sizeof(o));
        return o;
    }

    char path_[128];
    double ref_[rel::kOut];
};

TEST_P(FaultWalk, EveryAllocationFailureIsCleanAndRecoverable) {
    rel::ChildStatus st;
    const Outcome base = run_child(0, st);
    ASSERT_TRUE(st.clean()) << "the unfaulted run: " << st.describe();
    ASSERT_EQ(base.step, rel::kStepOk) << "unfaulted run failed at " << rel::step_name(base.step) << ": "
                                       << base.first_error;
    ASSERT_LT(base.nmse, kMaxNmse);
    std::printf("[ fault    ] %s: unfaulted NMSE %.3g\n", GetParam().name, base.nmse);
    ASSERT_EQ(base.leaked, 0) << "the unfaulted run leaks (see the LeakSanitizer report above)";
    ASSERT_GT(base.count, 0) << "no allocation was counted: is the hook wired?";

    std::map<std::string, int> by_step; // where the failures surfaced
    int absorbed = 0, problems = 0;
    // LMGGML_FAULT_ONLY=N walks only allocation N (debugging one finding)
    const long only = std::getenv("LMGGML_FAULT_ONLY") ? std::atol(std::getenv("LMGGML_FAULT_ONLY")) : 0;
    for (long n = 1; n <= base.count; ++n) {
        if (only > 0 && n != only) continue;
        const Outcome o = run_child(n, st);
        std::string why;
        if (!st.clean()) {
            why = "child ended with " + st.describe() + " (crash, abort, sanitizer report or timeout)";
        } else if (o.injected != 1) {
            why = "the fault did not fire (allocation sequence changed: " + std::to_string(o.count) + " counted)";
        } else if (o.step == rel::kStepOk && !(o.nmse < kMaxNmse)) {
            why = "the failure was swallowed and the result is wrong (NMSE " + std::to_string(o.nmse) + ")";
        } else if (o.step != rel::kStepOk && o.errors == 0) {
            why = std::string("failed at ") + rel::step_name(o.step) + " without logging an error";
        } else if (o.retry_step != rel::kStepOk || !(o.retry_nmse < kMaxNmse)) {
            why = std::string("the next attempt failed at ") + rel::step_name(o.retry_step);
        } else if (o.leaked) {
            why = "leak after the failure (see the LeakSanitizer report above)";
        }
        if (!why.empty()) {
            ++problems;
            ADD_FAILURE() << GetParam().name << ": allocation " << n << "/" << base.count << ": " << why
                          << (o.first_error[0] ? std::string("; first error: ") + o.first_error : std::string());
            continue;
        }
        if (o.step == rel::kStepOk) {
            ++absorbed;
        } else {
            ++by_step[rel::step_name(o.step)];
        }
    }
    std::string summary;
    for (const auto & [step, k] : by_step) summary += " " + step + "=" + std::to_string(k);
    std::printf("[ fault    ] %s: %ld allocations walked (%s), %d problems, %d absorbed, clean errors by step:%s\n",
                GetParam().name, base.count, rel::have_leak_checker() ? "leak-checked" : "no leak checker", problems,
                absorbed, summary.c_str());
}

INSTANTIATE_TEST_SUITE_P(FaultInjection, FaultWalk,
                         ::testing::Values(Mode{"sched_hooks", Planner::Sched, 1, false},
                                           Mode{"sched_new", Planner::Sched, 1, true},
                                           Mode{"sched_new_2threads", Planner::Sched, 2, true},
                                           Mode{"gallocr_new", Planner::Gallocr, 1, true}),
                         [](const ::testing::TestParamInfo<Mode> & info) { return std::string(info.param.name); });

} // namespace

#endif // LMGGML_FAULT_INJECTION

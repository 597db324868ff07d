// Allocation-failure walk through the LLM runner (docs/RELIABILITY.md).
//
// The same walk as fault_injection_test.cpp, over lmllm: a tiny generated
// llama model (tests/common/tiny_model.h) is loaded with Model::load,
// a Context is created and a prompt decoded, then one more token. For every
// N the N-th allocation (library hook sites and every operator new) fails, in
// a fresh child each; the run must stop with an error Status and a logged
// line, or absorb the failure with the right logits (against the
// double-precision reference forward pass), leak nothing, and a second run
// in the same process must succeed. An exception escaping lmllm is a finding.
// Built only with -DLMGGML_FAULT_INJECTION=ON (scripts/sanitize fault).
#include "child.h"

#include <gtest/gtest.h>

#ifndef LMGGML_FAULT_INJECTION

TEST(FaultInjectionRunner, NeedsTheFaultInjectionBuild) {
    GTEST_SKIP() << "configure with -DLMGGML_FAULT_INJECTION=ON (scripts/sanitize fault)";
}

#else

#include "fault.h"
#include "tiny_model.h"
#include "lmllm/context.h"
#include "lmllm/model.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <unistd.h>

namespace rel {
extern bool g_count_new; // fault_injection_test.cpp: operator new asks the counter
}

namespace {

enum RunnerStep : int { kLoad = 0, kContext = 1, kDecodePrompt = 2, kDecodeToken = 3, kRunnerOk = 4 };
const char * runner_step_name(int s) {
    static const char * names[] = {"load", "context", "decode_prompt", "decode_token", "ok"};
    return s >= 0 && s <= kRunnerOk ? names[s] : "?";
}

const std::vector<int32_t> kPrompt = {1, 17, 260, 5, 299};
const std::vector<int32_t> kNext = {42};
constexpr double kMaxNmse = 1e-6; // F32 weights: the runner matches the double reference far closer

struct RunnerLog {
    int errors = 0;
    char first[160] = {0};
};
RunnerLog g_rlog;

void tally(lm_ggml_log_level level, const char * text, void *) {
    if (level != LM_GGML_LOG_LEVEL_ERROR) return;
    if (g_rlog.errors++ == 0 && text) std::snprintf(g_rlog.first, sizeof(g_rlog.first), "%s", text);
}

struct RunResult {
    int step = -1;
    double nmse_prompt = 0, nmse_token = 0;
    char status[160] = {0};
};

// Load, create a context, decode the prompt and one more token. The caller's
// own objects (path string, token vectors) exist before faults are enabled:
// only what lmllm and lmggml allocate is walked.
RunResult run_runner(const std::string & path, const std::vector<std::vector<double>> & ref, int n_vocab) {
    RunResult r;
    r.step = kLoad;
    auto m = lmllm::Model::load(path, {});
    if (!m.ok()) {
        std::snprintf(r.status, sizeof(r.status), "%s", m.status().message().c_str());
        return r;
    }
    r.step = kContext;
    lmllm::ContextParams cp;
    cp.n_ctx = 64;
    cp.n_threads = 1;
    cp.type_k = cp.type_v = LM_GGML_TYPE_F32;
    auto c = lmllm::Context::create(*m.value(), cp);
    if (!c.ok()) {
        std::snprintf(r.status, sizeof(r.status), "%s", c.status().message().c_str());
        return r;
    }
    r.step = kDecodePrompt;
    if (lmllm::Status s = c.value()->decode(kPrompt); !s.ok()) {
        std::snprintf(r.status, sizeof(r.status), "%s", s.message().c_str());
        return r;
    }
    r.nmse_prompt = tiny::nmse(c.value()->logits(), ref[kPrompt.size() - 1]);
    r.step = kDecodeToken;
    if (lmllm::Status s = c.value()->decode(kNext); !s.ok()) {
        std::snprintf(r.status, sizeof(r.status), "%s", s.message().c_str());
        return r;
    }
    r.nmse_token = tiny::nmse(c.value()->logits(), ref[kPrompt.size()]);
    (void) n_vocab;
    r.step = kRunnerOk;
    return r;
}

struct RunnerOutcome {
    long count = 0, injected = 0;
    RunResult first, retry;
    int errors = 0;
    int leaked = 0;
    char first_error[160] = {0};
};

bool good(const RunResult & r) { return r.step == kRunnerOk && r.nmse_prompt < kMaxNmse && r.nmse_token < kMaxNmse; }

TEST(FaultInjectionRunner, EveryAllocationFailureWhileLoadingAndDecodingIsClean) {
    char path[128];
    std::snprintf(path, sizeof(path), "/tmp/lmggml-fault-runner-%d.gguf", (int) getpid());
    const tiny::Spec spec = tiny::llama_spec();
    const tiny::Weights w = tiny::make_weights(spec, 7);
    std::vector<int32_t> all = kPrompt;
    all.push_back(kNext[0]);
    const std::vector<std::vector<double>> ref = tiny::reference_forward(spec, w, all);

    // the file is written in a child: the parent never touches the library
    bool ok = false;
    const std::string p = path;
    rel::ChildStatus st =
        rel::run_in_child([&](void * out) { *(bool *) out = tiny::write_gguf(spec, w, p); }, &ok, sizeof(ok));
    ASSERT_TRUE(st.clean() && ok) << "writing the model: " << st.describe();

    auto run_child = [&](long n, rel::ChildStatus & cs) {
        RunnerOutcome o;
        cs = rel::run_in_child(
            [&](void * out) {
                RunnerOutcome & r = *(RunnerOutcome *) out;
                lm_ggml_log_set(tally, nullptr);
                rel::g_count_new = true;
                lm_fault_set_fail_at(n);
                r.first = run_runner(p, ref, spec.n_vocab);
                r.count = lm_fault_count();
                r.injected = lm_fault_injected();
                lm_fault_set_fail_at(0);
                r.errors = g_rlog.errors;
                std::memcpy(r.first_error, g_rlog.first, sizeof(r.first_error));
                r.retry = run_runner(p, ref, spec.n_vocab);
                rel::g_count_new = false;
                r.leaked = rel::leak_check_now() ? 1 : 0;
            },
            &o, sizeof(o));
        return o;
    };

    const RunnerOutcome base = run_child(0, st);
    ASSERT_TRUE(st.clean()) << "the unfaulted run: " << st.describe();
    ASSERT_TRUE(good(base.first)) << "unfaulted run: step " << runner_step_name(base.first.step) << ", "
                                  << base.first.status << ", NMSE " << base.first.nmse_prompt << " / "
                                  << base.first.nmse_token;
    ASSERT_EQ(base.leaked, 0) << "the unfaulted run leaks (see the LeakSanitizer report above)";
    ASSERT_GT(base.count, 0);

    std::map<std::string, int> by_step;
    int absorbed = 0, problems = 0;
    const long only = std::getenv("LMGGML_FAULT_ONLY") ? std::atol(std::getenv("LMGGML_FAULT_ONLY")) : 0;
    for (long n = 1; n <= base.count; ++n) {
        if (only > 0 && n != only) continue;
        const RunnerOutcome o = run_child(n, st);
        std::string why;
        if (!st.clean()) {
            why = "child ended with " + st.describe() +
                  " (crash, abort, escaping exception, sanitizer report or timeout)";
        } else if (o.injected != 1) {
            why = "the fault did not fire (" + std::to_string(o.count) + " allocations counted)";
        } else if (o.first.step == kRunnerOk && !good(o.first)) {
            why = "the failure was swallowed and the logits are wrong";
        } else if (o.first.step != kRunnerOk && o.first.status[0] == '\0') {
            why = std::string("failed at ") + runner_step_name(o.first.step) + " with an empty error message";
        } else if (!good(o.retry)) {
            why = std::string("the next attempt failed at ") + runner_step_name(o.retry.step) + ": " + o.retry.status;
        } else if (o.leaked) {
            why = "leak after the failure (see the LeakSanitizer report above)";
        }
        if (!why.empty()) {
            ++problems;
            ADD_FAILURE() << "allocation " << n << "/" << base.count << ": " << why << "; status: " << o.first.status
                          << (o.first_error[0] ? std::string("; first log error: ") + o.first_error : std::string());
            continue;
        }
        if (o.first.step == kRunnerOk)
            ++absorbed;
        else
            ++by_step[runner_step_name(o.first.step)];
    }
    std::remove(path);
    std::string summary;
    for (const auto & [step, k] : by_step) summary += " " + step + "=" + std::to_string(k);
    std::printf("[ fault    ] runner: %ld allocations walked (%s), %d problems, %d absorbed, clean errors by step:%s\n",
                base.count, rel::have_leak_checker() ? "leak-checked" : "no leak checker", problems, absorbed,
                summary.c_str());
}

} // namespace

#endif // LMGGML_FAULT_INJECTION

// NULL everywhere in the public API (SPEC §4 "no abort on bad input").
//
// null_calls.inc (generated from include/*.h by gen_null_calls.py) holds one
// call per exported function and pointer parameter, with NULL in that
// parameter and valid objects in all others. Each call runs in its own child
// process, so that a crash is a recorded finding rather than the end of the
// sweep. A NULL where the API requires an object must:
//   - not crash or abort,
//   - log exactly one error line through the log callback,
//   - return the failure value (NULL / false / a non-success status) when the
//     function has one.
// Parameters where NULL is documented as valid (optional masks, callbacks,
// user data, free(NULL)-style destructors) only have to not crash.
#include "child.h"

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "ggml-impl.h"
#include "ggml-opt.h"
#include "ggml-quants.h"
#include "gguf.h"
#ifdef LMGGML_NULL_SWEEP_RPC
#include "ggml-rpc.h"
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

// Valid objects for every parameter type the generator knows (built afresh in
// each child: the CPU backend's worker threads would not survive a fork).
struct Fixture {
    lm_ggml_backend_t backend = nullptr;
    lm_ggml_context * ctx = nullptr;  // no_alloc: headers of t, t2, out
    lm_ggml_tensor * t = nullptr;     // F32 (4, 4) in `buffer`
    lm_ggml_tensor * pos = nullptr;   // I32 (1): rope positions for t
    lm_ggml_cgraph * graph = nullptr; // out = t + t2
    lm_ggml_backend_buffer_t buffer = nullptr;
    lm_ggml_backend_buffer_t spare = nullptr; // behind `talloc`
    lm_ggml_backend_buffer_type_t buft = nullptr;
    lm_ggml_backend_dev_t dev = nullptr;
    lm_ggml_backend_reg_t reg = nullptr;
    lm_ggml_backend_event_t event = nullptr; // NULL when the CPU has no events
    lm_ggml_backend_graph_plan_t plan = nullptr;
    lm_ggml_backend_sched_t sched = nullptr;
    lm_ggml_gallocr_t galloc = nullptr;
    lm_ggml_guid_t guid = nullptr;
    lm_ggml_threadpool_t threadpool = nullptr;
    lm_ggml_threadpool_params tpp{};
    lm_ggml_cplan cplan{};
    lm_ggml_tallocr talloc{};
    lm_ggml_backend_dev_props props{};
    lm_gguf_context * gguf = nullptr;
    struct lm_ggml_backend_graph_copy copy {};
    lm_ggml_context * ctx_out = nullptr; // out-parameter of graph_import
    lm_ggml_hash_set hash_set{};

    // training (ggml-opt.h): outputs = w x, w a parameter, in their own scheduler
    lm_ggml_context * octx_static = nullptr; // w, oinputs, the batch tensors
    lm_ggml_context * octx_compute = nullptr;
    lm_ggml_backend_buffer_t obuffer = nullptr;
    lm_ggml_backend_sched_t osched = nullptr;
    lm_ggml_tensor * oweight = nullptr;      // F32 (4, 1), a parameter
    lm_ggml_tensor * oinputs = nullptr;      // F32 (4, 1)
    lm_ggml_tensor * ooutputs = nullptr;     // F32 (1, 1)
    lm_ggml_tensor * data_batch = nullptr;   // F32 (4, 1)
    lm_ggml_tensor * labels_batch = nullptr; // F32 (1, 1)
    lm_ggml_opt_params opt_params{};
    lm_ggml_opt_context_t opt = nullptr;
    lm_ggml_opt_dataset_t dataset = nullptr; // 4 datapoints of 4, labels of 1
    lm_ggml_opt_result_t result = nullptr;

    lm_ggml_backend_t backends[64]{};
    lm_ggml_backend_buffer_t buffers[64]{};
    lm_ggml_backend_buffer_type_t bufts[64]{};
    const char * strs[64]{};
    alignas(64) unsigned char bytes[1 << 16]{};
    float floats[4096]{};
    lm_ggml_fp16_t halves[4096]{};
    lm_ggml_bf16_t bf16s[4096]{};
    int64_t i64s[64]{};
    int ints[64]{};
    size_t sizes[64]{};
    double doubles[64]{};
    int32_t i32s[64]{};
    lm_ggml_backend_dev_t devs[64]{};
    const char * missing_path = "/nonexistent/lmggml-reliability";

    static void log_cb(lm_ggml_log_level, const char *, void *) {}
    static bool abort_cb(void *) { return false; }
    static void abort_handler(const char *) {}
    static bool eval_cb(int, lm_ggml_tensor *, lm_ggml_tensor *, void *) { return true; }
    static bool sched_eval_cb(lm_ggml_tensor *, bool, void *) { return true; }
    static void epoch_cb(bool, lm_ggml_opt_context_t, lm_ggml_opt_dataset_t, lm_ggml_opt_result_t, int64_t, int64_t,
                         int64_t) {}
    static void custom1(lm_ggml_tensor *, const lm_ggml_tensor *, int, int, void *) {}
    static void custom2(lm_ggml_tensor *, const lm_ggml_tensor *, const lm_ggml_tensor *, int, int, void *) {}
    static void custom3(lm_ggml_tensor *, const lm_ggml_tensor *, const lm_ggml_tensor *, const lm_ggml_tensor *, int,
                        int, void *) {}
    static void unary_f32(const int, float *, const float *) {}
    static void binary_f32(const int, float *, const float *, const float *) {}
    static void custom1_f32(lm_ggml_tensor *, const lm_ggml_tensor *) {}
    static void custom2_f32(lm_ggml_tensor *, const lm_ggml_tensor *, const lm_ggml_tensor *) {}
    static void custom3_f32(lm_ggml_tensor *, const lm_ggml_tensor *, const lm_ggml_tensor *, const lm_ggml_tensor *) {}

    bool init_opt() {
        lm_ggml_init_params ps = {8 * lm_ggml_tensor_overhead(), nullptr, true};
        octx_static = lm_ggml_init(ps);
        lm_ggml_init_params pc = {LM_GGML_DEFAULT_GRAPH_SIZE * lm_ggml_tensor_overhead() +
                                      3 * lm_ggml_graph_overhead_custom(LM_GGML_DEFAULT_GRAPH_SIZE, true),
                                  nullptr, true};
        octx_compute = lm_ggml_init(pc);
        if (!octx_static || !octx_compute) return false;
        oweight = lm_ggml_new_tensor_2d(octx_static, LM_GGML_TYPE_F32, 4, 1);
        lm_ggml_set_param(octx_static, oweight);
        oinputs = lm_ggml_new_tensor_2d(octx_static, LM_GGML_TYPE_F32, 4, 1);
        data_batch = lm_ggml_new_tensor_2d(octx_static, LM_GGML_TYPE_F32, 4, 1);
        labels_batch = lm_ggml_new_tensor_2d(octx_static, LM_GGML_TYPE_F32, 1, 1);
        obuffer = lm_ggml_backend_alloc_ctx_tensors(octx_static, backend);
        if (!obuffer) return false;
        lm_ggml_backend_buffer_clear(obuffer, 0);
        ooutputs = lm_ggml_mul_mat(octx_compute, oweight, oinputs);
        osched = lm_ggml_backend_sched_new(&backend, nullptr, 1, LM_GGML_DEFAULT_GRAPH_SIZE, false);
        opt_params = lm_ggml_opt_default_params(osched, octx_compute, oinputs, ooutputs,
                                                LM_GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR);
        opt = lm_ggml_opt_init(opt_params);
        dataset = lm_ggml_opt_dataset_init(4, 1, 4, 1);
        result = lm_ggml_opt_result_init();
        return osched && opt && dataset && result;
    }

    bool init() {
        backend = lm_ggml_backend_cpu_init();
        if (!backend) return false;
        lm_ggml_init_params ip = {64 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), nullptr, true};
        ctx = lm_ggml_init(ip);
        if (!ctx) return false;
        t = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 4, 4);
        lm_ggml_tensor * t2 = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 4, 4);
        lm_ggml_set_name(t, "t");
        pos = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 1);
        lm_ggml_tensor * out = lm_ggml_add(ctx, t, t2);
        graph = lm_ggml_new_graph(ctx);
        lm_ggml_build_forward_expand(graph, out);
        buffer = lm_ggml_backend_alloc_ctx_tensors(ctx, backend);
        buft = lm_ggml_backend_cpu_buffer_type();
        spare = lm_ggml_backend_buft_alloc_buffer(buft, 4096);
        talloc = lm_ggml_tallocr_new(spare);
        dev = lm_ggml_backend_get_device(backend);
        reg = lm_ggml_backend_dev_backend_reg(dev);
        event = lm_ggml_backend_event_new(dev);
        plan = lm_ggml_backend_graph_plan_create(backend, graph);
        sched = lm_ggml_backend_sched_new(&backend, nullptr, 1, 64, false);
        galloc = lm_ggml_gallocr_new(buft);
        guid = lm_ggml_backend_guid(backend);
        tpp = lm_ggml_threadpool_params_default(1);
        threadpool = lm_ggml_threadpool_new(&tpp);
        cplan = lm_ggml_graph_plan(graph, 1, nullptr);
        gguf = lm_gguf_init_empty();
        lm_gguf_set_val_str(gguf, "general.name", "x");
        hash_set = lm_ggml_hash_set_new(16);
        if (!init_opt()) return false;
        for (int i = 0; i < 64; ++i) {
            devs[i] = dev;
            backends[i] = backend;
            buffers[i] = buffer;
            bufts[i] = buft;
            strs[i] = "s";
        }
        return buffer && spare && sched && galloc && gguf;
    }
};

// Error lines logged during one call.
struct Tally {
    int errors = 0;
    char first[200] = {0};
    void reset() {
        errors = 0;
        first[0] = 0;
    }
};
Tally g_tally;

void tally_log(lm_ggml_log_level level, const char * text, void *) {
    if (level != LM_GGML_LOG_LEVEL_ERROR) return;
    if (g_tally.errors++ == 0 && text) std::snprintf(g_tally.first, sizeof(g_tally.first), "%s", text);
}

enum RetKind { PTR, BOOL, STATUS, VOID, OTHER };

struct Case {
    const char * fn;
    int param;
    const char * pname;
    RetKind kind;
    int (*call)(Fixture & F); // 1 = failure value returned, 0 = success value, -1 = no verdict
};

template <typename T> int failed_ptr(T * p) { return p == nullptr ? 1 : 0; }
inline int failed_ptr(std::nullptr_t) { return 1; }

#define REL_VERDICT_PTR(call)    return failed_ptr(call);
#define REL_VERDICT_BOOL(call)   return (call) ? 0 : 1;
#define REL_VERDICT_STATUS(call) return (call) != LM_GGML_STATUS_SUCCESS ? 1 : 0;
#define REL_VERDICT_VOID(call)                                                                                         \
    call;                                                                                                              \
    return -1;
#define REL_VERDICT_OTHER(call)                                                                                        \
    (void) (call);                                                                                                     \
    return -1;
#define NULL_CASE(fn, idx, pname, kind, call)                                                                          \
    Case{#fn, idx, pname, kind, [](Fixture & F) -> int {                                                               \
             (void) F;                                                                                                 \
             REL_VERDICT_##kind(call)                                                                                  \
         }},
// ggml-rpc.h: swept where the test links the RPC core (extra.cmake)
#ifdef LMGGML_NULL_SWEEP_RPC
#define NULL_CASE_RPC(...) NULL_CASE(__VA_ARGS__)
#else
#define NULL_CASE_RPC(...)
#endif

// the deprecated wrappers of ggml.h are part of the API and swept too
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
const Case kCases[] = {
#include "null_calls.inc"
};
#pragma GCC diagnostic pop

// (function, parameter) pairs where NULL is valid input, with the reason.
const std::set<std::pair<std::string, std::string>> kNullAllowed = {
    // destructors accept NULL like free(NULL)
    {"lm_ggml_free", "ctx"},
    {"lm_ggml_backend_free", "backend"},
    {"lm_ggml_backend_buffer_free", "buffer"},
    {"lm_ggml_backend_event_free", "event"},
    {"lm_ggml_backend_sched_free", "sched"},
    {"lm_ggml_gallocr_free", "galloc"},
    {"lm_gguf_free", "ctx"},
    {"lm_ggml_threadpool_free", "threadpool"},
    // NULL restores the default / removes the callback
    {"lm_ggml_log_set", "log_callback"},
    {"lm_ggml_log_set", "user_data"},
    {"lm_ggml_set_abort_handler", "handler"},
    {"lm_ggml_backend_sched_set_eval_callback", "callback"},
    {"lm_ggml_backend_cpu_set_abort_callback", "abort_callback"},
    {"lm_ggml_backend_cpu_set_threadpool", "threadpool"},
    {"lm_ggml_graph_plan", "threadpool"},
    // optional inputs
    {"lm_ggml_backend_sched_new", "bufts"},
    {"lm_ggml_backend_dev_init", "params"},
    {"lm_ggml_backend_init_by_name", "params"},
    {"lm_ggml_backend_init_by_type", "params"},
    {"lm_ggml_gallocr_reserve_n", "node_buffer_ids"},
    {"lm_ggml_gallocr_reserve_n", "leaf_buffer_ids"},
    {"lm_ggml_soft_max_ext", "mask"},
    {"lm_ggml_flash_attn_ext", "mask"},
    {"lm_ggml_rope_ext", "c"},
    {"lm_ggml_rope_ext_inplace", "c"},
    {"lm_ggml_rope_ext_back", "c"},
    {"lm_ggml_rope_multi", "c"},
    {"lm_ggml_rope_multi_back", "c"}, // freq factors
    {"lm_ggml_quantize_chunk", "imatrix"},
    {"lm_ggml_backend_buffer_init", "context"},
    {"lm_ggml_backend_rpc_set_auth_key", "key"},
    {"lm_ggml_backend_rpc_server_start_auth", "auth_key"}, // no key
};

bool null_allowed(const Case & c) {
    const std::string p = c.pname;
    if (p == "user_data" || p == "userdata" || p == "abort_callback_data") return true;
    return kNullAllowed.count({c.fn, p}) != 0;
}

struct Result {
    int fixture_ok = 0;
    int verdict = -1;
    int errors = 0;
    char first[200] = {0};
};

// Name getters may answer a placeholder string ("NULL") instead of NULL, so
// that printf("%s") of the answer stays safe; they must still log.
const std::set<std::string> kPlaceholderOk = {
    "lm_ggml_backend_buft_name", "lm_ggml_backend_buffer_name",     "lm_ggml_backend_name",
    "lm_ggml_backend_dev_name",  "lm_ggml_backend_dev_description", "lm_ggml_backend_reg_name",
};

// Findings reported to the owners and not fixed yet (docs/RELIABILITY.md),
// as "function(parameter): crash | silent | success". The sweep fails on any
// finding not listed here, and on any listed one that no longer happens (so
// the list only shrinks).
const std::set<std::string> kKnownFindings = {
#include "null_known.inc"
};

TEST(NullSweep, EveryPointerParameterOfThePublicApi) {
    const size_t n_cases = sizeof(kCases) / sizeof(kCases[0]);
    ASSERT_GT(n_cases, 500u) << "null_calls.inc looks truncated";
    std::vector<std::string> found;   // every finding, in table order
    std::vector<std::string> unknown; // findings not in kKnownFindings
    size_t n_allowed = 0, n_required = 0, n_crash = 0, n_silent = 0, n_success = 0, n_noisy = 0;
    std::set<std::string> functions;
    for (size_t i = 0; i < n_cases; ++i) {
        const Case & c = kCases[i];
        functions.insert(c.fn);
        Result r;
        const rel::ChildStatus st = rel::run_in_child(
            [&](void * out) {
                Result & res = *(Result *) out;
                static Fixture F;                          // static: too big for the stack
                lm_ggml_log_set(Fixture::log_cb, nullptr); // the fixture's own notices are not findings
                res.fixture_ok = F.init() ? 1 : 0;
                g_tally.reset();
                lm_ggml_log_set(tally_log, nullptr);
                res.verdict = c.call(F);
                lm_ggml_log_set(tally_log, nullptr); // the call may have replaced it
                res.errors = g_tally.errors;
                std::memcpy(res.first, g_tally.first, sizeof(res.first));
            },
            &r, sizeof(r), 30);
        const std::string key = std::string(c.fn) + "(" + c.pname + ")";
        std::vector<std::string> mine;
        if (!st.clean()) {
            mine.push_back(key + ": crash");
            ++n_crash;
        } else {
            ASSERT_EQ(r.fixture_ok, 1) << "could not build the fixture";
            if (null_allowed(c)) {
                ++n_allowed;
                continue;
            }
            ++n_required;
            if (r.errors == 0) {
                mine.push_back(key + ": silent");
                ++n_silent;
            }
            if (r.errors > 1) {
                mine.push_back(key + ": noisy");
                ++n_noisy;
            }
            if (r.verdict == 0 && !kPlaceholderOk.count(c.fn)) {
                mine.push_back(key + ": success");
                ++n_success;
            }
        }
        for (const std::string & f : mine) {
            found.push_back(f);
            if (!kKnownFindings.count(f)) {
                unknown.push_back(f + (st.clean() ? "" : " (" + st.describe() + ")"));
            }
        }
    }
    std::vector<std::string> fixed;
    for (const std::string & k : kKnownFindings) {
        if (std::find(found.begin(), found.end(), k) == found.end()) fixed.push_back(k);
    }
    std::printf("[ null     ] %zu functions, %zu cases: %zu NULL-required, %zu NULL-allowed; findings: %zu crash, "
                "%zu silent, %zu success returned, %zu more than one line (%zu known, %zu new, %zu fixed)\n",
                functions.size(), n_cases, n_required, n_allowed, n_crash, n_silent, n_success, n_noisy,
                kKnownFindings.size(), unknown.size(), fixed.size());
    if (std::getenv("LMGGML_NULL_SWEEP_LIST")) { // prints the current findings in null_known.inc form
        for (const std::string & f : found) std::printf("    \"%s\",\n", f.c_str());
    }
    auto join = [](const std::vector<std::string> & v) {
        std::string s;
        for (const std::string & x : v) s += "\n  " + x;
        return s;
    };
    EXPECT_TRUE(unknown.empty()) << "new findings (NULL must log one error line and return the failure value):"
                                 << join(unknown);
    EXPECT_TRUE(fixed.empty()) << "fixed, remove from tests/reliability/null_known.inc:" << join(fixed);
}

} // namespace

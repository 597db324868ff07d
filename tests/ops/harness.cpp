// Runs every op case on every registered device (CPU with 1 and 2 threads):
// builds the graph in a no_alloc context, places all tensors in the device's
// buffer type between guard regions, uploads deterministic inputs, computes
// with lm_ggml_backend_graph_compute, and checks the result against the
// case's double-precision reference, the guards (out-of-bounds writes) and
// the inputs (writes into sources). Unsupported (device, case) pairs are
// skipped and counted, except that the CPU must support every required
// tier-1 case. A summary table per device is printed at the end.
#include "op_case.h"

#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "lmtest_backends.h"
#include "lmtest_compare.h"
#include "lmtest_guard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <ostream>
#include <set>

namespace opstest {

void add_rpc_loopback_device(); // rpc_device.cpp

namespace {

constexpr int kGraphSize = 128;

struct Tables {
    CaseList t1;
    CaseList t2;
};

const Tables & tables() {
    static const Tables t = [] {
        Tables r;
        add_binary_cases(r.t1, r.t2);
        add_unary_cases(r.t1, r.t2);
        add_reduce_cases(r.t1, r.t2);
        add_layout_cases(r.t1, r.t2);
        add_matmul_cases(r.t1, r.t2);
        add_norm_cases(r.t1, r.t2);
        add_rope_cases(r.t1, r.t2);
        add_attention_cases(r.t1, r.t2);
        add_tier2_cases(r.t1, r.t2);
        add_graph_cases(r.t1, r.t2);
        add_conv_cases(r.t1, r.t2);
        add_sequence_cases(r.t1, r.t2);
        add_custom_cases(r.t1, r.t2);
        add_backward_cases(r.t1, r.t2);
        add_quant_iq4_cases(r.t1, r.t2);
        add_quant_iq_cases(r.t1, r.t2);
        for (OpCase & c : r.t2) {
            c.tier = 2;
            c.cpu_required = false;
        }
        return r;
    }();
    return t;
}

// ---------------------------------------------------------------- results
enum class Outcome { Passed, Failed, Unsupported };

struct Tally {
    int passed = 0, failed = 0, unsupported = 0;
    std::vector<std::string> unsupported_names;
    std::vector<std::string> failed_names;
};

std::mutex g_tally_mutex;
std::map<std::string, Tally> g_tally; // key: "device (threads)"

void record(const std::string & key, const std::string & name, Outcome o) {
    std::lock_guard<std::mutex> lock(g_tally_mutex);
    Tally & t = g_tally[key];
    switch (o) {
        case Outcome::Passed: t.passed++; break;
        case Outcome::Failed:
            t.failed++;
            t.failed_names.push_back(name);
            break;
        case Outcome::Unsupported:
            t.unsupported++;
            t.unsupported_names.push_back(name);
            break;
    }
}

class SummaryPrinter : public ::testing::Environment {
public:
    void TearDown() override {
        std::lock_guard<std::mutex> lock(g_tally_mutex);
        if (g_tally.empty()) {
            return;
        }
        std::printf("\nop conformance summary\n");
        std::printf("%-28s %8s %9s %8s %8s %11s\n", "device (threads)", "cases", "supported", "passed", "failed",
                    "unsupported");
        for (const auto & [key, t] : g_tally) {
            const int total = t.passed + t.failed + t.unsupported;
            std::printf("%-28s %8d %9d %8d %8d %11d\n", key.c_str(), total, t.passed + t.failed, t.passed, t.failed,
                        t.unsupported);
        }
        for (const auto & [key, t] : g_tally) {
            if (!t.failed_names.empty()) {
                std::printf("%s failed:", key.c_str());
                for (const std::string & n : t.failed_names) {
                    std::printf(" %s", n.c_str());
                }
                std::printf("\n");
            }
            if (!t.unsupported_names.empty()) {
                std::printf("%s not supported:", key.c_str());
                for (const std::string & n : t.unsupported_names) {
                    std::printf(" %s", n.c_str());
                }
                std::printf("\n");
            }
        }
    }
};

[[maybe_unused]] ::testing::Environment * const g_summary = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

// ---------------------------------------------------------------- parameters
struct Param {
    lmtest::DeviceInfo dev;
    int n_threads; // 0: the device's default
    const OpCase * c;
};

// gtest prints parameters of failing tests with this
void PrintTo(const Param & p, std::ostream * os) {
    *os << p.c->name << " on " << p.dev.name;
    if (p.n_threads > 0) {
        *os << " with " << p.n_threads << " thread(s)";
    }
}

std::string config_key(const Param & p) {
    return p.n_threads > 0 ? p.dev.name + " (" + std::to_string(p.n_threads) + ")" : p.dev.name;
}

std::string sanitize(const std::string & s) {
    std::string r = s;
    for (char & ch : r) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) {
            ch = '_';
        }
    }
    return r;
}

std::vector<Param> make_params(const CaseList & cases) {
    lmtest::load_backends_once(LMGGML_PLUGIN_DIR);
    add_rpc_loopback_device();
    std::vector<Param> out;
    for (const lmtest::DeviceInfo & d : lmtest::list_devices()) {
        const std::vector<int> threads = d.is_cpu ? std::vector<int>{1, 2} : std::vector<int>{0};
        for (int nt : threads) {
            for (const OpCase & c : cases) {
                out.push_back({d, nt, &c});
            }
        }
    }
    return out;
}

std::string param_name(const ::testing::TestParamInfo<Param> & info) {
    const Param & p = info.param;
    std::string n = sanitize(p.dev.name) + "_" + p.c->name;
    if (p.n_threads > 0) {
        n += "_t" + std::to_string(p.n_threads);
    }
    return sanitize(n);
}

// ---------------------------------------------------------------- one run
bool is_view_op(lm_ggml_op op) {
    return op == LM_GGML_OP_NONE || op == LM_GGML_OP_VIEW || op == LM_GGML_OP_RESHAPE || op == LM_GGML_OP_PERMUTE ||
           op == LM_GGML_OP_TRANSPOSE;
}

struct CtxDeleter {
    void operator()(lm_ggml_context * c) const { lm_ggml_free(c); }
};
struct BackendDeleter {
    void operator()(lm_ggml_backend * b) const { lm_ggml_backend_free(b); }
};

double nmse_floor(lm_ggml_type out_type) {
    switch (out_type) {
        case LM_GGML_TYPE_F16: return kNmseF16Out;
        case LM_GGML_TYPE_BF16: return kNmseBF16Out;
        default: return 0.0;
    }
}

// Sets *outcome; uses fatal assertions, so it returns early on failure.
void run_case(const Param & p, Outcome * outcome, std::string * why_unsupported) {
    *outcome = Outcome::Failed;
    const OpCase & c = *p.c;

    lm_ggml_init_params ip = {};
    ip.mem_size = lm_ggml_tensor_overhead() * kGraphSize + lm_ggml_graph_overhead_custom(kGraphSize, false);
    ip.no_alloc = true;
    std::unique_ptr<lm_ggml_context, CtxDeleter> ctx(lm_ggml_init(ip));
    ASSERT_NE(ctx, nullptr) << "lm_ggml_init failed";

    Builder b(ctx.get(), lmtest::seed_from_name(c.name));
    lm_ggml_tensor * out = c.build(b);
    ASSERT_NE(out, nullptr) << "the graph builder returned NULL";
    lm_ggml_cgraph * graph = lm_ggml_new_graph_custom(ctx.get(), kGraphSize, false);
    ASSERT_NE(graph, nullptr);
    lm_ggml_build_forward_expand(graph, out);
    ASSERT_GT(lm_ggml_graph_n_nodes(graph), 0) << "the graph has no nodes";

    std::string err;
    auto placed = lmtest::GuardedBuffer::place(ctx.get(), lm_ggml_backend_dev_buffer_type(p.dev.dev), &err);
    ASSERT_TRUE(placed) << "placing the tensors failed: " << err;

    // every node must be supported, or the whole case is "not supported"
    std::vector<std::string> unsupported;
    for (int i = 0; i < lm_ggml_graph_n_nodes(graph); ++i) {
        lm_ggml_tensor * node = lm_ggml_graph_node(graph, i);
        if (!lm_ggml_backend_dev_supports_op(p.dev.dev, node)) {
            unsupported.push_back(std::string(lm_ggml_op_desc(node)) + " '" + node->name + "'");
        }
    }
    if (!unsupported.empty()) {
        if (p.dev.is_cpu && c.cpu_required) {
            ADD_FAILURE() << "the CPU backend must support this tier-1 case but reports unsupported: "
                          << unsupported.front();
            return;
        }
        *outcome = Outcome::Unsupported;
        *why_unsupported = unsupported.front();
        return;
    }

    // inputs, then NaN/-1 in every result that owns its memory
    std::set<const lm_ggml_tensor *> written_bases;
    for (int i = 0; i < lm_ggml_graph_n_nodes(graph); ++i) {
        lm_ggml_tensor * node = lm_ggml_graph_node(graph, i);
        if (!is_view_op(node->op) && node->view_src != nullptr) {
            written_bases.insert(node->view_src);
        }
    }
    for (const Leaf & leaf : b.leaves()) {
        ASSERT_EQ(lm_ggml_nbytes(leaf.t), leaf.bytes.size())
            << "lm_ggml_nbytes disagrees with the test's layout for " << leaf.t->name;
        lm_ggml_backend_tensor_set(leaf.t, leaf.bytes.data(), 0, leaf.bytes.size());
    }
    for (int i = 0; i < lm_ggml_graph_n_nodes(graph); ++i) {
        lm_ggml_tensor * node = lm_ggml_graph_node(graph, i);
        if (node->view_src == nullptr && node->op != LM_GGML_OP_NONE) {
            lmtest::fill_tensor_bytes(node, 0xFF);
        }
    }
    placed->write_guards();

    std::unique_ptr<lm_ggml_backend, BackendDeleter> backend(lm_ggml_backend_dev_init(p.dev.dev, nullptr));
    ASSERT_NE(backend, nullptr) << "lm_ggml_backend_dev_init failed";
    if (p.n_threads > 0 && !lmtest::set_n_threads(p.dev.dev, backend.get(), p.n_threads)) {
        ASSERT_TRUE(p.dev.is_cpu) << "cannot set the thread count";
        lm_ggml_backend_cpu_set_n_threads(backend.get(), p.n_threads);
    }
    const lm_ggml_status st = lm_ggml_backend_graph_compute(backend.get(), graph);
    ASSERT_EQ(st, LM_GGML_STATUS_SUCCESS) << "graph_compute failed";
    lm_ggml_backend_synchronize(backend.get());

    // the result, read through its own strides
    const size_t nbytes = lm_ggml_nbytes(out);
    std::vector<uint8_t> raw(nbytes);
    lm_ggml_backend_tensor_get(out, raw.data(), 0, nbytes);
    const HTensor actual = lmtest::decode(out->type, {out->ne[0], out->ne[1], out->ne[2], out->ne[3]},
                                          {out->nb[0], out->nb[1], out->nb[2], out->nb[3]}, raw.data());

    Inputs inputs;
    for (const Leaf & leaf : b.leaves()) {
        inputs.push_back(leaf.host);
    }
    HTensor expected = c.ref(inputs);
    if (lmtest::is_plain_type(out->type)) {
        lmtest::round_all(expected, out->type);
    }
    const lmtest::CompareResult cmp =
        c.cmp == Cmp::Exact ? lmtest::compare_exact(expected, actual)
                            : lmtest::compare_nmse(expected, actual, std::max(c.max_nmse, nmse_floor(out->type)));
    EXPECT_TRUE(cmp.ok) << c.name << " on " << config_key(p) << ": " << cmp.message;
    if (c.cmp == Cmp::Nmse) {
        ::testing::Test::RecordProperty("nmse", std::to_string(cmp.nmse));
        if (std::getenv("LMTEST_PRINT_NMSE") != nullptr) {
            std::printf("nmse %-60s %-12s %.3e (limit %.1e)\n", c.name.c_str(), config_key(p).c_str(), cmp.nmse,
                        std::max(c.max_nmse, nmse_floor(out->type)));
        }
    }

    for (const std::string & g : placed->damaged_guards()) {
        ADD_FAILURE() << "out-of-bounds write: " << g;
    }
    for (const Leaf & leaf : b.leaves()) {
        if (written_bases.count(leaf.t)) {
            continue; // an in-place op or a copy legitimately writes here
        }
        std::vector<uint8_t> now(leaf.bytes.size());
        lm_ggml_backend_tensor_get(leaf.t, now.data(), 0, now.size());
        EXPECT_TRUE(now == leaf.bytes) << "input '" << leaf.t->name << "' was modified by the computation";
    }
    if (!::testing::Test::HasFailure()) {
        *outcome = Outcome::Passed;
    }
}

class OpConformance : public ::testing::TestWithParam<Param> {};

TEST_P(OpConformance, MatchesReference) {
    const Param & p = GetParam();
    Outcome o = Outcome::Failed;
    std::string why;
    run_case(p, &o, &why);
    if (::testing::Test::HasFailure()) {
        o = Outcome::Failed;
    }
    record(config_key(p) + (p.c->tier == 1 ? " tier1" : " tier2"), p.c->name, o);
    if (o == Outcome::Unsupported) {
        GTEST_SKIP() << p.c->name << ": not supported by " << p.dev.name << " (" << why << ")";
    }
}

INSTANTIATE_TEST_SUITE_P(Tier1, OpConformance, ::testing::ValuesIn(make_params(tables().t1)), param_name);
INSTANTIATE_TEST_SUITE_P(Tier2, OpConformance, ::testing::ValuesIn(make_params(tables().t2)), param_name);

// ---------------------------------------------------------------- table sanity
TEST(OpTables, NamesAreUniqueAndWellFormed) {
    std::set<std::string> seen;
    for (const CaseList * list : {&tables().t1, &tables().t2}) {
        for (const OpCase & c : *list) {
            EXPECT_TRUE(seen.insert(c.name).second) << "duplicate case name " << c.name;
            EXPECT_EQ(c.name, sanitize(c.name)) << "case names may only use letters, digits and '_'";
            EXPECT_TRUE(c.build && c.ref) << c.name;
        }
    }
    EXPECT_GT(tables().t1.size(), 100u);
    EXPECT_GT(tables().t2.size(), 10u);
}

// Builds every case's graph (no data, no device) and checks that the tables
// exercise every op SPEC §2 lists, and every unary function.
TEST(OpTables, CoverEveryListedOp) {
    std::set<int> ops_t1, ops_t2, unary;
    for (int tier = 1; tier <= 2; ++tier) {
        for (const OpCase & c : tier == 1 ? tables().t1 : tables().t2) {
            lm_ggml_init_params ip = {};
            ip.mem_size = lm_ggml_tensor_overhead() * kGraphSize + lm_ggml_graph_overhead_custom(kGraphSize, false);
            ip.no_alloc = true;
            std::unique_ptr<lm_ggml_context, CtxDeleter> ctx(lm_ggml_init(ip));
            ASSERT_NE(ctx, nullptr);
            Builder b(ctx.get(), 1);
            lm_ggml_tensor * out = c.build(b);
            ASSERT_NE(out, nullptr) << c.name;
            lm_ggml_cgraph * g = lm_ggml_new_graph_custom(ctx.get(), kGraphSize, false);
            lm_ggml_build_forward_expand(g, out);
            for (int i = 0; i < lm_ggml_graph_n_nodes(g); ++i) {
                lm_ggml_tensor * n = lm_ggml_graph_node(g, i);
                (tier == 1 ? ops_t1 : ops_t2).insert(n->op);
                if (n->op == LM_GGML_OP_UNARY) {
                    unary.insert(lm_ggml_get_unary_op(n));
                }
            }
        }
    }
    const lm_ggml_op tier1[] = {LM_GGML_OP_DUP,
                                LM_GGML_OP_ADD,
                                LM_GGML_OP_ADD1,
                                LM_GGML_OP_ACC,
                                LM_GGML_OP_SUB,
                                LM_GGML_OP_MUL,
                                LM_GGML_OP_DIV,
                                LM_GGML_OP_SQR,
                                LM_GGML_OP_SQRT,
                                LM_GGML_OP_LOG,
                                LM_GGML_OP_SIN,
                                LM_GGML_OP_COS,
                                LM_GGML_OP_SUM,
                                LM_GGML_OP_SUM_ROWS,
                                LM_GGML_OP_MEAN,
                                LM_GGML_OP_ARGMAX,
                                LM_GGML_OP_REPEAT,
                                LM_GGML_OP_CONCAT,
                                LM_GGML_OP_NORM,
                                LM_GGML_OP_RMS_NORM,
                                LM_GGML_OP_MUL_MAT,
                                LM_GGML_OP_MUL_MAT_ID,
                                LM_GGML_OP_SCALE,
                                LM_GGML_OP_SET,
                                LM_GGML_OP_CPY,
                                LM_GGML_OP_CONT,
                                LM_GGML_OP_RESHAPE,
                                LM_GGML_OP_VIEW,
                                LM_GGML_OP_PERMUTE,
                                LM_GGML_OP_TRANSPOSE,
                                LM_GGML_OP_GET_ROWS,
                                LM_GGML_OP_DIAG_MASK_INF,
                                LM_GGML_OP_SOFT_MAX,
                                LM_GGML_OP_ROPE,
                                LM_GGML_OP_CLAMP,
                                LM_GGML_OP_ARGSORT,
                                LM_GGML_OP_FLASH_ATTN_EXT,
                                LM_GGML_OP_UNARY};
    const lm_ggml_op tier2[] = {
        LM_GGML_OP_GROUP_NORM, LM_GGML_OP_IM2COL,  LM_GGML_OP_POOL_1D, LM_GGML_OP_POOL_2D,
        LM_GGML_OP_UPSCALE,    LM_GGML_OP_PAD,     LM_GGML_OP_ARANGE,  LM_GGML_OP_TIMESTEP_EMBEDDING,
        LM_GGML_OP_LEAKY_RELU, LM_GGML_OP_OUT_PROD};
    for (lm_ggml_op op : tier1) {
        EXPECT_TRUE(ops_t1.count(op)) << "no tier-1 case computes " << lm_ggml_op_name(op);
    }
    for (lm_ggml_op op : tier2) {
        EXPECT_TRUE(ops_t2.count(op)) << "no tier-2 case computes " << lm_ggml_op_name(op);
    }
    for (int u = 0; u < LM_GGML_UNARY_OP_COUNT; ++u) {
        EXPECT_TRUE(unary.count(u)) << "no case computes unary "
                                    << lm_ggml_unary_op_name(static_cast<lm_ggml_unary_op>(u));
    }
}

TEST(OpTables, CpuDeviceIsRegistered) {
    lmtest::load_backends_once(LMGGML_PLUGIN_DIR);
    int cpus = 0;
    for (const lmtest::DeviceInfo & d : lmtest::list_devices()) {
        cpus += d.is_cpu ? 1 : 0;
    }
    EXPECT_EQ(cpus, 1) << "the CPU backend's device must be registered exactly once";
}

} // namespace
} // namespace opstest

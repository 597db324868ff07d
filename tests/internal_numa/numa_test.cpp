// NUMA topology and thread placement (src/cpu/numa.h), tested on fake sysfs
// trees written into a temporary directory, plus the pool's use of it with
// real affinity calls (on CPUs this process may run on).

#include "cpu/numa.h"
#include "cpu/threadpool.h"

#include "ggml-cpu.h"
#include "ggml.h"

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using Cpus = std::vector<int>;

// A sysfs root in a fresh temporary directory, removed at the end.
class FakeSysfs {
public:
    FakeSysfs() {
        std::string tmpl = (fs::temp_directory_path() / "lmggml-numa-XXXXXX").string();
        root_ = mkdtemp(tmpl.data()) ? tmpl : std::string();
    }
    ~FakeSysfs() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    const char * root() const { return root_.c_str(); }
    fs::path node_dir(int n) const { return fs::path(root_) / "devices/system/node" / ("node" + std::to_string(n)); }

    // node<n>/ with a cpulist file holding text
    void node_with_list(int n, const std::string & text) const {
        fs::create_directories(node_dir(n));
        std::ofstream(node_dir(n) / "cpulist") << text;
    }
    // node<n>/ with cpu<k> entries only (the form ggml reads)
    void node_with_entries(int n, const Cpus & cpus) const {
        fs::create_directories(node_dir(n));
        for (int c : cpus) {
            fs::create_directories(node_dir(n) / ("cpu" + std::to_string(c)));
        }
        fs::create_directories(node_dir(n) / "cpumap_dir_is_ignored");
    }

private:
    std::string root_;
};

Cpus parse(const char * text, bool * ok = nullptr) {
    Cpus c;
    const bool r = lm_cpu_numa_parse_cpulist(text, c);
    if (ok) *ok = r;
    return c;
}

Cpus allowed_cpus() {
    Cpus cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int i = 0; i < CPU_SETSIZE; i++) {
            if (CPU_ISSET(i, &set)) cpus.push_back(i);
        }
    }
    return cpus;
}

struct LogCapture {
    static std::mutex & mu() {
        static std::mutex m;
        return m;
    }
    static std::string & text() {
        static std::string t;
        return t;
    }
    LogCapture() {
        text().clear();
        lm_ggml_log_set(
            [](lm_ggml_log_level, const char * s, void *) {
                std::lock_guard<std::mutex> lock(mu());
                text() += s;
            },
            nullptr);
    }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
    std::string get() const {
        std::lock_guard<std::mutex> lock(mu());
        return text();
    }
};

// Puts the process-wide state back to "no placement" after a test.
struct RestoreDisabled {
    ~RestoreDisabled() { lm_cpu_numa_init_from("/nonexistent-sysfs-root", LM_GGML_NUMA_STRATEGY_DISABLED); }
};

} // namespace

// ---------------------------------------------------------------- cpulist

TEST(NumaCpulist, Ranges) {
    bool ok = false;
    EXPECT_EQ(parse("0-3\n", &ok), (Cpus{0, 1, 2, 3}));
    EXPECT_TRUE(ok);
    EXPECT_EQ(parse("0-1,8,10-11", &ok), (Cpus{0, 1, 8, 10, 11}));
    EXPECT_TRUE(ok);
    EXPECT_EQ(parse("7", &ok), (Cpus{7}));
    EXPECT_TRUE(ok);
    EXPECT_EQ(parse("4-4,2", &ok), (Cpus{2, 4})); // sorted
    EXPECT_TRUE(ok);
}

TEST(NumaCpulist, EmptyIsANodeWithoutCpus) {
    bool ok = false;
    EXPECT_TRUE(parse("\n", &ok).empty());
    EXPECT_TRUE(ok);
    EXPECT_TRUE(parse("", &ok).empty());
    EXPECT_TRUE(ok);
}

TEST(NumaCpulist, Malformed) {
    for (const char * bad : {"a", "3-1", "1-", "-1", "1,", "1;2", "0-2 x", "99999999999"}) {
        bool ok = true;
        parse(bad, &ok);
        EXPECT_FALSE(ok) << bad;
    }
    Cpus c;
    EXPECT_FALSE(lm_cpu_numa_parse_cpulist(nullptr, c));
}

// ---------------------------------------------------------------- sysfs trees

TEST(NumaSysfs, MissingTreeHasNoNodes) {
    FakeSysfs sys;
    EXPECT_TRUE(lm_cpu_numa_read_nodes(sys.root()).empty());              // no devices/system/node at all
    fs::create_directories(fs::path(sys.root()) / "devices/system/node"); // the folder, no node0
    EXPECT_TRUE(lm_cpu_numa_read_nodes(sys.root()).empty());
    EXPECT_TRUE(lm_cpu_numa_read_nodes("/nonexistent-sysfs-root").empty());
    EXPECT_TRUE(lm_cpu_numa_read_nodes(nullptr).empty());
}

TEST(NumaSysfs, OneNode) {
    FakeSysfs sys;
    sys.node_with_list(0, "0-3\n");
    const auto nodes = lm_cpu_numa_read_nodes(sys.root());
    ASSERT_EQ(nodes.size(), 1u);
    EXPECT_EQ(nodes[0], (Cpus{0, 1, 2, 3}));
}

TEST(NumaSysfs, TwoNodes) {
    FakeSysfs sys;
    sys.node_with_list(0, "0-1,4-5\n");
    sys.node_with_list(1, "2-3,6-7\n");
    const auto nodes = lm_cpu_numa_read_nodes(sys.root());
    ASSERT_EQ(nodes.size(), 2u);
    EXPECT_EQ(nodes[0], (Cpus{0, 1, 4, 5}));
    EXPECT_EQ(nodes[1], (Cpus{2, 3, 6, 7}));
}

TEST(NumaSysfs, StopsAtTheFirstMissingNode) {
    FakeSysfs sys;
    sys.node_with_list(0, "0\n");
    sys.node_with_list(2, "1\n"); // node1 missing: node2 is not reached
    EXPECT_EQ(lm_cpu_numa_read_nodes(sys.root()).size(), 1u);
}

TEST(NumaSysfs, CpuEntriesWhenTheListIsMissingOrBroken) {
    FakeSysfs sys;
    sys.node_with_entries(0, {0, 2, 10});
    sys.node_with_list(1, "garbage\n");
    fs::create_directories(sys.node_dir(1) / "cpu5");
    fs::create_directories(sys.node_dir(2)); // neither: a memory-only node
    const auto nodes = lm_cpu_numa_read_nodes(sys.root());
    ASSERT_EQ(nodes.size(), 3u);
    EXPECT_EQ(nodes[0], (Cpus{0, 2, 10}));
    EXPECT_EQ(nodes[1], (Cpus{5}));
    EXPECT_TRUE(nodes[2].empty());
}

// ---------------------------------------------------------------- strategies

TEST(NumaStrategy, DistributeIsRoundRobinOverNodes) {
    FakeSysfs sys;
    sys.node_with_list(0, "0-1\n");
    sys.node_with_list(1, "2-3\n");
    const lm_cpu_numa_state s = lm_cpu_numa_detect(sys.root(), LM_GGML_NUMA_STRATEGY_DISTRIBUTE, 0, {0, 1, 2, 3});
    EXPECT_EQ(lm_cpu_numa_thread_cpus(s, 0), (Cpus{0, 1}));
    EXPECT_EQ(lm_cpu_numa_thread_cpus(s, 1), (Cpus{2, 3}));
    EXPECT_EQ(lm_cpu_numa_thread_cpus(s, 2), (Cpus{0, 1}));
    EXPECT_EQ(lm_cpu_numa_thread_cpus(s, 3), (Cpus{2, 3}));
}

TEST(NumaStrategy, DistributeSkipsNodesWithoutCpus) {
    FakeSysfs sys;
    sys.node_with_list(0, "0\n");
    sys.node_with_list(1, "\n"); // memory only
    sys.node_with_list(2, "1\n");
    const lm_cpu_numa_state s = lm_cpu_numa_detect(sys.root(), LM_GGML_NUMA_STRATEGY_DISTRIBUTE, 0, {});
    EXPECT_EQ(lm_cpu_numa_thread_cpus(s, 0), (Cpus{0}));
    EXPECT_EQ(lm_cpu_numa_thread_cpus(s, 1), (Cpus{1}));
    EXPECT_EQ(lm_cpu_numa_thread_cpus(s, 2), (Cpus{0}));
}

TEST(NumaStrategy, IsolateKeepsEveryThreadOnTheCallersNode) {
    FakeSysfs sys;
    sys.node_with_list(0, "0-1\n");
    sys.node_with_list(1, "2-3\n");
    const lm_cpu_numa_state s = lm_cpu_numa_detect(sys.root(), LM_GGML_NUMA_STRATEGY_ISOLATE, 3, {});
    EXPECT_EQ(s.current_node, 1);
    for (int ith = 0; ith < 4; ith++) {
        EXPECT_EQ(lm_cpu_numa_thread_cpus(s, ith), (Cpus{2, 3})) << ith;
    }
    // a caller on a CPU no node lists: its node is unknown, nothing is placed
    const lm_cpu_numa_state u = lm_cpu_numa_detect(sys.root(), LM_GGML_NUMA_STRATEGY_ISOLATE, 9, {});
    EXPECT_EQ(u.current_node, -1);
    EXPECT_TRUE(lm_cpu_numa_thread_cpus(u, 0).empty());
}

TEST(NumaStrategy, NumactlUsesTheAffinityAtInit) {
    FakeSysfs sys;
    sys.node_with_list(0, "0-1\n");
    sys.node_with_list(1, "2-3\n");
    const lm_cpu_numa_state s = lm_cpu_numa_detect(sys.root(), LM_GGML_NUMA_STRATEGY_NUMACTL, 0, {1, 3});
    EXPECT_EQ(lm_cpu_numa_thread_cpus(s, 0), (Cpus{1, 3}));
    EXPECT_EQ(lm_cpu_numa_thread_cpus(s, 5), (Cpus{1, 3}));
}

TEST(NumaStrategy, DisabledAndMirrorPlaceNothing) {
    FakeSysfs sys;
    sys.node_with_list(0, "0-1\n");
    sys.node_with_list(1, "2-3\n");
    for (auto st : {LM_GGML_NUMA_STRATEGY_DISABLED, LM_GGML_NUMA_STRATEGY_MIRROR}) {
        const lm_cpu_numa_state s = lm_cpu_numa_detect(sys.root(), st, 0, {0, 1, 2, 3});
        EXPECT_EQ(s.nodes.size(), 2u);
        EXPECT_TRUE(lm_cpu_numa_thread_cpus(s, 0).empty());
        EXPECT_TRUE(lm_cpu_numa_thread_cpus(s, 1).empty());
    }
}

TEST(NumaStrategy, OneNodeOrNoneIsNotNuma) {
    FakeSysfs one;
    one.node_with_list(0, "0-3\n");
    FakeSysfs none;
    for (const char * root : {one.root(), none.root()}) {
        for (auto st :
             {LM_GGML_NUMA_STRATEGY_DISTRIBUTE, LM_GGML_NUMA_STRATEGY_ISOLATE, LM_GGML_NUMA_STRATEGY_NUMACTL}) {
            const lm_cpu_numa_state s = lm_cpu_numa_detect(root, st, 0, {0, 1});
            EXPECT_TRUE(lm_cpu_numa_thread_cpus(s, 0).empty());
            EXPECT_TRUE(lm_cpu_numa_thread_cpus(s, 1).empty());
        }
    }
}

// ---------------------------------------------------------------- process-wide state

TEST(NumaGlobal, InitFromInstallsTheTreeAndIsNumaFollows) {
    RestoreDisabled restore;
    FakeSysfs sys;
    sys.node_with_list(0, "0\n");
    sys.node_with_list(1, "1\n");
    lm_cpu_numa_init_from(sys.root(), LM_GGML_NUMA_STRATEGY_DISTRIBUTE);
    EXPECT_TRUE(lm_ggml_is_numa());
    const lm_cpu_numa_state s = lm_cpu_numa_current();
    EXPECT_EQ(s.strategy, LM_GGML_NUMA_STRATEGY_DISTRIBUTE);
    ASSERT_EQ(s.nodes.size(), 2u);
    EXPECT_EQ(s.process_cpus, allowed_cpus()); // the caller's affinity, kept for NUMACTL

    FakeSysfs one;
    one.node_with_list(0, "0-1\n");
    lm_cpu_numa_init_from(one.root(), LM_GGML_NUMA_STRATEGY_DISTRIBUTE);
    EXPECT_FALSE(lm_ggml_is_numa());
}

TEST(NumaGlobal, BindMovesTheCallingThread) {
    const Cpus allowed = allowed_cpus();
    ASSERT_FALSE(allowed.empty());
    std::thread t([&] {
        ASSERT_TRUE(lm_cpu_numa_bind_current_thread({allowed.back()}));
        EXPECT_EQ(allowed_cpus(), (Cpus{allowed.back()}));
        EXPECT_TRUE(lm_cpu_numa_bind_current_thread({})); // empty: no change
        EXPECT_EQ(allowed_cpus(), (Cpus{allowed.back()}));
    });
    t.join();
}

TEST(NumaGlobal, RefusedBindWarnsAndContinues) {
    LogCapture log;
    std::thread t([] {
        // a CPU far beyond any machine: the kernel refuses the empty effective set
        EXPECT_FALSE(lm_cpu_numa_bind_current_thread({(1 << 20) - 1}));
    });
    t.join();
    // one warning per process; no test before this one has a bind refused
    EXPECT_NE(log.get().find("cannot bind"), std::string::npos) << log.get();
}

namespace {

struct AffinityJob {
    std::vector<Cpus> seen;
    explicit AffinityJob(int n) : seen(n) {}
    static void run(void * ctx, int ith, int /*nth*/, lm_cpu_barrier * /*barrier*/) noexcept {
        static_cast<AffinityJob *>(ctx)->seen[ith] = allowed_cpus();
    }
};

} // namespace

// The pool's threads follow the installed strategy, and thread 0 (the
// caller) gets its own affinity back when the job ends.
TEST(NumaPool, DistributePlacesWorkersAndRestoresTheCaller) {
    RestoreDisabled restore;
    const Cpus allowed = allowed_cpus();
    ASSERT_FALSE(allowed.empty());
    const int a = allowed.front();
    const int b = allowed.back(); // == a on a one-CPU machine: still two nodes

    std::thread caller([&] {
        FakeSysfs sys;
        sys.node_with_list(0, std::to_string(a) + "\n");
        sys.node_with_list(1, std::to_string(b) + "\n");
        lm_cpu_numa_init_from(sys.root(), LM_GGML_NUMA_STRATEGY_DISTRIBUTE);
        ASSERT_TRUE(lm_ggml_is_numa());

        lm_ggml_threadpool_params p = lm_ggml_threadpool_params_default(4);
        lm_ggml_threadpool * tp = lm_ggml_threadpool_new(&p);
        ASSERT_NE(tp, nullptr);
        const Cpus before = allowed_cpus();
        for (int round = 0; round < 2; round++) { // placement happens once, then sticks
            AffinityJob job(4);
            ASSERT_EQ(lm_cpu_threadpool_run(tp, 4, AffinityJob::run, &job), LM_GGML_STATUS_SUCCESS);
            EXPECT_EQ(job.seen[0], (Cpus{a}));
            EXPECT_EQ(job.seen[1], (Cpus{b}));
            EXPECT_EQ(job.seen[2], (Cpus{a}));
            EXPECT_EQ(job.seen[3], (Cpus{b}));
            EXPECT_EQ(allowed_cpus(), before); // the caller is unbound again
        }
        lm_ggml_threadpool_free(tp);
    });
    caller.join();
}

TEST(NumaPool, IsolateAndNumactl) {
    RestoreDisabled restore;
    const Cpus allowed = allowed_cpus();
    ASSERT_FALSE(allowed.empty());

    std::thread caller([&] {
        // workers are created first, so they start with the whole allowed set
        lm_ggml_threadpool_params p = lm_ggml_threadpool_params_default(3);
        lm_ggml_threadpool * tp = lm_ggml_threadpool_new(&p);
        ASSERT_NE(tp, nullptr);

        // the caller runs on one known CPU, so ISOLATE picks that CPU's node
        const int home = allowed.back();
        ASSERT_TRUE(lm_cpu_numa_bind_current_thread({home}));
        FakeSysfs sys;
        sys.node_with_list(0, "100000\n");
        sys.node_with_list(1, std::to_string(home) + "\n");
        lm_cpu_numa_init_from(sys.root(), LM_GGML_NUMA_STRATEGY_ISOLATE);
        ASSERT_EQ(lm_cpu_numa_current().current_node, 1);
        AffinityJob job(3);
        ASSERT_EQ(lm_cpu_threadpool_run(tp, 3, AffinityJob::run, &job), LM_GGML_STATUS_SUCCESS);
        for (int i = 0; i < 3; i++) {
            EXPECT_EQ(job.seen[i], (Cpus{home})) << i;
        }

        // NUMACTL: every thread gets the affinity the initialising thread had
        const int other = allowed.front();
        ASSERT_TRUE(lm_cpu_numa_bind_current_thread({other}));
        lm_cpu_numa_init_from(sys.root(), LM_GGML_NUMA_STRATEGY_NUMACTL);
        AffinityJob job2(3);
        ASSERT_EQ(lm_cpu_threadpool_run(tp, 3, AffinityJob::run, &job2), LM_GGML_STATUS_SUCCESS);
        for (int i = 0; i < 3; i++) {
            EXPECT_EQ(job2.seen[i], (Cpus{other})) << i;
        }
        lm_ggml_threadpool_free(tp);
    });
    caller.join();
}

TEST(NumaPool, DisabledLeavesThreadsAlone) {
    RestoreDisabled restore;
    lm_cpu_numa_init_from("/nonexistent-sysfs-root", LM_GGML_NUMA_STRATEGY_DISTRIBUTE);
    EXPECT_FALSE(lm_ggml_is_numa());
    std::thread caller([] {
        const Cpus allowed = allowed_cpus();
        lm_ggml_threadpool_params p = lm_ggml_threadpool_params_default(2);
        lm_ggml_threadpool * tp = lm_ggml_threadpool_new(&p);
        ASSERT_NE(tp, nullptr);
        AffinityJob job(2);
        ASSERT_EQ(lm_cpu_threadpool_run(tp, 2, AffinityJob::run, &job), LM_GGML_STATUS_SUCCESS);
        EXPECT_EQ(job.seen[0], allowed);
        EXPECT_EQ(job.seen[1], allowed); // workers inherit the creator's affinity
        lm_ggml_threadpool_free(tp);
    });
    caller.join();
}

// ---------------------------------------------------------------- public entry points

TEST(NumaPublic, InitReadsTheRealSysfsOnceAndRejectsBadStrategies) {
    RestoreDisabled restore;
    LogCapture log;
    lm_ggml_numa_init((enum lm_ggml_numa_strategy) 99);
    EXPECT_NE(log.get().find("not a lm_ggml_numa_strategy"), std::string::npos) << log.get();

    lm_ggml_numa_init(LM_GGML_NUMA_STRATEGY_DISTRIBUTE);
    EXPECT_EQ(lm_ggml_is_numa(), lm_cpu_numa_read_nodes("/sys").size() > 1);
    EXPECT_EQ(lm_cpu_numa_current().strategy, LM_GGML_NUMA_STRATEGY_DISTRIBUTE);

    lm_ggml_numa_init(LM_GGML_NUMA_STRATEGY_ISOLATE); // later calls change nothing
    EXPECT_EQ(lm_cpu_numa_current().strategy, LM_GGML_NUMA_STRATEGY_DISTRIBUTE);
    EXPECT_NE(log.get().find("already initialized"), std::string::npos) << log.get();
}

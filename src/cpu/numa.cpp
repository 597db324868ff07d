// NUMA topology from sysfs and placement of the CPU backend's threads (numa.h).
#include "cpu/numa.h"
#include "core/ggml-impl.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include <dirent.h>
#if defined(__linux__)
#include <sched.h>
#endif

namespace {

// A CPU number above this is taken as a corrupt file, not a machine.
constexpr long kMaxCpu = 1 << 20;

struct numa_global {
    std::mutex mutex;
    std::shared_ptr<const lm_cpu_numa_state> state = std::make_shared<const lm_cpu_numa_state>();
    std::atomic<uint32_t> epoch{0};   // bumped by every install
    std::atomic<bool> placing{false}; // some thread gets CPUs
    std::atomic<size_t> n_nodes{0};
    bool public_init_done = false;
    std::atomic<bool> warned_bind{false};
};

// Never destroyed: pool workers may still look at it while statics die at exit.
numa_global & global() {
    static numa_global * g = new numa_global;
    return *g;
}

std::shared_ptr<const lm_cpu_numa_state> snapshot() {
    numa_global & g = global();
    std::lock_guard<std::mutex> lock(g.mutex);
    return g.state;
}

bool read_small_file(const std::string & path, std::string & out) {
    FILE * f = std::fopen(path.c_str(), "r");
    if (f == nullptr) {
        return false;
    }
    char buf[4096];
    out.clear();
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
        out.append(buf, n);
    }
    const bool ok = std::ferror(f) == 0;
    std::fclose(f);
    return ok;
}

bool is_dir(const std::string & path) {
    DIR * d = opendir(path.c_str());
    if (d == nullptr) {
        return false;
    }
    closedir(d);
    return true;
}

// The cpu<K> entries of a node directory (the form ggml itself reads).
std::vector<int> cpus_from_entries(const std::string & node_dir) {
    std::vector<int> cpus;
    DIR * d = opendir(node_dir.c_str());
    if (d == nullptr) {
        return cpus;
    }
    while (const dirent * e = readdir(d)) {
        const char * name = e->d_name;
        if (std::strncmp(name, "cpu", 3) != 0 || name[3] < '0' || name[3] > '9') {
            continue; // cpulist, cpumap, ...
        }
        char * end = nullptr;
        errno = 0;
        const long k = std::strtol(name + 3, &end, 10);
        if (errno == 0 && *end == '\0' && k <= kMaxCpu) {
            cpus.push_back((int) k);
        }
    }
    closedir(d);
    std::sort(cpus.begin(), cpus.end());
    return cpus;
}

std::vector<int> current_affinity() {
    std::vector<int> cpus;
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int i = 0; i < CPU_SETSIZE; i++) {
            if (CPU_ISSET(i, &set)) {
                cpus.push_back(i);
            }
        }
    }
#endif
    return cpus;
}

int current_cpu() {
#if defined(__linux__)
    return sched_getcpu(); // -1 when unknown
#else
    return -1;
#endif
}

void install(lm_cpu_numa_state s) {
    numa_global & g = global();
    bool placing = false;
    for (int ith = 0; ith < (int) std::max<size_t>(s.nodes.size(), 1) && !placing; ith++) {
        placing = !lm_cpu_numa_thread_cpus(s, ith).empty();
    }
    const size_t n = s.nodes.size();
    auto p = std::make_shared<const lm_cpu_numa_state>(std::move(s));
    std::lock_guard<std::mutex> lock(g.mutex);
    g.state = std::move(p);
    g.n_nodes.store(n, std::memory_order_relaxed);
    g.placing.store(placing, std::memory_order_release);
    g.epoch.fetch_add(1, std::memory_order_acq_rel);
}

} // namespace

bool lm_cpu_numa_parse_cpulist(const char * text, std::vector<int> & cpus) {
    cpus.clear();
    if (text == nullptr) {
        return false;
    }
    const char * p = text;
    auto skip_space = [&p] {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    };
    auto number = [&p](long & v) {
        if (*p < '0' || *p > '9') return false;
        char * end = nullptr;
        errno = 0;
        v = std::strtol(p, &end, 10);
        if (errno != 0 || v > kMaxCpu) return false;
        p = end;
        return true;
    };
    skip_space();
    while (*p != '\0') {
        long a = 0, b = 0;
        if (!number(a)) return false;
        b = a;
        if (*p == '-') {
            p++;
            if (!number(b) || b < a) return false;
        }
        for (long c = a; c <= b; c++) {
            cpus.push_back((int) c);
        }
        skip_space();
        if (*p == ',') {
            p++;
            skip_space();
            if (*p == '\0') return false; // trailing comma
        } else if (*p != '\0') {
            return false;
        }
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return true;
}

std::vector<std::vector<int>> lm_cpu_numa_read_nodes(const char * sysfs_root) {
    std::vector<std::vector<int>> nodes;
    if (sysfs_root == nullptr) {
        return nodes;
    }
    const std::string base = std::string(sysfs_root) + "/devices/system/node/node";
    for (int n = 0; n < 4096; n++) {
        const std::string dir = base + std::to_string(n);
        if (!is_dir(dir)) {
            break; // nodes are numbered densely from 0, as ggml assumes
        }
        std::string text;
        std::vector<int> cpus;
        if (!read_small_file(dir + "/cpulist", text) || !lm_cpu_numa_parse_cpulist(text.c_str(), cpus)) {
            cpus = cpus_from_entries(dir);
        }
        nodes.push_back(std::move(cpus));
    }
    return nodes;
}

lm_cpu_numa_state lm_cpu_numa_detect(const char * sysfs_root, enum lm_ggml_numa_strategy strategy, int cpu,
                                     const std::vector<int> & process_cpus) {
    lm_cpu_numa_state s;
    s.strategy = strategy;
    s.nodes = lm_cpu_numa_read_nodes(sysfs_root);
    s.process_cpus = process_cpus;
    for (size_t n = 0; n < s.nodes.size() && cpu >= 0; n++) {
        if (std::binary_search(s.nodes[n].begin(), s.nodes[n].end(), cpu)) {
            s.current_node = (int) n;
            break;
        }
    }
    return s;
}

std::vector<int> lm_cpu_numa_thread_cpus(const lm_cpu_numa_state & s, int ith) {
    if (s.nodes.size() <= 1) {
        return {}; // one node: nothing to place
    }
    switch (s.strategy) {
        case LM_GGML_NUMA_STRATEGY_DISTRIBUTE: {
            // round-robin over the nodes that have CPUs (memory-only nodes cannot run threads)
            std::vector<size_t> with_cpus;
            for (size_t n = 0; n < s.nodes.size(); n++) {
                if (!s.nodes[n].empty()) {
                    with_cpus.push_back(n);
                }
            }
            if (with_cpus.empty()) {
                return {};
            }
            const size_t k = (size_t) std::max(ith, 0) % with_cpus.size();
            return s.nodes[with_cpus[k]];
        }
        case LM_GGML_NUMA_STRATEGY_ISOLATE:
            if (s.current_node < 0) {
                return {};
            }
            return s.nodes[(size_t) s.current_node];
        case LM_GGML_NUMA_STRATEGY_NUMACTL: return s.process_cpus;
        default: return {}; // DISABLED, MIRROR
    }
}

void lm_cpu_numa_init_from(const char * sysfs_root, enum lm_ggml_numa_strategy strategy) {
    install(lm_cpu_numa_detect(sysfs_root, strategy, current_cpu(), current_affinity()));
}

lm_cpu_numa_state lm_cpu_numa_current(void) { return *snapshot(); }

bool lm_cpu_numa_bind_current_thread(const std::vector<int> & cpus) {
    if (cpus.empty()) {
        return true;
    }
#if defined(__linux__)
    const int max_cpu = *std::max_element(cpus.begin(), cpus.end());
    cpu_set_t * set = CPU_ALLOC(max_cpu + 1);
    if (set == nullptr) {
        return false;
    }
    const size_t size = CPU_ALLOC_SIZE(max_cpu + 1);
    CPU_ZERO_S(size, set);
    for (int c : cpus) {
        CPU_SET_S(c, size, set);
    }
    const int rc = sched_setaffinity(0, size, set); // 0: the calling thread
    const int err = errno;
    CPU_FREE(set);
    if (rc != 0) {
        if (!global().warned_bind.exchange(true)) {
            LM_GGML_LOG_WARN("lm_ggml_numa: cannot bind a thread to its node's CPUs (%s); continuing unbound\n",
                             std::strerror(err));
        }
        return false;
    }
    return true;
#else
    return false;
#endif
}

// Placement is a hint: out of memory here (global() allocates on first use)
// skips it rather than throwing out of a pool thread or a running job.
void lm_cpu_numa_place_worker(int ith, uint32_t * seen_epoch) noexcept {
    try {
        numa_global & g = global();
        const uint32_t e = g.epoch.load(std::memory_order_acquire);
        if (e == *seen_epoch) {
            return;
        }
        *seen_epoch = e;
        if (!g.placing.load(std::memory_order_acquire)) {
            return;
        }
        lm_cpu_numa_bind_current_thread(lm_cpu_numa_thread_cpus(*snapshot(), ith));
    } catch (const std::exception &) {
        // unplaced: the worker still runs its share
    }
}

lm_cpu_numa_caller_scope::lm_cpu_numa_caller_scope() noexcept {
    try {
        if (!global().placing.load(std::memory_order_acquire)) {
            return; // the common case: one relaxed check per graph
        }
        const std::vector<int> cpus = lm_cpu_numa_thread_cpus(*snapshot(), 0);
        if (cpus.empty()) {
            return;
        }
        saved_ = current_affinity();
        restore_ = !saved_.empty() && lm_cpu_numa_bind_current_thread(cpus);
    } catch (const std::exception &) {
        restore_ = false; // unplaced: the caller runs where it is
    }
}

lm_cpu_numa_caller_scope::~lm_cpu_numa_caller_scope() {
    if (restore_) {
        lm_cpu_numa_bind_current_thread(saved_); // the caller's own thread keeps no node binding
    }
}

// ---------------------------------------------------------------- public API

void lm_ggml_numa_init(enum lm_ggml_numa_strategy numa) {
    if ((int) numa < 0 || numa >= LM_GGML_NUMA_STRATEGY_COUNT) {
        LM_GGML_LOG_ERROR("lm_ggml_numa_init: strategy %d is not a lm_ggml_numa_strategy\n", (int) numa);
        return;
    }
    numa_global & g = global();
    {
        std::lock_guard<std::mutex> lock(g.mutex);
        if (g.public_init_done) {
            LM_GGML_LOG_WARN("lm_ggml_numa_init: NUMA already initialized; strategy %d ignored\n", (int) numa);
            return;
        }
        g.public_init_done = true;
    }
    lm_cpu_numa_init_from("/sys", numa);
    if (lm_ggml_is_numa()) {
        std::string text;
        if (read_small_file("/proc/sys/kernel/numa_balancing", text) && text != "0\n") {
            LM_GGML_LOG_WARN("lm_ggml_numa_init: /proc/sys/kernel/numa_balancing is enabled; it has been observed to "
                             "hurt performance\n");
        }
    }
}

bool lm_ggml_is_numa(void) { return global().n_nodes.load(std::memory_order_relaxed) > 1; }

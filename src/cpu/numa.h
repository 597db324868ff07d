#pragma once
// NUMA placement of the CPU backend's threads (lm_ggml_numa_init).
//
// The topology (nodes and their CPUs) is read from sysfs once; the strategy
// then decides where thread ith of a graph computation runs:
//   DISTRIBUTE  node ith % n (over the nodes that have CPUs)
//   ISOLATE     the node of the CPU that called lm_ggml_numa_init
//   NUMACTL     the calling thread's affinity at init (what numactl set)
//   DISABLED / MIRROR: threads are left where they are.
// As in ggml, nothing is placed unless there is more than one node.
// Placement is best effort: a refused affinity call logs one warning.

#include "ggml-cpu.h"

#include <cstdint>
#include <vector>

struct lm_cpu_numa_state {
    enum lm_ggml_numa_strategy strategy = LM_GGML_NUMA_STRATEGY_DISABLED;
    std::vector<std::vector<int>> nodes; // CPUs of node 0, 1, ... (sysfs order)
    int current_node = -1;               // node of the initialising CPU; -1 unknown
    std::vector<int> process_cpus;       // the initialising thread's affinity
};

// Parses a sysfs CPU list ("0-3,8,10-11\n"). An empty list is valid.
// False (cpus unspecified) on anything malformed.
bool lm_cpu_numa_parse_cpulist(const char * text, std::vector<int> & cpus);

// Reads <sysfs_root>/devices/system/node/node<N> for N = 0, 1, ... up to the
// first missing one: each node's CPUs from its cpulist file, or from its
// cpu<K> entries when that file is absent. No node directory: empty result.
std::vector<std::vector<int>> lm_cpu_numa_read_nodes(const char * sysfs_root);

// The state lm_ggml_numa_init would build from the tree under sysfs_root,
// given the CPU the caller runs on and the caller's affinity.
lm_cpu_numa_state lm_cpu_numa_detect(const char * sysfs_root, enum lm_ggml_numa_strategy strategy, int current_cpu,
                                     const std::vector<int> & process_cpus);

// CPUs thread ith should be bound to under s; empty: leave the thread alone.
std::vector<int> lm_cpu_numa_thread_cpus(const lm_cpu_numa_state & s, int ith);

// Detects from sysfs_root (with the calling thread's CPU and affinity) and
// makes the result the process-wide state, replacing any earlier one.
// lm_ggml_numa_init calls it once with "/sys"; tests call it with fake trees.
// Pool workers pick up a new state at their next job; one that places
// nothing leaves already placed workers where they are.
void lm_cpu_numa_init_from(const char * sysfs_root, enum lm_ggml_numa_strategy strategy);

// A copy of the process-wide state (DISABLED with no nodes before init).
lm_cpu_numa_state lm_cpu_numa_current(void);

// Binds the calling thread to cpus (empty: no change). False (logged once per
// process) when the system refuses.
bool lm_cpu_numa_bind_current_thread(const std::vector<int> & cpus);

// For pool workers: places the calling thread as thread ith if the
// process-wide state changed since *seen_epoch (one atomic load otherwise).
void lm_cpu_numa_place_worker(int ith, uint32_t * seen_epoch) noexcept;

// For the thread that runs a job as thread 0: binds it for the job and puts
// its previous affinity back afterwards. Does nothing without placement.
class lm_cpu_numa_caller_scope {
public:
    lm_cpu_numa_caller_scope() noexcept;
    ~lm_cpu_numa_caller_scope();
    lm_cpu_numa_caller_scope(const lm_cpu_numa_caller_scope &) = delete;
    lm_cpu_numa_caller_scope & operator=(const lm_cpu_numa_caller_scope &) = delete;

private:
    bool restore_ = false;
    std::vector<int> saved_;
};

// The default thread count. The CPU backend's threads meet at a barrier
// after every op: one thread sharing its core with another busy process
// stalls all the others each time it is descheduled, and generation then
// runs slower than on one thread (docs/PERF.md, "Threads under contention").
// So the default is the cores this process may use minus those that other
// work keeps busy, measured from /proc/stat over a short sample.
#include "common.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

namespace cli {

namespace {

struct CpuTimes {
    unsigned long long busy = 0, total = 0;
};

// Per-CPU jiffies from /proc/stat ("cpuN user nice system idle iowait irq softirq steal ...").
std::map<int, CpuTimes> read_cpu_times() {
    std::map<int, CpuTimes> out;
    std::ifstream f("/proc/stat");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
        std::istringstream in(line.substr(3));
        int cpu = -1;
        in >> cpu;
        unsigned long long v[8] = {};
        for (unsigned long long & x : v) in >> x;
        CpuTimes t;
        for (int i = 0; i < 8; i++) t.total += v[i];
        t.busy = t.total - v[3] - v[4]; // all but idle and iowait
        out[cpu] = t;
    }
    return out;
}

struct ThreadChoice {
    int32_t n = 1;
    int allowed = 0, busy = 0;
};

ThreadChoice choose() {
    ThreadChoice c;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) c.allowed = CPU_COUNT(&set);
    if (c.allowed <= 0) {
        c.allowed = int(std::thread::hardware_concurrency());
        c.n = c.allowed > 0 ? c.allowed : 4;
        return c;
    }
    // 100 ms: ten scheduler ticks at the usual USER_HZ of 100
    const auto a = read_cpu_times();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto b = read_cpu_times();
    for (const auto & [cpu, t1] : b) {
        if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set) || !a.count(cpu)) continue;
        const CpuTimes & t0 = a.at(cpu);
        const unsigned long long total = t1.total - t0.total, busy = t1.busy - t0.busy;
        if (total > 0 && 2 * busy > total) c.busy++; // more than half busy: another process holds it
    }
    c.n = std::max(1, c.allowed - c.busy);
    return c;
}

const ThreadChoice & choice() {
    static const ThreadChoice c = choose();
    return c;
}

} // namespace

int32_t default_threads() { return choice().n; }

std::string default_threads_note() {
    const ThreadChoice & c = choice();
    return "threads: " + std::to_string(c.n) + " (" + std::to_string(c.allowed) + " usable cores, " +
           std::to_string(c.busy) + " busy with other work; -t N to choose)";
}

} // namespace cli

// Persistent worker pool for the CPU backend. See threadpool.h for the model.
//
// Dispatch: the caller publishes a job by bumping `state` (generation in the
// high 32 bits, active thread count in the low 32 bits, one atomic so a worker
// can never pair one job's generation with another job's thread count).
// Workers poll `state` for a bounded number of rounds, then sleep on `cv`.
// Completion: every participant meets at one final barrier, after which no
// worker touches the job's fields again, so the caller may start the next one.

#include "cpu/threadpool.h"
#include "cpu/numa.h"

#include "core/ggml-impl.h"

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include <climits>

#if defined(__linux__)
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#endif
}

// Spins before sleeping: inside a graph (barrier) threads usually meet within
// microseconds; between graphs the budget scales with params.poll (0..100).
constexpr int kBarrierSpin = 1 << 12;
constexpr uint32_t kPollRoundUnit = 1024;

constexpr uint64_t pack_state(uint32_t generation, uint32_t n_active) {
    return ((uint64_t) generation << 32) | n_active;
}
constexpr int state_n_active(uint64_t s) { return (int) (s & 0xffffffffu); }

} // namespace

// Sleeping on `phase` uses the futex directly (not std::atomic::wait) so the
// wake-up protocol is explicit: lost wakeups are excluded by seq_cst ordering
// between (sleepers++, load phase) and (phase++, load sleepers), one of the
// two sides always sees the other; the last arriver skips the syscall when
// nobody sleeps.
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free,
              "the futex word is the atomic itself");

static void phase_sleep(std::atomic<uint32_t> & phase, uint32_t ph) {
#if defined(__linux__)
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&phase), FUTEX_WAIT_PRIVATE, ph, nullptr, nullptr, 0);
#else
    (void) phase;
    (void) ph;
    std::this_thread::yield();
#endif
}

static void phase_wake_all(std::atomic<uint32_t> & phase) {
#if defined(__linux__)
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&phase), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
#else
    (void) phase;
#endif
}

void lm_cpu_barrier::wait() { wait(nullptr, nullptr); }

void lm_cpu_barrier::wait(bool (*idle)(void * ctx), void * ctx) {
    const int n_threads = n;
    if (n_threads <= 1) {
        return;
    }
    const uint32_t ph = phase.load(std::memory_order_acquire);
    if (arrived.fetch_add(1, std::memory_order_acq_rel) == n_threads - 1) {
        // Last to arrive: reset for the next use, then release everyone.
        arrived.store(0, std::memory_order_relaxed);
        phase.fetch_add(1, std::memory_order_seq_cst);
        if (sleepers.load(std::memory_order_seq_cst) > 0) {
            phase_wake_all(phase);
        }
        return;
    }
    if (idle != nullptr) {
        while (phase.load(std::memory_order_acquire) == ph) {
            if (!idle(ctx)) {
                break;
            }
        }
    }
    for (int i = 0; i < kBarrierSpin; i++) {
        if (phase.load(std::memory_order_acquire) != ph) {
            return;
        }
        cpu_relax();
    }
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    while (phase.load(std::memory_order_seq_cst) == ph) {
        phase_sleep(phase, ph); // returns at once if phase already moved on
    }
    sleepers.fetch_sub(1, std::memory_order_relaxed);
}

struct lm_ggml_threadpool {
    lm_ggml_threadpool_params params{};
    int n_threads_max = 1;
    uint32_t poll_rounds = 0;

    std::vector<std::thread> workers; // threads 1 .. n_threads_max-1

    std::mutex mutex; // guards sleeping on cv
    std::condition_variable cv;

    alignas(64) std::atomic<uint64_t> state{pack_state(0, 0)};
    std::atomic<bool> stop{false};
    std::atomic<bool> paused{false};
    std::atomic<bool> busy{false};
    std::atomic<bool> warned_placement{false};

    // The current job; written by the caller before publishing `state`.
    lm_cpu_job_fn job_fn = nullptr;
    void * job_ctx = nullptr;
    uint32_t generation = 0;
    std::atomic<uint64_t> n_jobs{0};

    lm_cpu_barrier barrier;
};

namespace {

void warn_placement_once(lm_ggml_threadpool * tp, const char * what, int err) {
    if (!tp->warned_placement.exchange(true)) {
        LM_GGML_LOG_WARN("lm_ggml_threadpool: worker: could not set %s (%s); continuing without it\n", what,
                         strerror(err));
    }
}

// Best effort: placement and priority are hints; failing them is not an error.
void apply_placement(lm_ggml_threadpool * tp, const std::vector<bool> & cpumask) {
#if defined(__linux__)
    bool any = false;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (size_t i = 0; i < cpumask.size() && i < (size_t) CPU_SETSIZE; i++) {
        if (cpumask[i]) {
            CPU_SET(i, &set);
            any = true;
        }
    }
    if (any) {
        const int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
        if (err != 0) {
            warn_placement_once(tp, "CPU affinity", err);
        }
    }
    if (tp->params.prio != LM_GGML_SCHED_PRIO_NORMAL) {
        sched_param sp{};
        switch (tp->params.prio) {
            case LM_GGML_SCHED_PRIO_MEDIUM: sp.sched_priority = 40; break;
            case LM_GGML_SCHED_PRIO_HIGH: sp.sched_priority = 80; break;
            case LM_GGML_SCHED_PRIO_REALTIME: sp.sched_priority = 90; break;
            default: sp.sched_priority = 0; break;
        }
        const int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
        if (err != 0) {
            warn_placement_once(tp, "thread priority", err);
        }
    }
#else
    (void) tp;
    (void) cpumask;
#endif
}

// Blocks until `state` differs from `seen` or the pool stops; returns state.
uint64_t wait_for_job(lm_ggml_threadpool * tp, uint64_t seen) {
    if (!tp->paused.load(std::memory_order_relaxed)) {
        for (uint32_t r = 0; r < tp->poll_rounds; r++) {
            const uint64_t s = tp->state.load(std::memory_order_acquire);
            if (s != seen || tp->stop.load(std::memory_order_relaxed)) {
                return s;
            }
            if (tp->paused.load(std::memory_order_relaxed)) {
                break;
            }
            cpu_relax();
        }
    }
    std::unique_lock<std::mutex> lock(tp->mutex);
    tp->cv.wait(lock, [&] {
        return tp->stop.load(std::memory_order_relaxed) || tp->state.load(std::memory_order_acquire) != seen;
    });
    return tp->state.load(std::memory_order_acquire);
}

void worker_main(lm_ggml_threadpool * tp, int ith, const std::vector<bool> & cpumask) {
    apply_placement(tp, cpumask);
    uint64_t seen = pack_state(0, 0); // the state at creation: no job yet
    uint32_t numa_seen = 0;           // NUMA placement applied (lm_ggml_numa_init)
    for (;;) {
        const uint64_t s = wait_for_job(tp, seen);
        if (tp->stop.load(std::memory_order_acquire)) {
            return;
        }
        seen = s;
        const int n_active = state_n_active(s);
        if (ith < n_active) {
            lm_cpu_numa_place_worker(ith, &numa_seen); // overrides cpumask, as in ggml
            tp->job_fn(tp->job_ctx, ith, n_active, &tp->barrier);
            tp->barrier.wait(); // completion: the caller returns after this
        }
    }
}

// The CPUs worker j may run on: the whole mask, or (strict_cpu) one CPU each,
// handed out round-robin from the mask.
std::vector<bool> worker_cpumask(const lm_ggml_threadpool_params & p, int & cursor) {
    std::vector<bool> mask(LM_GGML_MAX_N_THREADS, false);
    if (!p.strict_cpu) {
        for (int i = 0; i < LM_GGML_MAX_N_THREADS; i++) {
            mask[i] = p.cpumask[i];
        }
        return mask;
    }
    for (int k = 0; k < LM_GGML_MAX_N_THREADS; k++) {
        const int idx = (cursor + k) % LM_GGML_MAX_N_THREADS;
        if (p.cpumask[idx]) {
            mask[idx] = true;
            cursor = idx + 1;
            break;
        }
    }
    return mask;
}

void stop_and_join(lm_ggml_threadpool * tp) {
    {
        std::lock_guard<std::mutex> lock(tp->mutex);
        tp->stop.store(true, std::memory_order_release);
    }
    tp->cv.notify_all();
    for (std::thread & t : tp->workers) {
        if (t.joinable()) {
            t.join();
        }
    }
    tp->workers.clear();
}

} // namespace

enum lm_ggml_status lm_cpu_threadpool_run(lm_ggml_threadpool * tp, int n_threads, lm_cpu_job_fn fn, void * ctx) {
    if (tp == nullptr || fn == nullptr) {
        LM_GGML_LOG_ERROR("lm_cpu_threadpool_run: %s is NULL\n", tp == nullptr ? "threadpool" : "job function");
        return LM_GGML_STATUS_FAILED;
    }
    if (n_threads < 1) {
        LM_GGML_LOG_ERROR("lm_cpu_threadpool_run: n_threads: %d, must be >= 1\n", n_threads);
        return LM_GGML_STATUS_FAILED;
    }
    if (n_threads > tp->n_threads_max) {
        LM_GGML_LOG_WARN("lm_cpu_threadpool_run: n_threads: %d requested, pool has %d; using %d\n", n_threads,
                         tp->n_threads_max, tp->n_threads_max);
        n_threads = tp->n_threads_max;
    }
    if (tp->busy.exchange(true, std::memory_order_acquire)) {
        LM_GGML_LOG_ERROR("lm_cpu_threadpool_run: threadpool: already running a graph on another thread\n");
        return LM_GGML_STATUS_FAILED;
    }

    // Placed before the job is published: once workers may be running it,
    // nothing on this thread may fail or throw until the completion barrier
    // (a caller leaving early would leave them reading its freed state).
    lm_cpu_numa_caller_scope numa_placement; // thread 0 on its node for this job only

    tp->job_fn = fn;
    tp->job_ctx = ctx;
    tp->barrier.n = n_threads;
    tp->n_jobs.fetch_add(1, std::memory_order_relaxed);

    if (n_threads > 1) {
        {
            std::lock_guard<std::mutex> lock(tp->mutex);
            tp->paused.store(false, std::memory_order_relaxed); // running a job resumes the pool
            tp->generation++;
            tp->state.store(pack_state(tp->generation, (uint32_t) n_threads), std::memory_order_release);
        }
        tp->cv.notify_all();
    }

    fn(ctx, 0, n_threads, &tp->barrier); // noexcept by type
    tp->barrier.wait();

    tp->busy.store(false, std::memory_order_release);
    return LM_GGML_STATUS_SUCCESS;
}

uint64_t lm_cpu_threadpool_n_jobs(const lm_ggml_threadpool * tp) {
    return tp ? tp->n_jobs.load(std::memory_order_relaxed) : 0;
}

// ---------------------------------------------------------------- public API

void lm_ggml_threadpool_params_init(struct lm_ggml_threadpool_params * p, int n_threads) {
    if (p == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_threadpool_params_init: params is NULL\n");
        return;
    }
    memset(p->cpumask, 0, sizeof(p->cpumask)); // all false: inherit the default affinity
    p->n_threads = n_threads;
    p->prio = LM_GGML_SCHED_PRIO_NORMAL;
    p->poll = 50; // poll a little between graphs, then sleep
    p->strict_cpu = false;
    p->paused = false;
}

struct lm_ggml_threadpool_params lm_ggml_threadpool_params_default(int n_threads) {
    lm_ggml_threadpool_params p;
    lm_ggml_threadpool_params_init(&p, n_threads);
    return p;
}

bool lm_ggml_threadpool_params_match(const struct lm_ggml_threadpool_params * p0,
                                     const struct lm_ggml_threadpool_params * p1) {
    if (p0 == nullptr || p1 == nullptr) {
        return p0 == p1;
    }
    return p0->n_threads == p1->n_threads && p0->prio == p1->prio && p0->poll == p1->poll &&
           p0->strict_cpu == p1->strict_cpu && memcmp(p0->cpumask, p1->cpumask, sizeof(p0->cpumask)) == 0;
}

// Ownership: the caller frees the pool with lm_ggml_threadpool_free, after
// every backend using it has been freed or switched to another pool.
struct lm_ggml_threadpool * lm_ggml_threadpool_new(struct lm_ggml_threadpool_params * params) {
    if (params == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_threadpool_new: params is NULL\n");
        return nullptr;
    }
    if (params->n_threads < 1 || params->n_threads > LM_GGML_MAX_N_THREADS) {
        LM_GGML_LOG_ERROR("lm_ggml_threadpool_new: n_threads: %d, must be in [1, %d]\n", params->n_threads,
                          LM_GGML_MAX_N_THREADS);
        return nullptr;
    }
    lm_ggml_threadpool * tp = nullptr;
    try {
        tp = new lm_ggml_threadpool;
        tp->params = *params;
        tp->n_threads_max = params->n_threads;
        tp->poll_rounds = (params->poll > 100 ? 100u : params->poll) * kPollRoundUnit;
        tp->paused.store(params->paused, std::memory_order_relaxed);
        tp->workers.reserve((size_t) params->n_threads - 1);
        int cursor = 0; // the caller (thread 0) keeps its own placement
        for (int j = 1; j < params->n_threads; j++) {
            tp->workers.emplace_back(worker_main, tp, j, worker_cpumask(*params, cursor));
        }
    } catch (const std::exception & e) {
        LM_GGML_LOG_ERROR("lm_ggml_threadpool_new: %d threads: %s\n", params->n_threads, e.what());
        if (tp != nullptr) {
            stop_and_join(tp);
            delete tp;
        }
        return nullptr;
    }
    return tp;
}

void lm_ggml_threadpool_free(struct lm_ggml_threadpool * threadpool) {
    if (threadpool == nullptr) {
        return;
    }
    stop_and_join(threadpool);
    delete threadpool;
}

int lm_ggml_threadpool_get_n_threads(struct lm_ggml_threadpool * threadpool) {
    if (threadpool == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_threadpool_get_n_threads: threadpool is NULL\n");
        return 0;
    }
    return threadpool->n_threads_max;
}

// Paused workers skip polling and sleep until the next job, which resumes them.
void lm_ggml_threadpool_pause(struct lm_ggml_threadpool * threadpool) {
    if (threadpool == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_threadpool_pause: threadpool is NULL\n");
        return;
    }
    std::lock_guard<std::mutex> lock(threadpool->mutex);
    threadpool->paused.store(true, std::memory_order_relaxed);
}

void lm_ggml_threadpool_resume(struct lm_ggml_threadpool * threadpool) {
    if (threadpool == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_threadpool_resume: threadpool is NULL\n");
        return;
    }
    std::lock_guard<std::mutex> lock(threadpool->mutex);
    threadpool->paused.store(false, std::memory_order_relaxed);
}

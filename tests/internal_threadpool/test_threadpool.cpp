// The CPU thread pool and barrier, tested directly (internal interface).
// Thread counts stay small (<= 4): the test machines may have 2 cores.

#include "cpu/kernels/kernel.h"
#include "cpu/threadpool.h"

#include "ggml-cpu.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

struct PoolDeleter {
    void operator()(lm_ggml_threadpool * tp) const { lm_ggml_threadpool_free(tp); }
};
using PoolPtr = std::unique_ptr<lm_ggml_threadpool, PoolDeleter>;

PoolPtr make_pool(int n_threads, uint32_t poll = 50, bool paused = false) {
    lm_ggml_threadpool_params p = lm_ggml_threadpool_params_default(n_threads);
    p.poll = poll;
    p.paused = paused;
    return PoolPtr(lm_ggml_threadpool_new(&p));
}

double process_cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

// Each round: every thread publishes the round number in its slot, meets the
// others, then checks that every slot shows this round. A barrier that lets a
// thread through early shows up as a stale slot.
struct BarrierJob {
    int rounds = 0;
    std::vector<std::atomic<int>> slots;
    std::atomic<int> stale{0};
    std::atomic<int> finished{0};
    explicit BarrierJob(int n) : slots(n) {}

    static void run(void * ctx, int ith, int nth, lm_cpu_barrier * barrier) noexcept {
        BarrierJob * job = static_cast<BarrierJob *>(ctx);
        for (int r = 1; r <= job->rounds; r++) {
            job->slots[ith].store(r, std::memory_order_relaxed);
            barrier->wait();
            for (int j = 0; j < nth; j++) {
                if (job->slots[j].load(std::memory_order_relaxed) != r) {
                    job->stale.fetch_add(1);
                }
            }
            barrier->wait(); // nobody moves to round r+1 while others still check r
        }
        job->finished.fetch_add(1);
    }
};

TEST(ThreadpoolBarrier, ManyRoundsWith2To4Threads) {
    for (int n = 2; n <= 4; n++) {
        PoolPtr pool = make_pool(n);
        ASSERT_NE(pool, nullptr);
        BarrierJob job(n);
        job.rounds = 500;
        ASSERT_EQ(lm_cpu_threadpool_run(pool.get(), n, BarrierJob::run, &job), LM_GGML_STATUS_SUCCESS);
        EXPECT_EQ(job.stale.load(), 0) << "n_threads=" << n;
        EXPECT_EQ(job.finished.load(), n) << "every thread ran the job once";
    }
}

// Plain (non-atomic) data written before the barrier is visible after it:
// what kernels rely on when one thread prepares wdata for the others.
struct VisibilityJob {
    static constexpr int kPerThread = 1024;
    int rounds = 0;
    std::vector<int64_t> data; // (n_threads, kPerThread)
    std::atomic<int> wrong{0};

    static void run(void * ctx, int ith, int nth, lm_cpu_barrier * barrier) noexcept {
        VisibilityJob * job = static_cast<VisibilityJob *>(ctx);
        lm_cpu_params params = {ith, nth, 0, nullptr, barrier, nullptr, 0};
        for (int r = 0; r < job->rounds; r++) {
            int64_t * mine = job->data.data() + (size_t) ith * kPerThread;
            for (int k = 0; k < kPerThread; k++) {
                mine[k] = (int64_t) r * 1000003 + ith * 7919 + k;
            }
            lm_cpu_barrier_wait(&params); // the kernel-facing entry point
            const int other = (ith + 1) % nth;
            const int64_t * theirs = job->data.data() + (size_t) other * kPerThread;
            for (int k = 0; k < kPerThread; k++) {
                if (theirs[k] != (int64_t) r * 1000003 + other * 7919 + k) {
                    job->wrong.fetch_add(1);
                    break;
                }
            }
            lm_cpu_barrier_wait(&params);
        }
    }
};

TEST(ThreadpoolBarrier, PlainWritesVisibleAfterBarrier) {
    const int n = 3;
    PoolPtr pool = make_pool(n);
    ASSERT_NE(pool, nullptr);
    VisibilityJob job;
    job.rounds = 200;
    job.data.assign((size_t) n * VisibilityJob::kPerThread, -1);
    ASSERT_EQ(lm_cpu_threadpool_run(pool.get(), n, VisibilityJob::run, &job), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(job.wrong.load(), 0);
}

TEST(ThreadpoolBarrier, SingleThreadParamsDoNotWait) {
    lm_cpu_barrier barrier;
    barrier.n = 4; // would block forever if waited on by one thread
    lm_cpu_params params = {0, 1, 0, nullptr, &barrier, nullptr, 0};
    lm_cpu_barrier_wait(&params); // returns: nth == 1
    SUCCEED();
}

// Records which OS thread ran each (job, ith).
struct IdentityJob {
    std::mutex mutex;
    std::vector<std::vector<std::thread::id>> ids; // [ith] -> one id per job
    std::vector<int> nth_seen;

    static void run(void * ctx, int ith, int nth, lm_cpu_barrier * barrier) noexcept {
        (void) barrier;
        IdentityJob * job = static_cast<IdentityJob *>(ctx);
        std::lock_guard<std::mutex> lock(job->mutex);
        job->ids[ith].push_back(std::this_thread::get_id());
        job->nth_seen.push_back(nth);
    }
};

TEST(Threadpool, WorkersArePersistentAcrossJobs) {
    const int n = 4, jobs = 100;
    PoolPtr pool = make_pool(n);
    ASSERT_NE(pool, nullptr);
    IdentityJob job;
    job.ids.resize(n);
    const uint64_t jobs_before = lm_cpu_threadpool_n_jobs(pool.get());
    for (int j = 0; j < jobs; j++) {
        ASSERT_EQ(lm_cpu_threadpool_run(pool.get(), n, IdentityJob::run, &job), LM_GGML_STATUS_SUCCESS);
    }
    EXPECT_EQ(lm_cpu_threadpool_n_jobs(pool.get()) - jobs_before, (uint64_t) jobs);
    std::set<std::thread::id> distinct;
    for (int i = 0; i < n; i++) {
        ASSERT_EQ((int) job.ids[i].size(), jobs) << "thread " << i << " ran every job once";
        for (const auto & id : job.ids[i]) {
            EXPECT_EQ(id, job.ids[i][0]) << "thread " << i << " is the same OS thread in every job";
        }
        distinct.insert(job.ids[i][0]);
    }
    EXPECT_EQ((int) distinct.size(), n) << "each ith is its own thread";
    EXPECT_EQ(job.ids[0][0], std::this_thread::get_id()) << "the caller is thread 0";
}

struct CountJob {
    std::vector<std::atomic<int>> ran;
    std::atomic<int> bad_nth{0};
    int expect_nth = 0;
    explicit CountJob(int n) : ran(n) {}

    static void run(void * ctx, int ith, int nth, lm_cpu_barrier * barrier) noexcept {
        CountJob * job = static_cast<CountJob *>(ctx);
        if (nth != job->expect_nth) {
            job->bad_nth.fetch_add(1);
        }
        job->ran[ith].fetch_add(1);
        barrier->wait();
    }
};

TEST(Threadpool, ThreadCountChangesBetweenJobs) {
    const int max = 4;
    PoolPtr pool = make_pool(max);
    ASSERT_NE(pool, nullptr);
    EXPECT_EQ(lm_ggml_threadpool_get_n_threads(pool.get()), max);
    for (int n : {1, 2, 4, 3, 1, 4, 2}) {
        CountJob job(max);
        job.expect_nth = n;
        ASSERT_EQ(lm_cpu_threadpool_run(pool.get(), n, CountJob::run, &job), LM_GGML_STATUS_SUCCESS);
        EXPECT_EQ(job.bad_nth.load(), 0) << "n=" << n;
        for (int i = 0; i < max; i++) {
            EXPECT_EQ(job.ran[i].load(), i < n ? 1 : 0) << "n=" << n << " thread " << i;
        }
    }
}

TEST(Threadpool, MoreThreadsThanPoolAreClamped) {
    PoolPtr pool = make_pool(2);
    ASSERT_NE(pool, nullptr);
    CountJob job(2);
    job.expect_nth = 2;
    ASSERT_EQ(lm_cpu_threadpool_run(pool.get(), 8, CountJob::run, &job), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(job.bad_nth.load(), 0);
    EXPECT_EQ(job.ran[0].load() + job.ran[1].load(), 2);
}

TEST(Threadpool, PauseAndResume) {
    PoolPtr pool = make_pool(3);
    ASSERT_NE(pool, nullptr);
    for (int k = 0; k < 3; k++) {
        lm_ggml_threadpool_pause(pool.get());
        lm_ggml_threadpool_pause(pool.get()); // idempotent
        CountJob job(3);
        job.expect_nth = 3;
        ASSERT_EQ(lm_cpu_threadpool_run(pool.get(), 3, CountJob::run, &job), LM_GGML_STATUS_SUCCESS)
            << "a job on a paused pool resumes it";
        EXPECT_EQ(job.ran[0] + job.ran[1] + job.ran[2], 3);
        lm_ggml_threadpool_resume(pool.get());
        lm_ggml_threadpool_resume(pool.get());
        CountJob again(3);
        again.expect_nth = 3;
        ASSERT_EQ(lm_cpu_threadpool_run(pool.get(), 3, CountJob::run, &again), LM_GGML_STATUS_SUCCESS);
        EXPECT_EQ(again.ran[0] + again.ran[1] + again.ran[2], 3);
    }
}

TEST(Threadpool, CreatedPausedStillRunsJobs) {
    PoolPtr pool = make_pool(2, 50, /*paused=*/true);
    ASSERT_NE(pool, nullptr);
    CountJob job(2);
    job.expect_nth = 2;
    ASSERT_EQ(lm_cpu_threadpool_run(pool.get(), 2, CountJob::run, &job), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(job.ran[0].load(), 1);
    EXPECT_EQ(job.ran[1].load(), 1);
}

// Idle workers must sleep: after the polling window a pool of 4 uses
// (almost) no CPU. Spinning workers would burn ~0.2 s per thread here.
TEST(Threadpool, IdlePoolDoesNotBurnCpu) {
    for (bool paused : {false, true}) {
        PoolPtr pool = make_pool(4, /*poll=*/100);
        ASSERT_NE(pool, nullptr);
        CountJob job(4);
        job.expect_nth = 4;
        ASSERT_EQ(lm_cpu_threadpool_run(pool.get(), 4, CountJob::run, &job), LM_GGML_STATUS_SUCCESS);
        if (paused) {
            lm_ggml_threadpool_pause(pool.get());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100)); // let polling end
        const double before = process_cpu_seconds();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const double used = process_cpu_seconds() - before;
        EXPECT_LT(used, 0.05) << "idle pool used " << used << " s of CPU in 0.2 s (paused=" << paused << ")";
    }
}

struct BlockingJob {
    std::atomic<bool> started{false};
    std::atomic<bool> release{false};
    static void run(void * ctx, int, int, lm_cpu_barrier *) noexcept {
        BlockingJob * job = static_cast<BlockingJob *>(ctx);
        job->started.store(true);
        while (!job->release.load()) {
            std::this_thread::yield();
        }
    }
};

TEST(Threadpool, ConcurrentRunOnOnePoolIsRefused) {
    PoolPtr pool = make_pool(2);
    ASSERT_NE(pool, nullptr);
    BlockingJob blocking;
    std::thread first(
        [&] { EXPECT_EQ(lm_cpu_threadpool_run(pool.get(), 1, BlockingJob::run, &blocking), LM_GGML_STATUS_SUCCESS); });
    while (!blocking.started.load()) {
        std::this_thread::yield();
    }
    CountJob second(2);
    second.expect_nth = 2;
    EXPECT_EQ(lm_cpu_threadpool_run(pool.get(), 2, CountJob::run, &second), LM_GGML_STATUS_FAILED);
    EXPECT_EQ(second.ran[0].load(), 0);
    blocking.release.store(true);
    first.join();
    // usable again afterwards
    EXPECT_EQ(lm_cpu_threadpool_run(pool.get(), 2, CountJob::run, &second), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(second.ran[0].load() + second.ran[1].load(), 2);
}

TEST(Threadpool, BadArgumentsAreErrorsNotCrashes) {
    EXPECT_EQ(lm_ggml_threadpool_new(nullptr), nullptr);
    lm_ggml_threadpool_params p = lm_ggml_threadpool_params_default(0);
    EXPECT_EQ(lm_ggml_threadpool_new(&p), nullptr);
    p.n_threads = LM_GGML_MAX_N_THREADS + 1;
    EXPECT_EQ(lm_ggml_threadpool_new(&p), nullptr);
    EXPECT_EQ(lm_ggml_threadpool_get_n_threads(nullptr), 0);
    lm_ggml_threadpool_free(nullptr);
    lm_ggml_threadpool_pause(nullptr);
    lm_ggml_threadpool_resume(nullptr);

    PoolPtr pool = make_pool(1);
    ASSERT_NE(pool, nullptr);
    CountJob job(1);
    job.expect_nth = 1;
    EXPECT_EQ(lm_cpu_threadpool_run(pool.get(), 0, CountJob::run, &job), LM_GGML_STATUS_FAILED);
    EXPECT_EQ(lm_cpu_threadpool_run(nullptr, 1, CountJob::run, &job), LM_GGML_STATUS_FAILED);
    EXPECT_EQ(lm_cpu_threadpool_run(pool.get(), 1, nullptr, &job), LM_GGML_STATUS_FAILED);
    EXPECT_EQ(job.ran[0].load(), 0);
    EXPECT_EQ(lm_cpu_threadpool_run(pool.get(), 1, CountJob::run, &job), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(job.ran[0].load(), 1);
}

TEST(ThreadpoolParams, DefaultsAndMatch) {
    lm_ggml_threadpool_params a = lm_ggml_threadpool_params_default(3);
    EXPECT_EQ(a.n_threads, 3);
    EXPECT_EQ(a.prio, LM_GGML_SCHED_PRIO_NORMAL);
    EXPECT_EQ(a.poll, 50u);
    EXPECT_FALSE(a.strict_cpu);
    EXPECT_FALSE(a.paused);
    for (int i = 0; i < LM_GGML_MAX_N_THREADS; i++) {
        ASSERT_FALSE(a.cpumask[i]);
    }

    lm_ggml_threadpool_params b;
    memset(&b, 0xff, sizeof(b));
    lm_ggml_threadpool_params_init(&b, 3);
    EXPECT_TRUE(lm_ggml_threadpool_params_match(&a, &b));

    b.paused = true; // not part of the match
    EXPECT_TRUE(lm_ggml_threadpool_params_match(&a, &b));
    b.poll = 0;
    EXPECT_FALSE(lm_ggml_threadpool_params_match(&a, &b));
    b = a;
    b.cpumask[5] = true;
    EXPECT_FALSE(lm_ggml_threadpool_params_match(&a, &b));
    b = a;
    b.n_threads = 4;
    EXPECT_FALSE(lm_ggml_threadpool_params_match(&a, &b));
}

TEST(Threadpool, StrictPlacementOnAvailableCpuRuns) {
    // Pin to CPU 0 (always present); placement is best effort and never fails creation.
    lm_ggml_threadpool_params p = lm_ggml_threadpool_params_default(2);
    p.cpumask[0] = true;
    p.strict_cpu = true;
    PoolPtr pool(lm_ggml_threadpool_new(&p));
    ASSERT_NE(pool, nullptr);
    CountJob job(2);
    job.expect_nth = 2;
    ASSERT_EQ(lm_cpu_threadpool_run(pool.get(), 2, CountJob::run, &job), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(job.ran[0].load() + job.ran[1].load(), 2);
}

} // namespace

// wait(idle, ctx): a thread that arrives early calls idle while the others
// are still coming and stops when idle has nothing more to do; the last to
// arrive never calls it; nobody leaves before everyone arrived.
struct IdleJob {
    std::atomic<int> calls[2] = {};
    std::atomic<bool> late_arrived{false};
    std::atomic<int> left_early{0};
    int budget = 0; // idle returns false after this many calls of a thread

    struct Ctx {
        IdleJob * job;
        int ith;
    };
    static bool idle(void * p) {
        Ctx * c = static_cast<Ctx *>(p);
        return c->job->calls[c->ith].fetch_add(1) + 1 < c->job->budget;
    }
    static void run(void * p, int ith, int nth, lm_cpu_barrier * barrier) noexcept {
        IdleJob * job = static_cast<IdleJob *>(p);
        (void) nth;
        Ctx ctx{job, ith};
        if (ith == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(30)); // thread 1 arrives first
            job->late_arrived.store(true);
        }
        barrier->wait(idle, &ctx);
        if (!job->late_arrived.load()) job->left_early.fetch_add(1);
    }
};

TEST(Threadpool, ABarrierWaitRunsIdleWorkOnlyWhileOthersAreComing) {
    PoolPtr pool = make_pool(2);
    ASSERT_NE(pool, nullptr);
    for (int budget : {3, 1 << 30}) {
        IdleJob job;
        job.budget = budget;
        ASSERT_EQ(lm_cpu_threadpool_run(pool.get(), 2, IdleJob::run, &job), LM_GGML_STATUS_SUCCESS);
        EXPECT_EQ(job.calls[0].load(), 0) << "the last to arrive does not idle";
        if (budget == 3) {
            EXPECT_EQ(job.calls[1].load(), 3) << "idle stops once it has nothing to do";
        } else {
            EXPECT_GT(job.calls[1].load(), 3) << "idles until the last thread arrives";
        }
        EXPECT_EQ(job.left_early.load(), 0);
    }
}

#pragma once
// The CPU backend's persistent thread pool (internal interface).
//
// A pool owns n_threads - 1 worker threads, created once and reused for every
// job; the thread that calls lm_cpu_threadpool_run is worker 0. Between jobs
// workers poll for a bounded time (params.poll) and then sleep on a condition
// variable, so an idle pool costs no CPU. Inside a job, threads meet at
// lm_cpu_barrier (atomics, bounded spin, then a futex-backed wait).
//
// One job at a time per pool: a second concurrent run fails with
// LM_GGML_STATUS_FAILED instead of corrupting the first.

#include "ggml.h"
#include "ggml-cpu.h"

#include <atomic>
#include <cstdint>

// Reusable barrier for n threads (n set per job by the pool).
struct lm_cpu_barrier {
    alignas(64) std::atomic<int> arrived{0};
    alignas(64) std::atomic<uint32_t> phase{0}; // bumped when everyone arrived
    std::atomic<int> sleepers{0};               // threads blocked in the kernel on phase
    int n = 1;

    // Returns once all n threads have called wait() for this phase. Writes
    // made before wait() by any thread are visible to all threads after it.
    void wait();
    // As wait(); a thread that arrives before the others first calls
    // idle(ctx) again and again while they are still coming, until it
    // returns false (nothing more to do) or the last one arrives. idle must
    // not touch memory other threads write in this phase.
    void wait(bool (*idle)(void * ctx), void * ctx);
};

// A job: every participating thread runs fn(ctx, ith, nth, barrier) once.
// noexcept: a job that throws on one thread would leave the others waiting
// at its barriers, or running after the caller returned.
typedef void (*lm_cpu_job_fn)(void * ctx, int ith, int nth, lm_cpu_barrier * barrier) noexcept;

// Runs fn on min(n_threads, pool size) threads (the caller is thread 0) and
// returns when all of them have returned. Resumes a paused pool.
// Returns SUCCESS, or FAILED (logged) if the pool is busy or n_threads < 1.
enum lm_ggml_status lm_cpu_threadpool_run(lm_ggml_threadpool * tp, int n_threads, lm_cpu_job_fn fn, void * ctx);

// Number of jobs started on this pool so far (tests use it to check reuse).
uint64_t lm_cpu_threadpool_n_jobs(const lm_ggml_threadpool * tp);

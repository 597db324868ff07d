// SPEC §4: a backend (stream) is used by one thread at a time; two backends on
// one device may run concurrently. Two CPU backends, each driven by its own
// thread, compute different graphs many times; every result is checked
// against a double-precision reference computed here.
#include "conc_util.h"

#include "ggml-alloc.h"
#include "ggml-cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

namespace {

struct Job {
    lm_ggml_backend_t backend = nullptr;
    lm_ggml_context * ctx = nullptr;
    lm_ggml_gallocr_t galloc = nullptr;
    lm_ggml_cgraph * graph = nullptr;
    lm_ggml_tensor * a = nullptr;
    lm_ggml_tensor * b = nullptr;
    lm_ggml_tensor * out = nullptr;
    std::vector<float> va, vb;
    std::vector<double> want;
    ~Job() {
        lm_ggml_gallocr_free(galloc);
        lm_ggml_free(ctx);
        lm_ggml_backend_free(backend);
    }
};

float value(int seed, int i) { return (float) (((i * 37 + seed * 11) % 23) - 11) / 16.0f; }

// kind 0: out = a x b (MUL_MAT, a (k, m), b (k, n) -> (m, n))
// kind 1: out = soft_max(a * 0.5 + b) over rows of length k
std::unique_ptr<Job> make_job(int kind, int n_threads) {
    auto j = std::make_unique<Job>();
    const int k = 48, m = 40, n = 24;
    j->backend = lm_ggml_backend_cpu_init();
    if (!j->backend) return nullptr;
    lm_ggml_backend_cpu_set_n_threads(j->backend, n_threads);
    lm_ggml_init_params ip = {16 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), nullptr, true};
    j->ctx = lm_ggml_init(ip);
    if (!j->ctx) return nullptr;
    if (kind == 0) {
        j->a = lm_ggml_new_tensor_2d(j->ctx, LM_GGML_TYPE_F32, k, m);
        j->b = lm_ggml_new_tensor_2d(j->ctx, LM_GGML_TYPE_F32, k, n);
        j->out = lm_ggml_mul_mat(j->ctx, j->a, j->b);
    } else {
        j->a = lm_ggml_new_tensor_2d(j->ctx, LM_GGML_TYPE_F32, k, n);
        j->b = lm_ggml_new_tensor_2d(j->ctx, LM_GGML_TYPE_F32, k, n);
        j->out = lm_ggml_soft_max(j->ctx, lm_ggml_add(j->ctx, lm_ggml_scale(j->ctx, j->a, 0.5f), j->b));
    }
    lm_ggml_set_input(j->a);
    lm_ggml_set_input(j->b);
    lm_ggml_set_output(j->out);
    j->graph = lm_ggml_new_graph(j->ctx);
    lm_ggml_build_forward_expand(j->graph, j->out);
    j->galloc = lm_ggml_gallocr_new(lm_ggml_backend_get_default_buffer_type(j->backend));
    if (!j->galloc || !lm_ggml_gallocr_alloc_graph(j->galloc, j->graph)) return nullptr;

    j->va.resize(lm_ggml_nelements(j->a));
    j->vb.resize(lm_ggml_nelements(j->b));
    for (size_t i = 0; i < j->va.size(); ++i) j->va[i] = value(kind + 1, (int) i);
    for (size_t i = 0; i < j->vb.size(); ++i) j->vb[i] = value(kind + 5, (int) i);
    if (kind == 0) {
        j->want.assign((size_t) m * n, 0.0);
        for (int c = 0; c < n; ++c)
            for (int r = 0; r < m; ++r) {
                double acc = 0;
                for (int i = 0; i < k; ++i) acc += (double) j->va[r * k + i] * j->vb[c * k + i];
                j->want[c * m + r] = acc;
            }
    } else {
        j->want.assign((size_t) k * n, 0.0);
        for (int c = 0; c < n; ++c) {
            double mx = -1e300, sum = 0;
            for (int i = 0; i < k; ++i) mx = std::fmax(mx, 0.5 * j->va[c * k + i] + j->vb[c * k + i]);
            for (int i = 0; i < k; ++i) sum += std::exp(0.5 * j->va[c * k + i] + j->vb[c * k + i] - mx);
            for (int i = 0; i < k; ++i)
                j->want[c * k + i] = std::exp(0.5 * j->va[c * k + i] + j->vb[c * k + i] - mx) / sum;
        }
    }
    return j;
}

// Sets the inputs, computes, reads back and compares (max relative error).
bool run_once(Job & j, std::vector<float> & got, double & err) {
    // clear the output first so a skipped computation cannot pass
    lm_ggml_backend_tensor_memset(j.out, 0xff, 0, lm_ggml_nbytes(j.out));
    lm_ggml_backend_tensor_set(j.a, j.va.data(), 0, lm_ggml_nbytes(j.a));
    lm_ggml_backend_tensor_set(j.b, j.vb.data(), 0, lm_ggml_nbytes(j.b));
    if (lm_ggml_backend_graph_compute(j.backend, j.graph) != LM_GGML_STATUS_SUCCESS) return false;
    got.resize(j.want.size());
    lm_ggml_backend_tensor_get(j.out, got.data(), 0, got.size() * sizeof(float));
    err = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const double e = std::fabs(got[i] - j.want[i]) / (1.0 + std::fabs(j.want[i]));
        if (!(e <= err)) err = std::isnan(e) ? INFINITY : e;
    }
    return err < 1e-5;
}

void two_backends(int n_threads_each) {
    std::unique_ptr<Job> jobs[2] = {make_job(0, n_threads_each), make_job(1, n_threads_each)};
    ASSERT_TRUE(jobs[0] && jobs[1]);
    conc::Failures fail;
    conc::run_together(2, [&](int t) {
        std::vector<float> got;
        for (int it = 0; it < 30; ++it) {
            double err = 0;
            if (!run_once(*jobs[t], got, err)) {
                fail.add("backend " + std::to_string(t) + " iteration " + std::to_string(it) +
                         ": wrong result (max rel err " + std::to_string(err) + ")");
            }
        }
    });
    EXPECT_EQ(fail.count(), 0) << fail.first();
}

TEST(TwoBackends, DifferentGraphsConcurrentlyOneThreadEach) { two_backends(1); }
TEST(TwoBackends, DifferentGraphsConcurrentlyWithThreadpools) { two_backends(2); }

TEST(TwoBackends, ManyBackendsCreatedAndFreedConcurrently) {
    conc::Failures fail;
    conc::run_together(4, [&](int t) {
        for (int it = 0; it < 5; ++it) {
            std::unique_ptr<Job> j = make_job((t + it) % 2, 1 + (it % 2));
            std::vector<float> got;
            double err = 0;
            if (!j || !run_once(*j, got, err))
                fail.add("thread " + std::to_string(t) + " iteration " + std::to_string(it));
        }
    });
    EXPECT_EQ(fail.count(), 0) << fail.first();
}

} // namespace

// Scheduler test fixture: backends, the ping-pong model and its reference.

#include "sched_fixture.h"

#include <cstring>

namespace schedtest {

namespace {

std::once_flag g_load_once;

lm_ggml_context * no_alloc_ctx(size_t n_tensors) {
    lm_ggml_init_params p{};
    p.mem_size = lm_ggml_tensor_overhead() * n_tensors + lm_ggml_graph_overhead_custom(1024, false);
    p.mem_buffer = nullptr;
    p.no_alloc = true;
    return lm_ggml_init(p);
}

// deterministic small integers in [lo, hi]
std::vector<float> ints(size_t n, int lo, int hi, uint32_t seed) {
    std::vector<float> v(n);
    uint32_t s = seed * 2654435761u + 12345u;
    for (auto & e : v) {
        s = s * 1664525u + 1013904223u;
        e = static_cast<float>(lo + static_cast<int>((s >> 16) % static_cast<uint32_t>(hi - lo + 1)));
    }
    return v;
}

// y[o + t*n] = sum_i W[i + o*n] * x[i + t*n]  (lm_ggml_mul_mat(W, x))
std::vector<double> matmul(const std::vector<float> & W, const std::vector<double> & x, int T) {
    std::vector<double> y((size_t) kN * T, 0.0);
    for (int t = 0; t < T; t++) {
        for (int o = 0; o < kN; o++) {
            double acc = 0.0;
            for (int i = 0; i < kN; i++) acc += (double) W[(size_t) (i + o * kN)] * x[(size_t) (i + t * kN)];
            y[(size_t) (o + t * kN)] = acc;
        }
    }
    return y;
}

} // namespace

bool Weights::init(lm_ggml_backend_t backend) {
    ctx = no_alloc_ctx(8);
    if (ctx == nullptr) return false;
    W1 = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, kN, kN);
    W2 = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, kN, kN);
    b1 = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, kN);
    b2 = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, kN);
    lm_ggml_set_name(W1, "W1");
    lm_ggml_set_name(W2, "W2");
    lm_ggml_set_name(b1, "b1");
    lm_ggml_set_name(b2, "b2");
    buf = lm_ggml_backend_alloc_ctx_tensors(ctx, backend);
    if (buf == nullptr) return false;
    lm_ggml_backend_buffer_set_usage(buf, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    w1 = ints((size_t) kN * kN, -2, 2, 1);
    w2 = ints((size_t) kN * kN, -2, 2, 2);
    c1 = ints(kN, -5, 5, 3);
    c2 = ints(kN, -5, 5, 4);
    lm_ggml_backend_tensor_set(W1, w1.data(), 0, w1.size() * sizeof(float));
    lm_ggml_backend_tensor_set(W2, w2.data(), 0, w2.size() * sizeof(float));
    lm_ggml_backend_tensor_set(b1, c1.data(), 0, c1.size() * sizeof(float));
    lm_ggml_backend_tensor_set(b2, c2.data(), 0, c2.size() * sizeof(float));
    return true;
}

void PingPong::build(const Weights & w, int tokens, int layers) {
    T = tokens;
    ctx = no_alloc_ctx(16 + 8 * (size_t) layers);
    ASSERT_NE(ctx, nullptr);
    x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, kN, T);
    lm_ggml_set_name(x, "x");
    lm_ggml_set_input(x);
    lm_ggml_tensor * cur = x;
    for (int l = 0; l < layers; l++) {
        lm_ggml_tensor * h[6];
        h[0] = lm_ggml_mul_mat(ctx, w.W1, cur);
        h[1] = lm_ggml_add(ctx, h[0], w.b1);
        h[2] = lm_ggml_abs(ctx, h[1]);
        h[3] = lm_ggml_mul_mat(ctx, w.W2, h[2]);
        h[4] = lm_ggml_neg(ctx, h[3]);
        h[5] = lm_ggml_add(ctx, h[4], w.b2);
        for (int k = 0; k < 6; k++) {
            lm_ggml_format_name(h[k], "h%d_%d", k + 1, l);
            layer_nodes.push_back(h[k]);
        }
        // keep values small between layers: divide by a power of two (exact
        // for two layers; deeper models are compared with a tolerance)
        cur = l + 1 < layers ? lm_ggml_scale(ctx, h[5], 1.0f / 1024.0f) : h[5];
        if (l + 1 < layers) lm_ggml_format_name(cur, "s_%d", l);
    }
    out = lm_ggml_scale(ctx, cur, 0.5f);
    lm_ggml_set_name(out, "out");
    lm_ggml_set_output(out);
    graph = lm_ggml_new_graph_custom(ctx, 1024, false);
    lm_ggml_build_forward_expand(graph, out);
}

std::map<std::string, std::vector<double>> reference(const Weights & w, const std::vector<float> & x, int T,
                                                     int layers) {
    std::map<std::string, std::vector<double>> r;
    std::vector<double> cur(x.begin(), x.end());
    r["x"] = cur;
    for (int l = 0; l < layers; l++) {
        auto key = [l](const char * stem) {
            std::string k(stem);
            k += '_';
            k += std::to_string(l);
            return k;
        };
        std::vector<double> h1 = matmul(w.w1, cur, T);
        std::vector<double> h2 = h1, h3 = h1;
        for (size_t i = 0; i < h1.size(); i++) {
            h2[i] = h1[i] + w.c1[i % kN];
            h3[i] = h2[i] < 0 ? -h2[i] : h2[i];
        }
        std::vector<double> h4 = matmul(w.w2, h3, T);
        std::vector<double> h5 = h4, h6 = h4;
        for (size_t i = 0; i < h4.size(); i++) {
            h5[i] = -h4[i];
            h6[i] = h5[i] + w.c2[i % kN];
        }
        r[key("h1")] = h1;
        r[key("h2")] = h2;
        r[key("h3")] = h3;
        r[key("h4")] = h4;
        r[key("h5")] = h5;
        r[key("h6")] = h6;
        cur = h6;
        if (l + 1 < layers) {
            for (double & v : cur) v /= 1024.0;
            r[key("s")] = cur;
        }
    }
    for (double & v : cur) v *= 0.5;
    r["out"] = cur;
    return r;
}

std::vector<float> make_input(int T, int seed) { return ints((size_t) kN * T, -3, 3, 100u + (uint32_t) seed); }

std::vector<float> read(const lm_ggml_tensor * t) {
    std::vector<float> v((size_t) lm_ggml_nelements(t));
    lm_ggml_backend_tensor_get(t, v.data(), 0, v.size() * sizeof(float));
    return v;
}

uint64_t refdev_nodes_computed() {
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_name("REFDEV0");
    if (dev == nullptr) return 0;
    using counter_fn = uint64_t (*)();
    auto fn = (counter_fn) lm_ggml_backend_reg_get_proc_address(lm_ggml_backend_dev_backend_reg(dev),
                                                                "lm_ggml_backend_refdev_n_nodes_computed");
    return fn ? fn() : 0;
}

void expect_exact(const lm_ggml_tensor * t, const std::vector<double> & want, const std::string & what,
                  double rel_tol) {
    ASSERT_EQ((size_t) lm_ggml_nelements(t), want.size()) << what;
    const std::vector<float> got = read(t);
    int bad = 0;
    for (size_t i = 0; i < want.size() && bad < 5; i++) {
        const double err = (double) got[i] - want[i];
        const double lim = rel_tol * (want[i] < 0 ? -want[i] : want[i]);
        if (err > lim || -err > lim) {
            ADD_FAILURE() << what << " '" << t->name << "'[" << i << "] = " << got[i] << ", want " << want[i];
            bad++;
        }
    }
}

void SchedTest::SetUp() {
    std::call_once(g_load_once, [] { lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR); });
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_name("REFDEV0");
    ASSERT_NE(dev, nullptr) << "refdev plugin not found in " << LMGGML_PLUGIN_DIR;
    ref = lm_ggml_backend_dev_init(dev, nullptr);
    cpu = lm_ggml_backend_cpu_init();
    ASSERT_NE(ref, nullptr);
    ASSERT_NE(cpu, nullptr);
    lm_ggml_backend_cpu_set_n_threads(cpu, 1);
}

void SchedTest::TearDown() {
    for (auto s : scheds) lm_ggml_backend_sched_free(s);
    lm_ggml_backend_free(ref);
    lm_ggml_backend_free(cpu);
}

lm_ggml_backend_sched_t SchedTest::make_sched(bool parallel, bool with_ref, size_t graph_size) {
    lm_ggml_backend_t list[2] = {ref, cpu};
    lm_ggml_backend_sched_t s = with_ref ? lm_ggml_backend_sched_new(list, nullptr, 2, graph_size, parallel)
                                         : lm_ggml_backend_sched_new(&cpu, nullptr, 1, graph_size, parallel);
    if (s) scheds.push_back(s);
    return s;
}

} // namespace schedtest

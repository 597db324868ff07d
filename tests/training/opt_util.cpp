#include "opt_util.h"

#include <mutex>

namespace opttest {

namespace {
std::once_flag g_load_once;
}

Backends::Backends(bool with_ref) {
    cpu = lm_ggml_backend_cpu_init();
    lm_ggml_backend_cpu_set_n_threads(cpu, 2);
    std::vector<lm_ggml_backend_t> list;
    if (with_ref) {
        std::call_once(g_load_once, [] { lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR); });
        lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_name("REFDEV0");
        if (dev) ref = lm_ggml_backend_dev_init(dev, nullptr);
        if (ref) list.push_back(ref);
    }
    list.push_back(cpu);
    sched = lm_ggml_backend_sched_new(list.data(), nullptr, (int) list.size(), LM_GGML_DEFAULT_GRAPH_SIZE, false);
}

Backends::~Backends() {
    lm_ggml_backend_sched_free(sched);
    if (ref) lm_ggml_backend_free(ref);
    lm_ggml_backend_free(cpu);
}

uint64_t refdev_nodes_computed() {
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_name("REFDEV0");
    if (dev == nullptr) return 0;
    using counter_fn = uint64_t (*)();
    auto fn = (counter_fn) lm_ggml_backend_reg_get_proc_address(lm_ggml_backend_dev_backend_reg(dev),
                                                                "lm_ggml_backend_refdev_n_nodes_computed");
    return fn ? fn() : 0;
}

Net::Net() {
    lm_ggml_init_params ps = {64 * lm_ggml_tensor_overhead(), nullptr, true};
    ctx_static = lm_ggml_init(ps);
    lm_ggml_init_params pc = {LM_GGML_DEFAULT_GRAPH_SIZE * lm_ggml_tensor_overhead() +
                                  3 * lm_ggml_graph_overhead_custom(LM_GGML_DEFAULT_GRAPH_SIZE, true),
                              nullptr, true};
    ctx_compute = lm_ggml_init(pc);
}

Net::~Net() {
    lm_ggml_backend_buffer_free(buf);
    lm_ggml_free(ctx_compute);
    lm_ggml_free(ctx_static);
}

lm_ggml_tensor * Net::param(int64_t ne0, int64_t ne1, const char * name) {
    lm_ggml_tensor * t = lm_ggml_new_tensor_2d(ctx_static, LM_GGML_TYPE_F32, ne0, ne1);
    lm_ggml_set_name(t, name);
    lm_ggml_set_param(ctx_static, t);
    params.push_back(t);
    return t;
}

void Net::allocate(uint32_t seed, float scale, lm_ggml_backend_buffer_type_t buft) {
    buf = lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx_static, buft ? buft : lm_ggml_backend_cpu_buffer_type());
    ASSERT_NE(buf, nullptr);
    lm_ggml_backend_buffer_set_usage(buf, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    std::mt19937 rng(seed);
    for (lm_ggml_tensor * p : params) {
        std::normal_distribution<float> nd(0.0f, scale / std::sqrt((float) p->ne[0]));
        std::vector<float> v((size_t) lm_ggml_nelements(p));
        for (float & x : v) x = nd(rng);
        set(p, v);
    }
}

void build_linear(Net & n, int nin, int batch) {
    lm_ggml_tensor * w = n.param(nin, 1, "w");
    lm_ggml_tensor * b = n.param(1, 1, "b");
    n.inputs = lm_ggml_new_tensor_2d(n.ctx_static, LM_GGML_TYPE_F32, nin, batch);
    lm_ggml_set_name(n.inputs, "inputs");
    n.outputs = lm_ggml_add(n.ctx_compute, lm_ggml_mul_mat(n.ctx_compute, w, n.inputs), b);
    lm_ggml_set_name(n.outputs, "outputs");
}

void build_mlp(Net & n, int nin, int nhid, int nclass, int batch) {
    lm_ggml_tensor * w1 = n.param(nin, nhid, "w1");
    lm_ggml_tensor * b1 = n.param(nhid, 1, "b1");
    lm_ggml_tensor * w2 = n.param(nhid, nclass, "w2");
    lm_ggml_tensor * b2 = n.param(nclass, 1, "b2");
    n.inputs = lm_ggml_new_tensor_2d(n.ctx_static, LM_GGML_TYPE_F32, nin, batch);
    lm_ggml_set_name(n.inputs, "inputs");
    lm_ggml_context * c = n.ctx_compute;
    lm_ggml_tensor * h = lm_ggml_relu(c, lm_ggml_add(c, lm_ggml_mul_mat(c, w1, n.inputs), b1));
    n.outputs = lm_ggml_add(c, lm_ggml_mul_mat(c, w2, h), b2);
    lm_ggml_set_name(n.outputs, "logits");
}

lm_ggml_opt_dataset_t blobs(int nin, int nclass, int64_t ndata, uint32_t seed) {
    lm_ggml_opt_dataset_t d = lm_ggml_opt_dataset_init(nin, nclass, ndata, 1);
    if (!d) return nullptr;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    std::normal_distribution<float> noise(0.0f, 0.5f);
    std::vector<float> centers((size_t) nin * nclass);
    for (float & x : centers) x = u(rng);
    float * x = static_cast<float *>(lm_ggml_opt_dataset_data(d)->data);
    float * y = static_cast<float *>(lm_ggml_opt_dataset_labels(d)->data);
    for (int64_t i = 0; i < ndata; i++) {
        const int k = (int) (i % nclass);
        for (int j = 0; j < nin; j++) x[i * nin + j] = centers[(size_t) k * nin + j] + noise(rng);
        for (int j = 0; j < nclass; j++) y[i * nclass + j] = j == k ? 1.0f : 0.0f;
    }
    return d;
}

std::vector<float> get(const lm_ggml_tensor * t) {
    std::vector<float> v((size_t) lm_ggml_nelements(t));
    lm_ggml_backend_tensor_get(t, v.data(), 0, v.size() * sizeof(float));
    return v;
}

void set(lm_ggml_tensor * t, const std::vector<float> & v) {
    lm_ggml_backend_tensor_set(t, v.data(), 0, v.size() * sizeof(float));
}

} // namespace opttest

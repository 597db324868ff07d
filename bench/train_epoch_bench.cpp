// Seconds per training epoch of a small model on the handwritten digits with
// ggml-opt on the CPU backend; bench/compare-pytorch-training runs it beside
// the same model in PyTorch. Not a Google Benchmark: one process, one model,
// one thread count, so that the script can alternate the two frameworks.
//
//   bench_train_epoch DIGITS_U8 mlp|cnn THREADS BATCH EPOCHS
//
// mlp: 64 -> dense 128 + bias -> relu -> dense 10 + bias.
// cnn: 8x8x1 -> conv 3x3 pad 1 (16 channels) + bias -> relu -> max pool 2x2
//      -> dense 256 -> 10 + bias.
// (the models of examples/train-digits)
// Both: cross entropy, AdamW with ggml-opt's defaults, the data (whole
// batches of it) shuffled every epoch. One untimed warm-up epoch, then one
// line "epoch_s SECONDS loss L accuracy A" per timed epoch (training loss
// and accuracy of that epoch, ggml-opt's results).

#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-opt.h"
#include "ggml.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kIn = 64, kClasses = 10, kRecord = 65;

struct Model {
    lm_ggml_context * ctx_static = nullptr;
    lm_ggml_context * ctx_compute = nullptr;
    lm_ggml_backend_buffer_t buf = nullptr;
    lm_ggml_tensor * inputs = nullptr;
    lm_ggml_tensor * outputs = nullptr;
    std::vector<lm_ggml_tensor *> params;
    std::vector<int64_t> fan_in; // of the layer each parameter belongs to

    lm_ggml_tensor * param(int64_t fan, int64_t ne0, int64_t ne1, int64_t ne2 = 1, int64_t ne3 = 1) {
        lm_ggml_tensor * t = lm_ggml_new_tensor_4d(ctx_static, LM_GGML_TYPE_F32, ne0, ne1, ne2, ne3);
        lm_ggml_set_param(ctx_static, t);
        params.push_back(t);
        fan_in.push_back(fan);
        return t;
    }
};

bool build(Model & m, const std::string & kind, int batch) {
    lm_ggml_init_params ps = {32 * lm_ggml_tensor_overhead(), nullptr, true};
    m.ctx_static = lm_ggml_init(ps);
    lm_ggml_init_params pc = {LM_GGML_DEFAULT_GRAPH_SIZE * lm_ggml_tensor_overhead() +
                                  3 * lm_ggml_graph_overhead_custom(LM_GGML_DEFAULT_GRAPH_SIZE, true),
                              nullptr, true};
    m.ctx_compute = lm_ggml_init(pc);
    lm_ggml_context * c = m.ctx_compute;
    m.inputs = lm_ggml_new_tensor_2d(m.ctx_static, LM_GGML_TYPE_F32, kIn, batch);
    if (kind == "mlp") {
        lm_ggml_tensor *w1 = m.param(kIn, kIn, 128), *b1 = m.param(kIn, 128, 1);
        lm_ggml_tensor *w2 = m.param(128, 128, kClasses), *b2 = m.param(128, kClasses, 1);
        lm_ggml_tensor * h = lm_ggml_relu(c, lm_ggml_add(c, lm_ggml_mul_mat(c, w1, m.inputs), b1));
        m.outputs = lm_ggml_add(c, lm_ggml_mul_mat(c, w2, h), b2);
    } else if (kind == "cnn") {
        lm_ggml_tensor *k = m.param(9, 3, 3, 1, 16), *kb = m.param(9, 1, 1, 16, 1);
        lm_ggml_tensor *w = m.param(256, 256, kClasses), *b = m.param(256, kClasses, 1);
        lm_ggml_tensor * img = lm_ggml_reshape_4d(c, m.inputs, 8, 8, 1, batch);
        lm_ggml_tensor * conv = lm_ggml_add(c, lm_ggml_conv_2d(c, k, img, 1, 1, 1, 1, 1, 1), kb); // [8,8,16,B]
        lm_ggml_tensor * pool =
            lm_ggml_pool_2d(c, lm_ggml_relu(c, conv), LM_GGML_OP_POOL_MAX, 2, 2, 2, 2, 0, 0); // [4,4,16,B]
        lm_ggml_tensor * flat = lm_ggml_reshape_2d(c, lm_ggml_cont(c, pool), 256, batch);
        m.outputs = lm_ggml_add(c, lm_ggml_mul_mat(c, w, flat), b);
    } else {
        return false;
    }
    m.buf = lm_ggml_backend_alloc_ctx_tensors_from_buft(m.ctx_static, lm_ggml_backend_cpu_buffer_type());
    if (!m.buf) return false;
    std::mt19937 rng(1);
    for (size_t i = 0; i < m.params.size(); i++) { // N(0, 1 / fan-in)
        lm_ggml_tensor * t = m.params[i];
        std::normal_distribution<float> nd(0.0f, 1.0f / std::sqrt((float) m.fan_in[i]));
        std::vector<float> v((size_t) lm_ggml_nelements(t));
        for (float & x : v) x = nd(rng);
        lm_ggml_backend_tensor_set(t, v.data(), 0, v.size() * sizeof(float));
    }
    return true;
}

} // namespace

int main(int argc, char ** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: %s DIGITS_U8 mlp|cnn THREADS BATCH EPOCHS\n", argv[0]);
        return 2;
    }
    const std::string kind = argv[2];
    const int threads = std::atoi(argv[3]), batch = std::atoi(argv[4]), epochs = std::atoi(argv[5]);
    std::ifstream f(argv[1], std::ios::binary);
    const std::vector<uint8_t> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const int64_t ndata = batch < 1 ? 0 : (int64_t) (raw.size() / kRecord) / batch * batch; // whole batches
    if ((kind != "mlp" && kind != "cnn") || threads < 1 || epochs < 1 || ndata == 0) {
        std::fprintf(stderr, "bad arguments (model mlp or cnn), or no data in %s\n", argv[1]);
        return 2;
    }
    lm_ggml_opt_dataset_t d = lm_ggml_opt_dataset_init(kIn, kClasses, ndata, 1);
    float * x = static_cast<float *>(lm_ggml_opt_dataset_data(d)->data);
    float * y = static_cast<float *>(lm_ggml_opt_dataset_labels(d)->data);
    for (int64_t i = 0; i < ndata; i++) {
        const uint8_t * rec = raw.data() + (size_t) i * kRecord;
        for (int j = 0; j < kIn; j++) x[i * kIn + j] = (float) rec[j] / 16.0f;
        for (int j = 0; j < kClasses; j++) y[i * kClasses + j] = rec[kIn] == j ? 1.0f : 0.0f;
    }

    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    lm_ggml_backend_cpu_set_n_threads(cpu, threads);
    lm_ggml_backend_sched_t sched = lm_ggml_backend_sched_new(&cpu, nullptr, 1, LM_GGML_DEFAULT_GRAPH_SIZE, false);
    Model m;
    if (!build(m, kind, batch)) return 1;
    lm_ggml_opt_context_t opt = lm_ggml_opt_init(
        lm_ggml_opt_default_params(sched, m.ctx_compute, m.inputs, m.outputs, LM_GGML_OPT_LOSS_TYPE_CROSS_ENTROPY));
    if (!opt) return 1;
    lm_ggml_opt_result_t res = lm_ggml_opt_result_init();
    for (int e = 0; e <= epochs; e++) { // epoch 0 warms up
        const auto t0 = std::chrono::steady_clock::now();
        lm_ggml_opt_dataset_shuffle(opt, d, -1);
        lm_ggml_opt_result_reset(res);
        lm_ggml_opt_epoch(opt, d, res, nullptr, -1, nullptr, nullptr);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double loss = 0.0, acc = 0.0;
        lm_ggml_opt_result_loss(res, &loss, nullptr);
        lm_ggml_opt_result_accuracy(res, &acc, nullptr);
        if (e > 0) std::printf("epoch_s %.6f loss %.4f accuracy %.4f\n", s, loss, acc);
    }
    lm_ggml_opt_result_free(res);
    lm_ggml_opt_free(opt);
    lm_ggml_backend_buffer_free(m.buf);
    lm_ggml_free(m.ctx_compute);
    lm_ggml_free(m.ctx_static);
    lm_ggml_backend_sched_free(sched);
    lm_ggml_backend_free(cpu);
    lm_ggml_opt_dataset_free(d);
    return 0;
}

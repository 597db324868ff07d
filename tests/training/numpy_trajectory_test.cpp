// The digits MLP (64 -> 128 ReLU -> 10, cross entropy, AdamW) trained for 20
// steps with ggml-opt must give the same per-step loss as numpy_mlp.py, an
// independent NumPy implementation (forward, backward by hand, AdamW from the
// formula), within 1e-4 relative. This test trains and dumps the initial
// weights, the data order, the optimizer values and the losses; the script
// reads the digits itself, recomputes and compares. Skips (saying so) when
// python3 or NumPy is missing.

#include "opt_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace opttest;
namespace fs = std::filesystem;

namespace {

constexpr int kIn = 64, kHidden = 128, kClasses = 10, kBatch = 32, kSteps = 20;
constexpr int kRecord = 65; // 64 pixels (0..16) and the label

// Explicit values: ggml-opt's defaults except a weight decay large enough
// that the script can check it matters.
lm_ggml_opt_optimizer_params pars(void *) {
    lm_ggml_opt_optimizer_params p = lm_ggml_opt_get_default_optimizer_params(nullptr);
    p.adamw.wd = 0.5f;
    return p;
}

std::string read_text(const fs::path & p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

template <typename T> void write_vec(const fs::path & p, const std::vector<T> & v) {
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char *>(v.data()), (std::streamsize)(v.size() * sizeof(T)));
}

} // namespace

TEST(NumpyTrajectory, DigitsMlp20Steps) {
    if (std::system("python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "python3 with NumPy is not installed: the NumPy loss trajectory check is skipped";
    }
    const std::string digits_path = std::string(LMGGML_TEST_DATA_DIR) + "/digits/digits.u8";
    std::vector<uint8_t> raw;
    {
        std::ifstream f(digits_path, std::ios::binary);
        raw.assign(std::istreambuf_iterator<char>(f), {});
    }
    ASSERT_EQ(raw.size() % kRecord, 0u) << digits_path;
    const int64_t ndata = (int64_t) (raw.size() / kRecord);
    ASSERT_GE(ndata, kBatch * kSteps);

    // a fixed permutation of the records, written into the dataset in that
    // order (no shuffle) and dumped for the script
    std::vector<int32_t> order((size_t) ndata);
    for (int64_t i = 0; i < ndata; i++) order[(size_t) i] = (int32_t) i;
    std::mt19937 rng(2024);
    for (int64_t i = ndata - 1; i > 0; i--) {
        std::swap(order[(size_t) i], order[(size_t) (rng() % (uint32_t) (i + 1))]);
    }
    lm_ggml_opt_dataset_t d = lm_ggml_opt_dataset_init(kIn, kClasses, ndata, 1);
    ASSERT_NE(d, nullptr);
    float * x = static_cast<float *>(lm_ggml_opt_dataset_data(d)->data);
    float * y = static_cast<float *>(lm_ggml_opt_dataset_labels(d)->data);
    for (int64_t i = 0; i < ndata; i++) {
        const uint8_t * rec = raw.data() + (size_t) order[(size_t) i] * kRecord;
        for (int j = 0; j < kIn; j++) x[i * kIn + j] = (float) rec[j] / 16.0f;
        for (int j = 0; j < kClasses; j++) y[i * kClasses + j] = rec[kIn] == j ? 1.0f : 0.0f;
    }

    Backends be(false);
    Net net;
    build_mlp(net, kIn, kHidden, kClasses, kBatch);
    net.allocate(7);
    const fs::path work = fs::temp_directory_path() / ("lmggml-numpy-mlp-" + std::to_string(getpid()));
    fs::remove_all(work);
    fs::create_directories(work);
    for (lm_ggml_tensor * p : net.params) write_vec(work / (std::string(p->name) + ".f32"), get(p));
    order.resize((size_t) kBatch * kSteps);
    write_vec(work / "order.i32", order);

    lm_ggml_opt_params p = lm_ggml_opt_default_params(be.sched, net.ctx_compute, net.inputs, net.outputs,
                                                      LM_GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    p.get_opt_pars = pars;
    lm_ggml_opt_context_t opt = lm_ggml_opt_init(p);
    ASSERT_NE(opt, nullptr);
    lm_ggml_opt_result_t res = lm_ggml_opt_result_init();
    std::vector<double> losses;
    for (int step = 0; step < kSteps; step++) {
        lm_ggml_opt_dataset_get_batch(d, net.inputs, lm_ggml_opt_labels(opt), step);
        lm_ggml_opt_result_reset(res);
        lm_ggml_opt_forward_backward(opt, res); // the loss before this step's update
        double loss = 0.0;
        lm_ggml_opt_result_loss(res, &loss, nullptr);
        losses.push_back(loss);
    }
    lm_ggml_opt_result_free(res);
    lm_ggml_opt_free(opt);
    lm_ggml_opt_dataset_free(d);
    write_vec(work / "losses.f64", losses);
    {
        const lm_ggml_opt_optimizer_params a = pars(nullptr);
        std::ofstream meta(work / "meta.txt");
        meta.precision(9);
        meta << "in " << kIn << "\nhidden " << kHidden << "\nclasses " << kClasses << "\nbatch " << kBatch << "\nsteps "
             << kSteps << "\nalpha " << a.adamw.alpha << "\nbeta1 " << a.adamw.beta1 << "\nbeta2 " << a.adamw.beta2
             << "\neps " << a.adamw.eps << "\nwd " << a.adamw.wd << "\n";
    }

    const fs::path log = work / "numpy.log";
    const std::string cmd = std::string("python3 '") + LMGGML_TRAINING_NUMPY_SCRIPT + "' '" + work.string() + "' '" +
                            digits_path + "' > '" + log.string() + "' 2>&1";
    const int status = std::system(cmd.c_str());
    const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const std::string out = read_text(log);
    std::printf("%s", out.c_str());
    EXPECT_EQ(rc, 0) << "numpy_mlp.py disagrees (or failed):\n" << out;
    if (rc == 0) fs::remove_all(work); // kept for inspection on failure
}

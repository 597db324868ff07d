// lmggml-demo: computes a small two-layer perceptron through the backend API on
// every available device and prints the result next to a plain-loop reference.
// Stands in for `lmggml run` until the LLM runner exists.
#include <cmath>
#include <cstdio>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

namespace {

constexpr int kIn = 8, kHidden = 16, kOut = 4, kBatch = 3;

float init_value(int i, int salt) { return std::sin(0.37f * (float) i + (float) salt) * 0.5f; }

// reference: out = W2 * silu(W1 * x), all row-major as ggml lays them out
std::vector<float> reference(const std::vector<float> & w1, const std::vector<float> & w2,
                             const std::vector<float> & x) {
    std::vector<float> out(kOut * kBatch);
    for (int b = 0; b < kBatch; b++) {
        std::vector<double> h(kHidden);
        for (int j = 0; j < kHidden; j++) {
            double s = 0;
            for (int i = 0; i < kIn; i++) s += (double) w1[j * kIn + i] * x[b * kIn + i];
            h[j] = s / (1.0 + std::exp(-s));
        }
        for (int k = 0; k < kOut; k++) {
            double s = 0;
            for (int j = 0; j < kHidden; j++) s += (double) w2[k * kHidden + j] * h[j];
            out[b * kOut + k] = (float) s;
        }
    }
    return out;
}

bool run_on(lm_ggml_backend_dev_t dev) {
    lm_ggml_backend_t backend = lm_ggml_backend_dev_init(dev, nullptr);
    if (!backend) return false;
    lm_ggml_init_params params = {lm_ggml_tensor_overhead() * 16 + lm_ggml_graph_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(params);
    lm_ggml_tensor * w1 = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, kIn, kHidden);  // (hidden, in)
    lm_ggml_tensor * w2 = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, kHidden, kOut); // (out, hidden)
    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, kIn, kBatch);    // (batch, in)
    lm_ggml_tensor * h = lm_ggml_silu(ctx, lm_ggml_mul_mat(ctx, w1, x));               // (batch, hidden)
    lm_ggml_tensor * y = lm_ggml_mul_mat(ctx, w2, h);                                  // (batch, out)
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, y);

    bool ok = false;
    if (!lm_ggml_backend_supports_op(backend, h) || !lm_ggml_backend_supports_op(backend, y) ||
        !lm_ggml_backend_supports_op(backend, h->src[0])) {
        std::printf("%-10s skipped (does not support this graph)\n", lm_ggml_backend_dev_name(dev));
        ok = true;
    } else if (lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors(ctx, backend)) {
        std::vector<float> vw1(kIn * kHidden), vw2(kHidden * kOut), vx(kIn * kBatch), vy(kOut * kBatch);
        for (size_t i = 0; i < vw1.size(); i++) vw1[i] = init_value((int) i, 1);
        for (size_t i = 0; i < vw2.size(); i++) vw2[i] = init_value((int) i, 2);
        for (size_t i = 0; i < vx.size(); i++) vx[i] = init_value((int) i, 3);
        lm_ggml_backend_tensor_set(w1, vw1.data(), 0, lm_ggml_nbytes(w1));
        lm_ggml_backend_tensor_set(w2, vw2.data(), 0, lm_ggml_nbytes(w2));
        lm_ggml_backend_tensor_set(x, vx.data(), 0, lm_ggml_nbytes(x));
        if (lm_ggml_backend_graph_compute(backend, gf) == LM_GGML_STATUS_SUCCESS) {
            lm_ggml_backend_tensor_get(y, vy.data(), 0, lm_ggml_nbytes(y));
            const std::vector<float> ref = reference(vw1, vw2, vx);
            double max_err = 0;
            for (size_t i = 0; i < vy.size(); i++) max_err = std::fmax(max_err, std::fabs(vy[i] - ref[i]));
            std::printf("%-10s y[0..3] = %+.5f %+.5f %+.5f %+.5f   max |error| vs reference = %.2e\n",
                        lm_ggml_backend_dev_name(dev), vy[0], vy[1], vy[2], vy[3], max_err);
            ok = max_err < 1e-4;
        }
        lm_ggml_backend_buffer_free(buf);
    }
    lm_ggml_free(ctx);
    lm_ggml_backend_free(backend);
    return ok;
}

} // namespace

int main() {
    lm_ggml_backend_load_all();
    std::printf("lmggml demo: y = W2 * silu(W1 * x) on every device\n");
    bool ok = true;
    for (size_t i = 0; i < lm_ggml_backend_dev_count(); i++) ok = run_on(lm_ggml_backend_dev_get(i)) && ok;
    return ok ? 0 : 1;
}

// Interop: the client against an external server named by LMGGML_RPC_PEER
// ("host:port"), e.g. llama.cpp's ggml-rpc-server (see docs/RPC.md). Skipped
// when the variable is unset. The graph mixes the ops a transformer layer
// uses; results are checked against double loops.

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-rpc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

namespace {

TEST(RpcPeer, LayerOpsOnExternalServer) {
    const char * peer = std::getenv("LMGGML_RPC_PEER");
    if (peer == nullptr || *peer == '\0') {
        GTEST_SKIP() << "set LMGGML_RPC_PEER=host:port to run against an external server";
    }
    lm_ggml_backend_t be = lm_ggml_backend_rpc_init(peer, 0);
    ASSERT_NE(be, nullptr);

    const int K = 64, M = 32, N = 5;
    lm_ggml_init_params ip = {lm_ggml_tensor_overhead() * 32 + lm_ggml_graph_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    lm_ggml_tensor * w = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, K, M);
    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, K, N);
    lm_ggml_tensor * g = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, K);
    // rms_norm(x) * g, then w @ that, silu, softmax over rows
    lm_ggml_tensor * h = lm_ggml_mul(ctx, lm_ggml_rms_norm(ctx, x, 1e-5f), g);
    lm_ggml_tensor * y = lm_ggml_soft_max_ext(ctx, lm_ggml_silu(ctx, lm_ggml_mul_mat(ctx, w, h)), nullptr, 0.5f, 0.0f);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, y);
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors(ctx, be);
    ASSERT_NE(buf, nullptr);
    std::vector<float> wv(K * M), xv(K * N), gv(K);
    for (size_t i = 0; i < wv.size(); i++) wv[i] = 0.1f * std::sin(0.37f * i);
    for (size_t i = 0; i < xv.size(); i++) xv[i] = std::cos(0.11f * i);
    for (size_t i = 0; i < gv.size(); i++) gv[i] = 1.0f + 0.01f * i;
    lm_ggml_backend_tensor_set(w, wv.data(), 0, wv.size() * 4);
    lm_ggml_backend_tensor_set(x, xv.data(), 0, xv.size() * 4);
    lm_ggml_backend_tensor_set(g, gv.data(), 0, gv.size() * 4);
    ASSERT_EQ(lm_ggml_backend_graph_compute(be, gf), LM_GGML_STATUS_SUCCESS);
    std::vector<float> got(M * N);
    lm_ggml_backend_tensor_get(y, got.data(), 0, got.size() * 4);

    for (int n = 0; n < N; n++) {
        double ss = 0;
        for (int k = 0; k < K; k++) ss += (double) xv[n * K + k] * xv[n * K + k];
        const double inv = 1.0 / std::sqrt(ss / K + 1e-5);
        std::vector<double> z(M);
        double mx = -1e300;
        for (int m = 0; m < M; m++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += (double) wv[m * K + k] * (xv[n * K + k] * inv * gv[k]);
            const double si = s / (1.0 + std::exp(-s));
            z[m] = 0.5 * si;
            mx = std::max(mx, z[m]);
        }
        double den = 0;
        for (int m = 0; m < M; m++) den += std::exp(z[m] - mx);
        for (int m = 0; m < M; m++) {
            EXPECT_NEAR(got[n * M + m], std::exp(z[m] - mx) / den, 1e-5) << "n=" << n << " m=" << m;
        }
    }
    lm_ggml_backend_buffer_free(buf);
    lm_ggml_backend_free(be);
    lm_ggml_free(ctx);
}

} // namespace

// The RPC client (lmggml's backend API) against the in-process server over
// 127.0.0.1: every command through the public API, results checked against
// plain double loops.

#include "rpc_test_util.h"
#include "rpc-client.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-rpc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

namespace {

using rpctest::LoopbackServer;

TEST(RpcLoopback, DeviceApiAndCompute) {
    LoopbackServer srv;
    ASSERT_NE(srv.s, nullptr);
    lm_ggml_backend_reg_t reg = lm_ggml_backend_rpc_add_server(srv.endpoint().c_str());
    ASSERT_NE(reg, nullptr);
    EXPECT_EQ(lm_ggml_backend_rpc_add_server(srv.endpoint().c_str()), reg) << "one reg per endpoint";
    ASSERT_EQ(lm_ggml_backend_reg_dev_count(reg), 1u);
    lm_ggml_backend_dev_t dev = lm_ggml_backend_reg_dev_get(reg, 0);
    EXPECT_EQ(lm_ggml_backend_rpc_add_device(srv.endpoint().c_str()), dev);
    size_t free_mem = 0, total = 0;
    lm_ggml_backend_dev_memory(dev, &free_mem, &total);
    EXPECT_GT(total, 0u);

    lm_ggml_backend_t be = lm_ggml_backend_dev_init(dev, nullptr);
    ASSERT_NE(be, nullptr);
    EXPECT_TRUE(lm_ggml_backend_is_rpc(be));

    lm_ggml_init_params ip = {lm_ggml_tensor_overhead() * 16 + lm_ggml_graph_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    const int K = 8, M = 3, N = 2;
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, K, M);
    lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, K, N);
    lm_ggml_tensor * mm = lm_ggml_mul_mat(ctx, a, b); // M x N
    lm_ggml_mul_mat_set_prec(mm, LM_GGML_PREC_F32);   // an enum in op params: 1 here, 10 on the wire
    lm_ggml_tensor * out = lm_ggml_scale(ctx, lm_ggml_rms_norm(ctx, mm, 1e-6f), 2.0f);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, out);
    for (int i = 0; i < lm_ggml_graph_n_nodes(gf); i++) {
        ASSERT_TRUE(lm_ggml_backend_supports_op(be, lm_ggml_graph_node(gf, i)));
    }
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors(ctx, be);
    ASSERT_NE(buf, nullptr);
    std::vector<float> av(K * M), bv(K * N);
    for (size_t i = 0; i < av.size(); i++) av[i] = std::sin(0.3f * i);
    for (size_t i = 0; i < bv.size(); i++) bv[i] = std::cos(0.7f * i);
    lm_ggml_backend_tensor_set(a, av.data(), 0, av.size() * 4);
    lm_ggml_backend_tensor_set(b, bv.data(), 0, bv.size() * 4);
    std::vector<float> back(K * M);
    lm_ggml_backend_tensor_get(a, back.data(), 0, back.size() * 4);
    EXPECT_EQ(back, av);

    ASSERT_EQ(lm_ggml_backend_graph_compute(be, gf), LM_GGML_STATUS_SUCCESS);
    std::vector<float> got(M * N);
    lm_ggml_backend_tensor_get(out, got.data(), 0, got.size() * 4);
    for (int n = 0; n < N; n++) {
        double row[M], ss = 0;
        for (int m = 0; m < M; m++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += (double) av[m * K + k] * bv[n * K + k];
            row[m] = s;
            ss += s * s;
        }
        const double inv = 1.0 / std::sqrt(ss / M + 1e-6);
        for (int m = 0; m < M; m++) {
            EXPECT_NEAR(got[n * M + m], 2.0 * row[m] * inv, 1e-4) << "n=" << n << " m=" << m;
        }
    }

    // memset over a range, buffer clear, tensor-to-tensor copy on the server
    lm_ggml_backend_tensor_memset(a, 0, 4, 8);
    lm_ggml_backend_tensor_get(a, back.data(), 0, back.size() * 4);
    EXPECT_EQ(back[0], av[0]);
    EXPECT_EQ(back[1], 0.0f);
    EXPECT_EQ(back[2], 0.0f);
    EXPECT_EQ(back[3], av[3]);
    lm_ggml_tensor * a2 = nullptr;
    {
        lm_ggml_context * c2 = lm_ggml_init(ip);
        a2 = lm_ggml_new_tensor_2d(c2, LM_GGML_TYPE_F32, K, M);
        lm_ggml_backend_buffer_t buf2 = lm_ggml_backend_alloc_ctx_tensors(c2, be);
        ASSERT_NE(buf2, nullptr);
        lm_ggml_backend_tensor_copy(a, a2);
        std::vector<float> c(K * M);
        lm_ggml_backend_tensor_get(a2, c.data(), 0, c.size() * 4);
        EXPECT_EQ(c, back);
        lm_ggml_backend_buffer_clear(buf2, 0);
        lm_ggml_backend_tensor_get(a2, c.data(), 0, c.size() * 4);
        EXPECT_EQ(c, std::vector<float>(K * M, 0.0f));
        lm_ggml_backend_buffer_free(buf2);
        lm_ggml_free(c2);
    }
    lm_ggml_backend_buffer_free(buf);
    lm_ggml_backend_free(be);
    lm_ggml_free(ctx);
}

TEST(RpcLoopback, ServerGoneMidRunIsAnErrorThenReconnects) {
    auto srv = std::make_unique<LoopbackServer>();
    ASSERT_NE(srv->s, nullptr);
    const int port = srv->port();
    const std::string ep = srv->endpoint();
    lm_ggml_backend_t be = lm_ggml_backend_rpc_init(ep.c_str(), 0);
    ASSERT_NE(be, nullptr);
    lm_ggml_init_params ip = {lm_ggml_tensor_overhead() * 8 + lm_ggml_graph_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 16);
    lm_ggml_tensor * b = lm_ggml_sqr(ctx, a);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, b);
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors(ctx, be);
    ASSERT_NE(buf, nullptr);
    std::vector<float> v(16, 3.0f), out(16, -1.0f);
    lm_ggml_backend_tensor_set(a, v.data(), 0, 64);
    ASSERT_EQ(lm_ggml_backend_graph_compute(be, gf), LM_GGML_STATUS_SUCCESS);

    srv.reset(); // the server goes away mid-run
    EXPECT_NE(lm_ggml_backend_graph_compute(be, gf), LM_GGML_STATUS_SUCCESS);
    lm_ggml_backend_tensor_get(b, out.data(), 0, 64);
    EXPECT_EQ(out, std::vector<float>(16, 0.0f)) << "a failed read is zeroed, not garbage";

    // a new server on the same port: the old buffer stays dead (its memory
    // went with the connection), new work reconnects
    rpc::ServerOptions o;
    o.port = port;
    o.devices.push_back(lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU));
    rpc::Server * again = rpc::server_start(o);
    ASSERT_NE(again, nullptr);
    EXPECT_NE(lm_ggml_backend_graph_compute(be, gf), LM_GGML_STATUS_SUCCESS);
    lm_ggml_backend_buffer_t buf2 = lm_ggml_backend_alloc_buffer(be, 256);
    EXPECT_NE(buf2, nullptr) << "allocation reconnects";
    if (buf2 != nullptr) {
        lm_ggml_backend_buffer_free(buf2);
    }
    lm_ggml_backend_buffer_free(buf);
    lm_ggml_backend_free(be);
    lm_ggml_free(ctx);
    rpc::server_stop(again);
}

TEST(RpcLoopback, UnreachableServerIsAnErrorNotACrash) {
    LoopbackServer srv;
    const int port = srv.port();
    rpc::server_stop(srv.s);
    srv.s = nullptr;
    EXPECT_EQ(lm_ggml_backend_rpc_add_server(("127.0.0.1:" + std::to_string(port)).c_str()), nullptr);
    EXPECT_EQ(lm_ggml_backend_rpc_add_server("not-an-endpoint"), nullptr);
}

TEST(RpcLoopback, CustomOpsAreNotSupported) {
    lm_ggml_init_params ip = {lm_ggml_tensor_overhead() * 8, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    lm_ggml_tensor * c = lm_ggml_map_custom1(
        ctx, a, [](lm_ggml_tensor *, const lm_ggml_tensor *, int, int, void *) {}, 1, nullptr);
    ASSERT_NE(c, nullptr);
    EXPECT_FALSE(rpc::supports_op(c));
    EXPECT_TRUE(rpc::supports_op(lm_ggml_add(ctx, a, a)));
    lm_ggml_free(ctx);
}

} // namespace

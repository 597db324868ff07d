// GRAPH_RECOMPUTE: the client reruns the server's stored graph when it would
// send the same bytes again (llama.cpp's client does it for graphs of the
// same uid), and resends it after anything that drops the stored graph; the
// server refuses a recompute with no graph of this connection to run.

#include "rpc_test_util.h"
#include "rpc-client.h"

#include "ggml-backend.h"
#include "ggml-rpc.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace rpctest;

// the client against the server at endpoint: results on new inputs, and
// which of GRAPH_COMPUTE and GRAPH_RECOMPUTE went
void client_reruns_unchanged_graphs(const std::string & endpoint) {
    lm_ggml_backend_reg_t reg = lm_ggml_backend_rpc_add_server(endpoint.c_str());
    ASSERT_NE(reg, nullptr);
    rpc::Endpoint * ep = rpc::endpoint_get(endpoint);
    ASSERT_NE(ep, nullptr);
    lm_ggml_backend_t be = lm_ggml_backend_dev_init(lm_ggml_backend_reg_dev_get(reg, 0), nullptr);
    ASSERT_NE(be, nullptr);

    lm_ggml_init_params ip = {lm_ggml_tensor_overhead() * 8 + 2 * lm_ggml_graph_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    const int n = 16;
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * b = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * sum = lm_ggml_add(ctx, a, b);
    lm_ggml_tensor * prod = lm_ggml_mul(ctx, a, b);
    lm_ggml_cgraph * g_sum = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g_sum, sum);
    lm_ggml_cgraph * g_prod = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g_prod, prod);
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors(ctx, be);
    ASSERT_NE(buf, nullptr);

    std::vector<float> av(n), bv(n), got(n);
    auto run = [&](lm_ggml_cgraph * g, lm_ggml_tensor * out, float step, bool is_sum) {
        for (int i = 0; i < n; i++) {
            av[i] = step + 0.5f * i;
            bv[i] = 3.0f - 0.25f * i;
        }
        lm_ggml_backend_tensor_set(a, av.data(), 0, n * 4);
        lm_ggml_backend_tensor_set(b, bv.data(), 0, n * 4);
        ASSERT_EQ(lm_ggml_backend_graph_compute(be, g), LM_GGML_STATUS_SUCCESS);
        lm_ggml_backend_tensor_get(out, got.data(), 0, n * 4);
        for (int i = 0; i < n; i++) {
            const double want = is_sum ? (double) av[i] + bv[i] : (double) av[i] * bv[i];
            ASSERT_NEAR(got[i], want, 1e-6) << "i=" << i << " step " << step;
        }
    };
    const uint64_t sent0 = ep->graphs_sent, re0 = ep->recomputes_sent;
    run(g_sum, sum, 1.0f, true);
    EXPECT_EQ(ep->graphs_sent, sent0 + 1);
    run(g_sum, sum, 2.0f, true); // new inputs, same graph: rerun on the server
    run(g_sum, sum, 3.0f, true);
    EXPECT_EQ(ep->graphs_sent, sent0 + 1);
    EXPECT_EQ(ep->recomputes_sent, re0 + 2);

    // a freed buffer drops the server's stored graphs: the graph is resent
    lm_ggml_backend_buffer_t other =
        lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_get_default_buffer_type(be), 256);
    ASSERT_NE(other, nullptr);
    lm_ggml_backend_buffer_free(other);
    run(g_sum, sum, 4.0f, true);
    EXPECT_EQ(ep->graphs_sent, sent0 + 2);
    EXPECT_EQ(ep->recomputes_sent, re0 + 2);

    // another graph is sent, and so is the first one again after it
    run(g_prod, prod, 5.0f, false);
    run(g_sum, sum, 6.0f, true);
    EXPECT_EQ(ep->graphs_sent, sent0 + 4);
    run(g_sum, sum, 7.0f, true);
    EXPECT_EQ(ep->recomputes_sent, re0 + 3);

    lm_ggml_backend_buffer_free(buf);
    lm_ggml_backend_free(be);
    lm_ggml_free(ctx);
}

TEST(RpcRecompute, ClientRerunsAnUnchangedGraphAndResendsAfterAFree) {
    LoopbackServer srv;
    ASSERT_NE(srv.s, nullptr);
    client_reruns_unchanged_graphs(srv.endpoint());
}

// the same against an external server, e.g. llama.cpp's (docs/RPC.md)
TEST(RpcRecompute, ClientAgainstExternalServer) {
    const char * peer = std::getenv("LMGGML_RPC_PEER");
    if (peer == nullptr || *peer == '\0')
        GTEST_SKIP() << "set LMGGML_RPC_PEER=host:port to run against an external server";
    client_reruns_unchanged_graphs(peer);
}

// sends msg on c, expects that connection closed and a fresh one served
void expect_refused(LoopbackServer & srv, Raw & c, uint8_t cmd, const void * msg, size_t n) {
    ASSERT_TRUE(c.send_cmd(cmd, msg, n));
    EXPECT_FALSE(c.alive()) << "the server kept a connection that sent a bad message";
    Raw fresh(srv.port());
    EXPECT_TRUE(fresh.alive()) << "the server stopped serving after a bad message";
}

// a stored 4-float ADD graph on device 0 of c's connection
void store_graph(Raw & c) {
    const uint64_t buf = c.alloc(1024), base = c.base(buf);
    ASSERT_NE(buf, 0u);
    rpc::WireTensor a = f32_tensor(1, buf, base, 4), o = f32_tensor(3, buf, base + 64, 4);
    o.op = 2; // GGML_OP_ADD on the wire
    o.src[0] = o.src[1] = 1;
    auto g = graph_msg(0, {3}, {a, o});
    ASSERT_TRUE(c.send_cmd(rpc::CMD_GRAPH_COMPUTE, g.data(), g.size()));
    ASSERT_TRUE(c.alive());
}

TEST(RpcRecompute, BeforeAnyGraphIsRefused) {
    LoopbackServer srv;
    Raw c(srv.port());
    const rpc::DeviceReq dr = {0};
    expect_refused(srv, c, rpc::CMD_GRAPH_RECOMPUTE, &dr, sizeof(dr));
}

TEST(RpcRecompute, OnAnUnknownDeviceIsRefused) {
    LoopbackServer srv;
    Raw c(srv.port());
    store_graph(c);
    const rpc::DeviceReq dr = {1};
    expect_refused(srv, c, rpc::CMD_GRAPH_RECOMPUTE, &dr, sizeof(dr));
}

TEST(RpcRecompute, AnotherConnectionsGraphIsNotRun) {
    LoopbackServer srv;
    Raw owner(srv.port()), other(srv.port());
    store_graph(owner);
    const rpc::DeviceReq dr = {0};
    expect_refused(srv, other, rpc::CMD_GRAPH_RECOMPUTE, &dr, sizeof(dr));
    ASSERT_TRUE(owner.send_cmd(rpc::CMD_GRAPH_RECOMPUTE, &dr, sizeof(dr)));
    EXPECT_TRUE(owner.alive()) << "the owner's graph must still run";
}

TEST(RpcRecompute, WrongSizeIsRefused) {
    LoopbackServer srv;
    Raw c(srv.port());
    store_graph(c);
    const uint8_t msg[8] = {};
    expect_refused(srv, c, rpc::CMD_GRAPH_RECOMPUTE, msg, sizeof(msg));
}

} // namespace

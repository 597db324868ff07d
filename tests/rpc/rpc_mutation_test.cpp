// Byte mutations of well-formed messages (a deterministic stand-in until the
// libFuzzer target exists): whatever each mutant does, the server must stay
// up and keep serving fresh connections.

#include "rpc_test_util.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace {

using namespace rpctest;
using rpc::WireTensor;

TEST(RpcMutation, MutatedMessagesNeverStopTheServer) {
    rpc::ServerOptions o;
    o.max_conn_bytes = 1 << 20;
    LoopbackServer srv(o);
    std::mt19937_64 rng(20261204);
    int refused = 0, accepted = 0;
    for (int iter = 0; iter < 400; iter++) {
        Raw c(srv.port());
        ASSERT_GE(c.fd, 0) << "iteration " << iter;
        const uint64_t buf = c.alloc(4096), base = c.base(buf);
        ASSERT_NE(buf, 0u);
        // one of: a graph (add + view), a SET_TENSOR, a GET_TENSOR, a COPY
        WireTensor a = f32_tensor(1, buf, base, 4), b = f32_tensor(2, buf, base + 64, 4),
                   o2 = f32_tensor(3, buf, base + 128, 4);
        o2.op = 2;
        o2.src[0] = 1;
        o2.src[1] = 2;
        std::vector<uint8_t> msg;
        uint8_t cmd = 0;
        switch (iter % 4) {
            case 0:
                cmd = rpc::CMD_GRAPH_COMPUTE;
                msg = graph_msg(0, {3}, {a, b, o2});
                break;
            case 1: {
                const float v[4] = {1, 2, 3, 4};
                cmd = rpc::CMD_SET_TENSOR;
                msg = set_tensor_msg(a, 0, v, 16);
                break;
            }
            case 2: {
                rpc::GetTensorReq r = {a, 0, 16};
                cmd = rpc::CMD_GET_TENSOR;
                msg.resize(sizeof(r));
                std::memcpy(msg.data(), &r, sizeof(r));
                break;
            }
            default: {
                rpc::CopyTensorReq r = {a, b};
                cmd = rpc::CMD_COPY_TENSOR;
                msg.resize(sizeof(r));
                std::memcpy(msg.data(), &r, sizeof(r));
                break;
            }
        }
        const int n_flips = 1 + (int) (rng() % 4);
        for (int k = 0; k < n_flips; k++) {
            const size_t at = rng() % msg.size();
            msg[at] = (rng() % 3 == 0) ? 0xff : (uint8_t) (msg[at] ^ (1u << (rng() % 8)));
        }
        ASSERT_TRUE(c.send_cmd(cmd, msg.data(), msg.size()));
        if (cmd == rpc::CMD_GET_TENSOR || cmd == rpc::CMD_COPY_TENSOR) {
            // an answer of the announced size, or a closed connection
            std::vector<uint8_t> out(cmd == rpc::CMD_COPY_TENSOR ? 1 : 16);
            uint64_t size = 0;
            if (rpc::recv_all(c.fd, &size, 8, 3000) && size <= (1u << 20)) {
                out.resize(size);
                rpc::recv_all(c.fd, out.data(), size, 3000);
            }
        }
        (c.alive() ? accepted : refused)++;
    }
    Raw fresh(srv.port());
    EXPECT_TRUE(fresh.alive());
    EXPECT_GT(refused, 0);
    std::printf("mutants: %d refused, %d accepted\n", refused, accepted);
}

} // namespace

// Hand-made and malformed messages against the server: each must be refused
// (the connection closes, the reason is logged) and the server must go on
// serving a fresh connection. The first test checks the raw byte layouts
// with a well-formed graph, so the refusals below are not format mistakes.

#include "rpc_test_util.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

namespace {

using namespace rpctest;
using rpc::WireTensor;

constexpr uint32_t kWireAdd = 2;         // GGML_OP_ADD on the wire
constexpr uint32_t kWireMulMat = 29;     // GGML_OP_MUL_MAT on the wire
constexpr uint32_t kWireView = 37;       // GGML_OP_VIEW on the wire
constexpr uint32_t kWireMapCustom1 = 92; // the peer's MAP_CUSTOM1 (never accepted)

struct Fixture {
    LoopbackServer srv;
    Raw c{srv.port()};
    uint64_t buf = 0, base = 0;
    Fixture() {
        buf = c.alloc(4096);
        base = c.base(buf);
    }
};

// sends msg on a fresh connection's state, expects the connection closed,
// then expects a fresh connection to be served
void expect_refused(Fixture & f, uint8_t cmd, const std::vector<uint8_t> & msg) {
    ASSERT_TRUE(f.c.send_cmd(cmd, msg.data(), msg.size()));
    EXPECT_FALSE(f.c.alive()) << "the server kept a connection that sent a bad message";
    Raw fresh(f.srv.port());
    EXPECT_TRUE(fresh.alive()) << "the server stopped serving after a bad message";
}

template <typename T> std::vector<uint8_t> bytes_of(const T & v) {
    std::vector<uint8_t> m(sizeof(T));
    std::memcpy(m.data(), &v, sizeof(T));
    return m;
}

TEST(RpcRaw, WellFormedGraphComputes) {
    Fixture f;
    ASSERT_NE(f.buf, 0u);
    const float av[4] = {1, 2, 3, 4}, bv[4] = {10, 20, 30, 40};
    WireTensor a = f32_tensor(1, f.buf, f.base, 4), b = f32_tensor(2, f.buf, f.base + 64, 4),
               o = f32_tensor(3, f.buf, f.base + 128, 4);
    o.op = kWireAdd;
    o.src[0] = 1;
    o.src[1] = 2;
    auto ma = set_tensor_msg(a, 0, av, 16), mb = set_tensor_msg(b, 0, bv, 16);
    ASSERT_TRUE(f.c.send_cmd(rpc::CMD_SET_TENSOR, ma.data(), ma.size()));
    ASSERT_TRUE(f.c.send_cmd(rpc::CMD_SET_TENSOR, mb.data(), mb.size()));
    auto g = graph_msg(0, {3}, {a, b, o});
    ASSERT_TRUE(f.c.send_cmd(rpc::CMD_GRAPH_COMPUTE, g.data(), g.size()));
    rpc::GetTensorReq req = {o, 0, 16};
    float out[4] = {};
    ASSERT_TRUE(f.c.call(rpc::CMD_GET_TENSOR, &req, sizeof(req), out, sizeof(out)));
    for (int i = 0; i < 4; i++) EXPECT_EQ(out[i], av[i] + bv[i]);
    // recompute after new inputs, without resending the graph
    const float av2[4] = {5, 5, 5, 5};
    auto ma2 = set_tensor_msg(a, 0, av2, 16);
    ASSERT_TRUE(f.c.send_cmd(rpc::CMD_SET_TENSOR, ma2.data(), ma2.size()));
    rpc::DeviceReq dr = {0};
    ASSERT_TRUE(f.c.send_cmd(rpc::CMD_GRAPH_RECOMPUTE, &dr, sizeof(dr)));
    ASSERT_TRUE(f.c.call(rpc::CMD_GET_TENSOR, &req, sizeof(req), out, sizeof(out)));
    for (int i = 0; i < 4; i++) EXPECT_EQ(out[i], 5 + bv[i]);
    EXPECT_TRUE(f.c.alive());
}

TEST(RpcRaw, TensorsBehindAnInputNeedNoBuffer) {
    // as llama.cpp's client sends them: the input `a` was computed elsewhere
    // from `w`, which lives in no buffer of this server and is never read
    Fixture f;
    WireTensor w = f32_tensor(9, 0, 0, 4), a = f32_tensor(1, f.buf, f.base, 4),
               o = f32_tensor(3, f.buf, f.base + 128, 4);
    a.op = kWireAdd;
    a.src[0] = a.src[1] = 9;
    o.op = kWireAdd;
    o.src[0] = o.src[1] = 1;
    auto g = graph_msg(0, {3}, {w, a, o});
    ASSERT_TRUE(f.c.send_cmd(rpc::CMD_GRAPH_COMPUTE, g.data(), g.size()));
    EXPECT_TRUE(f.c.alive());
}

TEST(RpcRaw, InputWithoutBufferIsRefused) {
    Fixture f;
    WireTensor a = f32_tensor(1, 0, 0, 4), o = f32_tensor(3, f.buf, f.base + 128, 4);
    o.op = kWireAdd;
    o.src[0] = o.src[1] = 1;
    expect_refused(f, rpc::CMD_GRAPH_COMPUTE, graph_msg(0, {3}, {a, o}));
}

TEST(RpcRaw, FirstCommandMustBeHello) {
    LoopbackServer srv;
    Raw c(srv.port(), false);
    EXPECT_FALSE(c.alive());
    Raw fresh(srv.port());
    EXPECT_TRUE(fresh.alive());
}

TEST(RpcRaw, BufferZeroIsRefused) {
    Fixture f;
    const float v[4] = {};
    expect_refused(f, rpc::CMD_SET_TENSOR, set_tensor_msg(f32_tensor(1, 0, f.base, 4), 0, v, 16));
}

TEST(RpcRaw, ForeignBufferIsRefused) {
    Fixture f;
    Raw other(f.srv.port());
    const uint64_t theirs = other.alloc(4096);
    ASSERT_NE(theirs, 0u);
    const uint64_t their_base = other.base(theirs);
    // the other connection's handle and base, exactly as it was given them
    rpc::GetTensorReq req = {f32_tensor(1, theirs, their_base, 4), 0, 16};
    expect_refused(f, rpc::CMD_GET_TENSOR, bytes_of(req));
    EXPECT_TRUE(other.alive());
}

TEST(RpcRaw, DataOutsideBufferIsRefused) {
    Fixture f;
    rpc::GetTensorReq req = {f32_tensor(1, f.buf, f.base + 4096 - 8, 4), 0, 16};
    expect_refused(f, rpc::CMD_GET_TENSOR, bytes_of(req));
}

TEST(RpcRaw, DataBeforeBufferIsRefused) {
    Fixture f;
    rpc::GetTensorReq req = {f32_tensor(1, f.buf, f.base - 16, 4), 0, 16};
    expect_refused(f, rpc::CMD_GET_TENSOR, bytes_of(req));
}

TEST(RpcRaw, RangePastTensorIsRefused) {
    Fixture f;
    rpc::GetTensorReq req = {f32_tensor(1, f.buf, f.base, 4), 8, 16};
    expect_refused(f, rpc::CMD_GET_TENSOR, bytes_of(req));
}

TEST(RpcRaw, HugeOffsetWrapIsRefused) {
    Fixture f;
    rpc::MemsetTensorReq req = {f32_tensor(1, f.buf, f.base, 4), ~uint64_t(0) - 3, 8, 0xff};
    expect_refused(f, rpc::CMD_MEMSET_TENSOR, bytes_of(req));
}

// kernels load whole elements: an F32 tensor 2 bytes into its buffer, or a
// row stride that is not a multiple of 4, would be a misaligned load
TEST(RpcRaw, MisalignedDataIsRefused) {
    Fixture f;
    rpc::GetTensorReq req = {f32_tensor(1, f.buf, f.base + 2, 4), 0, 16};
    expect_refused(f, rpc::CMD_GET_TENSOR, bytes_of(req));
}

TEST(RpcRaw, MisalignedStrideIsRefused) {
    Fixture f;
    WireTensor t = f32_tensor(1, f.buf, f.base, 4, 2);
    t.nb[1] = 18;
    rpc::GetTensorReq req = {t, 0, 16};
    expect_refused(f, rpc::CMD_GET_TENSOR, bytes_of(req));
}

TEST(RpcRaw, StrideTrickIsRefused) {
    Fixture f;
    WireTensor t = f32_tensor(1, f.buf, f.base, 4, 2);
    t.nb[1] = 0x80000000u; // row 1 lands 2 GiB past the buffer
    rpc::GetTensorReq req = {t, 0, 16};
    expect_refused(f, rpc::CMD_GET_TENSOR, bytes_of(req));
}

TEST(RpcRaw, OverlappingStridesCannotHideThePackedSize) {
    Fixture f;
    WireTensor t = f32_tensor(1, f.buf, f.base + 4096 - 16, 4, 64);
    t.nb[1] = 0; // every row the same 16 bytes; a contiguous kernel would read 1 KiB
    rpc::GetTensorReq req = {t, 0, 16};
    expect_refused(f, rpc::CMD_GET_TENSOR, bytes_of(req));
}

TEST(RpcRaw, QuantizedRowNotBlockMultipleIsRefused) {
    Fixture f;
    WireTensor t = f32_tensor(1, f.buf, f.base, 33);
    t.type = 2; // Q4_0, blocks of 32
    t.nb[0] = 18;
    rpc::GetTensorReq req = {t, 0, 4};
    expect_refused(f, rpc::CMD_GET_TENSOR, bytes_of(req));
}

TEST(RpcRaw, UnknownTypeIsRefused) {
    Fixture f;
    WireTensor t = f32_tensor(1, f.buf, f.base, 4);
    t.type = 4000;
    rpc::GetTensorReq req = {t, 0, 4};
    expect_refused(f, rpc::CMD_GET_TENSOR, bytes_of(req));
}

TEST(RpcRaw, UseAfterFreeIsRefused) {
    Fixture f;
    rpc::BufferReq fr = {f.buf};
    ASSERT_TRUE(f.c.send_cmd(rpc::CMD_FREE_BUFFER, &fr, sizeof(fr)));
    EXPECT_TRUE(f.c.alive());
    rpc::GetTensorReq req = {f32_tensor(1, f.buf, f.base, 4), 0, 16};
    expect_refused(f, rpc::CMD_GET_TENSOR, bytes_of(req));
}

TEST(RpcRaw, DoubleFreeIsRefused) {
    Fixture f;
    rpc::BufferReq fr = {f.buf};
    ASSERT_TRUE(f.c.send_cmd(rpc::CMD_FREE_BUFFER, &fr, sizeof(fr)));
    expect_refused(f, rpc::CMD_FREE_BUFFER, bytes_of(fr));
}

TEST(RpcRaw, RecomputeAfterFreeIsRefused) {
    Fixture f;
    WireTensor a = f32_tensor(1, f.buf, f.base, 4), o = f32_tensor(3, f.buf, f.base + 128, 4);
    o.op = kWireAdd;
    o.src[0] = 1;
    o.src[1] = 1;
    auto g = graph_msg(0, {3}, {a, o});
    ASSERT_TRUE(f.c.send_cmd(rpc::CMD_GRAPH_COMPUTE, g.data(), g.size()));
    EXPECT_TRUE(f.c.alive());
    rpc::BufferReq fr = {f.buf};
    ASSERT_TRUE(f.c.send_cmd(rpc::CMD_FREE_BUFFER, &fr, sizeof(fr)));
    rpc::DeviceReq dr = {0};
    expect_refused(f, rpc::CMD_GRAPH_RECOMPUTE, bytes_of(dr));
}

// two devices served (the CPU twice), a 4-float ADD graph on each
struct TwoDevices {
    LoopbackServer srv{[] {
        rpc::ServerOptions o;
        lm_ggml_backend_dev_t cpu = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
        o.devices = {cpu, cpu};
        return o;
    }()};
    Raw c{srv.port()};
    uint64_t alloc_on(uint32_t device) {
        rpc::AllocBufferReq req = {device, 1024};
        rpc::AllocBufferRsp rsp = {};
        return c.call(rpc::CMD_ALLOC_BUFFER, &req, sizeof(req), &rsp, sizeof(rsp)) ? rsp.remote_ptr : 0;
    }
    std::vector<uint8_t> add_graph(uint32_t device, uint64_t buf, uint64_t base) {
        WireTensor a = f32_tensor(1, buf, base, 4), o = f32_tensor(3, buf, base + 64, 4);
        o.op = kWireAdd;
        o.src[0] = o.src[1] = 1;
        return graph_msg(device, {3}, {a, o});
    }
};

TEST(RpcRaw, RecomputeKeepsEachDevicesGraph) {
    TwoDevices t;
    const uint64_t b0 = t.alloc_on(0), b1 = t.alloc_on(1);
    ASSERT_NE(b0, 0u);
    ASSERT_NE(b1, 0u);
    const uint64_t base0 = t.c.base(b0), base1 = t.c.base(b1);
    auto g0 = t.add_graph(0, b0, base0), g1 = t.add_graph(1, b1, base1);
    ASSERT_TRUE(t.c.send_cmd(rpc::CMD_GRAPH_COMPUTE, g0.data(), g0.size()));
    ASSERT_TRUE(t.c.send_cmd(rpc::CMD_GRAPH_COMPUTE, g1.data(), g1.size()));
    rpc::DeviceReq d0 = {0};
    ASSERT_TRUE(t.c.send_cmd(rpc::CMD_GRAPH_RECOMPUTE, &d0, sizeof(d0)));
    EXPECT_TRUE(t.c.alive()) << "device 0's graph must survive a compute on device 1";
}

TEST(RpcRaw, GraphOverAnotherDevicesBufferIsRefused) {
    TwoDevices t;
    const uint64_t b1 = t.alloc_on(1);
    ASSERT_NE(b1, 0u);
    auto g = t.add_graph(0, b1, t.c.base(b1));
    ASSERT_TRUE(t.c.send_cmd(rpc::CMD_GRAPH_COMPUTE, g.data(), g.size()));
    EXPECT_FALSE(t.c.alive());
    Raw fresh(t.srv.port());
    EXPECT_TRUE(fresh.alive());
}

TEST(RpcRaw, HugeNodeCountIsRefused) {
    Fixture f;
    std::vector<uint8_t> g(12, 0);
    const uint32_t n = 0xffffffffu;
    std::memcpy(g.data() + 4, &n, 4);
    expect_refused(f, rpc::CMD_GRAPH_COMPUTE, g);
}

TEST(RpcRaw, NodeIdZeroIsRefused) {
    Fixture f;
    WireTensor a = f32_tensor(1, f.buf, f.base, 4);
    expect_refused(f, rpc::CMD_GRAPH_COMPUTE, graph_msg(0, {0}, {a}));
}

TEST(RpcRaw, DanglingSourceIsRefused) {
    Fixture f;
    WireTensor o = f32_tensor(3, f.buf, f.base + 128, 4);
    o.op = kWireAdd;
    o.src[0] = 99;
    o.src[1] = 98;
    expect_refused(f, rpc::CMD_GRAPH_COMPUTE, graph_msg(0, {3}, {o}));
}

TEST(RpcRaw, CycleIsRefused) {
    Fixture f;
    WireTensor x = f32_tensor(1, f.buf, f.base, 4), y = f32_tensor(2, f.buf, f.base + 64, 4);
    x.op = y.op = kWireAdd;
    x.src[0] = x.src[1] = 2;
    y.src[0] = y.src[1] = 1;
    expect_refused(f, rpc::CMD_GRAPH_COMPUTE, graph_msg(0, {1, 2}, {x, y}));
}

TEST(RpcRaw, ShapeThatTheOpCannotMakeIsRefused) {
    Fixture f;
    WireTensor a = f32_tensor(1, f.buf, f.base, 4), o = f32_tensor(3, f.buf, f.base + 128, 8);
    o.op = kWireAdd; // ADD of two 4-vectors claiming an 8-vector result
    o.src[0] = o.src[1] = 1;
    expect_refused(f, rpc::CMD_GRAPH_COMPUTE, graph_msg(0, {3}, {a, o}));
}

// a VIEW node of leaf `a` (4 floats at base) with the given offset and data
std::vector<uint8_t> view_graph(const Fixture & f, uint64_t offs, uint64_t data) {
    WireTensor a = f32_tensor(1, f.buf, f.base, 4), v = f32_tensor(2, f.buf, data, 2);
    v.op = kWireView;
    v.src[0] = 1;
    v.view_src = 1;
    v.view_offs = offs;
    std::memcpy(v.op_params, &offs, 8);
    WireTensor o = f32_tensor(3, f.buf, f.base + 256, 2);
    o.op = kWireAdd;
    o.src[0] = o.src[1] = 2;
    return graph_msg(0, {2, 3}, {a, v, o});
}

TEST(RpcRaw, ViewInsideItsSourceComputes) {
    Fixture f;
    auto g = view_graph(f, 8, f.base + 8);
    ASSERT_TRUE(f.c.send_cmd(rpc::CMD_GRAPH_COMPUTE, g.data(), g.size()));
    EXPECT_TRUE(f.c.alive());
}

TEST(RpcRaw, ViewPastItsBufferIsRefused) {
    Fixture f;
    expect_refused(f, rpc::CMD_GRAPH_COMPUTE, view_graph(f, 4096, f.base + 4096));
}

TEST(RpcRaw, ViewWhoseDataDisagreesWithItsOffsetIsRefused) {
    Fixture f;
    expect_refused(f, rpc::CMD_GRAPH_COMPUTE, view_graph(f, 0, f.base + 512));
}

// a view offset near 2^64 must not wrap the server's pointer arithmetic
// (found by the fuzzer: undefined behaviour before the check)
TEST(RpcRaw, ViewOffsetThatWrapsIsRefused) {
    Fixture f;
    expect_refused(f, rpc::CMD_GRAPH_COMPUTE, view_graph(f, ~uint64_t(0) - 7, f.base + 8));
}

TEST(RpcRaw, UnknownPrecisionIsRefused) {
    Fixture f;
    WireTensor a = f32_tensor(1, f.buf, f.base, 4), o = f32_tensor(3, f.buf, f.base + 128, 1);
    o.op = kWireMulMat;
    o.src[0] = o.src[1] = 1;
    o.op_params[0] = 10; // the wire's F32: accepted
    auto g = graph_msg(0, {3}, {a, o});
    ASSERT_TRUE(f.c.send_cmd(rpc::CMD_GRAPH_COMPUTE, g.data(), g.size()));
    EXPECT_TRUE(f.c.alive());
    o.op_params[0] = 1; // lmggml's own F32 is not a wire value
    expect_refused(f, rpc::CMD_GRAPH_COMPUTE, graph_msg(0, {3}, {a, o}));
}

TEST(RpcRaw, CustomOpIsRefused) {
    Fixture f;
    WireTensor a = f32_tensor(1, f.buf, f.base, 4), o = f32_tensor(3, f.buf, f.base + 128, 4);
    o.op = kWireMapCustom1;
    o.src[0] = 1;
    const uint64_t fake_fn = 0x4141414141414141ull;
    std::memcpy(o.op_params, &fake_fn, 8);
    expect_refused(f, rpc::CMD_GRAPH_COMPUTE, graph_msg(0, {3}, {a, o}));
}

TEST(RpcRaw, GraphSizeMismatchIsRefused) {
    Fixture f;
    WireTensor a = f32_tensor(1, f.buf, f.base, 4);
    auto g = graph_msg(0, {1}, {a});
    g.resize(g.size() - 1);
    expect_refused(f, rpc::CMD_GRAPH_COMPUTE, g);
}

TEST(RpcRaw, WrongFixedSizeIsRefused) {
    Fixture f;
    std::vector<uint8_t> m(sizeof(rpc::AllocBufferReq) + 1, 0);
    expect_refused(f, rpc::CMD_ALLOC_BUFFER, m);
}

TEST(RpcRaw, UnknownCommandIsRefused) {
    Fixture f;
    expect_refused(f, 200, {});
}

TEST(RpcRaw, OversizedLengthIsRefusedBeforeAllocation) {
    Fixture f;
    const uint8_t cmd = rpc::CMD_SET_TENSOR;
    const uint64_t n = uint64_t(1) << 62;
    WireTensor t = f32_tensor(1, f.buf, f.base, 4);
    std::vector<uint8_t> hdr(rpc::kSetTensorHeader, 0);
    std::memcpy(hdr.data(), &t, sizeof(t));
    ASSERT_TRUE(rpc::send_all(f.c.fd, &cmd, 1, 1000));
    ASSERT_TRUE(rpc::send_all(f.c.fd, &n, 8, 1000));
    ASSERT_TRUE(rpc::send_all(f.c.fd, hdr.data(), hdr.size(), 1000));
    EXPECT_FALSE(f.c.alive());
    Raw fresh(f.srv.port());
    EXPECT_TRUE(fresh.alive());
}

TEST(RpcRaw, TruncatedMessageTimesOutAndServerServes) {
    Fixture f;
    const uint8_t cmd = rpc::CMD_GET_TENSOR;
    const uint64_t n = sizeof(rpc::GetTensorReq);
    ASSERT_TRUE(rpc::send_all(f.c.fd, &cmd, 1, 1000));
    ASSERT_TRUE(rpc::send_all(f.c.fd, &n, 8, 1000));
    ASSERT_TRUE(rpc::send_all(f.c.fd, "0123456789", 10, 1000));
    Raw fresh(f.srv.port()); // served while the slow one waits
    EXPECT_TRUE(fresh.alive());
    uint8_t byte;
    EXPECT_FALSE(rpc::recv_all(f.c.fd, &byte, 1, 5000)) << "the server must drop a stalled message";
}

TEST(RpcRaw, AllocOverConnectionLimitFailsCleanly) {
    rpc::ServerOptions o;
    o.max_conn_bytes = 1 << 20;
    LoopbackServer srv(o);
    Raw c(srv.port());
    EXPECT_NE(c.alloc(512 << 10), 0u);
    EXPECT_EQ(c.alloc(768 << 10), 0u) << "over the per-connection cap";
    EXPECT_TRUE(c.alive()) << "a refused allocation is an answer, not an error";
}

} // namespace

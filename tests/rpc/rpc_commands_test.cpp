// Raw commands not reached through the backend API in the loopback test:
// SET_TENSOR_HASH with the server's cache, INIT_TENSOR, GET_ALLOC_SIZE, the
// device queries, and their error paths.

#include "rpc_test_util.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace {

using namespace rpctest;
using rpc::WireTensor;

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/lmggml-rpc-cache-XXXXXX";
        const char * p = mkdtemp(tmpl);
        path = p ? p : "";
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

std::string hash_name(uint64_t h) {
    char name[17];
    std::snprintf(name, sizeof(name), "%016" PRIx64, h);
    return name;
}

TEST(RpcCommands, SetTensorHashUsesTheCache) {
    TempDir dir;
    ASSERT_FALSE(dir.path.empty());
    rpc::ServerOptions o;
    o.cache_dir = dir.path;
    LoopbackServer srv(o);
    Raw c(srv.port());
    const uint64_t buf = c.alloc(4096), base = c.base(buf);
    ASSERT_NE(buf, 0u);
    std::vector<float> v(64);
    for (size_t i = 0; i < v.size(); i++) v[i] = 0.5f * i;
    const uint64_t h = rpc::fnv1a(v.data(), v.size() * 4);
    WireTensor t = f32_tensor(1, buf, base, 64);

    // unknown hash: 0, nothing written
    rpc::SetTensorHashReq hr = {t, 0, h};
    rpc::ResultRsp rr = {9};
    ASSERT_TRUE(c.call(rpc::CMD_SET_TENSOR_HASH, &hr, sizeof(hr), &rr, sizeof(rr)));
    EXPECT_EQ(rr.result, 0);

    // SET_TENSOR with the cache flag stores the bytes under their hash
    auto m = set_tensor_msg(t, 0, v.data(), v.size() * 4);
    m[sizeof(WireTensor)] = 1;
    ASSERT_TRUE(c.send_cmd(rpc::CMD_SET_TENSOR, m.data(), m.size()));
    ASSERT_TRUE(c.alive());
    EXPECT_TRUE(std::filesystem::exists(dir.path + "/" + hash_name(h)));

    // a second tensor gets the bytes from the cache, not the wire
    WireTensor t2 = f32_tensor(2, buf, base + 1024, 64);
    hr = {t2, 0, h};
    ASSERT_TRUE(c.call(rpc::CMD_SET_TENSOR_HASH, &hr, sizeof(hr), &rr, sizeof(rr)));
    EXPECT_EQ(rr.result, 1);
    rpc::GetTensorReq g = {t2, 0, 256};
    std::vector<float> back(64);
    ASSERT_TRUE(c.call(rpc::CMD_GET_TENSOR, &g, sizeof(g), back.data(), 256));
    EXPECT_EQ(back, v);

    // a file whose bytes do not hash to its name is not used
    const uint64_t h_bad = h ^ 1;
    std::ofstream(dir.path + "/" + hash_name(h_bad), std::ios::binary).write((const char *) v.data(), 256);
    hr = {t2, 0, h_bad};
    ASSERT_TRUE(c.call(rpc::CMD_SET_TENSOR_HASH, &hr, sizeof(hr), &rr, sizeof(rr)));
    EXPECT_EQ(rr.result, 0);

    // a cached file larger than the tensor is refused
    WireTensor small = f32_tensor(3, buf, base + 2048, 4);
    hr = {small, 0, h};
    ASSERT_TRUE(c.send_cmd(rpc::CMD_SET_TENSOR_HASH, &hr, sizeof(hr)));
    EXPECT_FALSE(c.alive());
    Raw fresh(srv.port());
    EXPECT_TRUE(fresh.alive());
}

TEST(RpcCommands, InitTensorAndAllocSize) {
    LoopbackServer srv;
    Raw c(srv.port());
    const uint64_t buf = c.alloc(4096), base = c.base(buf);
    rpc::InitTensorReq ir = {f32_tensor(1, buf, base, 64)};
    ASSERT_TRUE(c.send_cmd(rpc::CMD_INIT_TENSOR, &ir, sizeof(ir)));
    EXPECT_TRUE(c.alive());

    rpc::GetAllocSizeReq ar;
    std::memset(&ar, 0, sizeof(ar));
    ar.device = 0;
    ar.tensor = f32_tensor(1, 0, 0, 10, 3); // no buffer: the device's default type
    rpc::U64Rsp sz = {0};
    ASSERT_TRUE(c.call(rpc::CMD_GET_ALLOC_SIZE, &ar, sizeof(ar), &sz, sizeof(sz)));
    EXPECT_EQ(sz.value, 120u);

    ar.device = 7; // no such device
    ASSERT_TRUE(c.send_cmd(rpc::CMD_GET_ALLOC_SIZE, &ar, sizeof(ar)));
    EXPECT_FALSE(c.alive());
}

TEST(RpcCommands, InitTensorOutsideItsBufferIsRefused) {
    LoopbackServer srv;
    Raw c(srv.port());
    const uint64_t buf = c.alloc(256), base = c.base(buf);
    rpc::InitTensorReq ir = {f32_tensor(1, buf, base, 128)};
    ASSERT_TRUE(c.send_cmd(rpc::CMD_INIT_TENSOR, &ir, sizeof(ir)));
    EXPECT_FALSE(c.alive());
}

TEST(RpcCommands, DeviceQueries) {
    LoopbackServer srv;
    Raw c(srv.port());
    rpc::DeviceReq d = {0};
    rpc::U64Rsp align = {0}, max_size = {0};
    ASSERT_TRUE(c.call(rpc::CMD_GET_ALIGNMENT, &d, sizeof(d), &align, sizeof(align)));
    EXPECT_GT(align.value, 0u);
    EXPECT_EQ(align.value & (align.value - 1), 0u);
    ASSERT_TRUE(c.call(rpc::CMD_GET_MAX_SIZE, &d, sizeof(d), &max_size, sizeof(max_size)));
    EXPECT_GT(max_size.value, 0u);
    rpc::DeviceMemoryRsp mem = {0, 0};
    ASSERT_TRUE(c.call(rpc::CMD_GET_DEVICE_MEMORY, &d, sizeof(d), &mem, sizeof(mem)));
    EXPECT_GT(mem.total_mem, 0u);
    EXPECT_LE(mem.free_mem, mem.total_mem);
    d.device = 1; // one device served
    ASSERT_TRUE(c.send_cmd(rpc::CMD_GET_DEVICE_MEMORY, &d, sizeof(d)));
    EXPECT_FALSE(c.alive());
}

TEST(RpcCommands, AllocOnMissingDeviceIsRefused) {
    LoopbackServer srv;
    Raw c(srv.port());
    rpc::AllocBufferReq req = {3, 1024};
    ASSERT_TRUE(c.send_cmd(rpc::CMD_ALLOC_BUFFER, &req, sizeof(req)));
    EXPECT_FALSE(c.alive());
}

} // namespace

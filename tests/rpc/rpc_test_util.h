#pragma once
// Helpers for the RPC tests: an in-process server on an ephemeral port and
// a raw protocol client that sends hand-made (and malformed) messages.

#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "rpc-net.h"
#include "rpc-proto.h"
#include "rpc-server.h"

#include <cstring>
#include <string>
#include <vector>

namespace rpctest {

struct LoopbackServer {
    rpc::Server * s = nullptr;
    explicit LoopbackServer(rpc::ServerOptions o = {}) {
        o.host = "127.0.0.1";
        o.port = 0;
        if (o.devices.empty()) {
            o.devices.push_back(lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU));
        }
        o.io_timeout_ms = 2000;
        s = rpc::server_start(o);
    }
    ~LoopbackServer() { rpc::server_stop(s); }
    int port() const { return rpc::server_port(s); }
    std::string endpoint() const { return "127.0.0.1:" + std::to_string(port()); }
};

struct Raw {
    int fd = -1;
    explicit Raw(int port, bool hello = true) {
        fd = rpc::tcp_connect("127.0.0.1", port, 2000);
        if (hello && fd >= 0) {
            rpc::HelloReq req = {};
            rpc::HelloRsp rsp = {};
            if (!call(rpc::CMD_HELLO, &req, sizeof(req), &rsp, sizeof(rsp)) || rsp.major != 7) {
                rpc::tcp_close(fd);
                fd = -1;
            }
        }
    }
    ~Raw() { rpc::tcp_close(fd); }
    bool send_cmd(uint8_t cmd, const void * p, uint64_t n) {
        return rpc::send_all(fd, &cmd, 1, 2000) && rpc::send_all(fd, &n, 8, 2000) &&
               (n == 0 || rpc::send_all(fd, p, n, 2000));
    }
    bool recv_reply(void * out, uint64_t n) {
        uint64_t got = 0;
        return rpc::recv_all(fd, &got, 8, 3000) && got == n && (n == 0 || rpc::recv_all(fd, out, n, 3000));
    }
    bool call(uint8_t cmd, const void * p, uint64_t n, void * out, uint64_t out_n) {
        return send_cmd(cmd, p, n) && recv_reply(out, out_n);
    }
    // true while the server still answers on this connection
    bool alive() {
        rpc::DeviceCountRsp r = {};
        return call(rpc::CMD_DEVICE_COUNT, nullptr, 0, &r, sizeof(r)) && r.device_count >= 1;
    }
    uint64_t alloc(uint64_t size) {
        rpc::AllocBufferReq req = {0, size};
        rpc::AllocBufferRsp rsp = {};
        return call(rpc::CMD_ALLOC_BUFFER, &req, sizeof(req), &rsp, sizeof(rsp)) ? rsp.remote_ptr : 0;
    }
    uint64_t base(uint64_t handle) {
        rpc::BufferReq req = {handle};
        rpc::BufferGetBaseRsp rsp = {};
        return call(rpc::CMD_BUFFER_GET_BASE, &req, sizeof(req), &rsp, sizeof(rsp)) ? rsp.base_ptr : 0;
    }
};

// a contiguous f32 wire tensor (wire type 0 is F32 on both sides)
inline rpc::WireTensor f32_tensor(uint64_t id, uint64_t buffer, uint64_t data, uint32_t ne0, uint32_t ne1 = 1) {
    rpc::WireTensor w;
    std::memset(&w, 0, sizeof(w));
    w.id = id;
    w.type = 0;
    w.buffer = buffer;
    w.data = data;
    w.ne[0] = ne0;
    w.ne[1] = ne1;
    w.ne[2] = 1;
    w.ne[3] = 1;
    w.nb[0] = 4;
    w.nb[1] = 4 * ne0;
    w.nb[2] = w.nb[3] = 4 * ne0 * ne1;
    return w;
}

inline std::vector<uint8_t> set_tensor_msg(const rpc::WireTensor & w, uint64_t offset, const void * data, size_t n) {
    std::vector<uint8_t> m(rpc::kSetTensorHeader + n);
    std::memcpy(m.data(), &w, sizeof(w));
    m[sizeof(w)] = 0;
    std::memcpy(m.data() + sizeof(w) + 1, &offset, 8);
    if (n > 0) {
        std::memcpy(m.data() + rpc::kSetTensorHeader, data, n);
    }
    return m;
}

inline std::vector<uint8_t> graph_msg(uint32_t device, const std::vector<uint64_t> & nodes,
                                      const std::vector<rpc::WireTensor> & ts) {
    std::vector<uint8_t> m(12 + 8 * nodes.size() + sizeof(rpc::WireTensor) * ts.size());
    const uint32_t nn = (uint32_t) nodes.size(), nt = (uint32_t) ts.size();
    std::memcpy(m.data(), &device, 4);
    std::memcpy(m.data() + 4, &nn, 4);
    if (nn > 0) {
        std::memcpy(m.data() + 8, nodes.data(), 8 * nodes.size());
    }
    std::memcpy(m.data() + 8 + 8 * nodes.size(), &nt, 4);
    if (nt > 0) {
        std::memcpy(m.data() + 12 + 8 * nodes.size(), ts.data(), sizeof(rpc::WireTensor) * ts.size());
    }
    return m;
}

} // namespace rpctest

// libFuzzer target for the RPC server's message handler (backends/rpc): the
// input is the byte stream a client sends after its HELLO, fed to one server
// connection through a socket pair, with the CPU device behind it. Beyond
// "no crash, no sanitizer report": the connection must end (the input ends,
// or a message is refused) and every buffer it allocated is freed with it.
//
// Handles are deterministic per input (the first ALLOC_BUFFER answers handle
// 1, base 1 << 40, the second 2, base 2 << 40, ...), so seeds and mutants can
// name buffers. With LMGGML_RPC_SEEDS=<dir> the binary writes a seed corpus
// of well-formed sessions into <dir> and exits.

#include "ggml-backend.h"
#include "rpc-proto.h"
#include "rpc-session.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

void quiet(enum lm_ggml_log_level, const char *, void *) {}

const rpc::ServerOptions & options() {
    static const rpc::ServerOptions o = [] {
        lm_ggml_log_set(quiet, nullptr);
        rpc::ServerOptions r;
        r.devices.push_back(lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU));
        r.n_threads = 1;
        r.max_conn_bytes = 1 << 20;   // bounds every answer and allocation
        r.max_message = 1 << 20;
        r.max_nodes = 256;
        r.max_tensors = 1024;
        r.io_timeout_ms = 20;         // a truncated message ends fast
        return r;
    }();
    return o;
}

// ---------------------------------------------------------------- seeds
void put(std::vector<uint8_t> & out, const void * p, size_t n) {
    out.insert(out.end(), (const uint8_t *)p, (const uint8_t *)p + n);
}

void cmd(std::vector<uint8_t> & out, uint8_t c, const void * p, uint64_t n) {
    put(out, &c, 1);
    put(out, &n, 8);
    put(out, p, n);
}

rpc::WireTensor f32(uint64_t id, uint64_t buffer, uint64_t data, uint32_t ne0) {
    rpc::WireTensor w;
    std::memset(&w, 0, sizeof(w));
    w.id = id;
    w.buffer = buffer;
    w.data = data;
    w.ne[0] = ne0;
    w.ne[1] = w.ne[2] = w.ne[3] = 1;
    w.nb[0] = 4;
    w.nb[1] = w.nb[2] = w.nb[3] = 4 * ne0;
    return w;
}

void write_seeds(const char * dir) {
    const uint64_t buf = 1, base = uint64_t(1) << 40;
    std::vector<std::vector<uint8_t>> seeds;
    std::vector<uint8_t> s;
    rpc::AllocBufferReq alloc = {0, 4096};
    cmd(s, rpc::CMD_ALLOC_BUFFER, &alloc, sizeof(alloc));
    rpc::BufferReq br = {buf};
    cmd(s, rpc::CMD_BUFFER_GET_BASE, &br, sizeof(br));
    const std::vector<uint8_t> prefix = s;
    // set, get, memset, copy
    {
        std::vector<uint8_t> m(rpc::kSetTensorHeader + 16, 0);
        rpc::WireTensor a = f32(1, buf, base, 4);
        std::memcpy(m.data(), &a, sizeof(a));
        cmd(s, rpc::CMD_SET_TENSOR, m.data(), m.size());
        rpc::GetTensorReq g = {a, 0, 16};
        cmd(s, rpc::CMD_GET_TENSOR, &g, sizeof(g));
        rpc::MemsetTensorReq ms = {a, 4, 8, 0x7f};
        cmd(s, rpc::CMD_MEMSET_TENSOR, &ms, sizeof(ms));
        rpc::CopyTensorReq cp = {a, f32(2, buf, base + 64, 4)};
        cmd(s, rpc::CMD_COPY_TENSOR, &cp, sizeof(cp));
        seeds.push_back(s);
    }
    // a graph: add of two leaves, a view, then recompute and free
    {
        s = prefix;
        rpc::WireTensor a = f32(1, buf, base, 4), b = f32(2, buf, base + 64, 4), o = f32(3, buf, base + 128, 4),
                        v = f32(4, buf, base + 8, 2);
        o.op = 2; // ADD
        o.src[0] = 1;
        o.src[1] = 2;
        v.op = 37; // VIEW
        v.src[0] = 1;
        v.view_src = 1;
        v.view_offs = 8;
        std::memcpy(v.op_params, &v.view_offs, 8);
        const uint32_t dev = 0, nn = 2, nt = 4;
        const uint64_t nodes[2] = {3, 4};
        std::vector<uint8_t> g;
        put(g, &dev, 4);
        put(g, &nn, 4);
        put(g, nodes, sizeof(nodes));
        put(g, &nt, 4);
        put(g, &a, sizeof(a));
        put(g, &b, sizeof(b));
        put(g, &o, sizeof(o));
        put(g, &v, sizeof(v));
        cmd(s, rpc::CMD_GRAPH_COMPUTE, g.data(), g.size());
        rpc::DeviceReq d = {0};
        cmd(s, rpc::CMD_GRAPH_RECOMPUTE, &d, sizeof(d));
        cmd(s, rpc::CMD_FREE_BUFFER, &br, sizeof(br));
        seeds.push_back(s);
    }
    // device queries
    {
        s.clear();
        rpc::DeviceReq d = {0};
        cmd(s, rpc::CMD_DEVICE_COUNT, nullptr, 0);
        cmd(s, rpc::CMD_GET_ALIGNMENT, &d, sizeof(d));
        cmd(s, rpc::CMD_GET_MAX_SIZE, &d, sizeof(d));
        cmd(s, rpc::CMD_GET_DEVICE_MEMORY, &d, sizeof(d));
        seeds.push_back(s);
    }
    for (size_t i = 0; i < seeds.size(); i++) {
        const std::string path = std::string(dir) + "/seed" + std::to_string(i);
        FILE * f = std::fopen(path.c_str(), "wb");
        if (f != nullptr) {
            std::fwrite(seeds[i].data(), 1, seeds[i].size(), f);
            std::fclose(f);
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    if (const char * dir = std::getenv("LMGGML_RPC_SEEDS")) {
        write_seeds(dir);
        std::exit(0);
    }
    options();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        return 0;
    }
    // the client side: HELLO, the input, end of stream; answers are drained
    std::thread client([&] {
        std::vector<uint8_t> msg;
        rpc::HelloReq hello = {};
        cmd(msg, rpc::CMD_HELLO, &hello, sizeof(hello));
        put(msg, data, size);
        size_t off = 0;
        while (off < msg.size()) {
            const ssize_t n = send(fds[1], msg.data() + off, msg.size() - off, MSG_NOSIGNAL);
            if (n <= 0) {
                break;
            }
            off += (size_t)n;
        }
        shutdown(fds[1], SHUT_WR);
        uint8_t sink[4096];
        while (recv(fds[1], sink, sizeof(sink), 0) > 0) {
        }
    });
    std::atomic<uint64_t> handles{1};
    std::atomic<bool> stop{false};
    {
        rpc::Session session(options(), fds[0], "fuzz", handles);
        session.serve(stop);
    } // frees every buffer of the connection
    shutdown(fds[0], SHUT_RDWR);
    client.join();
    close(fds[0]);
    close(fds[1]);
    return 0;
}

// libFuzzer target for the RPC server's message handler (backends/rpc): the
// input is the byte stream a client sends after its HELLO, fed to one server
// connection through a socket pair, with the CPU device behind it. Beyond
// "no crash, no sanitizer report": the connection must end (the input ends,
// or a message is refused) and every buffer it allocated is freed with it.
//
// The first input byte (mod 3) picks the session: 0 keyless; 1 a server with
// an --auth-key and the rest of the input raw after HELLO, so the fuzzer
// drives the AUTH_NONCE / AUTH_PROOF parser itself; 2 the same server, with
// this client authenticating first (the server's proof is checked) and the
// rest of the input as commands of the authenticated session.
//
// Handles are deterministic per input (the first ALLOC_BUFFER answers handle
// 1, base 1 << 40, the second 2, base 2 << 40, ...), so seeds and mutants can
// name buffers. With LMGGML_RPC_SEEDS=<dir> the binary writes a seed corpus
// of well-formed sessions into <dir> and exits.

#include "ggml-backend.h"
#include "rpc-auth.h"
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
        r.max_conn_bytes = 1 << 20; // bounds every answer and allocation
        r.max_message = 1 << 20;
        r.max_nodes = 256;
        r.max_tensors = 1024;
        r.io_timeout_ms = 20; // a truncated message ends fast
        return r;
    }();
    return o;
}

const char kKey[] = "fuzz-key";

const rpc::ServerOptions & keyed_options() {
    static const rpc::ServerOptions o = [] {
        rpc::ServerOptions r = options();
        r.auth_key = kKey;
        r.io_timeout_ms = 100; // room for the client's proof on a busy machine
        return r;
    }();
    return o;
}

enum Mode : uint8_t { Keyless, KeyedRaw, KeyedAuthenticated };

// ---------------------------------------------------------------- seeds
void put(std::vector<uint8_t> & out, const void * p, size_t n) {
    out.insert(out.end(), (const uint8_t *) p, (const uint8_t *) p + n);
}

void cmd(std::vector<uint8_t> & out, uint8_t c, const void * p, uint64_t n) {
    put(out, &c, 1);
    put(out, &n, 8);
    put(out, p, n);
}

bool send_n(int fd, const void * p, size_t n) {
    for (size_t off = 0; off < n;) {
        const ssize_t k = send(fd, (const uint8_t *) p + off, n - off, MSG_NOSIGNAL);
        if (k <= 0) {
            return false;
        }
        off += (size_t) k;
    }
    return true;
}

bool recv_n(int fd, void * p, size_t n) {
    for (size_t off = 0; off < n;) {
        const ssize_t k = recv(fd, (uint8_t *) p + off, n - off, 0);
        if (k <= 0) {
            return false;
        }
        off += (size_t) k;
    }
    return true;
}

// one answer of exactly n bytes (the 8-byte size, then the payload)
bool answer(int fd, void * p, size_t n) {
    uint64_t size = 0;
    return recv_n(fd, &size, sizeof(size)) && size == n && recv_n(fd, p, n);
}

// The client's half of the key handshake; false when the server ended it
// (possible only by a timeout on a loaded machine). A server that answers
// with a wrong proof of the key is a bug: abort, so libFuzzer reports it.
bool authenticate(int fd) {
    rpc::HelloRsp hello;
    rpc::AuthNonceReq nreq;
    std::memset(nreq.client_nonce, 0x5a, sizeof(nreq.client_nonce));
    std::vector<uint8_t> msg;
    cmd(msg, rpc::CMD_AUTH_NONCE, &nreq, sizeof(nreq));
    rpc::AuthNonceRsp nrsp;
    if (!answer(fd, &hello, sizeof(hello)) || !send_n(fd, msg.data(), msg.size()) || !answer(fd, &nrsp, sizeof(nrsp))) {
        return false;
    }
    const rpc::Digest mine = rpc::auth_proof(kKey, rpc::AuthRole::Client, nreq.client_nonce, nrsp.server_nonce);
    rpc::AuthProofReq preq;
    std::memcpy(preq.client_proof, mine.data(), mine.size());
    msg.clear();
    cmd(msg, rpc::CMD_AUTH_PROOF, &preq, sizeof(preq));
    rpc::AuthProofRsp prsp;
    if (!send_n(fd, msg.data(), msg.size()) || !answer(fd, &prsp, sizeof(prsp))) {
        return false;
    }
    const rpc::Digest want = rpc::auth_proof(kKey, rpc::AuthRole::Server, nreq.client_nonce, nrsp.server_nonce);
    if (std::memcmp(want.data(), prsp.server_proof, want.size()) != 0) {
        std::fprintf(stderr, "fuzz_rpc_server: the server's proof of the key is wrong\n");
        std::abort();
    }
    return true;
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
    // the peer's ops: SET_ROWS into a table, GET_ROWS from it, GLU (SWIGLU)
    {
        s = prefix;
        auto rows2d = [](rpc::WireTensor w, uint32_t ne1) {
            w.ne[1] = ne1;
            w.nb[2] = w.nb[3] = w.nb[1] * ne1;
            return w;
        };
        rpc::WireTensor table = rows2d(f32(1, buf, base, 4), 4), rows = rows2d(f32(2, buf, base + 128, 4), 2),
                        ids = f32(3, buf, base + 256, 2), set = table, get = rows2d(f32(5, buf, base + 512, 4), 2),
                        glu = rows2d(f32(6, buf, base + 640, 4), 2);
        ids.type = 26; // I32
        const int32_t id_values[2] = {1, 3};
        std::vector<uint8_t> m(rpc::kSetTensorHeader + sizeof(id_values), 0);
        std::memcpy(m.data(), &ids, sizeof(ids));
        std::memcpy(m.data() + rpc::kSetTensorHeader, id_values, sizeof(id_values));
        cmd(s, rpc::CMD_SET_TENSOR, m.data(), m.size());
        set.id = 4;
        set.op = 42; // SET_ROWS: rows, ids, table
        set.src[0] = 2;
        set.src[1] = 3;
        set.src[2] = 1;
        set.view_src = 1;
        get.op = 40; // GET_ROWS
        get.src[0] = 4;
        get.src[1] = 3;
        glu.op = 100;         // GLU
        glu.op_params[0] = 2; // SWIGLU
        glu.src[0] = 5;
        glu.src[1] = 2;
        const uint32_t dev = 0, nn = 3, nt = 6;
        const uint64_t nodes[3] = {4, 5, 6};
        std::vector<uint8_t> g;
        put(g, &dev, 4);
        put(g, &nn, 4);
        put(g, nodes, sizeof(nodes));
        put(g, &nt, 4);
        for (const rpc::WireTensor & w : {table, rows, ids, set, get, glu}) {
            put(g, &w, sizeof(w));
        }
        cmd(s, rpc::CMD_GRAPH_COMPUTE, g.data(), g.size());
        rpc::DeviceReq d = {0};
        cmd(s, rpc::CMD_GRAPH_RECOMPUTE, &d, sizeof(d));
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
    // the handshake as the fuzzer writes it to a keyed server: a nonce alone;
    // a nonce, a (wrong) proof and a command the server must not reach
    std::vector<std::vector<uint8_t>> raw;
    {
        rpc::AuthNonceReq n;
        std::memset(n.client_nonce, 0x11, sizeof(n.client_nonce));
        rpc::AuthProofReq p = {};
        s.clear();
        cmd(s, rpc::CMD_AUTH_NONCE, &n, sizeof(n));
        raw.push_back(s);
        cmd(s, rpc::CMD_AUTH_PROOF, &p, sizeof(p));
        cmd(s, rpc::CMD_DEVICE_COUNT, nullptr, 0);
        raw.push_back(s);
    }
    std::vector<std::vector<uint8_t>> files;
    for (const std::vector<uint8_t> & x : seeds) {
        for (const uint8_t mode : {Keyless, KeyedAuthenticated}) {
            files.push_back({mode});
            files.back().insert(files.back().end(), x.begin(), x.end());
        }
    }
    for (const std::vector<uint8_t> & x : raw) {
        files.push_back({KeyedRaw});
        files.back().insert(files.back().end(), x.begin(), x.end());
    }
    for (size_t i = 0; i < files.size(); i++) {
        const std::string path = std::string(dir) + "/seed" + std::to_string(i);
        FILE * f = std::fopen(path.c_str(), "wb");
        if (f != nullptr) {
            std::fwrite(files[i].data(), 1, files[i].size(), f);
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
    keyed_options();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (size == 0) {
        return 0;
    }
    const Mode mode = Mode(data[0] % 3);
    data++;
    size--;
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        return 0;
    }
    // the client side: HELLO, (the handshake,) the input, end of stream;
    // answers are drained
    std::thread client([&] {
        std::vector<uint8_t> msg;
        rpc::HelloReq hello = {};
        cmd(msg, rpc::CMD_HELLO, &hello, sizeof(hello));
        if (mode == KeyedAuthenticated) {
            if (send_n(fds[1], msg.data(), msg.size()) && authenticate(fds[1])) {
                send_n(fds[1], data, size);
            }
        } else {
            put(msg, data, size);
            send_n(fds[1], msg.data(), msg.size());
        }
        shutdown(fds[1], SHUT_WR);
        uint8_t sink[4096];
        while (recv(fds[1], sink, sizeof(sink), 0) > 0) {
        }
    });
    std::atomic<uint64_t> handles{1};
    std::atomic<bool> stop{false};
    {
        rpc::Session session(mode == Keyless ? options() : keyed_options(), fds[0], "fuzz", handles);
        session.serve(stop);
    } // frees every buffer of the connection
    shutdown(fds[0], SHUT_RDWR);
    client.join();
    close(fds[0]);
    close(fds[1]);
    return 0;
}

// The RPC client: endpoints, buffers, buffer types, backends, devices and
// regs; the C API of ggml-rpc.h.

#include "rpc-client.h"

#include "ggml-rpc.h"
#include "rpc-auth.h"
#include "rpc-enums.h"
#include "rpc-log.h"
#include "rpc-net.h"
#include "rpc-rebuild.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <unordered_set>
#include <vector>

namespace rpc {

namespace {

constexpr int kConnectTimeoutMs = 10000;
constexpr int kHelloTimeoutMs = 10000;

lm_ggml_guid kGuid = {0x6c, 0x6d, 0x2d, 0x72, 0x70, 0x63, 0x2d, 0x63, 0x6c, 0x69, 0x65, 0x6e, 0x74, 0x37, 0x00, 0x01};

// Endpoints, regs and devices live as long as the process (as ggml's do):
// devices stay registered, and buffers may outlive anything else. Allocated
// once and never destroyed, so no exit-time destructor runs under them.
std::mutex & g_mutex = *new std::mutex; // guards the maps below
std::map<std::string, std::unique_ptr<Endpoint>> & g_endpoints = *new std::map<std::string, std::unique_ptr<Endpoint>>;

struct DeviceCtx {
    Endpoint * ep;
    uint32_t device;
    std::string name;
    std::string description;
    lm_ggml_backend_buffer_type buft;
    // the graph last sent for this device, byte for byte, and the connection
    // and FREE_BUFFER count it was sent under: while both hold, the server
    // still has it stored and GRAPH_RECOMPUTE reruns it
    std::vector<uint8_t> last_graph;
    uint64_t last_gen = 0, last_frees = 0;
};

struct BuftCtx {
    Endpoint * ep;
    uint32_t device;
    std::string name;
    size_t alignment;
    size_t max_size;
};

struct BufferCtx {
    Endpoint * ep;
    uint64_t gen; // the connection the server-side buffer lives in
    uint64_t handle;
    uint64_t base;
};

struct RegCtx {
    std::string name;
    std::vector<lm_ggml_backend_dev_t> devices;
};

std::map<std::string, lm_ggml_backend_reg_t> & g_regs = *new std::map<std::string, lm_ggml_backend_reg_t>;
uint32_t g_next_dev_index = 0;

std::mutex & g_key_mutex = *new std::mutex; // not g_mutex: connections are made under it
std::string & g_key = *new std::string;

} // namespace

void set_auth_key(const char * key) {
    std::lock_guard<std::mutex> lock(g_key_mutex);
    g_key = key ? key : "";
}

std::string auth_key() {
    {
        std::lock_guard<std::mutex> lock(g_key_mutex);
        if (!g_key.empty()) {
            return g_key;
        }
    }
    const char * env = std::getenv("LMGGML_RPC_AUTH_KEY");
    return env ? env : "";
}

bool Endpoint::exchange(Cmd cmd, const void * payload, size_t size, void * reply, size_t reply_size, bool has_reply,
                        int timeout_ms) {
    // header and small payloads in one segment; large ones follow their header
    uint8_t head[9 + 1024];
    head[0] = cmd;
    const uint64_t n = size;
    std::memcpy(head + 1, &n, sizeof(n));
    const bool inline_payload = size <= 1024;
    if (inline_payload && size > 0) {
        std::memcpy(head + 9, payload, size);
    }
    bool ok = send_all(fd, head, 9 + (inline_payload ? size : 0), timeout_ms) &&
              (inline_payload || send_all(fd, payload, size, timeout_ms));
    if (ok && has_reply) {
        uint64_t got = 0;
        ok = recv_all(fd, &got, sizeof(got), timeout_ms) && got == reply_size &&
             (reply_size == 0 || recv_all(fd, reply, reply_size, timeout_ms));
    }
    if (!ok) {
        log_error("rpc: %s: command %u failed: the server closed the connection or answered malformed data\n",
                  name.c_str(), (unsigned) cmd);
        tcp_close(fd);
        fd = -1;
    }
    return ok;
}

bool Endpoint::connect_locked() {
    fd = tcp_connect(host, port, kConnectTimeoutMs);
    if (fd < 0) {
        return false;
    }
    HelloReq req = {};
    HelloRsp rsp = {};
    if (!exchange(CMD_HELLO, &req, sizeof(req), &rsp, sizeof(rsp), true, kHelloTimeoutMs)) {
        return false;
    }
    if (rsp.major != kProtoMajor || rsp.minor > kProtoMinor) {
        log_error("rpc: %s speaks protocol %u.%u.%u, this client %u.%u.%u\n", name.c_str(), rsp.major, rsp.minor,
                  rsp.patch, kProtoMajor, kProtoMinor, kProtoPatch);
        tcp_close(fd);
        fd = -1;
        return false;
    }
    const std::string key = auth_key();
    if (!key.empty() && !authenticate_locked(key)) {
        tcp_close(fd);
        fd = -1;
        return false;
    }
    generation++;
    return true;
}

// Proves the key, then checks the server's proof (rpc-auth.h): a client with
// a key talks only to servers that know it.
bool Endpoint::authenticate_locked(const std::string & key) {
    AuthNonceReq nreq;
    AuthNonceRsp nrsp = {};
    if (!random_bytes(nreq.client_nonce, sizeof(nreq.client_nonce))) {
        log_error("rpc: %s: no random bytes for a nonce\n", name.c_str());
        return false;
    }
    if (!exchange(CMD_AUTH_NONCE, &nreq, sizeof(nreq), &nrsp, sizeof(nrsp), true, kHelloTimeoutMs)) {
        log_error("rpc: %s: the server did not take authentication (started without a key?)\n", name.c_str());
        return false;
    }
    AuthProofReq preq;
    const Digest mine = auth_proof(key, AuthRole::Client, nreq.client_nonce, nrsp.server_nonce);
    std::memcpy(preq.client_proof, mine.data(), mine.size());
    AuthProofRsp prsp = {};
    if (!exchange(CMD_AUTH_PROOF, &preq, sizeof(preq), &prsp, sizeof(prsp), true, kHelloTimeoutMs)) {
        log_error("rpc: %s: the server refused this client's key\n", name.c_str());
        return false;
    }
    const Digest want = auth_proof(key, AuthRole::Server, nreq.client_nonce, nrsp.server_nonce);
    if (!ct_equal(want.data(), prsp.server_proof, want.size())) {
        log_error("rpc: %s: the server does not know the key\n", name.c_str());
        return false;
    }
    return true;
}

bool Endpoint::call(Cmd cmd, const void * payload, size_t size, void * reply, size_t reply_size, bool has_reply,
                    uint64_t gen) {
    std::lock_guard<std::mutex> lock(mutex);
    bool ok = false;
    if (gen != 0 && gen != generation) {
        log_error("rpc: %s: command %u refers to a connection that was lost\n", name.c_str(), (unsigned) cmd);
    } else if (fd >= 0 || (gen == 0 && connect_locked())) {
        frees += cmd == CMD_FREE_BUFFER;
        graphs_sent += cmd == CMD_GRAPH_COMPUTE;
        recomputes_sent += cmd == CMD_GRAPH_RECOMPUTE;
        ok = exchange(cmd, payload, size, reply, reply_size, has_reply, 0);
    } else if (gen != 0) {
        log_error("rpc: %s: command %u: the connection is lost\n", name.c_str(), (unsigned) cmd);
    }
    if (!ok && reply != nullptr) {
        std::memset(reply, 0, reply_size);
    }
    return ok;
}

Endpoint * endpoint_get(const std::string & name) {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_endpoints.find(name);
    if (it != g_endpoints.end()) {
        return it->second.get();
    }
    auto ep = std::make_unique<Endpoint>();
    ep->name = name;
    if (!parse_endpoint(name, ep->host, ep->port)) {
        log_error("rpc: bad endpoint '%s' (want host:port)\n", name.c_str());
        return nullptr;
    }
    {
        std::lock_guard<std::mutex> elock(ep->mutex);
        if (!ep->connect_locked()) {
            return nullptr;
        }
    }
    Endpoint * raw = ep.get();
    g_endpoints[name] = std::move(ep);
    return raw;
}

// ---------------------------------------------------------------- serialization

WireTensor serialize_tensor(const lm_ggml_tensor * t, const Endpoint * ep, uint64_t gen) {
    WireTensor w;
    std::memset(&w, 0, sizeof(w));
    if (t == nullptr) {
        return w;
    }
    w.id = (uint64_t) (uintptr_t) t;
    w.type = (uint32_t) type_to_wire(t->type);
    lm_ggml_backend_buffer_t buf = t->view_src && t->view_src->buffer ? t->view_src->buffer : t->buffer;
    if (buf != nullptr && is_rpc_buffer(buf) && static_cast<BufferCtx *>(buf->context)->ep == ep &&
        (gen == 0 || static_cast<BufferCtx *>(buf->context)->gen == gen)) {
        w.buffer = static_cast<BufferCtx *>(buf->context)->handle;
        w.data = (uint64_t) (uintptr_t) t->data;
    }
    for (int i = 0; i < 4; i++) {
        w.ne[i] = (uint32_t) t->ne[i];
        w.nb[i] = (uint32_t) t->nb[i];
    }
    w.op = (uint32_t) op_to_wire(t->op);
    int32_t params[kWireMaxOpParams / 4];
    std::memcpy(params, t->op_params, sizeof(params));
    op_params_to_wire(t->op, params); // supports_op refused what cannot be translated
    std::memcpy(w.op_params, params, sizeof(params));
    w.flags = t->flags;
    for (size_t i = 0; i < kWireMaxSrc; i++) {
        w.src[i] = (uint64_t) (uintptr_t) t->src[i];
    }
    w.view_src = (uint64_t) (uintptr_t) t->view_src;
    w.view_offs = t->view_offs;
    std::memcpy(w.name, t->name, strnlen(t->name, sizeof(w.name) - 1)); // NUL-terminated: w is zeroed
    return w;
}

namespace {

// fits the wire's 32-bit shapes and strides, with types and ops it can name
bool wire_expressible(const lm_ggml_tensor * t) {
    if (type_to_wire(t->type) < 0 || op_to_wire(t->op) < 0) {
        return false;
    }
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] < 0 || t->ne[i] > (int64_t) UINT32_MAX || t->nb[i] > UINT32_MAX) {
            return false;
        }
    }
    int32_t params[kWireMaxOpParams / 4];
    std::memcpy(params, t->op_params, sizeof(params));
    return op_params_to_wire(t->op, params);
}

} // namespace

bool supports_op(const lm_ggml_tensor * op) {
    if (!wire_expressible(op)) {
        return false;
    }
    for (int i = 0; i < LM_GGML_MAX_SRC; i++) {
        if (op->src[i] != nullptr && !wire_expressible(op->src[i])) {
            return false;
        }
    }
    // CPU backends (lmggml's and ggml's) take matrix products only with rows
    // of src1 contiguous; the protocol cannot ask the server, so stay local
    if ((op->op == LM_GGML_OP_MUL_MAT || op->op == LM_GGML_OP_MUL_MAT_ID || op->op == LM_GGML_OP_OUT_PROD) &&
        op->src[1] != nullptr && op->src[1]->nb[0] != lm_ggml_type_size(op->src[1]->type)) {
        return false;
    }
    // llama.cpp's FLASH_ATTN_EXT reads its mask as F16 whatever the type
    // (its constructor asserts F16); lmggml also takes F32. Only what both
    // sides read alike may travel.
    if (op->op == LM_GGML_OP_FLASH_ATTN_EXT && op->src[3] != nullptr && op->src[3]->type != LM_GGML_TYPE_F16) {
        return false;
    }
    return rebuild_accepts(op);
}

// ---------------------------------------------------------------- buffers

namespace {

void buffer_free(lm_ggml_backend_buffer_t buffer) {
    auto * ctx = static_cast<BufferCtx *>(buffer->context);
    BufferReq req = {ctx->handle};
    ctx->ep->call(CMD_FREE_BUFFER, &req, sizeof(req), nullptr, 0, false, ctx->gen);
    delete ctx;
}

void * buffer_get_base(lm_ggml_backend_buffer_t buffer) {
    return (void *) (uintptr_t) static_cast<BufferCtx *>(buffer->context)->base;
}

void buffer_init_tensor(lm_ggml_backend_buffer_t buffer, lm_ggml_tensor * t) {
    // only quantized rows not a multiple of 512 may be padded by a server's
    // backend (as llama.cpp's client does)
    if (lm_ggml_is_quantized(t->type) && t->ne[0] % 512 != 0 && t->view_src == nullptr) {
        auto * ctx = static_cast<BufferCtx *>(buffer->context);
        InitTensorReq req = {serialize_tensor(t, ctx->ep)};
        ctx->ep->call(CMD_INIT_TENSOR, &req, sizeof(req), nullptr, 0, false, ctx->gen);
    }
}

void buffer_memset_tensor(lm_ggml_backend_buffer_t buffer, lm_ggml_tensor * t, uint8_t value, size_t offset,
                          size_t size) {
    auto * ctx = static_cast<BufferCtx *>(buffer->context);
    MemsetTensorReq req = {serialize_tensor(t, ctx->ep), offset, size, value};
    ctx->ep->call(CMD_MEMSET_TENSOR, &req, sizeof(req), nullptr, 0, false, ctx->gen);
}

void buffer_set_tensor(lm_ggml_backend_buffer_t buffer, lm_ggml_tensor * t, const void * data, size_t offset,
                       size_t size) {
    auto * ctx = static_cast<BufferCtx *>(buffer->context);
    const WireTensor w = serialize_tensor(t, ctx->ep);
    uint8_t cache_flag = 0;
    if (size > kHashThreshold && buffer->usage == LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS) {
        SetTensorHashReq req = {w, offset, fnv1a(data, size)};
        ResultRsp rsp = {0};
        if (ctx->ep->call(CMD_SET_TENSOR_HASH, &req, sizeof(req), &rsp, sizeof(rsp), true, ctx->gen) &&
            rsp.result != 0) {
            return; // the server had these bytes cached
        }
        cache_flag = 1;
    }
    std::vector<uint8_t> msg;
    try {
        msg.resize(kSetTensorHeader + size);
    } catch (const std::bad_alloc &) {
        log_error("rpc: set_tensor: out of host memory for %zu bytes\n", size);
        return;
    }
    std::memcpy(msg.data(), &w, sizeof(w));
    msg[sizeof(w)] = cache_flag;
    const uint64_t off = offset;
    std::memcpy(msg.data() + sizeof(w) + 1, &off, sizeof(off));
    std::memcpy(msg.data() + kSetTensorHeader, data, size);
    ctx->ep->call(CMD_SET_TENSOR, msg.data(), msg.size(), nullptr, 0, false, ctx->gen);
}

void buffer_get_tensor(lm_ggml_backend_buffer_t buffer, const lm_ggml_tensor * t, void * data, size_t offset,
                       size_t size) {
    auto * ctx = static_cast<BufferCtx *>(buffer->context);
    GetTensorReq req = {serialize_tensor(t, ctx->ep), offset, size};
    ctx->ep->call(CMD_GET_TENSOR, &req, sizeof(req), data, size, true, ctx->gen);
}

bool buffer_cpy_tensor(lm_ggml_backend_buffer_t buffer, const lm_ggml_tensor * src, lm_ggml_tensor * dst) {
    lm_ggml_backend_buffer_t sb = src->view_src && src->view_src->buffer ? src->view_src->buffer : src->buffer;
    auto * ctx = static_cast<BufferCtx *>(buffer->context);
    if (sb == nullptr || !is_rpc_buffer(sb) || static_cast<BufferCtx *>(sb->context)->ep != ctx->ep ||
        static_cast<BufferCtx *>(sb->context)->gen != ctx->gen) {
        return false; // not on the same server: the caller copies through the host
    }
    CopyTensorReq req = {serialize_tensor(src, ctx->ep), serialize_tensor(dst, ctx->ep)};
    ResultRsp rsp = {0};
    return ctx->ep->call(CMD_COPY_TENSOR, &req, sizeof(req), &rsp, sizeof(rsp), true, ctx->gen) && rsp.result != 0;
}

void buffer_clear(lm_ggml_backend_buffer_t buffer, uint8_t value) {
    auto * ctx = static_cast<BufferCtx *>(buffer->context);
    BufferClearReq req = {ctx->handle, value};
    ctx->ep->call(CMD_BUFFER_CLEAR, &req, sizeof(req), nullptr, 0, false, ctx->gen);
}

constexpr lm_ggml_backend_buffer_i kBufferIface = {
    .free_buffer = buffer_free,
    .get_base = buffer_get_base,
    .init_tensor = buffer_init_tensor,
    .memset_tensor = buffer_memset_tensor,
    .set_tensor = buffer_set_tensor,
    .get_tensor = buffer_get_tensor,
    .cpy_tensor = buffer_cpy_tensor,
    .clear = buffer_clear,
    .reset = nullptr,
};

// ---------------------------------------------------------------- buffer types

const char * buft_name(lm_ggml_backend_buffer_type_t buft) {
    return static_cast<BuftCtx *>(buft->context)->name.c_str();
}

lm_ggml_backend_buffer_t buft_alloc(lm_ggml_backend_buffer_type_t buft, size_t size) {
    auto * bc = static_cast<BuftCtx *>(buft->context);
    AllocBufferReq req = {bc->device, size};
    AllocBufferRsp rsp = {0, 0};
    if (!bc->ep->call(CMD_ALLOC_BUFFER, &req, sizeof(req), &rsp, sizeof(rsp), true) || rsp.remote_ptr == 0) {
        log_error("rpc: %s: cannot allocate %zu bytes\n", bc->name.c_str(), size);
        return nullptr;
    }
    uint64_t gen;
    {
        std::lock_guard<std::mutex> lock(bc->ep->mutex);
        gen = bc->ep->generation;
    }
    BufferReq breq = {rsp.remote_ptr};
    BufferGetBaseRsp brsp = {0};
    if (!bc->ep->call(CMD_BUFFER_GET_BASE, &breq, sizeof(breq), &brsp, sizeof(brsp), true, gen)) {
        return nullptr;
    }
    auto * ctx = new (std::nothrow) BufferCtx{bc->ep, gen, rsp.remote_ptr, brsp.base_ptr};
    lm_ggml_backend_buffer_t buffer =
        ctx ? lm_ggml_backend_buffer_init(buft, kBufferIface, ctx, rsp.remote_size) : nullptr;
    if (buffer == nullptr) {
        delete ctx;
        bc->ep->call(CMD_FREE_BUFFER, &breq, sizeof(breq), nullptr, 0, false, gen);
    }
    return buffer;
}

size_t buft_alignment(lm_ggml_backend_buffer_type_t buft) { return static_cast<BuftCtx *>(buft->context)->alignment; }

size_t buft_max_size(lm_ggml_backend_buffer_type_t buft) { return static_cast<BuftCtx *>(buft->context)->max_size; }

size_t buft_alloc_size(lm_ggml_backend_buffer_type_t buft, const lm_ggml_tensor * t) {
    const size_t n = lm_ggml_nbytes(t);
    if (!(lm_ggml_is_quantized(t->type) && t->ne[0] % 512 != 0 && t->view_src == nullptr)) {
        return n;
    }
    auto * bc = static_cast<BuftCtx *>(buft->context);
    GetAllocSizeReq req;
    std::memset(&req, 0, sizeof(req));
    req.device = bc->device;
    req.tensor = serialize_tensor(t, bc->ep);
    for (int i = 0; i < LM_GGML_MAX_SRC; i++) {
        req.srcs[i] = serialize_tensor(t->src[i], bc->ep);
    }
    U64Rsp rsp = {0};
    bc->ep->call(CMD_GET_ALLOC_SIZE, &req, sizeof(req), &rsp, sizeof(rsp), true);
    return rsp.value > n ? rsp.value : n;
}

// ---------------------------------------------------------------- backend

const char * backend_name(lm_ggml_backend_t backend) {
    return static_cast<DeviceCtx *>(backend->device->context)->name.c_str();
}

void backend_free(lm_ggml_backend_t backend) { delete backend; }

void backend_synchronize(lm_ggml_backend_t) {
    // calls are synchronous; graph_compute waits for the server's answer
}

lm_ggml_status backend_graph_compute(lm_ggml_backend_t backend, lm_ggml_cgraph * graph) {
    auto * dc = static_cast<DeviceCtx *>(backend->device->context);
    // Pure views compute nothing (backends skip them), and a scheduler may
    // leave one here whose storage it moved elsewhere: they travel only as
    // what other nodes read, never as nodes.
    std::vector<lm_ggml_tensor *> nodes;
    for (int i = 0; i < lm_ggml_graph_n_nodes(graph); i++) {
        lm_ggml_tensor * n = lm_ggml_graph_node(graph, i);
        if (n->op != LM_GGML_OP_NONE && n->op != LM_GGML_OP_VIEW && n->op != LM_GGML_OP_RESHAPE &&
            n->op != LM_GGML_OP_PERMUTE && n->op != LM_GGML_OP_TRANSPOSE) {
            nodes.push_back(n);
        }
    }
    const int n_nodes = (int) nodes.size();
    if (n_nodes == 0) {
        return LM_GGML_STATUS_SUCCESS;
    }
    // The wire graph: each node, preceded by what it reads that is not a
    // node (its inputs, computed elsewhere or weights). Inputs travel without
    // their own sources: a server needs only their bytes, and this keeps
    // tensors of other splits (other devices, other types) off the wire.
    std::unordered_set<const lm_ggml_tensor *> is_node;
    for (int i = 0; i < n_nodes; i++) {
        is_node.insert(nodes[i]);
    }
    std::vector<lm_ggml_tensor *> order;
    std::unordered_set<const lm_ggml_tensor *> seen;
    for (int i = 0; i < n_nodes; i++) {
        lm_ggml_tensor * node = nodes[i];
        for (int k = 0; k <= LM_GGML_MAX_SRC; k++) {
            lm_ggml_tensor * s = k < LM_GGML_MAX_SRC ? node->src[k] : node->view_src;
            if (s != nullptr && is_node.count(s) == 0 && seen.insert(s).second) {
                order.push_back(s);
            }
        }
        if (seen.insert(node).second) {
            order.push_back(node);
        }
    }
    // what the nodes read and write must live in this connection's buffers:
    // state of a lost connection is gone, and its handles would be refused
    uint64_t gen;
    {
        std::lock_guard<std::mutex> lock(dc->ep->mutex);
        gen = dc->ep->generation;
    }
    auto live = [&](const lm_ggml_tensor * t) {
        lm_ggml_backend_buffer_t b = t->view_src && t->view_src->buffer ? t->view_src->buffer : t->buffer;
        return b != nullptr && is_rpc_buffer(b) && static_cast<BufferCtx *>(b->context)->ep == dc->ep &&
               static_cast<BufferCtx *>(b->context)->gen == gen;
    };
    for (int i = 0; i < n_nodes; i++) {
        const lm_ggml_tensor * node = nodes[i];
        const lm_ggml_tensor * bad = live(node) ? nullptr : node;
        for (int k = 0; k < LM_GGML_MAX_SRC && bad == nullptr; k++) {
            if (node->src[k] != nullptr && !live(node->src[k])) {
                bad = node->src[k];
            }
        }
        if (bad == nullptr && node->view_src != nullptr && !live(node->view_src)) {
            bad = node->view_src;
        }
        if (bad != nullptr) {
            log_error("rpc: %s: node '%s' uses '%s', which is not in a live buffer of this server\n", dc->name.c_str(),
                      node->name, bad->name);
            return LM_GGML_STATUS_FAILED;
        }
    }
    const uint32_t nn = (uint32_t) n_nodes, nt = (uint32_t) order.size();
    std::vector<uint8_t> msg;
    try {
        msg.resize(12 + 8 * (size_t) nn + sizeof(WireTensor) * (size_t) nt);
    } catch (const std::bad_alloc &) {
        return LM_GGML_STATUS_ALLOC_FAILED;
    }
    uint8_t * p = msg.data();
    std::memcpy(p, &dc->device, 4);
    std::memcpy(p + 4, &nn, 4);
    for (uint32_t i = 0; i < nn; i++) {
        const uint64_t id = (uint64_t) (uintptr_t) nodes[i];
        std::memcpy(p + 8 + 8 * (size_t) i, &id, 8);
    }
    std::memcpy(p + 8 + 8 * (size_t) nn, &nt, 4);
    uint8_t * tp = p + 12 + 8 * (size_t) nn;
    for (uint32_t i = 0; i < nt; i++) {
        WireTensor w = serialize_tensor(order[i], dc->ep, gen);
        if (is_node.count(order[i]) != 0) {
            w.flags |= kWireFlagCompute; // llama.cpp's servers skip nodes without it
        } else {
            std::memset(w.src, 0, sizeof(w.src));
            w.view_src = 0;
        }
        std::memcpy(tp + sizeof(WireTensor) * i, &w, sizeof(w));
    }
    // The same bytes as the graph the server computed last on this device,
    // still stored there: rerun it. llama.cpp's client does this for graphs
    // of the same uid (its scheduler's split id); lmggml graphs have no uid,
    // and equal bytes are the stricter test (same tensors, shapes, buffers).
    uint64_t frees;
    {
        std::lock_guard<std::mutex> lock(dc->ep->mutex);
        frees = dc->ep->frees;
    }
    const bool reuse = dc->last_gen == gen && dc->last_frees == frees && dc->last_graph == msg;
    const DeviceReq rreq = {dc->device};
    bool ok = reuse ? dc->ep->call(CMD_GRAPH_RECOMPUTE, &rreq, sizeof(rreq), nullptr, 0, false, gen)
                    : dc->ep->call(CMD_GRAPH_COMPUTE, msg.data(), msg.size(), nullptr, 0, false, gen);
    // neither command has an answer; a server that refused the graph has
    // closed the connection, which this round trip reveals
    DeviceCountRsp rsp = {0};
    ok = ok && dc->ep->call(CMD_DEVICE_COUNT, nullptr, 0, &rsp, sizeof(rsp), true, gen);
    if (!ok) {
        dc->last_graph.clear();
        dc->last_gen = 0;
        return LM_GGML_STATUS_FAILED;
    }
    if (!reuse) {
        dc->last_graph = std::move(msg);
        dc->last_gen = gen;
        dc->last_frees = frees;
    }
    return LM_GGML_STATUS_SUCCESS;
}

constexpr lm_ggml_backend_i kBackendIface = {
    .get_name = backend_name,
    .free = backend_free,
    .set_tensor_async = nullptr,
    .get_tensor_async = nullptr,
    .cpy_tensor_async = nullptr,
    .synchronize = backend_synchronize,
    .graph_plan_create = nullptr,
    .graph_plan_free = nullptr,
    .graph_plan_update = nullptr,
    .graph_plan_compute = nullptr,
    .graph_compute = backend_graph_compute,
    .event_record = nullptr,
    .event_wait = nullptr,
};

// ---------------------------------------------------------------- device

const char * dev_name(lm_ggml_backend_dev_t dev) { return static_cast<DeviceCtx *>(dev->context)->name.c_str(); }

const char * dev_description(lm_ggml_backend_dev_t dev) {
    return static_cast<DeviceCtx *>(dev->context)->description.c_str();
}

void dev_memory(lm_ggml_backend_dev_t dev, size_t * free_mem, size_t * total) {
    auto * dc = static_cast<DeviceCtx *>(dev->context);
    DeviceReq req = {dc->device};
    DeviceMemoryRsp rsp = {0, 0};
    dc->ep->call(CMD_GET_DEVICE_MEMORY, &req, sizeof(req), &rsp, sizeof(rsp), true);
    *free_mem = rsp.free_mem;
    *total = rsp.total_mem;
}

enum lm_ggml_backend_dev_type dev_type(lm_ggml_backend_dev_t) {
    return LM_GGML_BACKEND_DEVICE_TYPE_GPU; // its own memory, like a GPU
}

void dev_props(lm_ggml_backend_dev_t dev, lm_ggml_backend_dev_props * props) {
    props->name = dev_name(dev);
    props->description = dev_description(dev);
    props->type = dev_type(dev);
    dev_memory(dev, &props->memory_free, &props->memory_total);
    props->caps = {.async = false, .host_buffer = false, .buffer_from_host_ptr = false, .events = false};
}

lm_ggml_backend_t dev_init(lm_ggml_backend_dev_t dev, const char *) {
    return new (std::nothrow)
        lm_ggml_backend{.guid = &kGuid, .iface = kBackendIface, .device = dev, .context = nullptr};
}

lm_ggml_backend_buffer_type_t dev_buft(lm_ggml_backend_dev_t dev) {
    return &static_cast<DeviceCtx *>(dev->context)->buft;
}

bool dev_supports_op(lm_ggml_backend_dev_t, const lm_ggml_tensor * op) { return supports_op(op); }

bool dev_supports_buft(lm_ggml_backend_dev_t dev, lm_ggml_backend_buffer_type_t buft) { return buft == dev_buft(dev); }

constexpr lm_ggml_backend_device_i kDeviceIface = {
    .get_name = dev_name,
    .get_description = dev_description,
    .get_memory = dev_memory,
    .get_type = dev_type,
    .get_props = dev_props,
    .init_backend = dev_init,
    .get_buffer_type = dev_buft,
    .get_host_buffer_type = nullptr,
    .buffer_from_host_ptr = nullptr,
    .supports_op = dev_supports_op,
    .supports_buft = dev_supports_buft,
    .offload_op = nullptr,
    .event_new = nullptr,
    .event_free = nullptr,
    .event_synchronize = nullptr,
};

// ---------------------------------------------------------------- regs

const char * reg_name(lm_ggml_backend_reg_t reg) {
    return reg->context ? static_cast<RegCtx *>(reg->context)->name.c_str() : "RPC";
}

size_t reg_device_count(lm_ggml_backend_reg_t reg) {
    return reg->context ? static_cast<RegCtx *>(reg->context)->devices.size() : 0;
}

lm_ggml_backend_dev_t reg_device(lm_ggml_backend_reg_t reg, size_t index) {
    auto * rc = static_cast<RegCtx *>(reg->context);
    return rc != nullptr && index < rc->devices.size() ? rc->devices[index] : nullptr;
}

void * reg_proc_address(lm_ggml_backend_reg_t, const char * name);

constexpr lm_ggml_backend_reg_i kRegIface = {
    .get_name = reg_name,
    .get_device_count = reg_device_count,
    .get_device = reg_device,
    .get_proc_address = reg_proc_address,
};

} // namespace

bool is_rpc_buffer(lm_ggml_backend_buffer_t buffer) {
    return buffer != nullptr && buffer->iface.free_buffer == buffer_free;
}

namespace {

lm_ggml_backend_reg_t add_server(const char * endpoint) {
    if (endpoint == nullptr) {
        log_error("rpc: endpoint is NULL\n");
        return nullptr;
    }
    const std::string name = endpoint;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        auto it = g_regs.find(name);
        if (it != g_regs.end()) {
            return it->second;
        }
    }
    Endpoint * ep = endpoint_get(name);
    if (ep == nullptr) {
        return nullptr;
    }
    DeviceCountRsp cnt = {0};
    if (!ep->call(CMD_DEVICE_COUNT, nullptr, 0, &cnt, sizeof(cnt), true) || cnt.device_count == 0 ||
        cnt.device_count > 256) {
        log_error("rpc: %s: no devices\n", endpoint);
        return nullptr;
    }
    auto * rc = new RegCtx;
    rc->name = "RPC[" + name + "]";
    auto * reg = new lm_ggml_backend_reg{.api_version = LM_GGML_BACKEND_API_VERSION, .iface = kRegIface, .context = rc};
    std::lock_guard<std::mutex> lock(g_mutex);
    for (uint32_t d = 0; d < cnt.device_count; d++) {
        DeviceReq req = {d};
        U64Rsp align = {0}, max_size = {0};
        ep->call(CMD_GET_ALIGNMENT, &req, sizeof(req), &align, sizeof(align), true);
        ep->call(CMD_GET_MAX_SIZE, &req, sizeof(req), &max_size, sizeof(max_size), true);
        if (align.value == 0 || (align.value & (align.value - 1)) != 0 || align.value > 4096) {
            log_error("rpc: %s: device %u reports a bad alignment\n", endpoint, d);
            align.value = 64;
        }
        auto * dc = new DeviceCtx;
        dc->ep = ep;
        dc->device = d;
        dc->name = "RPC" + std::to_string(g_next_dev_index++);
        dc->description = name + " device " + std::to_string(d);
        auto * bc = new BuftCtx{ep, d, dc->name, (size_t) align.value, (size_t) max_size.value};
        auto * dev = new lm_ggml_backend_device{.iface = kDeviceIface, .reg = reg, .context = dc};
        dc->buft = lm_ggml_backend_buffer_type{
            .iface = {.get_name = buft_name,
                      .alloc_buffer = buft_alloc,
                      .get_alignment = buft_alignment,
                      .get_max_size = buft_max_size,
                      .get_alloc_size = buft_alloc_size,
                      .is_host = nullptr},
            .device = dev,
            .context = bc,
        };
        rc->devices.push_back(dev);
    }
    g_regs[name] = reg;
    return reg;
}

} // namespace

} // namespace rpc

// ---------------------------------------------------------------- C API

using namespace rpc;

extern "C" {

lm_ggml_backend_reg_t lm_ggml_backend_rpc_add_server(const char * endpoint) { return add_server(endpoint); }

lm_ggml_backend_dev_t lm_ggml_backend_rpc_add_device(const char * endpoint) {
    lm_ggml_backend_reg_t reg = add_server(endpoint);
    return reg ? reg_device(reg, 0) : nullptr;
}

lm_ggml_backend_t lm_ggml_backend_rpc_init(const char * endpoint, uint32_t device) {
    lm_ggml_backend_reg_t reg = add_server(endpoint);
    lm_ggml_backend_dev_t dev = reg ? reg_device(reg, device) : nullptr;
    return dev ? dev_init(dev, nullptr) : nullptr;
}

bool lm_ggml_backend_is_rpc(lm_ggml_backend_t backend) { return backend != nullptr && backend->guid == &kGuid; }

lm_ggml_backend_buffer_type_t lm_ggml_backend_rpc_buffer_type(const char * endpoint, uint32_t device) {
    lm_ggml_backend_reg_t reg = add_server(endpoint);
    lm_ggml_backend_dev_t dev = reg ? reg_device(reg, device) : nullptr;
    return dev ? dev_buft(dev) : nullptr;
}

void lm_ggml_backend_rpc_get_device_memory(const char * endpoint, uint32_t device, size_t * free_mem, size_t * total) {
    if (free_mem == nullptr || total == nullptr) {
        log_error("rpc: get_device_memory: free and total must not be NULL\n");
        return;
    }
    *free_mem = 0;
    *total = 0;
    lm_ggml_backend_reg_t reg = add_server(endpoint);
    lm_ggml_backend_dev_t dev = reg ? reg_device(reg, device) : nullptr;
    if (dev != nullptr) {
        dev_memory(dev, free_mem, total);
    }
}

void lm_ggml_backend_rpc_set_auth_key(const char * key) { set_auth_key(key); }

lm_ggml_backend_reg_t lm_ggml_backend_rpc_reg(void) {
    static lm_ggml_backend_reg reg = {
        .api_version = LM_GGML_BACKEND_API_VERSION, .iface = kRegIface, .context = nullptr};
    return &reg;
}

} // extern "C"

namespace rpc {
namespace {

void * reg_proc_address(lm_ggml_backend_reg_t, const char * name) {
    struct Entry {
        const char * name;
        void * fn;
    };
    static const Entry kEntries[] = {
        {"lm_ggml_backend_rpc_add_server", (void *) lm_ggml_backend_rpc_add_server},
        {"lm_ggml_backend_rpc_add_device", (void *) lm_ggml_backend_rpc_add_device},
        {"lm_ggml_backend_rpc_init", (void *) lm_ggml_backend_rpc_init},
        {"lm_ggml_backend_is_rpc", (void *) lm_ggml_backend_is_rpc},
        {"lm_ggml_backend_rpc_buffer_type", (void *) lm_ggml_backend_rpc_buffer_type},
        {"lm_ggml_backend_rpc_get_device_memory", (void *) lm_ggml_backend_rpc_get_device_memory},
        {"lm_ggml_backend_rpc_start_server", (void *) lm_ggml_backend_rpc_start_server},
        {"lm_ggml_backend_rpc_server_start", (void *) lm_ggml_backend_rpc_server_start},
        {"lm_ggml_backend_rpc_server_port", (void *) lm_ggml_backend_rpc_server_port},
        {"lm_ggml_backend_rpc_server_stop", (void *) lm_ggml_backend_rpc_server_stop},
        {"lm_ggml_backend_rpc_set_auth_key", (void *) lm_ggml_backend_rpc_set_auth_key},
        {"lm_ggml_backend_rpc_server_start_auth", (void *) lm_ggml_backend_rpc_server_start_auth},
    };
    for (const Entry & e : kEntries) {
        if (std::strcmp(e.name, name) == 0) {
            return e.fn;
        }
    }
    return nullptr;
}

} // namespace
} // namespace rpc

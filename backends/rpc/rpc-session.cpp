// One server connection: the message loop and every command but graphs
// (rpc-graph.cpp). Every field of every message is checked before use; any
// failed check ends the connection with a logged reason.

#include "rpc-session.h"

#include "ggml-backend-impl.h"

#include "rpc-auth.h"
#include "rpc-enums.h"
#include "rpc-log.h"
#include "rpc-net.h"

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

namespace rpc {

namespace {

constexpr int kWireBaseShift = 40; // handle h's made-up base is h << 40
constexpr size_t kMaxBufferSize = (size_t(1) << kWireBaseShift) - 1;
constexpr uint64_t kMaxBuffersPerConn = (uint64_t(1) << 23) - 1; // made-up bases stay below 2^63

using u128 = unsigned __int128;

} // namespace

Session::Session(const ServerOptions & opts, int fd, std::string peer, std::atomic<uint64_t> & next_handle)
    : opts_(opts), fd_(fd), peer_(std::move(peer)), next_handle_(next_handle), backends_(opts.devices.size(), nullptr),
      graphs_(opts.devices.size()) {}

Session::~Session() {
    drop_graphs();
    for (auto & [h, b] : buffers_) {
        lm_ggml_backend_buffer_free(b.buf);
    }
    for (lm_ggml_backend_t be : backends_) {
        if (be != nullptr) {
            lm_ggml_backend_free(be);
        }
    }
}

void Session::drop_graphs() {
    for (StoredGraph & g : graphs_) {
        if (g.ctx != nullptr) {
            lm_ggml_free(g.ctx);
        }
        g = StoredGraph{};
    }
}

lm_ggml_backend_t Session::backend_for(uint32_t device, std::string & why) {
    if (device >= backends_.size()) {
        why = "device " + std::to_string(device) + " out of range";
        return nullptr;
    }
    if (backends_[device] == nullptr) {
        lm_ggml_backend_dev_t dev = opts_.devices[device];
        backends_[device] = lm_ggml_backend_dev_init(dev, nullptr);
        if (backends_[device] == nullptr) {
            why = "cannot start a backend on device " + std::to_string(device);
            return nullptr;
        }
        lm_ggml_backend_reg_t reg = lm_ggml_backend_dev_backend_reg(dev);
        auto set_threads = reg ? (lm_ggml_backend_set_n_threads_t) lm_ggml_backend_reg_get_proc_address(
                                     reg, "lm_ggml_backend_set_n_threads")
                               : nullptr;
        if (set_threads != nullptr && opts_.n_threads > 0) {
            set_threads(backends_[device], opts_.n_threads);
        }
    }
    return backends_[device];
}

OwnedBuffer * Session::find_buffer(uint64_t handle) {
    auto it = buffers_.find(handle);
    return it == buffers_.end() ? nullptr : &it->second;
}

size_t Session::conn_limit(uint32_t device) const {
    size_t free_mem = 0, total = 0;
    lm_ggml_backend_dev_memory(opts_.devices[device], &free_mem, &total);
    size_t limit = total > 0 ? total : SIZE_MAX;
    if (opts_.max_conn_bytes > 0 && opts_.max_conn_bytes < limit) {
        limit = opts_.max_conn_bytes;
    }
    return limit;
}

// ---------------------------------------------------------------- tensors

bool Session::check_tensor(const WireTensor & w, bool need_buffer, CheckedTensor & out, std::string & why) {
    const int type = type_from_wire(w.type);
    if (type < 0) {
        why = "tensor type " + std::to_string(w.type) + " unknown here";
        return false;
    }
    out.type = (lm_ggml_type) type;
    const size_t ts = lm_ggml_type_size(out.type);
    const int64_t bs = lm_ggml_blck_size(out.type);
    if (ts == 0 || bs <= 0) {
        why = "tensor type " + std::to_string(w.type) + " has no layout";
        return false;
    }
    u128 n_el = 1;
    for (int i = 0; i < 4; i++) {
        out.ne[i] = w.ne[i];
        out.nb[i] = w.nb[i];
        n_el *= w.ne[i];
    }
    if (n_el > (u128) INT64_MAX) {
        why = "tensor element count overflows";
        return false;
    }
    if (out.ne[0] % bs != 0) {
        why = "tensor ne[0] " + std::to_string(out.ne[0]) + " is not a multiple of its block size";
        return false;
    }
    if (bs > 1 && out.nb[0] != ts) {
        why = "quantized tensor with a non-block nb[0]";
        return false;
    }
    // bytes touched through the strides, and as a packed array (kernels that
    // assume contiguity read the latter): the tensor may use the larger
    u128 span = 0;
    if (n_el > 0) {
        // a row is ne0/bs blocks of ts bytes (for bs == 1, through nb[0])
        u128 strided = bs == 1 ? ts + (u128) (out.ne[0] - 1) * out.nb[0] : (u128) (out.ne[0] / bs) * ts;
        for (int i = 1; i < 4; i++) {
            strided += (u128) (out.ne[i] - 1) * out.nb[i];
        }
        const u128 packed = (u128) (out.ne[0] / bs) * ts * out.ne[1] * out.ne[2] * out.ne[3];
        span = strided > packed ? strided : packed;
    }
    out.owner = nullptr;
    out.offset = 0;
    out.host_data = nullptr;
    if (w.buffer == 0) {
        if (need_buffer) {
            why = "tensor '" + std::string(w.name, strnlen(w.name, sizeof(w.name))) + "' has no buffer";
            return false;
        }
        if (w.data != 0) {
            why = "tensor without buffer carries a data address";
            return false;
        }
        out.span = (size_t) std::min<u128>(span, SIZE_MAX);
        return true;
    }
    OwnedBuffer * b = find_buffer(w.buffer);
    if (b == nullptr) {
        why = "buffer handle " + std::to_string(w.buffer) + " is not one of this connection's";
        return false;
    }
    if (w.data < b->wire_base || w.data - b->wire_base > b->size) {
        why = "tensor data address outside its buffer";
        return false;
    }
    const size_t off = w.data - b->wire_base;
    if (span > (u128) (b->size - off)) {
        why = "tensor '" + std::string(w.name, strnlen(w.name, sizeof(w.name))) + "' extends past its buffer";
        return false;
    }
    out.owner = b;
    out.offset = off;
    out.span = (size_t) span;
    out.host_data = (uint8_t *) lm_ggml_backend_buffer_get_base(b->buf) + off;
    // kernels load whole elements (blocks hold an fp16 or, for Q8_K, a float
    // scale first): a misaligned address or stride is refused, not read
    const size_t align = bs == 1 ? ts : (out.type == LM_GGML_TYPE_Q8_K ? 4 : 2);
    bool aligned = (uintptr_t) out.host_data % align == 0;
    for (int i = 0; i < 4; i++) {
        aligned = aligned && (out.ne[i] <= 1 || out.nb[i] % align == 0);
    }
    if (!aligned) {
        why = "tensor '" + std::string(w.name, strnlen(w.name, sizeof(w.name))) + "' is not aligned to its element";
        return false;
    }
    return true;
}

void Session::fill_tensor(const CheckedTensor & c, lm_ggml_tensor & t) {
    std::memset(&t, 0, sizeof(t));
    t.type = c.type;
    for (int i = 0; i < 4; i++) {
        t.ne[i] = c.ne[i];
        t.nb[i] = c.nb[i];
    }
    t.buffer = c.owner ? c.owner->buf : nullptr;
    t.data = c.host_data;
}

bool Session::region_ok(const CheckedTensor & c, uint64_t offset, uint64_t size, std::string & why) const {
    if (offset > c.span || size > c.span - offset) {
        why = "byte range [" + std::to_string(offset) + ", +" + std::to_string(size) + ") outside the tensor's " +
              std::to_string(c.span) + " bytes";
        return false;
    }
    return true;
}

// A 1-D byte tensor over [data + offset, + size) of c's buffer, for the
// backend's set/get/memset (which then touch exactly that range).
static lm_ggml_tensor byte_range(const CheckedTensor & c, uint64_t offset, uint64_t size) {
    lm_ggml_tensor t;
    std::memset(&t, 0, sizeof(t));
    t.type = LM_GGML_TYPE_I8;
    t.ne[0] = (int64_t) size;
    t.ne[1] = t.ne[2] = t.ne[3] = 1;
    t.nb[0] = 1;
    t.nb[1] = t.nb[2] = t.nb[3] = size;
    t.buffer = c.owner->buf;
    t.data = (uint8_t *) c.host_data + offset;
    return t;
}

// ---------------------------------------------------------------- transport

bool Session::respond(const void * data, size_t n) {
    const uint64_t size = n;
    if (n <= 256) { // one segment for the usual small answers
        uint8_t msg[8 + 256];
        std::memcpy(msg, &size, 8);
        if (n > 0) {
            std::memcpy(msg + 8, data, n);
        }
        return send_all(fd_, msg, 8 + n, opts_.io_timeout_ms);
    }
    return send_all(fd_, &size, sizeof(size), opts_.io_timeout_ms) && send_all(fd_, data, n, opts_.io_timeout_ms);
}

template <typename T> bool Session::recv_exact(uint64_t size, T & req, std::string & why) {
    if (size != sizeof(T)) {
        why = "payload of " + std::to_string(size) + " bytes where " + std::to_string(sizeof(T)) + " are due";
        return false;
    }
    if (!recv_all(fd_, &req, sizeof(T), opts_.io_timeout_ms)) {
        why = "truncated or late payload";
        return false;
    }
    return true;
}

bool Session::recv_payload(size_t n, std::vector<uint8_t> & into, std::string & why) {
    try {
        into.resize(n);
    } catch (const std::bad_alloc &) {
        why = "out of memory for a " + std::to_string(n) + "-byte payload";
        return false;
    }
    if (n > 0 && !recv_all(fd_, into.data(), n, opts_.io_timeout_ms)) {
        why = "truncated or late payload";
        return false;
    }
    return true;
}

// the next message's header, due within the I/O timeout (the handshake's)
bool Session::next_header(const std::atomic<bool> & stop, uint8_t & cmd, uint64_t & size) {
    return wait_readable(fd_, opts_.io_timeout_ms, &stop) && recv_all(fd_, &cmd, 1, opts_.io_timeout_ms, &stop) &&
           recv_all(fd_, &size, sizeof(size), opts_.io_timeout_ms, &stop);
}

bool Session::handshake(const std::atomic<bool> & stop, std::string & why) {
    uint8_t cmd = 0;
    uint64_t size = 0;
    if (!next_header(stop, cmd, size)) {
        why = "no HELLO";
        return false;
    }
    if (cmd != CMD_HELLO) {
        why = "first command " + std::to_string(cmd) + " is not HELLO";
        return false;
    }
    HelloReq req;
    if (!recv_exact(size, req, why)) {
        return false;
    }
    HelloRsp rsp = {};
    rsp.major = kProtoMajor;
    rsp.minor = kProtoMinor;
    rsp.patch = kProtoPatch;
    // conn_caps stay zero: plain TCP, whatever transport the client offers
    if (!respond(&rsp, sizeof(rsp))) {
        why = "cannot answer HELLO";
        return false;
    }
    return opts_.auth_key.empty() || authenticate(stop, why);
}

// With a key, the client proves it before any other command, then the
// server proves it too (rpc-auth.h); a wrong proof gets no answer.
bool Session::authenticate(const std::atomic<bool> & stop, std::string & why) {
    uint8_t cmd = 0;
    uint64_t size = 0;
    AuthNonceReq nreq;
    if (!next_header(stop, cmd, size)) {
        why = "no authentication after HELLO";
        return false;
    }
    if (cmd != CMD_AUTH_NONCE) {
        why = "command " + std::to_string(cmd) + " before authentication (this server requires a key)";
        return false;
    }
    if (!recv_exact(size, nreq, why)) {
        return false;
    }
    AuthNonceRsp nrsp;
    if (!random_bytes(nrsp.server_nonce, sizeof(nrsp.server_nonce))) {
        why = "no random bytes for a nonce";
        return false;
    }
    if (!respond(&nrsp, sizeof(nrsp))) {
        why = "cannot send the nonce";
        return false;
    }
    AuthProofReq preq;
    if (!next_header(stop, cmd, size) || cmd != CMD_AUTH_PROOF || !recv_exact(size, preq, why)) {
        why = "no proof of the key after the nonce" + (why.empty() ? "" : " (" + why + ")");
        return false;
    }
    const Digest want = auth_proof(opts_.auth_key, AuthRole::Client, nreq.client_nonce, nrsp.server_nonce);
    if (!ct_equal(want.data(), preq.client_proof, want.size())) {
        why = "authentication failed: wrong key";
        return false;
    }
    AuthProofRsp prsp;
    const Digest mine = auth_proof(opts_.auth_key, AuthRole::Server, nreq.client_nonce, nrsp.server_nonce);
    std::memcpy(prsp.server_proof, mine.data(), mine.size());
    if (!respond(&prsp, sizeof(prsp))) {
        why = "cannot send the server's proof";
        return false;
    }
    log_info("rpc-server: %s: authenticated\n", peer_.c_str());
    return true;
}

void Session::serve(const std::atomic<bool> & stop) {
    std::string why;
    if (!handshake(stop, why)) {
        log_error("rpc-server: %s: %s; closing the connection\n", peer_.c_str(), why.c_str());
        return;
    }
    for (;;) {
        uint8_t cmd = 0;
        uint64_t size = 0;
        if (!wait_readable(fd_, opts_.idle_timeout_ms, &stop) || !recv_all(fd_, &cmd, 1, opts_.io_timeout_ms, &stop)) {
            break; // closed, idle too long, or the server stops
        }
        if (!recv_all(fd_, &size, sizeof(size), opts_.io_timeout_ms, &stop)) {
            log_error("rpc-server: %s: truncated message header; closing the connection\n", peer_.c_str());
            return;
        }
        if (!dispatch(cmd, size, why)) {
            log_error("rpc-server: %s: command %u: %s; closing the connection\n", peer_.c_str(), (unsigned) cmd,
                      why.c_str());
            return;
        }
    }
}

// ---------------------------------------------------------------- commands

bool Session::cmd_alloc_buffer(const AllocBufferReq & req, std::string & why) {
    lm_ggml_backend_t be = backend_for(req.device, why);
    if (be == nullptr) {
        return false;
    }
    AllocBufferRsp rsp = {0, 0};
    const size_t limit = conn_limit(req.device);
    if (req.size > kMaxBufferSize || req.size > limit - std::min(limit, bytes_allocated_) ||
        next_slot_ > kMaxBuffersPerConn) {
        log_error("rpc-server: %s: ALLOC_BUFFER of %" PRIu64 " bytes refused (connection limit %zu, %zu in use)\n",
                  peer_.c_str(), req.size, limit, bytes_allocated_);
        return respond(&rsp, sizeof(rsp));
    }
    lm_ggml_backend_buffer_t buf =
        lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_get_default_buffer_type(be), req.size);
    if (buf != nullptr) {
        const size_t got = lm_ggml_backend_buffer_get_size(buf);
        if (got > kMaxBufferSize) {
            lm_ggml_backend_buffer_free(buf);
            return respond(&rsp, sizeof(rsp));
        }
        OwnedBuffer ob;
        ob.buf = buf;
        ob.handle = next_handle_.fetch_add(1);
        ob.wire_base = next_slot_++ << kWireBaseShift;
        ob.size = got;
        ob.device = req.device;
        buffers_[ob.handle] = ob;
        bytes_allocated_ += got;
        rsp.remote_ptr = ob.handle;
        rsp.remote_size = got;
    }
    return respond(&rsp, sizeof(rsp));
}

bool Session::cmd_set_tensor(uint64_t size, std::string & why) {
    if (size < kSetTensorHeader) {
        why = "SET_TENSOR payload shorter than its header";
        return false;
    }
    uint8_t header[kSetTensorHeader];
    if (!recv_all(fd_, header, sizeof(header), opts_.io_timeout_ms)) {
        why = "truncated SET_TENSOR header";
        return false;
    }
    WireTensor w;
    uint8_t cache_flag;
    uint64_t offset;
    std::memcpy(&w, header, sizeof(w));
    cache_flag = header[sizeof(w)];
    std::memcpy(&offset, header + sizeof(w) + 1, sizeof(offset));
    const uint64_t n = size - kSetTensorHeader;
    CheckedTensor c;
    if (n > opts_.max_message) {
        why = "SET_TENSOR payload of " + std::to_string(n) + " bytes over the limit";
        return false;
    }
    if (!check_tensor(w, true, c, why) || !region_ok(c, offset, n, why)) {
        return false; // checked before a byte of the payload is stored
    }
    std::vector<uint8_t> data;
    if (!recv_payload(n, data, why)) {
        return false;
    }
    if (cache_flag != 0 && !opts_.cache_dir.empty()) {
        char name[17];
        std::snprintf(name, sizeof(name), "%016" PRIx64, fnv1a(data.data(), data.size()));
        const std::filesystem::path file = std::filesystem::path(opts_.cache_dir) / name;
        const std::filesystem::path tmp = file.string() + ".tmp";
        std::ofstream out(tmp, std::ios::binary);
        out.write((const char *) data.data(), (std::streamsize) data.size());
        out.close();
        std::error_code ec;
        if (out.good()) {
            std::filesystem::rename(tmp, file, ec);
        } else {
            std::filesystem::remove(tmp, ec);
        }
    }
    lm_ggml_tensor t = byte_range(c, offset, n);
    lm_ggml_backend_tensor_set(&t, data.data(), 0, n);
    return true;
}

bool Session::cmd_set_tensor_hash(const SetTensorHashReq & req, std::string & why) {
    ResultRsp rsp = {0};
    CheckedTensor c;
    if (!check_tensor(req.tensor, true, c, why)) {
        return false;
    }
    if (opts_.cache_dir.empty()) {
        return respond(&rsp, sizeof(rsp));
    }
    char name[17];
    std::snprintf(name, sizeof(name), "%016" PRIx64, req.hash);
    const std::string file = (std::filesystem::path(opts_.cache_dir) / name).string();
    struct stat st;
    if (stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return respond(&rsp, sizeof(rsp));
    }
    const uint64_t n = (uint64_t) st.st_size;
    if (!region_ok(c, req.offset, n, why)) {
        return false;
    }
    std::vector<uint8_t> data;
    try {
        data.resize(n);
    } catch (const std::bad_alloc &) {
        why = "out of memory reading a cache file";
        return false;
    }
    std::ifstream in(file, std::ios::binary);
    in.read((char *) data.data(), (std::streamsize) n);
    // a file that changed under us or does not hash as named is not used
    if (in.gcount() == (std::streamsize) n && fnv1a(data.data(), n) == req.hash) {
        lm_ggml_tensor t = byte_range(c, req.offset, n);
        lm_ggml_backend_tensor_set(&t, data.data(), 0, n);
        rsp.result = 1;
    }
    return respond(&rsp, sizeof(rsp));
}

bool Session::cmd_get_tensor(const GetTensorReq & req, std::string & why) {
    CheckedTensor c;
    if (!check_tensor(req.tensor, true, c, why) || !region_ok(c, req.offset, req.size, why)) {
        return false;
    }
    std::vector<uint8_t> data;
    try {
        data.resize(req.size);
    } catch (const std::bad_alloc &) {
        why = "out of memory for GET_TENSOR";
        return false;
    }
    lm_ggml_tensor t = byte_range(c, req.offset, req.size);
    lm_ggml_backend_tensor_get(&t, data.data(), 0, req.size);
    return respond(data.data(), data.size());
}

bool Session::cmd_copy_tensor(const CopyTensorReq & req, std::string & why) {
    CheckedTensor cs, cd;
    if (!check_tensor(req.src, true, cs, why) || !check_tensor(req.dst, true, cd, why)) {
        return false;
    }
    lm_ggml_tensor src, dst;
    fill_tensor(cs, src);
    fill_tensor(cd, dst);
    // the copy writes nbytes(src) at dst's data
    const size_t n = lm_ggml_nbytes(&src);
    if (n > cd.span) {
        why = "COPY_TENSOR source larger than its destination";
        return false;
    }
    ResultRsp rsp = {0};
    rsp.result = lm_ggml_backend_buffer_copy_tensor(&src, &dst) ? 1 : 0;
    return respond(&rsp, sizeof(rsp));
}

bool Session::cmd_get_alloc_size(const GetAllocSizeReq & req, std::string & why) {
    lm_ggml_backend_t be = backend_for(req.device, why);
    if (be == nullptr) {
        return false;
    }
    CheckedTensor c;
    if (!check_tensor(req.tensor, false, c, why)) {
        return false;
    }
    lm_ggml_tensor t;
    fill_tensor(c, t);
    const int op = op_from_wire(req.tensor.op);
    t.op = op < 0 ? LM_GGML_OP_NONE : (lm_ggml_op) op;
    lm_ggml_tensor srcs[kWireMaxSrc];
    for (size_t i = 0; i < kWireMaxSrc; i++) {
        if (req.srcs[i].id == 0) {
            continue;
        }
        CheckedTensor cs;
        if (!check_tensor(req.srcs[i], false, cs, why)) {
            return false;
        }
        fill_tensor(cs, srcs[i]);
        t.src[i] = &srcs[i];
    }
    lm_ggml_backend_buffer_type_t buft =
        c.owner ? lm_ggml_backend_buffer_get_type(c.owner->buf) : lm_ggml_backend_get_default_buffer_type(be);
    U64Rsp rsp = {lm_ggml_backend_buft_get_alloc_size(buft, &t)};
    return respond(&rsp, sizeof(rsp));
}

bool Session::cmd_graph_compute(uint64_t size, std::string & why) {
    const uint64_t most = 12 + 8 * (uint64_t) opts_.max_nodes + sizeof(WireTensor) * (uint64_t) opts_.max_tensors;
    if (size < 12 || size > most) {
        why = "GRAPH_COMPUTE payload of " + std::to_string(size) + " bytes out of bounds";
        return false;
    }
    std::vector<uint8_t> payload;
    if (!recv_payload(size, payload, why)) {
        return false;
    }
    uint32_t device = 0;
    StoredGraph g;
    if (!build_graph(payload, device, g, why)) {
        if (g.ctx != nullptr) {
            lm_ggml_free(g.ctx);
        }
        return false;
    }
    // the new graph replaces the device's stored one (GRAPH_RECOMPUTE runs it)
    if (graphs_[device].ctx != nullptr) {
        lm_ggml_free(graphs_[device].ctx);
    }
    graphs_[device] = g;
    const lm_ggml_status st = lm_ggml_backend_graph_compute(backends_[device], g.graph);
    if (st != LM_GGML_STATUS_SUCCESS) {
        why = "graph compute failed with status " + std::to_string((int) st);
        return false;
    }
    return graph_rows_ok(g, why);
}

bool Session::dispatch(uint8_t cmd, uint64_t size, std::string & why) {
    switch (cmd) {
        case CMD_HELLO: why = "HELLO after the handshake"; return false;
        case CMD_DEVICE_COUNT: {
            if (size != 0) {
                why = "DEVICE_COUNT with a payload";
                return false;
            }
            DeviceCountRsp rsp = {(uint32_t) opts_.devices.size()};
            return respond(&rsp, sizeof(rsp));
        }
        case CMD_ALLOC_BUFFER: {
            AllocBufferReq req;
            return recv_exact(size, req, why) && cmd_alloc_buffer(req, why);
        }
        case CMD_GET_ALIGNMENT:
        case CMD_GET_MAX_SIZE: {
            DeviceReq req;
            if (!recv_exact(size, req, why)) {
                return false;
            }
            lm_ggml_backend_t be = backend_for(req.device, why);
            if (be == nullptr) {
                return false;
            }
            lm_ggml_backend_buffer_type_t buft = lm_ggml_backend_get_default_buffer_type(be);
            U64Rsp rsp = {cmd == CMD_GET_ALIGNMENT
                              ? lm_ggml_backend_buft_get_alignment(buft)
                              : std::min<size_t>(lm_ggml_backend_buft_get_max_size(buft),
                                                 std::min(kMaxBufferSize, conn_limit(req.device)))};
            return respond(&rsp, sizeof(rsp));
        }
        case CMD_BUFFER_GET_BASE: {
            BufferReq req;
            if (!recv_exact(size, req, why)) {
                return false;
            }
            OwnedBuffer * b = find_buffer(req.remote_ptr);
            if (b == nullptr) {
                why = "BUFFER_GET_BASE of unknown buffer " + std::to_string(req.remote_ptr);
                return false;
            }
            BufferGetBaseRsp rsp = {b->wire_base};
            return respond(&rsp, sizeof(rsp));
        }
        case CMD_FREE_BUFFER: {
            BufferReq req;
            if (!recv_exact(size, req, why)) {
                return false;
            }
            OwnedBuffer * b = find_buffer(req.remote_ptr);
            if (b == nullptr) {
                why = "FREE_BUFFER of unknown buffer " + std::to_string(req.remote_ptr);
                return false;
            }
            drop_graphs(); // a stored graph may point into it
            bytes_allocated_ -= b->size;
            lm_ggml_backend_buffer_free(b->buf);
            buffers_.erase(req.remote_ptr);
            return true;
        }
        case CMD_BUFFER_CLEAR: {
            BufferClearReq req;
            if (!recv_exact(size, req, why)) {
                return false;
            }
            OwnedBuffer * b = find_buffer(req.remote_ptr);
            if (b == nullptr) {
                why = "BUFFER_CLEAR of unknown buffer " + std::to_string(req.remote_ptr);
                return false;
            }
            lm_ggml_backend_buffer_clear(b->buf, req.value);
            return true;
        }
        case CMD_MEMSET_TENSOR: {
            MemsetTensorReq req;
            CheckedTensor c;
            if (!recv_exact(size, req, why) || !check_tensor(req.tensor, true, c, why) ||
                !region_ok(c, req.offset, req.size, why)) {
                return false;
            }
            lm_ggml_tensor t = byte_range(c, req.offset, req.size);
            lm_ggml_backend_tensor_memset(&t, req.value, 0, req.size);
            return true;
        }
        case CMD_SET_TENSOR: return cmd_set_tensor(size, why);
        case CMD_SET_TENSOR_HASH: {
            SetTensorHashReq req;
            return recv_exact(size, req, why) && cmd_set_tensor_hash(req, why);
        }
        case CMD_GET_TENSOR: {
            GetTensorReq req;
            return recv_exact(size, req, why) && cmd_get_tensor(req, why);
        }
        case CMD_COPY_TENSOR: {
            CopyTensorReq req;
            return recv_exact(size, req, why) && cmd_copy_tensor(req, why);
        }
        case CMD_INIT_TENSOR: {
            InitTensorReq req;
            CheckedTensor c;
            if (!recv_exact(size, req, why) || !check_tensor(req.tensor, true, c, why)) {
                return false;
            }
            lm_ggml_tensor t;
            fill_tensor(c, t);
            lm_ggml_backend_buffer_init_tensor(c.owner->buf, &t);
            if (t.extra != nullptr) {
                why = "INIT_TENSOR on a backend that keeps per-tensor state (unsupported over RPC)";
                return false;
            }
            return true;
        }
        case CMD_GET_ALLOC_SIZE: {
            GetAllocSizeReq req;
            return recv_exact(size, req, why) && cmd_get_alloc_size(req, why);
        }
        case CMD_GRAPH_COMPUTE: return cmd_graph_compute(size, why);
        case CMD_GRAPH_RECOMPUTE: {
            DeviceReq req;
            if (!recv_exact(size, req, why)) {
                return false;
            }
            if (req.device >= graphs_.size() || graphs_[req.device].graph == nullptr) {
                why = "GRAPH_RECOMPUTE with no stored graph on device " + std::to_string(req.device);
                return false;
            }
            const lm_ggml_status st = lm_ggml_backend_graph_compute(backends_[req.device], graphs_[req.device].graph);
            if (st != LM_GGML_STATUS_SUCCESS) {
                why = "graph compute failed with status " + std::to_string((int) st);
                return false;
            }
            return graph_rows_ok(graphs_[req.device], why);
        }
        case CMD_GET_DEVICE_MEMORY: {
            DeviceReq req;
            if (!recv_exact(size, req, why)) {
                return false;
            }
            if (req.device >= opts_.devices.size()) {
                why = "device " + std::to_string(req.device) + " out of range";
                return false;
            }
            size_t free_mem = 0, total = 0;
            lm_ggml_backend_dev_memory(opts_.devices[req.device], &free_mem, &total);
            DeviceMemoryRsp rsp = {free_mem, total};
            return respond(&rsp, sizeof(rsp));
        }
        default: why = "unknown command"; return false;
    }
}

} // namespace rpc

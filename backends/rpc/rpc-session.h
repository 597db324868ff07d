#pragma once
// One server connection's state: its backends, the buffers it allocated
// (known by handle, never by address), and the last graph per device.

#include "ggml-backend.h"
#include "rpc-proto.h"
#include "rpc-server.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rpc {

// A buffer this connection owns. Clients see `handle` (unique server-wide)
// and a made-up base address (`wire_base`), never a server pointer.
struct OwnedBuffer {
    lm_ggml_backend_buffer_t buf = nullptr;
    uint64_t handle = 0;
    uint64_t wire_base = 0;
    size_t size = 0;
    uint32_t device = 0;
};

// A wire tensor after its checks: lmggml type, shape, strides, and where its
// bytes lie (offset into an owned buffer, `span` bytes through its strides).
struct CheckedTensor {
    lm_ggml_type type = LM_GGML_TYPE_F32;
    int64_t ne[4] = {0, 0, 0, 0};
    size_t nb[4] = {0, 0, 0, 0};
    OwnedBuffer * owner = nullptr; // NULL: no buffer (allowed only where stated)
    size_t offset = 0;             // of data in owner
    size_t span = 0;               // bytes from data the tensor may touch
    void * host_data = nullptr;    // the buffer's own address of data
};

struct RowGuards; // rpc-peer-ops.h

struct StoredGraph {
    lm_ggml_context * ctx = nullptr;
    lm_ggml_cgraph * graph = nullptr;
    std::shared_ptr<RowGuards> guards; // raised by a row id out of range while it ran
};

// rpc-graph.cpp: after each run of a graph; false (with why) when a row id
// was out of range (the guards kept the run inside the tables)
bool graph_rows_ok(const StoredGraph & g, std::string & why);

class Session {
public:
    // next_handle: the server's buffer handle counter, shared by all its
    // connections so that handles are unique across them (one connection
    // can never name another's buffer: a foreign handle is simply unknown)
    Session(const ServerOptions & opts, int fd, std::string peer, std::atomic<uint64_t> & next_handle);
    ~Session();

    // runs the connection to its end
    void serve(const std::atomic<bool> & stop);

    // checks a wire tensor; why gets the reason on failure
    bool check_tensor(const WireTensor & w, bool need_buffer, CheckedTensor & out, std::string & why);
    // fills a scratch lm_ggml_tensor (not in any context) from a checked one
    static void fill_tensor(const CheckedTensor & c, lm_ggml_tensor & t);

    // rpc-graph.cpp: deserializes, checks and rebuilds a GRAPH_COMPUTE payload
    bool build_graph(const std::vector<uint8_t> & payload, uint32_t & device, StoredGraph & out, std::string & why);

private:
    bool handshake(const std::atomic<bool> & stop, std::string & why);
    bool authenticate(const std::atomic<bool> & stop, std::string & why);
    bool next_header(const std::atomic<bool> & stop, uint8_t & cmd, uint64_t & size);
    bool dispatch(uint8_t cmd, uint64_t size, std::string & why);
    bool respond(const void * data, size_t n);
    template <typename T> bool recv_exact(uint64_t size, T & req, std::string & why);
    bool recv_payload(size_t n, std::vector<uint8_t> & into, std::string & why);

    bool cmd_alloc_buffer(const AllocBufferReq & req, std::string & why);
    bool cmd_set_tensor(uint64_t size, std::string & why);
    bool cmd_set_tensor_hash(const SetTensorHashReq & req, std::string & why);
    bool cmd_get_tensor(const GetTensorReq & req, std::string & why);
    bool cmd_copy_tensor(const CopyTensorReq & req, std::string & why);
    bool cmd_graph_compute(uint64_t size, std::string & why);
    bool cmd_get_alloc_size(const GetAllocSizeReq & req, std::string & why);

    bool region_ok(const CheckedTensor & c, uint64_t offset, uint64_t size, std::string & why) const;
    void drop_graphs();
    lm_ggml_backend_t backend_for(uint32_t device, std::string & why);
    OwnedBuffer * find_buffer(uint64_t handle);
    size_t conn_limit(uint32_t device) const;

    const ServerOptions & opts_;
    int fd_;
    std::string peer_;
    std::atomic<uint64_t> & next_handle_;
    std::vector<lm_ggml_backend_t> backends_; // lazily created, one per device
    std::map<uint64_t, OwnedBuffer> buffers_; // by handle
    uint64_t next_slot_ = 1;                  // this connection's next made-up base, in 1 TiB steps
    size_t bytes_allocated_ = 0;
    std::vector<StoredGraph> graphs_; // per device
};

} // namespace rpc

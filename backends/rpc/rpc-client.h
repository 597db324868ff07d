#pragma once
// The RPC client: one connection per endpoint, shared by its devices,
// buffers and backends. Calls are synchronous and serialized per endpoint;
// when a connection fails, the server-side state made through it is gone:
// calls on that state fail fast (results zeroed, reason logged), while new
// work (allocations, device queries) reconnects. Nothing hangs or aborts.

#include "ggml-backend-impl.h"
#include "rpc-proto.h"

#include <cstdint>
#include <mutex>
#include <string>

namespace rpc {

struct Endpoint {
    std::string name; // "host:port"
    std::string host;
    int port = 0;
    int fd = -1;                                   // -1: not connected (failed, or never)
    uint64_t generation = 0;                       // bumped by every (re)connection
    uint64_t frees = 0;                            // FREE_BUFFERs sent: each drops the server's stored graphs
    uint64_t graphs_sent = 0, recomputes_sent = 0; // GRAPH_COMPUTE and GRAPH_RECOMPUTE, for tests
    std::mutex mutex;

    // Sends a command; with a reply, reads exactly reply_size bytes (zeroed
    // on failure). gen: the connection the caller's server-side state lives
    // in (a buffer's); 0 for stateless calls, which reconnect when needed.
    // State of an older connection died with it: such calls fail at once.
    bool call(Cmd cmd, const void * payload, size_t size, void * reply, size_t reply_size, bool has_reply,
              uint64_t gen = 0);

    bool connect_locked(); // connects and greets (and authenticates, with a key); mutex held
private:
    bool authenticate_locked(const std::string & key);
    bool exchange(Cmd cmd, const void * payload, size_t size, void * reply, size_t reply_size, bool has_reply,
                  int timeout_ms);
};

// The key clients prove to servers started with one (rpc-auth.h): the one
// set through lm_ggml_backend_rpc_set_auth_key, else env LMGGML_RPC_AUTH_KEY,
// else none (plain protocol). Taken at each (re)connection.
void set_auth_key(const char * key);
std::string auth_key();

// the connection for endpoint (made and greeted with HELLO on first use), or NULL
Endpoint * endpoint_get(const std::string & name);

bool is_rpc_buffer(lm_ggml_backend_buffer_t buffer);
bool supports_op(const lm_ggml_tensor * op);

// the wire form of t (ids are its address; buffer and data only when t lies
// in a buffer of this endpoint, of connection `gen` when non-zero)
WireTensor serialize_tensor(const lm_ggml_tensor * t, const Endpoint * ep, uint64_t gen = 0);

} // namespace rpc

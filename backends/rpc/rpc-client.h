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
    std::string name;   // "host:port"
    std::string host;
    int         port = 0;
    int         fd = -1;         // -1: not connected (failed, or never)
    uint64_t    generation = 0;  // bumped by every (re)connection
    std::mutex  mutex;

    // Sends a command; with a reply, reads exactly reply_size bytes (zeroed
    // on failure). gen: the connection the caller's server-side state lives
    // in (a buffer's); 0 for stateless calls, which reconnect when needed.
    // State of an older connection died with it: such calls fail at once.
    bool call(Cmd cmd, const void * payload, size_t size, void * reply, size_t reply_size, bool has_reply,
              uint64_t gen = 0);

    bool connect_locked(); // connects and greets; mutex held
private:
    bool exchange(Cmd cmd, const void * payload, size_t size, void * reply, size_t reply_size, bool has_reply,
                  int timeout_ms);
};

// the connection for endpoint (made and greeted with HELLO on first use), or NULL
Endpoint * endpoint_get(const std::string & name);

bool is_rpc_buffer(lm_ggml_backend_buffer_t buffer);
bool supports_op(const lm_ggml_tensor * op);

// the wire form of t (ids are its address; buffer and data only when t lies
// in a buffer of this endpoint, of connection `gen` when non-zero)
WireTensor serialize_tensor(const lm_ggml_tensor * t, const Endpoint * ep, uint64_t gen = 0);

} // namespace rpc

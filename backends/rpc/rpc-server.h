#pragma once
// The RPC server: accepts connections, serves each on its own thread with
// its own buffers and backends, and checks every message before use. A bad
// message closes that connection (reason logged); other connections go on.

#include "ggml-backend.h"
#include "rpc-proto.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rpc {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 50052; // 0: any free port
    std::vector<lm_ggml_backend_dev_t> devices;
    int n_threads = 0;                    // 0: the backend's default
    std::string cache_dir;                // empty: no SET_TENSOR_HASH cache
    size_t max_conn_bytes = 0;            // buffer bytes per connection; 0: the device's total memory
    size_t max_message = size_t(2) << 30; // largest SET_TENSOR payload
    uint32_t max_nodes = 1u << 17;        // nodes per graph
    uint32_t max_tensors = 1u << 19;      // tensors per graph
    int max_connections = 16;
    int io_timeout_ms = 30000; // a started message must progress within this
    int idle_timeout_ms = 0;   // between messages; 0: none
    std::string auth_key;      // non-empty: clients must prove it after HELLO (rpc-auth.h)
};

struct Server;

// Listening and serving in background threads, or NULL (reason logged).
Server * server_start(const ServerOptions & opts);
int server_port(const Server * s);
void server_stop(Server * s); // closes every connection, joins, frees

} // namespace rpc

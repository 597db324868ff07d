// The server half of ggml-rpc.h's C API.

#include "ggml-rpc.h"
#include "rpc-log.h"
#include "rpc-net.h"
#include "rpc-server.h"

#include <chrono>
#include <thread>

struct lm_ggml_backend_rpc_server {
    rpc::Server * server;
};

namespace {

bool make_options(const char * endpoint, const char * cache_dir, size_t n_threads, size_t n_devices,
                  lm_ggml_backend_dev_t * devices, rpc::ServerOptions & o) {
    if (endpoint == nullptr || n_devices == 0 || devices == nullptr ||
        !rpc::parse_endpoint(endpoint, o.host, o.port, true)) {
        log_error("rpc-server: bad arguments (endpoint '%s', %zu devices)\n", endpoint ? endpoint : "(null)",
                  n_devices);
        return false;
    }
    o.devices.assign(devices, devices + n_devices);
    o.n_threads = (int) n_threads;
    o.cache_dir = cache_dir ? cache_dir : "";
    return true;
}

} // namespace

extern "C" {

lm_ggml_backend_rpc_server_t lm_ggml_backend_rpc_server_start(const char * endpoint, const char * cache_dir,
                                                              size_t n_threads, size_t n_devices,
                                                              lm_ggml_backend_dev_t * devices) {
    return lm_ggml_backend_rpc_server_start_auth(endpoint, cache_dir, n_threads, n_devices, devices, nullptr);
}

lm_ggml_backend_rpc_server_t lm_ggml_backend_rpc_server_start_auth(const char * endpoint, const char * cache_dir,
                                                                   size_t n_threads, size_t n_devices,
                                                                   lm_ggml_backend_dev_t * devices,
                                                                   const char * auth_key) {
    rpc::ServerOptions o;
    if (!make_options(endpoint, cache_dir, n_threads, n_devices, devices, o)) {
        return nullptr;
    }
    o.auth_key = auth_key ? auth_key : "";
    rpc::Server * s = rpc::server_start(o);
    return s ? new lm_ggml_backend_rpc_server{s} : nullptr;
}

int lm_ggml_backend_rpc_server_port(lm_ggml_backend_rpc_server_t server) {
    if (server == nullptr) {
        log_error("rpc: server_port: server is NULL\n");
        return 0;
    }
    return rpc::server_port(server->server);
}

void lm_ggml_backend_rpc_server_stop(lm_ggml_backend_rpc_server_t server) {
    if (server != nullptr) {
        rpc::server_stop(server->server);
        delete server;
    }
}

void lm_ggml_backend_rpc_start_server(const char * endpoint, const char * cache_dir, size_t n_threads, size_t n_devices,
                                      lm_ggml_backend_dev_t * devices) {
    lm_ggml_backend_rpc_server_t s =
        lm_ggml_backend_rpc_server_start(endpoint, cache_dir, n_threads, n_devices, devices);
    if (s == nullptr) {
        return;
    }
    for (;;) {
        std::this_thread::sleep_for(std::chrono::hours(1)); // serves until the process ends
    }
}

} // extern "C"

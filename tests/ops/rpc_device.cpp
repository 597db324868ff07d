// An RPC device for the conformance run: when the RPC plugin is loaded, an
// in-process server on 127.0.0.1 (ephemeral port) serves the CPU device and
// the client's device for it joins the registry, so every case also runs
// over the wire (ops the RPC backend cannot carry are skipped as unsupported).
#include "ggml-backend-impl.h"
#include "ggml-rpc.h"

#include <mutex>
#include <string>

namespace opstest {

void add_rpc_loopback_device() {
    static std::once_flag once;
    std::call_once(once, [] {
        lm_ggml_backend_reg_t rpc = lm_ggml_backend_reg_by_name("RPC");
        if (rpc == nullptr) {
            return; // the plugin is not built
        }
        auto start = reinterpret_cast<decltype(&lm_ggml_backend_rpc_server_start)>(
            lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_server_start"));
        auto port_of = reinterpret_cast<decltype(&lm_ggml_backend_rpc_server_port)>(
            lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_server_port"));
        auto add_server = reinterpret_cast<decltype(&lm_ggml_backend_rpc_add_server)>(
            lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_add_server"));
        lm_ggml_backend_dev_t cpu = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
        if (start == nullptr || port_of == nullptr || add_server == nullptr || cpu == nullptr) {
            return;
        }
        // lives until the process ends, like the registry that lists its device
        // (static: still referenced at exit, so LeakSanitizer does not report it)
        static lm_ggml_backend_rpc_server_t server = nullptr;
        server = start("127.0.0.1:0", nullptr, 2, 1, &cpu);
        if (server == nullptr) {
            return;
        }
        const std::string endpoint = "127.0.0.1:" + std::to_string(port_of(server));
        lm_ggml_backend_reg_t remote = add_server(endpoint.c_str());
        if (remote != nullptr) {
            lm_ggml_backend_register(remote);
        }
    });
}

} // namespace opstest

// --rpc HOST:PORT[,HOST:PORT...]: the devices of RPC servers (lmggml's or
// llama.cpp's rpc-server) join the registry through the RPC plugin, so
// their layers can go there (every remote device, or those -d names, split
// by -ts); the scheduler moves activations.
#include <string>

#include "common.h"
#include "ggml-backend-impl.h"
#include "ggml-rpc.h"

namespace cli {

lmllm::Status add_rpc_servers(const std::string & list, std::vector<std::string> & devices,
                              const std::string & key_file) {
    lm_ggml_backend_load_all();
    lm_ggml_backend_reg_t rpc = lm_ggml_backend_reg_by_name("RPC");
    if (!key_file.empty()) {
        std::string key;
        if (lmllm::Status s = read_rpc_key_file(key_file, key); !s.ok()) return s;
        auto set_key = rpc ? reinterpret_cast<decltype(&lm_ggml_backend_rpc_set_auth_key)>(
                                 lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_set_auth_key"))
                           : nullptr;
        if (set_key == nullptr)
            return lmllm::Status::error("--rpc-auth-key: the RPC plugin (liblmggml-rpc) was not found");
        set_key(key.c_str());
    }
    auto add_server = rpc ? reinterpret_cast<decltype(&lm_ggml_backend_rpc_add_server)>(
                                lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_add_server"))
                          : nullptr;
    if (add_server == nullptr) return lmllm::Status::error("--rpc: the RPC plugin (liblmggml-rpc) was not found");
    size_t start = 0;
    while (start <= list.size()) {
        const size_t comma = list.find(',', start);
        const std::string endpoint = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        lm_ggml_backend_reg_t reg = add_server(endpoint.c_str());
        if (reg == nullptr) {
            std::string why = last_library_error(); // e.g. the server refused the key
            while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
            return lmllm::Status::error("--rpc: cannot reach an RPC server at '" + endpoint + "'" +
                                        (why.empty() ? "" : " (" + why + ")"));
        }
        // registering twice (a repeated endpoint) would list its devices twice
        bool known = false;
        for (size_t i = 0; i < lm_ggml_backend_reg_count(); i++) known |= lm_ggml_backend_reg_get(i) == reg;
        if (!known) lm_ggml_backend_register(reg);
        if (known) continue; // its devices are listed already
        for (size_t i = 0; i < lm_ggml_backend_reg_dev_count(reg); i++)
            devices.emplace_back(lm_ggml_backend_dev_name(lm_ggml_backend_reg_dev_get(reg, i)));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return lmllm::Status();
}

} // namespace cli

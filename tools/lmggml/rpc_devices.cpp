// --rpc HOST:PORT[,HOST:PORT...]: the devices of RPC servers (lmggml's or
// llama.cpp's rpc-server) join the registry through the RPC plugin, so
// -d RPC0 -ngl N can place layers there; the scheduler moves activations.
#include <string>

#include "common.h"
#include "ggml-backend-impl.h"
#include "ggml-rpc.h"

namespace cli {

lmllm::Status add_rpc_servers(const std::string & list, std::string & first_device) {
    lm_ggml_backend_load_all();
    lm_ggml_backend_reg_t rpc = lm_ggml_backend_reg_by_name("RPC");
    auto add_server = rpc ? reinterpret_cast<decltype(&lm_ggml_backend_rpc_add_server)>(
                                lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_add_server"))
                          : nullptr;
    if (add_server == nullptr) return lmllm::Status::error("--rpc: the RPC plugin (liblmggml-rpc) was not found");
    size_t start = 0;
    while (start <= list.size()) {
        const size_t comma = list.find(',', start);
        const std::string endpoint = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        lm_ggml_backend_reg_t reg = add_server(endpoint.c_str());
        if (reg == nullptr) return lmllm::Status::error("--rpc: cannot reach an RPC server at '" + endpoint + "'");
        // registering twice (a repeated endpoint) would list its devices twice
        bool known = false;
        for (size_t i = 0; i < lm_ggml_backend_reg_count(); i++) known |= lm_ggml_backend_reg_get(i) == reg;
        if (!known) lm_ggml_backend_register(reg);
        if (first_device.empty() && lm_ggml_backend_reg_dev_count(reg) > 0)
            first_device = lm_ggml_backend_dev_name(lm_ggml_backend_reg_dev_get(reg, 0));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return lmllm::Status();
}

} // namespace cli

// lmggml rpc-server: serves this machine's devices to RPC clients (lmggml's
// or llama.cpp's, protocol 7.0.0) through the RPC plugin. Binds to
// 127.0.0.1 unless told otherwise: the protocol has no authentication of
// its own (--auth-key adds lmggml's, which plain llama.cpp clients lack).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "common.h"
#include "ggml-backend.h"
#include "ggml-rpc.h"

namespace cli {

namespace {

bool is_rpc_device(lm_ggml_backend_dev_t d) {
    lm_ggml_backend_reg_t reg = lm_ggml_backend_dev_backend_reg(d);
    const std::string name = reg ? lm_ggml_backend_reg_name(reg) : "";
    return name.rfind("RPC", 0) == 0;
}

// -d NAME[,NAME...], or llama.cpp's default: every GPU, else the CPU
bool pick_devices(const std::string & list, std::vector<lm_ggml_backend_dev_t> & out, std::string & err) {
    if (!list.empty()) {
        size_t start = 0;
        while (start <= list.size()) {
            const size_t comma = list.find(',', start);
            const std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            lm_ggml_backend_dev_t d = lm_ggml_backend_dev_by_name(name.c_str());
            if (d == nullptr || is_rpc_device(d)) {
                err = "no local device named '" + name + "' (see lmggml devices)";
                return false;
            }
            out.push_back(d);
            if (comma == std::string::npos) {
                break;
            }
            start = comma + 1;
        }
        return true;
    }
    for (size_t i = 0; i < lm_ggml_backend_dev_count(); i++) {
        lm_ggml_backend_dev_t d = lm_ggml_backend_dev_get(i);
        if (lm_ggml_backend_dev_type(d) == LM_GGML_BACKEND_DEVICE_TYPE_GPU && !is_rpc_device(d)) {
            out.push_back(d);
        }
    }
    if (out.empty()) {
        lm_ggml_backend_dev_t cpu = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
        if (cpu != nullptr) {
            out.push_back(cpu);
        }
    }
    if (out.empty()) {
        err = "no device to serve";
        return false;
    }
    return true;
}

} // namespace

int cmd_rpc_server(int argc, char ** argv) {
    const std::string cmd = "rpc-server";
    std::string host = "127.0.0.1", devices, cache_dir, key_file;
    int32_t port = 50052;
    int32_t threads = (int32_t) std::max(1u, std::thread::hardware_concurrency());
    ArgParser p(cmd, "rpc-server [options]",
                "Serves this machine's devices over llama.cpp's RPC protocol (7.0.0) to lmggml and llama.cpp clients.\n"
                "Every message is checked before use; a bad one closes that connection only. The protocol has no\n"
                "authentication: bind to 127.0.0.1 (the default) or a trusted network only, or require a key\n"
                "(--auth-key, lmggml clients only; messages are still not encrypted).");
    p.option({"-H", "--host"}, &host, "HOST", "address to bind (default 127.0.0.1)");
    p.option({"-p", "--port"}, &port, "PORT", "port to listen on (default 50052)");
    p.option({"-d", "--device"}, &devices, "NAMES", "comma-separated devices to serve (default: GPUs, else the CPU)");
    p.option({"-t", "--threads"}, &threads, "N", "threads of the CPU backend (default: all cores)");
    p.option({"-c", "--cache"}, &cache_dir, "DIR", "directory for the SET_TENSOR_HASH cache of large tensors");
    p.option({"--auth-key"}, &key_file, "FILE",
             "clients must prove they know the key in FILE (else env LMGGML_RPC_AUTH_KEY)");
    bool help = false;
    if (lmllm::Status s = p.parse(argc, argv, 2, help); !s.ok())
        return fail(cmd, s.message() + " (see lmggml rpc-server --help)");
    if (help) {
        std::fputs(p.help_text().c_str(), stdout);
        return 0;
    }
    if (port < 1 || port > 65535) return fail(cmd, "port " + std::to_string(port) + " out of range (1..65535)");
    if (threads < 1) return fail(cmd, "-t must be at least 1");
    setup_logging(true); // connection events and refusals are the server's log
    lm_ggml_backend_load_all();

    std::string key;
    if (!key_file.empty()) {
        if (lmllm::Status s = read_rpc_key_file(key_file, key); !s.ok()) return fail(cmd, s.message());
    } else if (const char * env = std::getenv("LMGGML_RPC_AUTH_KEY"); env != nullptr) {
        key = env;
    }
    lm_ggml_backend_reg_t rpc = lm_ggml_backend_reg_by_name("RPC");
    auto start = rpc ? reinterpret_cast<decltype(&lm_ggml_backend_rpc_server_start_auth)>(
                           lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_server_start_auth"))
                     : nullptr;
    if (start == nullptr) return fail(cmd, "the RPC plugin (liblmggml-rpc) was not found");
    std::vector<lm_ggml_backend_dev_t> devs;
    std::string err;
    if (!pick_devices(devices, devs, err)) return fail(cmd, err);

    if (host != "127.0.0.1" && host != "localhost" && host != "::1" && key.empty()) {
        std::fprintf(stderr,
                     "warning: serving on %s: anyone who can reach it can use these devices "
                     "(the protocol has no authentication)\n",
                     host.c_str());
    } else if (!key.empty() && host != "127.0.0.1" && host != "localhost" && host != "::1") {
        std::fprintf(stderr, "note: clients must prove the key; messages are not encrypted (use a tunnel across "
                             "untrusted networks)\n");
    }
    std::printf("lmggml rpc-server, protocol %d.%d.%d, on %s:%d\n", LM_RPC_PROTO_MAJOR_VERSION,
                LM_RPC_PROTO_MINOR_VERSION, LM_RPC_PROTO_PATCH_VERSION, host.c_str(), port);
    std::printf("  cache: %s\n", cache_dir.empty() ? "n/a" : cache_dir.c_str());
    std::printf("  auth: %s\n", key.empty()        ? "none"
                                : key_file.empty() ? "key from LMGGML_RPC_AUTH_KEY"
                                                   : "key from file");
    for (size_t i = 0; i < devs.size(); i++) {
        size_t free = 0, total = 0;
        lm_ggml_backend_dev_memory(devs[i], &free, &total);
        std::printf("  device %zu: %s (%s), %s free / %s\n", i, lm_ggml_backend_dev_name(devs[i]),
                    lm_ggml_backend_dev_description(devs[i]), format_bytes(free).c_str(), format_bytes(total).c_str());
    }
    std::fflush(stdout);
    const std::string endpoint =
        (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
    if (start(endpoint.c_str(), cache_dir.empty() ? nullptr : cache_dir.c_str(), (size_t) threads, devs.size(),
              devs.data(), key.c_str()) == nullptr)
        return fail(cmd, "could not serve on " + endpoint);
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1)); // serves until the process ends
}

} // namespace cli

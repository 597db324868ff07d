// The key file of the RPC authentication (lmggml rpc-server --auth-key,
// --rpc-auth-key on the model commands): a file keeps the key out of `ps`.
#include <cstdio>
#include <string>
#include <sys/stat.h>

#include "common.h"

namespace cli {

lmllm::Status read_rpc_key_file(const std::string & path, std::string & key) {
    auto text = read_text_file(path);
    if (!text.ok()) return lmllm::Status::error("auth key: " + text.status().message());
    key = text.value();
    // `echo secret > file` leaves a newline that is not part of the key
    while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ' || key.back() == '\t'))
        key.pop_back();
    if (key.empty()) return lmllm::Status::error("auth key file '" + path + "' is empty");
    if (key.find('\0') != std::string::npos)
        return lmllm::Status::error("auth key file '" + path + "' holds a NUL byte");
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
        std::fprintf(stderr, "warning: auth key file '%s' is accessible by other users (chmod 600 it)\n", path.c_str());
    if (key.size() < 16)
        std::fprintf(stderr,
                     "warning: the auth key has %zu bytes; use 16 or more random ones "
                     "(e.g. head -c 32 /dev/urandom | base64 > keyfile)\n",
                     key.size());
    return lmllm::Status();
}

} // namespace cli

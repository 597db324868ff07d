// Reading llama.cpp's imatrix.dat (see imatrix.h).
#include "imatrix.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

namespace cli {

using lmllm::Status;

lmllm::Result<std::map<std::string, std::vector<float>>> read_imatrix(const std::string & path) {
    std::unique_ptr<std::FILE, int (*)(std::FILE *)> f(std::fopen(path.c_str(), "rb"), std::fclose);
    if (!f) return Status::error("cannot open '" + path + "': " + std::strerror(errno));
    auto bad = [&](const std::string & what) {
        return Status::error("'" + path + "' is not an imatrix.dat file: " + what);
    };
    auto read_i32 = [&](int32_t & v) { return std::fread(&v, sizeof v, 1, f.get()) == 1; };

    char magic[4] = {};
    if (std::fread(magic, 1, 4, f.get()) == 4 && std::memcmp(magic, "GGUF", 4) == 0)
        return Status::error("'" + path +
                             "' is an imatrix in GGUF form; only the imatrix.dat form is read "
                             "(llama-imatrix --output-format dat)");
    std::rewind(f.get());

    int32_t n_entries = 0;
    if (!read_i32(n_entries) || n_entries <= 0 || n_entries > 1000000) return bad("bad entry count");
    std::map<std::string, std::vector<float>> out;
    for (int32_t i = 0; i < n_entries; i++) {
        int32_t len = 0, ncall = 0, nval = 0;
        if (!read_i32(len) || len <= 0 || len > 4096) return bad("entry " + std::to_string(i) + ": bad name length");
        std::string name(size_t(len), '\0');
        if (std::fread(name.data(), 1, name.size(), f.get()) != name.size()) return bad("truncated");
        if (!read_i32(ncall) || !read_i32(nval) || ncall < 0 || nval <= 0 || nval > (1 << 28))
            return bad("entry '" + name + "': bad sizes");
        std::vector<float> v(static_cast<size_t>(nval));
        if (std::fread(v.data(), sizeof(float), v.size(), f.get()) != v.size())
            return bad("entry '" + name + "' truncated");
        for (float & x : v) {
            if (!std::isfinite(x) || x < 0.0f) return bad("entry '" + name + "' holds a negative or non-finite value");
            if (ncall > 0) x /= float(ncall);
        }
        out[name] = std::move(v);
    }
    return out;
}

} // namespace cli

#pragma once
// Test helpers for GGUF: log capture, temporary files, and an independent
// byte-level GGUF encoder (written from the file format, not from the
// library) used both as the oracle for the writer and to craft corrupt files
// field by field.

#include "ggml.h"
#include "gguf.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

namespace gguf_test {

// Captures log lines while alive; restores the default logger on exit.
class LogCapture {
public:
    LogCapture() { lm_ggml_log_set(&LogCapture::callback, this); }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
    LogCapture(const LogCapture &) = delete;
    LogCapture & operator=(const LogCapture &) = delete;

    int errors() const { return n_errors; }
    const std::string & text() const { return all; }
    void clear() {
        n_errors = 0;
        all.clear();
    }

private:
    static void callback(enum lm_ggml_log_level level, const char * text, void * user) {
        auto * self = static_cast<LogCapture *>(user);
        if (level == LM_GGML_LOG_LEVEL_ERROR) {
            self->n_errors++;
        }
        self->all += text;
    }
    int n_errors = 0;
    std::string all;
};

// A per-test scratch file path under the system temp dir, removed on exit.
class TempFile {
public:
    explicit TempFile(const std::string & tag) {
        const ::testing::TestInfo * info = ::testing::UnitTest::GetInstance()->current_test_info();
        const char * dir = std::getenv("TMPDIR");
        path_ = std::string(dir && *dir ? dir : "/tmp") + "/lmggml_gguf_" + std::to_string(::getpid()) + "_" +
                (info ? std::string(info->test_suite_name()) + "_" + info->name() : "x") + "_" + tag + ".gguf";
    }
    ~TempFile() { std::remove(path_.c_str()); }
    const std::string & path() const { return path_; }
    const char * c_str() const { return path_.c_str(); }

private:
    std::string path_;
};

inline bool write_file(const std::string & path, const std::vector<uint8_t> & bytes) {
    FILE * f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    const bool ok = bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    return std::fclose(f) == 0 && ok;
}

inline std::vector<uint8_t> read_file(const std::string & path) {
    std::vector<uint8_t> out;
    FILE * f = std::fopen(path.c_str(), "rb");
    if (!f) return out;
    uint8_t buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.insert(out.end(), buf, buf + n);
    std::fclose(f);
    return out;
}

// Little-endian byte builder; every field is written raw, unvalidated, so
// tests can write any value (negative counts, bogus types, lying lengths).
class Enc {
public:
    std::vector<uint8_t> b;
    std::map<std::string, size_t> at; // named field offsets

    size_t size() const { return b.size(); }
    void mark(const std::string & name) { at[name] = b.size(); }

    template <typename T> void put(T v) { raw(&v, sizeof(T)); }
    void u8(uint8_t v) { put(v); }
    void u32(uint32_t v) { put(v); }
    void i32(int32_t v) { put(v); }
    void u64(uint64_t v) { put(v); }
    void i64(int64_t v) { put(v); }
    void raw(const void * p, size_t n) {
        const size_t at = b.size();
        b.resize(at + n);
        if (n) std::memcpy(b.data() + at, p, n);
    }
    void str(const std::string & s) {
        u64(s.size());
        raw(s.data(), s.size());
    }
    void pad(size_t a) {
        while (b.size() % a) b.push_back(0);
    }

    // Overwrites a field in place (for corruptions).
    template <typename T> void patch(size_t off, T v) { std::memcpy(b.data() + off, &v, sizeof(T)); }
};

// The reference content used by many tests: a small valid GGUF v3 file with
// one key of every scalar type, arrays of several element types (strings
// included) and three tensors (F32, F16, Q8_0) with known bytes.
struct Reference {
    std::vector<uint8_t> bytes;
    std::map<std::string, size_t> at; // "n_tensors", "n_kv", "kv.<key>", "kv.<key>.type",
                                      // "kv.<key>.value", "ti.<name>", "ti.<name>.n_dims",
                                      // "ti.<name>.ne0", "ti.<name>.type", "ti.<name>.offset",
                                      // "infos_end", "data", "data.<name>", "data_end"
    size_t data_offset = 0;
};

// Options to bend the reference when building variants.
struct RefOptions {
    uint32_t version = 3;
    bool duplicate_key = false;    // repeat "u8" at the end
    bool duplicate_tensor = false; // name the third tensor like the first
    uint32_t alignment = 0;        // 0: no general.alignment key
};

// Bytes of tensor data, deterministic per tensor.
inline std::vector<uint8_t> tensor_payload(const std::string & name, size_t n) {
    std::vector<uint8_t> v(n);
    uint32_t h = 2166136261u;
    for (char c : name) h = (h ^ (uint8_t) c) * 16777619u;
    for (size_t i = 0; i < n; ++i) {
        h = h * 1103515245u + 12345u;
        v[i] = (uint8_t) (h >> 16);
    }
    return v;
}

struct RefTensor {
    std::string name;
    int32_t type;
    std::vector<int64_t> ne;
    size_t nbytes;
};

// F32 (4, 3): 48 bytes; F16 (8): 16 bytes; Q8_0 (32, 2): 2 blocks of 34 = 68 bytes
// padded sizes with alignment 32: 64, 32, 96 (last tensor: 68 -> trailing pad 28)
inline std::vector<RefTensor> reference_tensors() {
    return {
        {"tok_embd.weight", 0, {4, 3}, 48},
        {"norm.weight", 1, {8}, 16},
        {"blk.0.q8", 8, {32, 2}, 68},
    };
}

Reference build_reference(const RefOptions & opt = {});

} // namespace gguf_test

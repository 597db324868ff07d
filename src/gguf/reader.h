#pragma once
// A bounds-checked little-endian reader over a file or a memory buffer.
// Every read is checked against the bytes that remain before anything is
// allocated, so a length field can never make us read or reserve more than
// the input holds. The first failure is kept (message + byte offset) and all
// later reads fail, so a parse reports exactly one cause.

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

namespace lmggml::gguf {

class Reader {
public:
    // Reads from memory; [data, data + size) must outlive the reader.
    Reader(const void * data, uint64_t size) : mem_(static_cast<const uint8_t *>(data)), size_(size) {}

    // Reads from an open file of `size` bytes, starting at its current position 0.
    Reader(FILE * file, uint64_t size) : file_(file), size_(size) {}

    Reader(const Reader &) = delete;
    Reader & operator=(const Reader &) = delete;

    uint64_t offset() const { return pos_; }
    uint64_t size() const { return size_; }
    uint64_t remaining() const { return size_ - pos_; }
    bool failed() const { return failed_; }

    const std::string & error() const { return error_; }
    uint64_t error_offset() const { return error_offset_; }

    // Records the first failure; returns false so callers can `return fail(...)`.
    __attribute__((format(printf, 3, 4))) bool fail_at(uint64_t at, const char * fmt, ...) {
        if (!failed_) {
            char buf[384];
            va_list args;
            va_start(args, fmt);
            std::vsnprintf(buf, sizeof(buf), fmt, args);
            va_end(args);
            failed_ = true;
            error_ = buf;
            error_offset_ = at;
        }
        return false;
    }

    // Copies n bytes; fails (naming `what`) when fewer remain.
    bool read_bytes(void * dst, uint64_t n, const char * what) {
        if (failed_) {
            return false;
        }
        if (n > remaining()) {
            return fail_at(pos_, "%s: needs %llu bytes but only %llu remain in the file", what, (unsigned long long) n,
                           (unsigned long long) remaining());
        }
        if (n == 0) {
            return true;
        }
        if (mem_ != nullptr) {
            std::memcpy(dst, mem_ + pos_, n);
        } else if (std::fread(dst, 1, n, file_) != n) {
            return fail_at(pos_, "%s: read error", what);
        }
        pos_ += n;
        return true;
    }

    template <typename T> bool read(T & v, const char * what) {
        static_assert(std::is_trivially_copyable_v<T>);
        return read_bytes(&v, sizeof(T), what);
    }

    // A GGUF string: u64 length then that many bytes (no terminator).
    bool read_string(std::string & s, const char * what) {
        const uint64_t at = pos_;
        uint64_t len = 0;
        if (!read(len, what)) {
            return false;
        }
        if (len > remaining()) {
            return fail_at(at, "%s: string length %llu exceeds the %llu bytes left in the file", what,
                           (unsigned long long) len, (unsigned long long) remaining());
        }
        s.resize(len);
        return read_bytes(s.data(), len, what);
    }

    // Moves to an absolute offset <= size().
    bool seek(uint64_t off, const char * what) {
        if (failed_) {
            return false;
        }
        if (off > size_) {
            return fail_at(pos_, "%s: offset %llu is past the end of the file (%llu bytes)", what,
                           (unsigned long long) off, (unsigned long long) size_);
        }
        if (mem_ == nullptr && off != pos_ && fseeko(file_, (off_t) off, SEEK_SET) != 0) {
            return fail_at(pos_, "%s: cannot seek to offset %llu", what, (unsigned long long) off);
        }
        pos_ = off;
        return true;
    }

private:
    const uint8_t * mem_ = nullptr;
    FILE * file_ = nullptr;
    uint64_t size_ = 0;
    uint64_t pos_ = 0;

    bool failed_ = false;
    std::string error_;
    uint64_t error_offset_ = 0;
};

} // namespace lmggml::gguf

#pragma once
// Read-only access to a model file: a memory mapping (zero-copy weights on
// host devices) or positioned reads (use_mmap = false, or uploads).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "lmllm/status.h"

namespace lmllm {

class MappedFile {
public:
    // Maps the whole file read-only. Errors name the path and the system error.
    static Result<std::unique_ptr<MappedFile>> map(const std::string & path);
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile & operator=(const MappedFile &) = delete;

    const uint8_t * data() const { return static_cast<const uint8_t *>(addr_); }
    void * mutable_data() const { return addr_; } // PROT_READ: only for buffer wrapping, never written
    size_t size() const { return size_; }
    // Drops this process's pages of bytes [offset, offset + n) (whole pages
    // inside it): for weights copied elsewhere. The bytes stay readable.
    void release(uint64_t offset, size_t n) const;

private:
    MappedFile(void * addr, size_t size) : addr_(addr), size_(size) {}
    void * addr_;
    size_t size_;
};

// An open file read with pread; closed on destruction.
class FileReader {
public:
    static Result<std::unique_ptr<FileReader>> open(const std::string & path);
    ~FileReader();
    FileReader(const FileReader &) = delete;
    FileReader & operator=(const FileReader &) = delete;

    uint64_t size() const { return size_; }
    // Reads exactly n bytes at offset into dst.
    Status read_at(uint64_t offset, void * dst, size_t n) const;

private:
    FileReader(int fd, uint64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
    int fd_;
    uint64_t size_;
    std::string path_;
};

} // namespace lmllm

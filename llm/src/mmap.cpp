#include "mmap.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lmllm {

namespace {

std::string sys_error(const std::string & what, const std::string & path) {
    return what + " '" + path + "': " + std::strerror(errno);
}

// Opens path read-only and returns (fd, size); fd is -1 on failure.
Status open_ro(const std::string & path, int & fd, uint64_t & size) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return Status::error(sys_error("cannot open", path));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        Status s = Status::error(sys_error("cannot stat", path));
        ::close(fd);
        fd = -1;
        return s;
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        fd = -1;
        return Status::error("not a regular file: '" + path + "'");
    }
    size = static_cast<uint64_t>(st.st_size);
    return {};
}

} // namespace

void MappedFile::release(uint64_t offset, size_t n) const {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t begin = (offset + page - 1) / page * page;
    const uint64_t end = std::min<uint64_t>(offset + n, size_) / page * page;
    if (begin < end) {
        // advice only: a failure just leaves the pages resident
        (void) ::madvise(static_cast<uint8_t *>(addr_) + begin, end - begin, MADV_DONTNEED);
    }
}

Result<std::unique_ptr<MappedFile>> MappedFile::map(const std::string & path) {
    int fd = -1;
    uint64_t size = 0;
    if (Status s = open_ro(path, fd, size); !s.ok()) {
        return s;
    }
    if (size == 0) {
        ::close(fd);
        return Status::error("cannot map empty file '" + path + "'");
    }
    void * addr = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    Status map_err = addr == MAP_FAILED ? Status::error(sys_error("cannot mmap", path)) : Status();
    ::close(fd); // the mapping keeps the file alive
    if (!map_err.ok()) {
        return map_err;
    }
    // Weights are read front to back once per token: ask for read-ahead.
    (void) ::posix_madvise(addr, size, POSIX_MADV_WILLNEED);
    return std::unique_ptr<MappedFile>(new MappedFile(addr, size));
}

MappedFile::~MappedFile() {
    if (addr_ != nullptr) {
        ::munmap(addr_, size_);
    }
}

Result<std::unique_ptr<FileReader>> FileReader::open(const std::string & path) {
    int fd = -1;
    uint64_t size = 0;
    if (Status s = open_ro(path, fd, size); !s.ok()) {
        return s;
    }
    return std::unique_ptr<FileReader>(new FileReader(fd, size, path));
}

FileReader::~FileReader() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

Status FileReader::read_at(uint64_t offset, void * dst, size_t n) const {
    if (offset > size_ || n > size_ - offset) {
        return Status::error("read past the end of '" + path_ + "'");
    }
    auto * out = static_cast<uint8_t *>(dst);
    while (n > 0) {
        ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return Status::error(got == 0 ? "unexpected end of '" + path_ + "'" : sys_error("cannot read", path_));
        }
        out += got;
        offset += static_cast<uint64_t>(got);
        n -= static_cast<size_t>(got);
    }
    return {};
}

} // namespace lmllm

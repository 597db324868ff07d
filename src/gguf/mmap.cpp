// Read-only memory mapping of a whole file (POSIX mmap), errors as values.

#include "gguf-loader.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lmggml::gguf {

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string & path) {
    using R = Result<std::shared_ptr<const MappedFile>>;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return R::failure("cannot open '" + path + "': " + std::strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return R::failure("'" + path + "' is not a regular file");
    }
    if (st.st_size == 0) {
        ::close(fd);
        return R::failure("'" + path + "' is empty");
    }
    const size_t size = (size_t) st.st_size;
    // MAP_SHARED + PROT_READ: pages come from the page cache, shared between
    // processes that map the same model, and are never written.
    void * addr = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    const int err = errno;
    ::close(fd); // the mapping keeps its own reference to the file
    if (addr == MAP_FAILED) {
        return R::failure("cannot map '" + path + "': " + std::strerror(err));
    }
    std::unique_ptr<MappedFile> owner;
    try {
        owner.reset(new MappedFile(addr, size, path));
    } catch (const std::bad_alloc &) {
        munmap(addr, size);
        return R::failure("out of memory mapping '" + path + "'");
    }
    try {
        return R(std::shared_ptr<const MappedFile>(std::move(owner)));
    } catch (const std::bad_alloc &) {
        return R::failure("out of memory mapping '" + path + "'"); // owner unmaps
    }
}

MappedFile::~MappedFile() {
    if (addr_ != nullptr) {
        munmap(addr_, size_);
    }
}

} // namespace lmggml::gguf

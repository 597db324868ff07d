// The runner's file access (llm/src/mmap.h): the read-only mapping behind
// zero-copy weights and the positioned reads of use_mmap = false. Errors
// are values naming the file; nothing past the end is ever read.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "mmap.h"
#include "test_paths.h"

namespace {

// A scratch file holding bytes, removed by the destructor.
struct ScratchFile {
    std::string path;
    ScratchFile(const std::string & name, const std::vector<uint8_t> & bytes) : path(lmtest_tmp_path(name)) {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    ~ScratchFile() { std::remove(path.c_str()); }
};

std::vector<uint8_t> pattern(size_t n) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; i++) {
        v[i] = static_cast<uint8_t>(i * 131 + 7);
    }
    return v;
}

bool mentions(const lmllm::Status & s, const std::string & part) { return s.message().find(part) != std::string::npos; }

} // namespace

TEST(ModelFile, MapErrorsAreValues) {
    auto missing = lmllm::MappedFile::map("/nonexistent/model.gguf");
    ASSERT_FALSE(missing.ok());
    EXPECT_TRUE(mentions(missing.status(), "/nonexistent/model.gguf")) << missing.status().message();
    ScratchFile empty("empty.bin", {});
    auto e = lmllm::MappedFile::map(empty.path);
    ASSERT_FALSE(e.ok());
    EXPECT_TRUE(mentions(e.status(), "empty")) << e.status().message();
    auto dir = lmllm::MappedFile::map("/tmp");
    ASSERT_FALSE(dir.ok());
    EXPECT_TRUE(mentions(dir.status(), "not a regular file")) << dir.status().message();
}

TEST(ModelFile, MapsTheWholeFile) {
    const std::vector<uint8_t> bytes = pattern(3 * 4096 + 123);
    ScratchFile f("whole.bin", bytes);
    auto m = lmllm::MappedFile::map(f.path);
    ASSERT_TRUE(m.ok()) << m.status().message();
    const lmllm::MappedFile & map = *m.value();
    ASSERT_EQ(map.size(), bytes.size());
    EXPECT_EQ(std::memcmp(map.data(), bytes.data(), bytes.size()), 0);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(map.data()) % 4096, 0u); // page aligned
    // releasing pages (after a copy) leaves the bytes readable, from the page cache
    map.release(100, 2 * 4096 + 5);
    map.release(0, map.size());
    EXPECT_EQ(std::memcmp(map.data(), bytes.data(), bytes.size()), 0);
}

TEST(ModelFile, ReaderReadsExactRanges) {
    const std::vector<uint8_t> bytes = pattern(1000);
    ScratchFile f("reader.bin", bytes);
    auto r = lmllm::FileReader::open(f.path);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const lmllm::FileReader & reader = *r.value();
    EXPECT_EQ(reader.size(), bytes.size());
    std::vector<uint8_t> got(300, 0);
    ASSERT_TRUE(reader.read_at(700, got.data(), got.size()).ok());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), bytes.begin() + 700));
    EXPECT_TRUE(reader.read_at(1000, got.data(), 0).ok());
    // past the end: an error naming the file, and dst untouched
    std::vector<uint8_t> guard(301, 0xEE);
    lmllm::Status past = reader.read_at(700, guard.data(), guard.size());
    EXPECT_FALSE(past.ok());
    EXPECT_TRUE(mentions(past, f.path)) << past.message();
    EXPECT_FALSE(reader.read_at(UINT64_MAX, guard.data(), 1).ok());
    EXPECT_EQ(guard, std::vector<uint8_t>(301, 0xEE));
    EXPECT_FALSE(lmllm::FileReader::open("/nonexistent/model.gguf").ok());
}

// Utilities of the public surface: processor clock, fopen, object dumps,
// per-element type sizes and file type -> tensor type; expected values are
// worked out from ggml's layouts, not taken from the library.

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdarg>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ggml.h"

namespace {

struct LogCapture {
    static inline std::vector<std::pair<lm_ggml_log_level, std::string>> lines;
    static void cb(enum lm_ggml_log_level level, const char * text, void *) { lines.emplace_back(level, text); }
    LogCapture() {
        lines.clear();
        lm_ggml_log_set(cb, nullptr);
    }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
    static size_t errors() {
        size_t n = 0;
        for (auto & l : lines) n += l.first == LM_GGML_LOG_LEVEL_ERROR;
        return n;
    }
};

std::string fmt(const char * f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char * f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof(buf), f, ap);
    va_end(ap);
    return buf;
}

} // namespace

TEST(Utils, CyclesFollowTheProcessorClock) {
    EXPECT_EQ(lm_ggml_cycles_per_ms(), (int64_t) (CLOCKS_PER_SEC / 1000));
    const int64_t c0 = lm_ggml_cycles();
    const std::clock_t k0 = std::clock();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    volatile double sink = 0;
    while (std::clock() - k0 < CLOCKS_PER_SEC / 50 && std::chrono::steady_clock::now() < deadline) {
        for (int i = 0; i < 10000; i++) sink = sink + i * 0.5;
    }
    const int64_t c1 = lm_ggml_cycles();
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no processor time in 5 s";
    EXPECT_GE(c1 - c0, 20 * lm_ggml_cycles_per_ms()); // >= 20 ms of processor time
    EXPECT_LT(c1 - c0, 60 * 1000 * lm_ggml_cycles_per_ms());
}

TEST(Utils, FopenOpensUtf8Paths) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path();
    const std::string name = (dir / "lmggml-fopen-\xc3\xbc-\xe6\xb5\x8b.txt").string();
    FILE * f = lm_ggml_fopen(name.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_GE(std::fputs("hello", f), 0);
    std::fclose(f);
    f = lm_ggml_fopen(name.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    char buf[16] = {};
    EXPECT_EQ(std::fread(buf, 1, sizeof(buf), f), 5u);
    EXPECT_STREQ(buf, "hello");
    std::fclose(f);
    std::filesystem::remove(name);

    errno = 0;
    EXPECT_EQ(lm_ggml_fopen((dir / "lmggml-no-such-dir/x").string().c_str(), "rb"), nullptr);
    EXPECT_EQ(errno, ENOENT);

    LogCapture log;
    EXPECT_EQ(lm_ggml_fopen(nullptr, "rb"), nullptr);
    EXPECT_EQ(lm_ggml_fopen(name.c_str(), nullptr), nullptr);
    EXPECT_EQ(LogCapture::errors(), 2u);
}

// ggml's object header: {size_t offs; size_t size; next; enum type; char padding[4]}
TEST(Utils, PrintObjectsWalksTheArenaInOrder) {
    constexpr size_t kHeader = 3 * sizeof(size_t) + 8;
    ASSERT_EQ(kHeader, 32u);
    lm_ggml_init_params ip = {1 << 20, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    ASSERT_NE(ctx, nullptr);
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 10);   // 40 data bytes
    lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, 3, 3); // 18
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    ASSERT_TRUE(a && b && g);
    char * base = static_cast<char *>(lm_ggml_get_mem_buffer(ctx));

    // expected walk: headers and payloads back to back, payloads padded to 16
    const size_t off_a = kHeader;
    const size_t size_a = LM_GGML_PAD(sizeof(lm_ggml_tensor) + 40, 16);
    const size_t off_b = off_a + size_a + kHeader;
    const size_t size_b = LM_GGML_PAD(sizeof(lm_ggml_tensor) + 18, 16);
    const size_t off_g = off_b + size_b + kHeader;
    const size_t size_g = lm_ggml_graph_overhead() - kHeader;
    EXPECT_EQ(base + off_a, (char *) a);
    EXPECT_EQ(base + off_b, (char *) b);
    EXPECT_EQ(base + off_g, (char *) g);
    EXPECT_EQ(lm_ggml_used_mem(ctx), off_g + size_g);

    LogCapture log;
    lm_ggml_print_objects(ctx);
    const std::vector<std::string> expected = {
        fmt("lm_ggml_print_objects: objects in context %p:\n", (void *) ctx),
        fmt(" - lm_ggml_object: type = 0, offset = %zu, size = %zu, next = %p\n", off_a, size_a,
            (void *) (base + off_b - kHeader)),
        fmt(" - lm_ggml_object: type = 0, offset = %zu, size = %zu, next = %p\n", off_b, size_b,
            (void *) (base + off_g - kHeader)),
        fmt(" - lm_ggml_object: type = 1, offset = %zu, size = %zu, next = %p\n", off_g, size_g, (void *) nullptr),
        "lm_ggml_print_objects: --- end ---\n",
    };
    ASSERT_EQ(LogCapture::lines.size(), expected.size());
    for (size_t i = 0; i < expected.size(); i++) {
        EXPECT_EQ(LogCapture::lines[i].first, LM_GGML_LOG_LEVEL_INFO);
        EXPECT_EQ(LogCapture::lines[i].second, expected[i]) << i;
    }

    // the header just before a tensor is its object
    LogCapture::lines.clear();
    lm_ggml_print_object(reinterpret_cast<const lm_ggml_object *>((char *) b - kHeader));
    ASSERT_EQ(LogCapture::lines.size(), 1u);
    EXPECT_EQ(LogCapture::lines[0].second, expected[2]);

    LogCapture::lines.clear();
    lm_ggml_print_object(nullptr);
    lm_ggml_print_objects(nullptr);
    EXPECT_EQ(LogCapture::errors(), 2u);
    lm_ggml_free(ctx);
}

TEST(Utils, PrintObjectsOfAnEmptyContext) {
    lm_ggml_init_params ip = {4096, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    ASSERT_NE(ctx, nullptr);
    LogCapture log;
    lm_ggml_print_objects(ctx);
    ASSERT_EQ(LogCapture::lines.size(), 2u); // header and end, nothing between
    lm_ggml_free(ctx);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(Utils, TypeSizefIsBytesPerElement) {
    // block bytes / block elements, from the block layouts
    EXPECT_DOUBLE_EQ(lm_ggml_type_sizef(LM_GGML_TYPE_F32), 4.0);
    EXPECT_DOUBLE_EQ(lm_ggml_type_sizef(LM_GGML_TYPE_F16), 2.0);
    EXPECT_DOUBLE_EQ(lm_ggml_type_sizef(LM_GGML_TYPE_BF16), 2.0);
    EXPECT_DOUBLE_EQ(lm_ggml_type_sizef(LM_GGML_TYPE_I8), 1.0);
    EXPECT_DOUBLE_EQ(lm_ggml_type_sizef(LM_GGML_TYPE_I64), 8.0);
    EXPECT_DOUBLE_EQ(lm_ggml_type_sizef(LM_GGML_TYPE_Q4_0), 18.0 / 32); // fp16 d + 16 nibble bytes
    EXPECT_DOUBLE_EQ(lm_ggml_type_sizef(LM_GGML_TYPE_Q8_0), 34.0 / 32); // fp16 d + 32 bytes
    EXPECT_DOUBLE_EQ(lm_ggml_type_sizef(LM_GGML_TYPE_Q4_K), 144.0 / 256);
    EXPECT_DOUBLE_EQ(lm_ggml_type_sizef(LM_GGML_TYPE_Q6_K), 210.0 / 256);
    EXPECT_DOUBLE_EQ(lm_ggml_type_sizef(LM_GGML_TYPE_IQ4_NL), 18.0 / 32);

    LogCapture log;
    EXPECT_EQ(lm_ggml_type_sizef(LM_GGML_TYPE_COUNT), 0.0);
    EXPECT_EQ(lm_ggml_type_sizef((enum lm_ggml_type) 4), 0.0); // a removed type (Q4_2)
    EXPECT_EQ(lm_ggml_type_sizef((enum lm_ggml_type) - 1), 0.0);
    EXPECT_EQ(LogCapture::errors(), 3u);
}
#pragma GCC diagnostic pop

TEST(Utils, FtypeToTypeCoversEveryFileType) {
    const std::pair<lm_ggml_ftype, lm_ggml_type> table[] = {
        {LM_GGML_FTYPE_ALL_F32, LM_GGML_TYPE_F32},          {LM_GGML_FTYPE_MOSTLY_F16, LM_GGML_TYPE_F16},
        {LM_GGML_FTYPE_MOSTLY_BF16, LM_GGML_TYPE_BF16},     {LM_GGML_FTYPE_MOSTLY_Q4_0, LM_GGML_TYPE_Q4_0},
        {LM_GGML_FTYPE_MOSTLY_Q4_1, LM_GGML_TYPE_Q4_1},     {LM_GGML_FTYPE_MOSTLY_Q5_0, LM_GGML_TYPE_Q5_0},
        {LM_GGML_FTYPE_MOSTLY_Q5_1, LM_GGML_TYPE_Q5_1},     {LM_GGML_FTYPE_MOSTLY_Q8_0, LM_GGML_TYPE_Q8_0},
        {LM_GGML_FTYPE_MOSTLY_Q2_K, LM_GGML_TYPE_Q2_K},     {LM_GGML_FTYPE_MOSTLY_Q3_K, LM_GGML_TYPE_Q3_K},
        {LM_GGML_FTYPE_MOSTLY_Q4_K, LM_GGML_TYPE_Q4_K},     {LM_GGML_FTYPE_MOSTLY_Q5_K, LM_GGML_TYPE_Q5_K},
        {LM_GGML_FTYPE_MOSTLY_Q6_K, LM_GGML_TYPE_Q6_K},     {LM_GGML_FTYPE_MOSTLY_IQ2_XXS, LM_GGML_TYPE_IQ2_XXS},
        {LM_GGML_FTYPE_MOSTLY_IQ2_XS, LM_GGML_TYPE_IQ2_XS}, {LM_GGML_FTYPE_MOSTLY_IQ3_XXS, LM_GGML_TYPE_IQ3_XXS},
        {LM_GGML_FTYPE_MOSTLY_IQ1_S, LM_GGML_TYPE_IQ1_S},   {LM_GGML_FTYPE_MOSTLY_IQ1_M, LM_GGML_TYPE_IQ1_M},
        {LM_GGML_FTYPE_MOSTLY_IQ4_NL, LM_GGML_TYPE_IQ4_NL}, {LM_GGML_FTYPE_MOSTLY_IQ4_XS, LM_GGML_TYPE_IQ4_XS},
        {LM_GGML_FTYPE_MOSTLY_IQ3_S, LM_GGML_TYPE_IQ3_S},   {LM_GGML_FTYPE_MOSTLY_IQ2_S, LM_GGML_TYPE_IQ2_S},
    };
    LogCapture log;
    for (const auto & [ft, t] : table) {
        EXPECT_EQ(lm_ggml_ftype_to_lm_ggml_type(ft), t) << (int) ft;
    }
    EXPECT_EQ(LogCapture::errors(), 0u);
    // no single tensor type: COUNT, with one error each (ggml aborts)
    const int none[] = {LM_GGML_FTYPE_UNKNOWN, LM_GGML_FTYPE_MOSTLY_Q4_1_SOME_F16, 5, 6, 25, 1000};
    for (int ft : none) {
        EXPECT_EQ(lm_ggml_ftype_to_lm_ggml_type((enum lm_ggml_ftype) ft), LM_GGML_TYPE_COUNT) << ft;
    }
    EXPECT_EQ(LogCapture::errors(), std::size(none));
}

// include/ggml-impl.h and include/ggml-threading.h as a plugin backend uses
// them: compiled here (and as C in impl_header_c.c) against the installed
// headers, linked against the shared library.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ggml-impl.h"
#include "ggml-threading.h"

extern "C" int lmtest_impl_header_c(void);

namespace {

struct LogCapture {
    static inline std::vector<std::pair<lm_ggml_log_level, std::string>> lines;
    static void cb(enum lm_ggml_log_level level, const char * text, void *) { lines.emplace_back(level, text); }
    LogCapture() {
        lines.clear();
        lm_ggml_log_set(cb, nullptr);
    }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
};

// binary16 decoded with double arithmetic, from the format's definition
double half_value(uint16_t h) {
    const int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
    double v;
    if (exp == 0) {
        v = std::ldexp((double) mant, -24);
    } else if (exp == 31) {
        v = mant ? NAN : INFINITY;
    } else {
        v = std::ldexp(1.0 + mant / 1024.0, exp - 15);
    }
    return sign ? -v : v;
}

} // namespace

TEST(ImplHeader, CompilesAndWorksFromC) { EXPECT_EQ(lmtest_impl_header_c(), 0); }

TEST(ImplHeader, Fp16TableHoldsEveryValue) {
    for (uint32_t i = 0; i < (1u << 16); i++) {
        const double want = half_value((uint16_t) i);
        const float got = lm_ggml_table_f32_f16[i];
        if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got)) << i;
        } else {
            ASSERT_EQ((double) got, want) << i;
            ASSERT_EQ(std::signbit(got), std::signbit(want)) << i;
        }
        const float via_helper = lm_ggml_compute_fp16_to_fp32((lm_ggml_fp16_t) i);
        ASSERT_EQ(std::memcmp(&via_helper, &got, sizeof(float)), 0) << i; // same bits, NaN payloads too
    }
}

TEST(ImplHeader, HashSet) {
    alignas(16) static lm_ggml_tensor tensors[8];
    lm_ggml_hash_set hs = lm_ggml_hash_set_new(8);
    ASSERT_NE(hs.keys, nullptr);
    ASSERT_GE(hs.size, 8u);
    EXPECT_EQ(hs.size, lm_ggml_hash_size(8));
    for (auto & t : tensors) {
        EXPECT_FALSE(lm_ggml_hash_contains(&hs, &t));
        const size_t i = lm_ggml_hash_insert(&hs, &t);
        ASSERT_LT(i, hs.size);
        EXPECT_EQ(hs.keys[i], &t);
        EXPECT_EQ(lm_ggml_hash_insert(&hs, &t), LM_GGML_HASHSET_ALREADY_EXISTS);
        EXPECT_EQ(lm_ggml_hash_find_or_insert(&hs, &t), i);
    }
    for (auto & t : tensors) EXPECT_TRUE(lm_ggml_hash_contains(&hs, &t));
    lm_ggml_hash_set_reset(&hs);
    for (auto & t : tensors) EXPECT_FALSE(lm_ggml_hash_contains(&hs, &t));
    lm_ggml_hash_set_free(&hs);
    EXPECT_EQ(hs.keys, nullptr);

    // a full set answers FULL instead of aborting
    lm_ggml_hash_set small = lm_ggml_hash_set_new(1);
    ASSERT_NE(small.keys, nullptr);
    size_t full = 0;
    for (auto & t : tensors) full += lm_ggml_hash_insert(&small, &t) == LM_GGML_HASHSET_FULL;
    EXPECT_EQ(full, 8 - small.size);
    lm_ggml_hash_set_free(&small);
}

TEST(ImplHeader, GraphViewAliasesARangeOfNodes) {
    lm_ggml_init_params ip = {1 << 20, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    lm_ggml_tensor * x = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    lm_ggml_tensor * y = lm_ggml_neg(ctx, lm_ggml_sqr(ctx, lm_ggml_abs(ctx, x)));
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, y);
    ASSERT_EQ(g->n_nodes, 3);
    lm_ggml_cgraph v = lm_ggml_graph_view(g, 1, 3);
    EXPECT_EQ(v.n_nodes, 2);
    EXPECT_EQ(v.n_leafs, 0);
    EXPECT_EQ(v.nodes, g->nodes + 1);
    EXPECT_EQ(v.nodes[1], y);
    lm_ggml_free(ctx);
}

TEST(ImplHeader, LoggingGoesThroughTheCallback) {
    {
        LogCapture log;
        lm_ggml_log_internal(LM_GGML_LOG_LEVEL_WARN, "x=%d\n", 5);
        LM_GGML_LOG_ERROR("e%s\n", "!");
        ASSERT_EQ(LogCapture::lines.size(), 2u);
        EXPECT_EQ(LogCapture::lines[0].first, LM_GGML_LOG_LEVEL_WARN);
        EXPECT_EQ(LogCapture::lines[0].second, "x=5\n");
        EXPECT_EQ(LogCapture::lines[1].first, LM_GGML_LOG_LEVEL_ERROR);
        EXPECT_EQ(LogCapture::lines[1].second, "e!\n");
    }
    testing::internal::CaptureStderr();
    lm_ggml_log_callback_default(LM_GGML_LOG_LEVEL_INFO, "to stderr\n", nullptr);
    lm_ggml_log_internal(LM_GGML_LOG_LEVEL_INFO, "default %s\n", "too"); // no callback set: the default
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "to stderr\ndefault too\n");
}

TEST(ImplHeader, CriticalSectionExcludes) {
    long counter = 0; // plain: only the lock keeps the increments apart
    auto work = [&counter] {
        for (int i = 0; i < 100000; i++) {
            lm_ggml_critical_section_start();
            counter = counter + 1;
            lm_ggml_critical_section_end();
        }
    };
    std::thread t1(work), t2(work);
    t1.join();
    t2.join();
    EXPECT_EQ(counter, 200000);
}

TEST(ImplHeader, AlignedMalloc) {
    for (size_t n : {1u, 63u, 64u, 1000u, 1u << 20}) {
        void * p = lm_ggml_aligned_malloc(n);
        ASSERT_NE(p, nullptr) << n;
        EXPECT_EQ((uintptr_t) p % 64, 0u) << n;
        std::memset(p, 0xab, n); // writable over the whole size
        lm_ggml_aligned_free(p, n);
    }
    lm_ggml_aligned_free(nullptr, 0); // a no-op
}

namespace {
void noop_custom1(lm_ggml_tensor *, const lm_ggml_tensor *, int, int, void *) {}
} // namespace

// A backend reads a MAP_CUSTOM1 node's op_params through ggml's struct.
TEST(ImplHeader, CustomOpParamsMatchTheConstructor) {
    lm_ggml_init_params ip = {1 << 16, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    int user = 0;
    lm_ggml_tensor * t = lm_ggml_map_custom1(ctx, a, noop_custom1, 3, &user);
    ASSERT_NE(t, nullptr);
    lm_ggml_map_custom1_op_params p;
    std::memcpy(&p, t->op_params, sizeof(p));
    EXPECT_EQ(p.fun, &noop_custom1);
    EXPECT_EQ(p.n_tasks, 3);
    EXPECT_EQ(p.userdata, &user);
    lm_ggml_free(ctx);
}

// Exported to plugins, so bad arguments are logged errors, not crashes.
TEST(ImplHeader, BadArgumentsAreErrors) {
    LogCapture log;
    lm_ggml_hash_set_free(nullptr);
    lm_ggml_hash_set_reset(nullptr);
    lm_ggml_cgraph v = lm_ggml_graph_view(nullptr, 0, 1);
    EXPECT_EQ(v.n_nodes, 0);
    EXPECT_EQ(v.nodes, nullptr);

    lm_ggml_init_params ip = {1 << 20, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    lm_ggml_tensor * x = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, lm_ggml_neg(ctx, x));
    for (auto [i0, i1] : {std::pair{-1, 1}, std::pair{1, 0}, std::pair{0, 2}}) {
        v = lm_ggml_graph_view(g, i0, i1);
        EXPECT_EQ(v.n_nodes, 0) << i0 << " " << i1;
    }
    v = lm_ggml_graph_view(g, 1, 1); // empty but valid
    EXPECT_EQ(v.n_nodes, 0);
    size_t errors = 0;
    for (auto & l : LogCapture::lines) errors += l.first == LM_GGML_LOG_LEVEL_ERROR;
    EXPECT_EQ(errors, 6u);

    LogCapture::lines.clear();
    lm_ggml_log_internal(LM_GGML_LOG_LEVEL_INFO, nullptr);
    ASSERT_EQ(LogCapture::lines.size(), 1u);
    EXPECT_EQ(LogCapture::lines[0].first, LM_GGML_LOG_LEVEL_ERROR);
    lm_ggml_log_callback_default(LM_GGML_LOG_LEVEL_INFO, nullptr, nullptr); // nothing to write
    lm_ggml_free(ctx);
}

// Small accessors and helpers of ggml.h that no other test reaches: clocks,
// tensor predicates, sizes, context arena helpers, row conversions, status
// strings, graph_add_node/graph_print. Expected values follow ggml's
// definitions (worked out here, not read back from the library).

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"

namespace {

struct Ctx {
    lm_ggml_context * ctx;
    explicit Ctx(size_t mem = 1 << 20, bool no_alloc = false) {
        lm_ggml_init_params ip = {mem, nullptr, no_alloc};
        ctx = lm_ggml_init(ip);
    }
    ~Ctx() { lm_ggml_free(ctx); }
};

TEST(Accessors, ClocksAdvanceWithTheWallClock) {
    lm_ggml_time_init();
    const int64_t us0 = lm_ggml_time_us();
    const int64_t ms0 = lm_ggml_time_ms();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int64_t us1 = lm_ggml_time_us();
    const int64_t ms1 = lm_ggml_time_ms();
    EXPECT_GE(us1 - us0, 20000);
    EXPECT_LT(us1 - us0, 20000000); // a loaded machine, but not 20 s
    EXPECT_GE(ms1 - ms0, 19);       // whole milliseconds of the same clock
    EXPECT_LE(ms1 - ms0, (us1 - us0) / 1000 + 2);
}

TEST(Accessors, ElementSizeIsTheTypeSize) {
    Ctx c;
    ASSERT_NE(c.ctx, nullptr);
    EXPECT_EQ(lm_ggml_element_size(lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 3)), 4u);
    EXPECT_EQ(lm_ggml_element_size(lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F16, 3)), 2u);
    EXPECT_EQ(lm_ggml_element_size(lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_I64, 3)), 8u);
    // a block type: the bytes of one block (q4_0: fp16 scale + 16 bytes)
    EXPECT_EQ(lm_ggml_element_size(lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_Q4_0, 64)), 18u);
}

TEST(Accessors, ShapePredicates) {
    Ctx c;
    ASSERT_NE(c.ctx, nullptr);
    lm_ggml_tensor * v = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 5);
    lm_ggml_tensor * m = lm_ggml_new_tensor_2d(c.ctx, LM_GGML_TYPE_F32, 5, 2);
    lm_ggml_tensor * e = lm_ggml_new_tensor_2d(c.ctx, LM_GGML_TYPE_F32, 5, 0);
    EXPECT_TRUE(lm_ggml_is_vector(v));
    EXPECT_FALSE(lm_ggml_is_vector(m));
    EXPECT_TRUE(lm_ggml_is_empty(e));
    EXPECT_FALSE(lm_ggml_is_empty(m));
    EXPECT_EQ(lm_ggml_get_data(m), m->data);
    EXPECT_NE(lm_ggml_get_data(m), nullptr);
}

// is_contiguous_N: dimensions 1..N may have gaps, the ones above N must follow
TEST(Accessors, ContiguityLevels) {
    Ctx c;
    ASSERT_NE(c.ctx, nullptr);
    lm_ggml_tensor * p = lm_ggml_new_tensor_4d(c.ctx, LM_GGML_TYPE_F32, 4, 3, 2, 2); // nb 4, 16, 48, 96
    EXPECT_TRUE(lm_ggml_is_contiguous_0(p));
    EXPECT_TRUE(lm_ggml_is_contiguous_2(p));
    // 2 of 3 rows of each matrix: gaps in dimension 2 only
    lm_ggml_tensor * rows = lm_ggml_view_4d(c.ctx, p, 4, 2, 2, 2, p->nb[1], p->nb[2], p->nb[3], 0);
    EXPECT_FALSE(lm_ggml_is_contiguous_0(rows));
    EXPECT_TRUE(lm_ggml_is_contiguous_2(rows));
    // gaps in dimension 3 too: (4, 3, 3, 2) parent, nb3 = 144 != 2 * 48
    lm_ggml_tensor * q = lm_ggml_new_tensor_4d(c.ctx, LM_GGML_TYPE_F32, 4, 3, 3, 2);
    lm_ggml_tensor * both = lm_ggml_view_4d(c.ctx, q, 4, 2, 2, 2, q->nb[1], q->nb[2], q->nb[3], 0);
    EXPECT_FALSE(lm_ggml_is_contiguous_2(both));
    // elements strided inside a row: none of the levels
    lm_ggml_tensor * t = lm_ggml_transpose(c.ctx, lm_ggml_new_tensor_2d(c.ctx, LM_GGML_TYPE_F32, 4, 3));
    EXPECT_FALSE(lm_ggml_is_contiguous_0(t));
    EXPECT_FALSE(lm_ggml_is_contiguous_2(t));
}

TEST(Accessors, ArenaHelpers) {
    Ctx c;
    ASSERT_NE(c.ctx, nullptr);
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 3);    // 12 bytes
    lm_ggml_tensor * b = lm_ggml_new_tensor_2d(c.ctx, LM_GGML_TYPE_F32, 7, 5); // 140 bytes
    EXPECT_EQ(lm_ggml_nbytes_pad(a), (size_t) LM_GGML_PAD(12, LM_GGML_MEM_ALIGN));
    EXPECT_EQ(lm_ggml_nbytes_pad(b), (size_t) LM_GGML_PAD(140, LM_GGML_MEM_ALIGN));
    EXPECT_EQ(lm_ggml_get_max_tensor_size(c.ctx), 140u);

    const size_t used = lm_ggml_used_mem(c.ctx);
    auto * buf = static_cast<unsigned char *>(lm_ggml_new_buffer(c.ctx, 1000));
    ASSERT_NE(buf, nullptr);
    EXPECT_GE(lm_ggml_used_mem(c.ctx), used + 1000);
    std::memset(buf, 0x5a, 1000); // the arena's memory: writable (ASan checks the bounds)
    EXPECT_EQ(buf[999], 0x5a);

    // set_zero clears the data and returns the tensor
    for (int i = 0; i < 35; ++i) static_cast<float *>(b->data)[i] = 1.0f + i;
    EXPECT_EQ(lm_ggml_set_zero(b), b);
    for (int i = 0; i < 35; ++i) EXPECT_EQ(static_cast<float *>(b->data)[i], 0.0f) << i;

    lm_ggml_set_no_alloc(c.ctx, true);
    EXPECT_TRUE(lm_ggml_get_no_alloc(c.ctx));
    EXPECT_EQ(lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 8)->data, nullptr);
    lm_ggml_set_no_alloc(c.ctx, false);
    EXPECT_NE(lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 8)->data, nullptr);
}

TEST(Accessors, RowConversions) {
    lm_ggml_cpu_init(); // ggml's CPU tables; calling it twice is allowed
    lm_ggml_cpu_init();
    const lm_ggml_fp16_t h[4] = {0x3c00, 0xc000, 0x3800, 0x7bff}; // 1, -2, 0.5, 65504
    float f[4];
    lm_ggml_fp16_to_fp32_row(h, f, 4);
    EXPECT_EQ(f[0], 1.0f);
    EXPECT_EQ(f[1], -2.0f);
    EXPECT_EQ(f[2], 0.5f);
    EXPECT_EQ(f[3], 65504.0f);

    // bf16: the top 16 bits, rounded to nearest, ties to even
    const float x[4] = {1.0f, 1.00390625f /* 0x3f808000: a tie, stays even */, 1.01171875f /* 0x3f818000: up */, -3.5f};
    lm_ggml_bf16_t b[4];
    lm_ggml_fp32_to_bf16_row_ref(x, b, 4);
    EXPECT_EQ(b[0].bits, 0x3f80);
    EXPECT_EQ(b[1].bits, 0x3f80);
    EXPECT_EQ(b[2].bits, 0x3f82);
    EXPECT_EQ(b[3].bits, 0xc060);
}

TEST(Accessors, StatusStringsAreGgmls) {
    EXPECT_STREQ(lm_ggml_status_to_string(LM_GGML_STATUS_SUCCESS), "GGML status: success");
    EXPECT_STREQ(lm_ggml_status_to_string(LM_GGML_STATUS_FAILED), "GGML status: error (operation failed)");
    EXPECT_STREQ(lm_ggml_status_to_string(LM_GGML_STATUS_ALLOC_FAILED),
                 "GGML status: error (failed to allocate memory)");
    EXPECT_STREQ(lm_ggml_status_to_string(LM_GGML_STATUS_ABORTED), "GGML status: warning (operation aborted)");
}

struct LogLines {
    static inline std::string text;
    static void cb(enum lm_ggml_log_level, const char * t, void *) { text += t; }
    LogLines() {
        text.clear();
        lm_ggml_log_set(cb, nullptr);
    }
    ~LogLines() { lm_ggml_log_set(nullptr, nullptr); }
};

TEST(Accessors, GraphAddNodeAndPrint) {
    Ctx c;
    ASSERT_NE(c.ctx, nullptr);
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 3);
    lm_ggml_tensor * s = lm_ggml_sqr(c.ctx, a);
    lm_ggml_set_name(s, "squares");
    lm_ggml_cgraph * g = lm_ggml_new_graph(c.ctx);
    ASSERT_NE(g, nullptr);
    lm_ggml_graph_add_node(g, s); // appended as is: no sources visited
    ASSERT_EQ(lm_ggml_graph_n_nodes(g), 1);
    EXPECT_EQ(lm_ggml_graph_node(g, 0), s);

    LogLines log;
    lm_ggml_graph_print(g);
    EXPECT_NE(LogLines::text.find("squares"), std::string::npos) << LogLines::text;
    EXPECT_NE(LogLines::text.find("SQR"), std::string::npos) << LogLines::text;
}

} // namespace

// Contexts, tensors, views and queries: checked against values worked out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ggml.h"

namespace {

struct LogCapture {
    static inline std::vector<std::string> lines;
    static void cb(enum lm_ggml_log_level level, const char * text, void *) {
        if (level == LM_GGML_LOG_LEVEL_ERROR) lines.emplace_back(text);
    }
    LogCapture() {
        lines.clear();
        lm_ggml_log_set(cb, nullptr);
    }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
};

TEST(Context, AllocatesTensorsInsideTheArena) {
    lm_ggml_init_params p = {16 * 1024, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(p);
    ASSERT_NE(ctx, nullptr);
    EXPECT_EQ(lm_ggml_used_mem(ctx), 0u);
    lm_ggml_tensor * t = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 3, 5);
    ASSERT_NE(t, nullptr);
    const char * base = static_cast<const char *>(lm_ggml_get_mem_buffer(ctx));
    EXPECT_GE(static_cast<const char *>(t->data), base);
    EXPECT_LE(static_cast<const char *>(t->data) + 60, base + lm_ggml_get_mem_size(ctx));
    EXPECT_EQ(lm_ggml_nbytes(t), 60u);
    EXPECT_EQ(t->nb[0], 4u);
    EXPECT_EQ(t->nb[1], 12u);
    EXPECT_EQ(t->nb[2], 60u);
    EXPECT_EQ(t->nb[3], 60u);
    EXPECT_EQ(lm_ggml_nelements(t), 15);
    EXPECT_EQ(lm_ggml_nrows(t), 5);
    EXPECT_EQ(lm_ggml_n_dims(t), 2);
    EXPECT_GE(lm_ggml_used_mem(ctx), 60u + lm_ggml_tensor_overhead() - sizeof(void *) * 4);
    float * d = lm_ggml_get_data_f32(t);
    for (int i = 0; i < 15; i++) d[i] = (float) i; // writable memory
    lm_ggml_free(ctx);
}

TEST(Context, NoAllocGivesHeadersOnly) {
    lm_ggml_init_params p = {lm_ggml_tensor_overhead() * 2, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F16, 1 << 20);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->data, nullptr);
    EXPECT_EQ(lm_ggml_nbytes(t), 2u << 20);
    EXPECT_TRUE(lm_ggml_get_no_alloc(ctx));
    lm_ggml_free(ctx);
}

TEST(Context, CallerBufferIsUsedAndNotFreed) {
    alignas(64) static char buf[8192];
    lm_ggml_init_params p = {sizeof(buf), buf, false};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 4);
    ASSERT_NE(t, nullptr);
    EXPECT_GE(static_cast<char *>(t->data), buf);
    EXPECT_LT(static_cast<char *>(t->data), buf + sizeof(buf));
    lm_ggml_free(ctx); // must not free buf (a static): ASan would flag it
}

TEST(Context, OverflowReturnsNullWithOneMessage) {
    LogCapture cap;
    lm_ggml_init_params p = {lm_ggml_tensor_overhead() + 64, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(p);
    ASSERT_NE(ctx, nullptr);
    EXPECT_NE(lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4), nullptr);
    EXPECT_EQ(lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 1024), nullptr);
    EXPECT_EQ(cap.lines.size(), 1u);
    lm_ggml_free(ctx);
}

TEST(Context, ResetReusesTheArena) {
    lm_ggml_init_params p = {4096, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 100);
    EXPECT_GT(lm_ggml_used_mem(ctx), 400u);
    lm_ggml_reset(ctx);
    EXPECT_EQ(lm_ggml_used_mem(ctx), 0u);
    EXPECT_EQ(lm_ggml_get_first_tensor(ctx), nullptr);
    lm_ggml_free(ctx);
}

TEST(Tensor, BadArgumentsAreErrorsNotCrashes) {
    LogCapture cap;
    lm_ggml_init_params p = {1 << 16, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    EXPECT_EQ(lm_ggml_new_tensor_1d(ctx, (lm_ggml_type) 4, 32), nullptr);    // removed type
    EXPECT_EQ(lm_ggml_new_tensor_1d(ctx, (lm_ggml_type) 1000, 32), nullptr); // out of range
    EXPECT_EQ(lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, -1), nullptr);
    EXPECT_EQ(lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_Q4_0, 33), nullptr); // not a block multiple
    const int64_t huge[4] = {INT64_MAX / 2, 4, 1, 1};
    EXPECT_EQ(lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 2, huge), nullptr); // size overflow
    EXPECT_EQ(lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 5, huge), nullptr); // n_dims
    EXPECT_EQ(cap.lines.size(), 6u);
    lm_ggml_free(ctx);
}

TEST(Tensor, QuantizedRowsAndStrides) {
    lm_ggml_init_params p = {1 << 16, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * t = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_Q4_0, 64, 3, 2);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->nb[0], 18u); // one block
    EXPECT_EQ(t->nb[1], 36u); // two blocks per row
    EXPECT_EQ(t->nb[2], 108u);
    EXPECT_EQ(lm_ggml_nbytes(t), 216u);
    EXPECT_EQ(lm_ggml_row_size(LM_GGML_TYPE_Q4_K, 512), 288u);
    lm_ggml_tensor * k = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_Q6_K, 256);
    EXPECT_EQ(lm_ggml_nbytes(k), 210u);
    lm_ggml_free(ctx);
}

TEST(Tensor, NamesFlagsAndLookup) {
    lm_ggml_init_params p = {1 << 16, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    lm_ggml_tensor * b = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    lm_ggml_set_name(a, "alpha");
    lm_ggml_format_name(b, "beta_%d", 7);
    EXPECT_STREQ(lm_ggml_get_name(b), "beta_7");
    EXPECT_EQ(lm_ggml_get_tensor(ctx, "alpha"), a);
    EXPECT_EQ(lm_ggml_get_tensor(ctx, "beta_7"), b);
    EXPECT_EQ(lm_ggml_get_tensor(ctx, "gamma"), nullptr);
    std::string longname(200, 'x');
    lm_ggml_set_name(a, longname.c_str());
    EXPECT_EQ(std::string(lm_ggml_get_name(a)), std::string(LM_GGML_MAX_NAME - 1, 'x'));
    lm_ggml_set_input(a);
    lm_ggml_set_output(b);
    lm_ggml_set_param(ctx, b);
    EXPECT_EQ(a->flags, LM_GGML_TENSOR_FLAG_INPUT);
    EXPECT_EQ(b->flags, LM_GGML_TENSOR_FLAG_OUTPUT | LM_GGML_TENSOR_FLAG_PARAM);
    EXPECT_EQ(lm_ggml_get_first_tensor(ctx), a);
    EXPECT_EQ(lm_ggml_get_next_tensor(ctx, a), b);
    EXPECT_EQ(lm_ggml_get_next_tensor(ctx, b), nullptr);
    lm_ggml_free(ctx);
}

TEST(Tensor, ViewSharesStorageAndCollapsesChains) {
    lm_ggml_init_params p = {1 << 16, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 8, 4);
    lm_ggml_set_name(a, "a");
    lm_ggml_tensor * v = lm_ggml_view_tensor(ctx, a);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->data, a->data);
    EXPECT_EQ(v->view_src, a);
    EXPECT_STREQ(v->name, "a (view)");
    lm_ggml_tensor * vv = lm_ggml_view_tensor(ctx, v);
    EXPECT_EQ(vv->view_src, a); // views of views point at the storage owner
    lm_ggml_tensor * d = lm_ggml_dup_tensor(ctx, a);
    EXPECT_NE(d->data, a->data);
    EXPECT_TRUE(lm_ggml_are_same_shape(a, d));
    EXPECT_TRUE(lm_ggml_are_same_stride(a, d));
    lm_ggml_free(ctx);
}

TEST(Tensor, ContiguityAndShapePredicates) {
    lm_ggml_init_params p = {1 << 16, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(p);
    lm_ggml_tensor * t = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 4, 3, 2);
    EXPECT_TRUE(lm_ggml_is_contiguous(t));
    EXPECT_FALSE(lm_ggml_is_transposed(t));
    EXPECT_FALSE(lm_ggml_is_permuted(t));
    EXPECT_TRUE(lm_ggml_is_3d(t));
    EXPECT_FALSE(lm_ggml_is_matrix(t));
    // hand-made transposed strides: rows strided, elements contiguous-in-dim-1
    lm_ggml_tensor * tr = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 3, 4);
    tr->nb[0] = 16;
    tr->nb[1] = 4;
    tr->nb[2] = tr->nb[3] = 48;
    EXPECT_TRUE(lm_ggml_is_transposed(tr));
    EXPECT_FALSE(lm_ggml_is_contiguous(tr));
    EXPECT_EQ(lm_ggml_nbytes(tr), 48u);
    // rows with padding: contiguous_1 but not contiguous
    lm_ggml_tensor * pad = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 4, 3);
    pad->nb[1] = 32;
    pad->nb[2] = pad->nb[3] = 96;
    EXPECT_FALSE(lm_ggml_is_contiguous(pad));
    EXPECT_TRUE(lm_ggml_is_contiguous_1(pad));
    EXPECT_EQ(lm_ggml_nbytes(pad), 80u);
    lm_ggml_tensor * s = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 1);
    EXPECT_TRUE(lm_ggml_is_scalar(s));
    lm_ggml_tensor * rep = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 8, 6, 4);
    EXPECT_TRUE(lm_ggml_can_repeat(t, rep));
    EXPECT_FALSE(lm_ggml_can_repeat(rep, t));
    int64_t i0, i1, i2, i3;
    lm_ggml_unravel_index(t, 17, &i0, &i1, &i2, &i3);
    EXPECT_EQ(i0, 1);
    EXPECT_EQ(i1, 1);
    EXPECT_EQ(i2, 1);
    EXPECT_EQ(i3, 0);
    lm_ggml_free(ctx);
}

} // namespace

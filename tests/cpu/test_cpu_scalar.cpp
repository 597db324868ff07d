// ggml-cpu.h element helpers: lm_ggml_new_i32/f32, set_i32/f32 and the
// 1d/nd getters and setters, for every supported type, on contiguous tensors
// and on views. Expected bit patterns are written out here.

#include "cpu_test_util.h"

#include <cmath>
#include <cstring>

using namespace cputest;

namespace {

struct HostCtx {
    lm_ggml_context * ctx;
    explicit HostCtx(bool no_alloc = false) {
        lm_ggml_init_params p = {1024 * 1024, nullptr, no_alloc};
        ctx = lm_ggml_init(p);
    }
    ~HostCtx() { lm_ggml_free(ctx); }
};

TEST(CpuScalar, NewScalars) {
    HostCtx h;
    lm_ggml_tensor * i = lm_ggml_new_i32(h.ctx, -7);
    ASSERT_NE(i, nullptr);
    EXPECT_EQ(i->type, LM_GGML_TYPE_I32);
    EXPECT_EQ(lm_ggml_nelements(i), 1);
    EXPECT_EQ(*(int32_t *) i->data, -7);
    EXPECT_EQ(lm_ggml_get_i32_1d(i, 0), -7);

    lm_ggml_tensor * f = lm_ggml_new_f32(h.ctx, 2.5f);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->type, LM_GGML_TYPE_F32);
    EXPECT_EQ(*(float *) f->data, 2.5f);
    EXPECT_EQ(lm_ggml_get_f32_1d(f, 0), 2.5f);

    HostCtx meta(true);
    LogCapture log;
    EXPECT_EQ(lm_ggml_new_i32(meta.ctx, 1), nullptr) << "no_alloc context has no room for the value";
    EXPECT_EQ(lm_ggml_new_f32(nullptr, 1.0f), nullptr);
    EXPECT_EQ(log.errors(), 2);
}

TEST(CpuScalar, FillEveryTypeWithExpectedBits) {
    HostCtx h;
    struct Case {
        lm_ggml_type type;
        size_t size;
        uint32_t bits_of_3;
        uint32_t bits_of_m1p5;
    };
    // value 3.0 and -1.5 (integers truncate toward zero: -1)
    const Case cases[] = {
        {LM_GGML_TYPE_F32, 4, 0x40400000u, 0xBFC00000u},
        {LM_GGML_TYPE_F16, 2, 0x4200u, 0xBE00u},
        {LM_GGML_TYPE_BF16, 2, 0x4040u, 0xBFC0u},
        {LM_GGML_TYPE_I8, 1, 3u, 0xFFu},
        {LM_GGML_TYPE_I16, 2, 3u, 0xFFFFu},
        {LM_GGML_TYPE_I32, 4, 3u, 0xFFFFFFFFu},
    };
    for (const Case & c : cases) {
        lm_ggml_tensor * t = lm_ggml_new_tensor_2d(h.ctx, c.type, 3, 2);
        ASSERT_NE(t, nullptr);
        ASSERT_EQ(lm_ggml_set_f32(t, 3.0f), t);
        for (int k = 0; k < 6; k++) {
            uint32_t bits = 0;
            memcpy(&bits, (char *) t->data + k * c.size, c.size);
            ASSERT_EQ(bits, c.bits_of_3) << lm_ggml_type_name(c.type) << " element " << k;
        }
        lm_ggml_set_f32_1d(t, 4, -1.5f); // (1, 1)
        uint32_t bits = 0;
        memcpy(&bits, (char *) t->data + 4 * c.size, c.size);
        EXPECT_EQ(bits, c.bits_of_m1p5) << lm_ggml_type_name(c.type);
        const bool is_int = c.type == LM_GGML_TYPE_I8 || c.type == LM_GGML_TYPE_I16 || c.type == LM_GGML_TYPE_I32;
        EXPECT_EQ(lm_ggml_get_f32_nd(t, 1, 1, 0, 0), is_int ? -1.0f : -1.5f) << lm_ggml_type_name(c.type);
        EXPECT_EQ(lm_ggml_get_i32_1d(t, 4), -1) << lm_ggml_type_name(c.type);
        EXPECT_EQ(lm_ggml_get_i32_nd(t, 2, 0, 0, 0), 3) << lm_ggml_type_name(c.type);

        ASSERT_EQ(lm_ggml_set_i32(t, 5), t);
        lm_ggml_set_i32_nd(t, 0, 1, 0, 0, -2); // element 3
        lm_ggml_set_i32_1d(t, 5, 9);
        const float expect[6] = {5, 5, 5, -2, 5, 9};
        for (int k = 0; k < 6; k++) {
            EXPECT_EQ(lm_ggml_get_f32_1d(t, k), expect[k]) << lm_ggml_type_name(c.type) << " element " << k;
        }
        lm_ggml_set_f32_nd(t, 2, 1, 0, 0, 0.5f);
        EXPECT_EQ(lm_ggml_get_f32_1d(t, 5), is_int ? 0.0f : 0.5f);
    }
}

TEST(CpuScalar, IntegerStoresSaturate) {
    HostCtx h;
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(h.ctx, LM_GGML_TYPE_I8, 4);
    lm_ggml_set_f32_1d(t, 0, 1000.0f);
    lm_ggml_set_f32_1d(t, 1, -1000.0f);
    lm_ggml_set_f32_1d(t, 2, NAN);
    lm_ggml_set_i32_1d(t, 3, 300);
    const int8_t * d = (const int8_t *) t->data;
    EXPECT_EQ(d[0], 127);
    EXPECT_EQ(d[1], -128);
    EXPECT_EQ(d[2], 0);
    EXPECT_EQ(d[3], 127);
    lm_ggml_tensor * f = lm_ggml_new_f32(h.ctx, 3e10f);
    EXPECT_EQ(lm_ggml_get_i32_1d(f, 0), INT32_MAX);
}

// Flat indices walk a view in its own logical order (ne0 fastest), whatever
// its strides.
TEST(CpuScalar, ViewsUseTheirStrides) {
    HostCtx h;
    lm_ggml_tensor * t = lm_ggml_new_tensor_2d(h.ctx, LM_GGML_TYPE_F32, 3, 2); // (2 rows, 3 cols)
    for (int k = 0; k < 6; k++) ((float *) t->data)[k] = (float) (10 * k);
    lm_ggml_tensor * tt = lm_ggml_transpose(h.ctx, t); // ne (2, 3): tt[i1][i0] = t[i0][i1]
    ASSERT_NE(tt, nullptr);
    for (int i1 = 0; i1 < 3; i1++) {
        for (int i0 = 0; i0 < 2; i0++) {
            const float expect = (float) (10 * (i0 * 3 + i1));
            EXPECT_EQ(lm_ggml_get_f32_nd(tt, i0, i1, 0, 0), expect);
            EXPECT_EQ(lm_ggml_get_f32_1d(tt, i1 * 2 + i0), expect);
        }
    }
    lm_ggml_set_f32_1d(tt, 1, -5.0f); // tt (1, 0) = t (0, 1) = flat 3
    EXPECT_EQ(((float *) t->data)[3], -5.0f);

    lm_ggml_tensor * col = lm_ggml_view_2d(h.ctx, t, 1, 2, t->nb[1], sizeof(float)); // column 1
    lm_ggml_set_f32(col, 7.0f);
    const float expect[6] = {0, 7, 20, -5, 7, 50};
    for (int k = 0; k < 6; k++) EXPECT_EQ(((float *) t->data)[k], expect[k]) << k;
}

TEST(CpuScalar, BadInputIsLoggedNotFatal) {
    HostCtx h;
    lm_ggml_tensor * t = lm_ggml_new_tensor_2d(h.ctx, LM_GGML_TYPE_F32, 3, 2);
    lm_ggml_set_f32(t, 1.0f);
    lm_ggml_tensor * q = lm_ggml_new_tensor_1d(h.ctx, LM_GGML_TYPE_Q4_0, 32);
    LogCapture log;
    EXPECT_EQ(lm_ggml_get_f32_1d(t, 6), 0.0f);
    EXPECT_EQ(lm_ggml_get_f32_1d(t, -1), 0.0f);
    EXPECT_EQ(lm_ggml_get_i32_nd(t, 3, 0, 0, 0), 0);
    EXPECT_EQ(lm_ggml_get_f32_nd(t, 0, 2, 0, 0), 0.0f);
    EXPECT_EQ(lm_ggml_get_f32_nd(t, 0, 0, 1, 0), 0.0f);
    lm_ggml_set_f32_1d(t, 99, 5.0f);
    lm_ggml_set_i32_nd(t, 0, 0, 0, 1, 5);
    EXPECT_EQ(lm_ggml_set_f32(q, 1.0f), nullptr) << "block types are not element-addressable";
    EXPECT_EQ(lm_ggml_set_i32(nullptr, 1), nullptr);
    EXPECT_EQ(lm_ggml_get_i32_1d(nullptr, 0), 0);
    EXPECT_EQ(log.errors(), 10);
    for (int k = 0; k < 6; k++) EXPECT_EQ(((float *) t->data)[k], 1.0f) << "nothing was written";
}

} // namespace

// GET_ROWS and CPY with block types on the CPU, called through an op table
// filled the way the runtime fills it (element-wise kernels, then
// lm_cpu_register_quant_ops), with 1 and 3 threads.
#include "cpu/kernels/kernel.h"
#include "cpu/kernels/q_convert.h"
#include "quant/quants.h"
#include "quant_test_util.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

struct Ctx {
    lm_ggml_context * ctx;
    Ctx() {
        lm_ggml_init_params p = {64 * 1024 * 1024, nullptr, false};
        ctx = lm_ggml_init(p);
    }
    ~Ctx() { lm_ggml_free(ctx); }
};

const lm_cpu_op_table & table() {
    static const lm_cpu_op_table t = [] {
        lm_cpu_op_table tab{};
        lm_cpu_register_elementwise_ops(&tab);
        lm_cpu_register_quant_ops(&tab);
        return tab;
    }();
    return t;
}

// Runs node's kernel as nth threads would (one after another: these kernels need no barrier).
void run(lm_ggml_tensor * node, int nth) {
    const lm_cpu_op_desc & d = table().ops[node->op];
    ASSERT_NE(d.forward, nullptr);
    ASSERT_TRUE(d.supports == nullptr || d.supports(node)) << lm_ggml_op_name(node->op);
    for (int ith = 0; ith < nth; ++ith) {
        lm_cpu_params p{ith, nth, 0, nullptr, nullptr, nullptr, 0};
        d.forward(&p, node);
    }
}

void fill_quantized(lm_ggml_tensor * t, uint32_t seed) {
    const int64_t n = lm_ggml_nelements(t);
    const std::vector<float> x = qtest::make_input((size_t) n, seed);
    ASSERT_EQ(lm_ggml_quantize_chunk(t->type, x.data(), t->data, 0, n / t->ne[0], t->ne[0], nullptr),
              lm_ggml_nbytes(t));
}

class QuantCpuConvert : public ::testing::TestWithParam<lm_ggml_type> {};

TEST_P(QuantCpuConvert, GetRowsDequantizesTheChosenRows) {
    const lm_ggml_type t = GetParam();
    const int64_t n = 2 * lm_ggml_blck_size(t);
    for (int nth : {1, 3}) {
        Ctx c;
        lm_ggml_tensor * a = lm_ggml_new_tensor_3d(c.ctx, t, n, 5, 2); // (n, 5 rows, 2 tables)
        lm_ggml_tensor * ids = lm_ggml_new_tensor_2d(c.ctx, LM_GGML_TYPE_I32, 4, 2);
        fill_quantized(a, 31);
        const int32_t id[8] = {4, 0, 0, 2, 1, 3, 4, 1};
        std::memcpy(ids->data, id, sizeof(id));
        lm_ggml_tensor * out = lm_ggml_get_rows(c.ctx, a, ids); // (n, 4, 2) F32
        ASSERT_EQ(out->type, LM_GGML_TYPE_F32);
        run(out, nth);
        // reference: dequantize the whole table once, then pick rows
        std::vector<float> all((size_t) lm_ggml_nelements(a));
        lm_ggml_get_type_traits(t)->to_float(a->data, all.data(), lm_ggml_nelements(a));
        for (int k = 0; k < 2; ++k) {
            for (int r = 0; r < 4; ++r) {
                const float * want = all.data() + (k * 5 + id[k * 4 + r]) * n;
                const float * got = (const float *) ((const char *) out->data + r * out->nb[1] + k * out->nb[2]);
                ASSERT_EQ(std::memcmp(got, want, n * sizeof(float)), 0)
                    << lm_ggml_type_name(t) << " k " << k << " r " << r;
            }
        }
    }
}

TEST_P(QuantCpuConvert, CpyF32ToBlocksEqualsQuantizeChunk) {
    const lm_ggml_type t = GetParam();
    const int64_t n = 2 * lm_ggml_blck_size(t);
    for (int nth : {1, 3}) {
        Ctx c;
        // a strided F32 source: rows of a wider buffer (row stride 3n floats)
        lm_ggml_tensor * wide = lm_ggml_new_tensor_2d(c.ctx, LM_GGML_TYPE_F32, 3 * n, 4);
        const std::vector<float> x = qtest::make_input((size_t) (3 * n * 4), 17);
        std::memcpy(wide->data, x.data(), x.size() * sizeof(float));
        lm_ggml_tensor * src = lm_ggml_view_2d(c.ctx, wide, n, 4, wide->nb[1], n * sizeof(float));
        lm_ggml_tensor * q = lm_ggml_new_tensor_2d(c.ctx, t, n, 4);
        std::memset(q->data, 0xAB, lm_ggml_nbytes(q));
        lm_ggml_tensor * node = lm_ggml_cpy(c.ctx, src, q);
        run(node, nth);
        std::vector<float> rows((size_t) (n * 4));
        for (int r = 0; r < 4; ++r) std::memcpy(rows.data() + r * n, x.data() + r * 3 * n + n, n * sizeof(float));
        std::vector<uint8_t> want(lm_ggml_nbytes(q));
        lm_ggml_quantize_chunk(t, rows.data(), want.data(), 0, 4, n, nullptr);
        EXPECT_EQ(std::memcmp(q->data, want.data(), want.size()), 0) << lm_ggml_type_name(t);

        // and back: blocks -> F32 equals to_float
        lm_ggml_tensor * back = lm_ggml_new_tensor_2d(c.ctx, LM_GGML_TYPE_F32, n, 4);
        run(lm_ggml_cpy(c.ctx, q, back), nth);
        std::vector<float> deq((size_t) (n * 4));
        lm_ggml_get_type_traits(t)->to_float(want.data(), deq.data(), n * 4);
        EXPECT_EQ(std::memcmp(back->data, deq.data(), deq.size() * sizeof(float)), 0) << lm_ggml_type_name(t);
    }
}

TEST_P(QuantCpuConvert, CpyBetweenDifferentRowLengths) {
    // contiguous (2n, 3) F32 -> (n, 6) blocks: flat element order is kept
    const lm_ggml_type t = GetParam();
    const int64_t n = lm_ggml_blck_size(t);
    Ctx c;
    lm_ggml_tensor * src = lm_ggml_new_tensor_2d(c.ctx, LM_GGML_TYPE_F32, 2 * n, 3);
    const std::vector<float> x = qtest::make_input((size_t) (6 * n), 23);
    std::memcpy(src->data, x.data(), x.size() * sizeof(float));
    lm_ggml_tensor * q = lm_ggml_new_tensor_2d(c.ctx, t, n, 6);
    run(lm_ggml_cpy(c.ctx, src, q), 3);
    std::vector<uint8_t> want(lm_ggml_nbytes(q));
    lm_ggml_quantize_chunk(t, x.data(), want.data(), 0, 6, n, nullptr);
    EXPECT_EQ(std::memcmp(q->data, want.data(), want.size()), 0) << lm_ggml_type_name(t);
}

std::string name(const ::testing::TestParamInfo<lm_ggml_type> & info) { return lm_ggml_type_name(info.param); }

INSTANTIATE_TEST_SUITE_P(AllBlockTypes, QuantCpuConvert,
                         ::testing::Values(LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                                           LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q8_1, LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K,
                                           LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_Q8_K),
                         name);

TEST(QuantCpuConvertSupports, RefusesWhatItCannotDo) {
    Ctx c;
    const lm_cpu_op_desc & cpy = table().ops[LM_GGML_OP_CPY];
    // F16 -> Q4_0 (only F32 converts to blocks here)
    lm_ggml_tensor * h = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F16, 64);
    lm_ggml_tensor * q = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_Q4_0, 64);
    EXPECT_FALSE(cpy.supports(lm_ggml_cpy(c.ctx, h, q)));
    // Q4_0 -> Q8_0 (two block types)
    lm_ggml_tensor * q8 = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_Q8_0, 64);
    EXPECT_FALSE(cpy.supports(lm_ggml_cpy(c.ctx, q, q8)));
    // a transposed F32 source (elements of a row are not adjacent)
    lm_ggml_tensor * f = lm_ggml_new_tensor_2d(c.ctx, LM_GGML_TYPE_F32, 32, 32);
    lm_ggml_tensor * q2 = lm_ggml_new_tensor_2d(c.ctx, LM_GGML_TYPE_Q8_0, 32, 32);
    EXPECT_FALSE(cpy.supports(lm_ggml_cpy(c.ctx, lm_ggml_transpose(c.ctx, f), q2)));
    // the plain F32 -> F32 copy still goes to the element-wise kernel
    lm_ggml_tensor * f2 = lm_ggml_new_tensor_2d(c.ctx, LM_GGML_TYPE_F32, 32, 32);
    EXPECT_TRUE(cpy.supports(lm_ggml_cpy(c.ctx, f, f2)));
}

} // namespace

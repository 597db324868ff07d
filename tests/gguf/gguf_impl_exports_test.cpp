// The GGUF internals ggml exports for tests and tools (include/ggml-impl.h,
// C++ linkage): lm_gguf_type_size, lm_gguf_init_from_file_impl and
// lm_gguf_write_to_buf, checked against the independent encoder's bytes.

#include "gguf_test_util.h"

#include "ggml-impl.h"

#include <cstdio>
#include <vector>

using namespace gguf_test;

namespace {

// Parses the reference file with tensor data loaded; the caller frees both.
lm_gguf_context * load(const TempFile & f, lm_ggml_context ** data) {
    lm_gguf_init_params p = {false, data};
    return lm_gguf_init_from_file(f.c_str(), p);
}

} // namespace

TEST(GgufImpl, TypeSizeOfEveryValueType) {
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_UINT8), 1u);
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_INT8), 1u);
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_BOOL), 1u);
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_UINT16), 2u);
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_INT16), 2u);
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_UINT32), 4u);
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_INT32), 4u);
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_FLOAT32), 4u);
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_UINT64), 8u);
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_INT64), 8u);
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_FLOAT64), 8u);
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_STRING), 0u); // variable size
    EXPECT_EQ(lm_gguf_type_size(LM_GGUF_TYPE_ARRAY), 0u);
    EXPECT_EQ(lm_gguf_type_size((enum lm_gguf_type) 99), 0u);
}

TEST(GgufImpl, WriteToBufReproducesTheFile) {
    const Reference ref = build_reference();
    TempFile f("ref");
    ASSERT_TRUE(write_file(f.path(), ref.bytes));
    lm_ggml_context * data = nullptr;
    lm_gguf_context * g = load(f, &data);
    ASSERT_NE(g, nullptr);

    std::vector<int8_t> full;
    lm_gguf_write_to_buf(g, full, false);
    ASSERT_EQ(full.size(), ref.bytes.size());
    EXPECT_EQ(std::memcmp(full.data(), ref.bytes.data(), full.size()), 0);

    std::vector<int8_t> meta = {7, 7}; // appended after what is there
    lm_gguf_write_to_buf(g, meta, true);
    ASSERT_EQ(meta.size(), 2 + ref.data_offset);
    EXPECT_EQ(meta[0], 7);
    EXPECT_EQ(std::memcmp(meta.data() + 2, ref.bytes.data(), ref.data_offset), 0);

    lm_gguf_free(g);
    lm_ggml_free(data);
}

TEST(GgufImpl, WriteToBufErrorsLeaveTheBuffer) {
    LogCapture log;
    std::vector<int8_t> buf = {1, 2, 3};
    lm_gguf_write_to_buf(nullptr, buf, false);
    EXPECT_EQ(buf, (std::vector<int8_t>{1, 2, 3}));
    EXPECT_EQ(log.errors(), 1);

    // a tensor without data cannot be written in full (metadata still can)
    lm_ggml_init_params ip = {lm_ggml_tensor_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 8);
    lm_ggml_set_name(t, "t");
    lm_gguf_context * g = lm_gguf_init_empty();
    lm_gguf_add_tensor(g, t);
    log.clear();
    lm_gguf_write_to_buf(g, buf, false);
    EXPECT_EQ(buf, (std::vector<int8_t>{1, 2, 3}));
    EXPECT_GE(log.errors(), 1);
    lm_gguf_write_to_buf(g, buf, true);
    EXPECT_EQ(buf.size(), 3 + lm_gguf_get_meta_size(g));
    lm_gguf_free(g);
    lm_ggml_free(ctx);
}

TEST(GgufImpl, InitFromFileImplReadsAnOpenFile) {
    const Reference ref = build_reference();
    TempFile f("ref");
    ASSERT_TRUE(write_file(f.path(), ref.bytes));
    FILE * fp = std::fopen(f.c_str(), "rb");
    ASSERT_NE(fp, nullptr);
    std::fseek(fp, 17, SEEK_SET); // wherever the caller left it: read from the start

    lm_ggml_context * data = nullptr;
    lm_gguf_init_params p = {false, &data};
    lm_gguf_context * g = lm_gguf_init_from_file_impl(fp, p);
    std::fclose(fp);
    ASSERT_NE(g, nullptr);
    ASSERT_NE(data, nullptr);

    lm_ggml_context * data2 = nullptr;
    lm_gguf_context * g2 = load(f, &data2);
    ASSERT_NE(g2, nullptr);
    EXPECT_EQ(lm_gguf_get_n_kv(g), lm_gguf_get_n_kv(g2));
    EXPECT_EQ(lm_gguf_get_n_tensors(g), lm_gguf_get_n_tensors(g2));
    EXPECT_EQ(lm_gguf_get_data_offset(g), ref.data_offset);
    std::vector<int8_t> a, b;
    lm_gguf_write_to_buf(g, a, false);
    lm_gguf_write_to_buf(g2, b, false);
    EXPECT_EQ(a, b); // same keys, tensors and data
    lm_gguf_free(g);
    lm_gguf_free(g2);
    lm_ggml_free(data);
    lm_ggml_free(data2);
}

TEST(GgufImpl, InitFromFileImplRejectsBadInput) {
    LogCapture log;
    lm_ggml_context * data = reinterpret_cast<lm_ggml_context *>(&log); // must be reset to NULL
    lm_gguf_init_params p = {false, &data};
    EXPECT_EQ(lm_gguf_init_from_file_impl(nullptr, p), nullptr);
    EXPECT_EQ(data, nullptr);
    EXPECT_EQ(log.errors(), 1);

    Reference ref = build_reference();
    ref.bytes.resize(ref.bytes.size() / 2); // cut in the data section
    TempFile f("cut");
    ASSERT_TRUE(write_file(f.path(), ref.bytes));
    FILE * fp = std::fopen(f.c_str(), "rb");
    ASSERT_NE(fp, nullptr);
    log.clear();
    EXPECT_EQ(lm_gguf_init_from_file_impl(fp, p), nullptr);
    EXPECT_EQ(data, nullptr);
    EXPECT_EQ(log.errors(), 1) << log.text();
    std::fclose(fp);
}

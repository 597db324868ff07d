// Accessors and setters called with bad arguments: ggml asserts, lmggml logs
// exactly one error line and returns 0 / NULL / -1 (no abort, no change).

#include "gguf_test_util.h"

using namespace gguf_test;

namespace {

struct Fixture : ::testing::Test {
    lm_gguf_context * g = nullptr;
    void SetUp() override {
        g = lm_gguf_init_empty();
        lm_gguf_set_val_u32(g, "u32", 5);
        lm_gguf_set_val_str(g, "str", "s");
        const float fs[] = {1.0f, 2.0f};
        lm_gguf_set_arr_data(g, "farr", LM_GGUF_TYPE_FLOAT32, fs, 2);
        const char * ss[] = {"p", "q"};
        lm_gguf_set_arr_str(g, "sarr", ss, 2);
        const uint8_t one[] = {42};
        lm_gguf_set_arr_data(g, "u8arr1", LM_GGUF_TYPE_UINT8, one, 1);
    }
    void TearDown() override { lm_gguf_free(g); }
    int64_t id(const char * k) { return lm_gguf_find_key(g, k); }
};

// Runs `call`, expecting `want` and exactly one error log line.
#define EXPECT_ONE_ERROR(call, want)                                                                                   \
    do {                                                                                                               \
        LogCapture log_;                                                                                               \
        EXPECT_EQ((call), (want)) << #call;                                                                            \
        EXPECT_EQ(log_.errors(), 1) << #call << ": " << log_.text();                                                   \
    } while (0)

#define EXPECT_ONE_ERROR_VOID(call)                                                                                    \
    do {                                                                                                               \
        LogCapture log_;                                                                                               \
        call;                                                                                                          \
        EXPECT_EQ(log_.errors(), 1) << #call << ": " << log_.text();                                                   \
    } while (0)

} // namespace

TEST_F(Fixture, OutOfRangeKeyIds) {
    for (int64_t bad : {(int64_t) -1, (int64_t) 5, (int64_t) 1 << 40}) {
        EXPECT_ONE_ERROR(lm_gguf_get_key(g, bad), (const char *) nullptr);
        EXPECT_ONE_ERROR(lm_gguf_get_kv_type(g, bad), LM_GGUF_TYPE_COUNT);
        EXPECT_ONE_ERROR(lm_gguf_get_arr_type(g, bad), LM_GGUF_TYPE_COUNT);
        EXPECT_ONE_ERROR(lm_gguf_get_val_u32(g, bad), 0u);
        EXPECT_ONE_ERROR(lm_gguf_get_val_str(g, bad), (const char *) nullptr);
        EXPECT_ONE_ERROR(lm_gguf_get_val_data(g, bad), (const void *) nullptr);
        EXPECT_ONE_ERROR(lm_gguf_get_arr_n(g, bad), 0u);
        EXPECT_ONE_ERROR(lm_gguf_get_arr_data(g, bad), (const void *) nullptr);
        EXPECT_ONE_ERROR(lm_gguf_get_arr_str(g, bad, 0), (const char *) nullptr);
    }
}

TEST_F(Fixture, WrongTypes) {
    EXPECT_ONE_ERROR(lm_gguf_get_val_i32(g, id("u32")), 0);
    EXPECT_ONE_ERROR(lm_gguf_get_val_u64(g, id("u32")), 0u);
    EXPECT_ONE_ERROR(lm_gguf_get_val_f32(g, id("u32")), 0.0f);
    EXPECT_ONE_ERROR(lm_gguf_get_val_bool(g, id("u32")), false);
    EXPECT_ONE_ERROR(lm_gguf_get_val_str(g, id("u32")), (const char *) nullptr);
    EXPECT_ONE_ERROR(lm_gguf_get_val_u32(g, id("str")), 0u);
    EXPECT_ONE_ERROR(lm_gguf_get_val_data(g, id("str")), (const void *) nullptr);
    EXPECT_ONE_ERROR(lm_gguf_get_val_f32(g, id("farr")), 0.0f); // two elements
    EXPECT_ONE_ERROR(lm_gguf_get_val_data(g, id("farr")), (const void *) nullptr);
    EXPECT_ONE_ERROR(lm_gguf_get_arr_type(g, id("u32")), LM_GGUF_TYPE_COUNT); // not an array
    EXPECT_ONE_ERROR(lm_gguf_get_arr_data(g, id("sarr")), (const void *) nullptr);
    EXPECT_ONE_ERROR(lm_gguf_get_arr_str(g, id("farr"), 0), (const char *) nullptr);
    EXPECT_ONE_ERROR(lm_gguf_get_arr_str(g, id("sarr"), 2), (const char *) nullptr);
    EXPECT_ONE_ERROR(lm_gguf_get_arr_str(g, id("sarr"), (size_t) -1), (const char *) nullptr);
}

TEST_F(Fixture, LenientCasesMatchGgml) {
    // ggml lets a one-element array be read as a scalar and a scalar as a
    // one-element array; these are not errors
    LogCapture log;
    EXPECT_EQ(lm_gguf_get_val_u8(g, id("u8arr1")), 42);
    EXPECT_EQ(lm_gguf_get_arr_n(g, id("u32")), 1u);
    EXPECT_EQ(*(const uint32_t *) lm_gguf_get_arr_data(g, id("u32")), 5u);
    EXPECT_EQ(*(const uint32_t *) lm_gguf_get_val_data(g, id("u32")), 5u);
    EXPECT_STREQ(lm_gguf_get_arr_str(g, id("str"), 0), "s");
    EXPECT_EQ(lm_gguf_get_arr_n(g, id("sarr")), 2u);
    EXPECT_EQ(lm_gguf_type_name(LM_GGUF_TYPE_COUNT), nullptr);
    EXPECT_STREQ(lm_gguf_type_name(LM_GGUF_TYPE_ARRAY), "arr");
    EXPECT_STREQ(lm_gguf_type_name(LM_GGUF_TYPE_FLOAT64), "f64");
    EXPECT_EQ(log.errors(), 0) << log.text();
}

TEST_F(Fixture, OutOfRangeTensorIds) {
    EXPECT_ONE_ERROR(lm_gguf_get_tensor_name(g, 0), (const char *) nullptr);
    EXPECT_ONE_ERROR(lm_gguf_get_tensor_type(g, -1), LM_GGML_TYPE_COUNT);
    EXPECT_ONE_ERROR(lm_gguf_get_tensor_offset(g, 3), 0u);
    EXPECT_ONE_ERROR(lm_gguf_get_tensor_size(g, 3), 0u);
}

TEST_F(Fixture, NullArguments) {
    EXPECT_ONE_ERROR(lm_gguf_get_n_kv(nullptr), 0);
    EXPECT_ONE_ERROR(lm_gguf_get_n_tensors(nullptr), 0);
    EXPECT_ONE_ERROR(lm_gguf_get_version(nullptr), 0u);
    EXPECT_ONE_ERROR(lm_gguf_get_alignment(nullptr), 0u);
    EXPECT_ONE_ERROR(lm_gguf_get_data_offset(nullptr), 0u);
    EXPECT_ONE_ERROR(lm_gguf_find_key(nullptr, "x"), -1);
    EXPECT_ONE_ERROR(lm_gguf_find_key(g, nullptr), -1);
    EXPECT_ONE_ERROR(lm_gguf_find_tensor(g, nullptr), -1);
    EXPECT_ONE_ERROR(lm_gguf_get_val_u8(nullptr, 0), 0);
    EXPECT_ONE_ERROR(lm_gguf_remove_key(g, nullptr), -1);
    EXPECT_ONE_ERROR(lm_gguf_get_meta_size(nullptr), 0u);
    EXPECT_ONE_ERROR(lm_gguf_write_to_file(nullptr, "/tmp/x.gguf", false), false);
    EXPECT_ONE_ERROR(lm_gguf_write_to_file(g, nullptr, false), false);
    EXPECT_ONE_ERROR_VOID(lm_gguf_get_meta_data(g, nullptr));
    EXPECT_ONE_ERROR_VOID(lm_gguf_set_val_u8(nullptr, "k", 1));
    EXPECT_ONE_ERROR_VOID(lm_gguf_set_val_u8(g, nullptr, 1));
    EXPECT_ONE_ERROR_VOID(lm_gguf_set_val_u8(g, "", 1));
    EXPECT_ONE_ERROR_VOID(lm_gguf_set_val_str(g, "k", nullptr));
    EXPECT_ONE_ERROR_VOID(lm_gguf_set_arr_data(g, "k", LM_GGUF_TYPE_UINT8, nullptr, 3));
    EXPECT_ONE_ERROR_VOID(lm_gguf_set_arr_data(g, "k", LM_GGUF_TYPE_STRING, "x", 1));
    EXPECT_ONE_ERROR_VOID(lm_gguf_set_arr_data(g, "k", (lm_gguf_type) 99, "x", 1));
    const char * with_null[] = {"a", nullptr};
    EXPECT_ONE_ERROR_VOID(lm_gguf_set_arr_str(g, "k", with_null, 2));
    EXPECT_ONE_ERROR_VOID(lm_gguf_set_kv(g, nullptr));
    EXPECT_ONE_ERROR_VOID(lm_gguf_set_tensor_data(g, "missing", nullptr));
    EXPECT_EQ(lm_gguf_find_key(g, "k"), -1); // nothing was added by the failed calls
    EXPECT_EQ(lm_gguf_get_n_kv(g), 5);
    lm_gguf_free(nullptr); // allowed, like free(NULL)
}

TEST(GgufMisuse, ReadThenUseAfterBadFileKeepsWorking) {
    // a failed parse leaves the library usable: a good file right after works
    const Reference ref = build_reference();
    std::vector<uint8_t> bad = ref.bytes;
    bad[0] = 'X';
    TempFile fb("bad"), fg("good");
    ASSERT_TRUE(write_file(fb.path(), bad));
    ASSERT_TRUE(write_file(fg.path(), ref.bytes));
    lm_gguf_init_params p = {true, nullptr};
    {
        LogCapture log;
        EXPECT_EQ(lm_gguf_init_from_file(fb.c_str(), p), nullptr);
    }
    lm_gguf_context * g = lm_gguf_init_from_file(fg.c_str(), p);
    ASSERT_NE(g, nullptr);
    lm_gguf_free(g);
}

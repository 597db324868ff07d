// Writer tests: byte equality with the independent encoder, round trips of
// every value type and several tensor types, only_meta, meta data, the
// reserved alignment key, setters and the writer's error paths.

#include "gguf_test_util.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <cmath>
#include <limits>
#include <memory>

using namespace gguf_test;

namespace {

struct GgufPtr {
    lm_gguf_context * g;
    explicit GgufPtr(lm_gguf_context * g_) : g(g_) {}
    ~GgufPtr() { lm_gguf_free(g); }
    operator lm_gguf_context *() const { return g; }
};

struct CtxPtr {
    lm_ggml_context * c;
    explicit CtxPtr(lm_ggml_context * c_ = nullptr) : c(c_) {}
    ~CtxPtr() {
        if (c) lm_ggml_free(c);
    }
};

lm_ggml_context * meta_ctx(int n_tensors = 16) {
    lm_ggml_init_params p = {(size_t) n_tensors * lm_ggml_tensor_overhead(), nullptr, true};
    return lm_ggml_init(p);
}

lm_ggml_tensor * new_tensor(lm_ggml_context * ctx, const char * name, lm_ggml_type type, std::vector<int64_t> ne) {
    lm_ggml_tensor * t = lm_ggml_new_tensor(ctx, type, (int) ne.size(), ne.data());
    lm_ggml_set_name(t, name);
    return t;
}

// The reference content built through the public writer API.
struct ReferenceViaApi {
    CtxPtr ctx{meta_ctx()};
    std::vector<std::vector<uint8_t>> payloads;
    GgufPtr g{lm_gguf_init_empty()};

    ReferenceViaApi() {
        lm_gguf_set_val_str(g, "general.architecture", "llama");
        lm_gguf_set_val_u8(g, "t.u8", 200);
        lm_gguf_set_val_i8(g, "t.i8", -100);
        lm_gguf_set_val_u16(g, "t.u16", 60000);
        lm_gguf_set_val_i16(g, "t.i16", -30000);
        lm_gguf_set_val_u32(g, "t.u32", 4000000000u);
        lm_gguf_set_val_i32(g, "t.i32", -2000000000);
        lm_gguf_set_val_f32(g, "t.f32", 3.25f);
        lm_gguf_set_val_bool(g, "t.bool", true);
        lm_gguf_set_val_u64(g, "t.u64", (1ull << 63) + 5);
        lm_gguf_set_val_i64(g, "t.i64", std::numeric_limits<int64_t>::min() + 7);
        lm_gguf_set_val_f64(g, "t.f64", -2.5e300);
        lm_gguf_set_val_str(g, "t.str", "h\xc3\xa9llo w\xc3\xb6rld");
        const uint8_t u8s[] = {1, 2, 3};
        lm_gguf_set_arr_data(g, "t.arr.u8", LM_GGUF_TYPE_UINT8, u8s, 3);
        const int16_t i16s[] = {-1, 2};
        lm_gguf_set_arr_data(g, "t.arr.i16", LM_GGUF_TYPE_INT16, i16s, 2);
        const float f32s[] = {0.5f, -1.5f, 2.25f};
        lm_gguf_set_arr_data(g, "t.arr.f32", LM_GGUF_TYPE_FLOAT32, f32s, 3);
        const bool bs[] = {true, false, true};
        lm_gguf_set_arr_data(g, "t.arr.bool", LM_GGUF_TYPE_BOOL, bs, 3);
        lm_gguf_set_arr_data(g, "t.arr.i64", LM_GGUF_TYPE_INT64, nullptr, 0);
        const double f64s[] = {1e-300};
        lm_gguf_set_arr_data(g, "t.arr.f64", LM_GGUF_TYPE_FLOAT64, f64s, 1);
        const char * strs[] = {"a", "", "tokenizer \xe2\x96\x81piece"};
        lm_gguf_set_arr_str(g, "t.arr.str", strs, 3);
        for (const RefTensor & rt : reference_tensors()) {
            lm_ggml_tensor * t = new_tensor(ctx.c, rt.name.c_str(), (lm_ggml_type) rt.type, rt.ne);
            payloads.push_back(tensor_payload(rt.name, rt.nbytes));
            t->data = payloads.back().data();
            lm_gguf_add_tensor(g, t);
        }
    }
};

} // namespace

TEST(GgufWrite, MatchesIndependentEncoder) {
    LogCapture log;
    ReferenceViaApi api;
    TempFile f("w");
    ASSERT_TRUE(lm_gguf_write_to_file(api.g, f.c_str(), false));
    const std::vector<uint8_t> got = read_file(f.path());
    const Reference ref = build_reference();
    ASSERT_EQ(got.size(), ref.bytes.size());
    for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], ref.bytes[i]) << "first difference at byte " << i;
    }
    EXPECT_EQ(log.errors(), 0) << log.text();
}

TEST(GgufWrite, MetaDataIsTheFilePrefix) {
    ReferenceViaApi api;
    const Reference ref = build_reference();
    const size_t n = lm_gguf_get_meta_size(api.g);
    EXPECT_EQ(n, ref.data_offset);
    std::vector<uint8_t> meta(n + 1, 0xAB);
    lm_gguf_get_meta_data(api.g, meta.data());
    EXPECT_EQ(meta[n], 0xAB); // nothing written past the reported size
    EXPECT_TRUE(std::equal(meta.begin(), meta.begin() + n, ref.bytes.begin()));
}

TEST(GgufWrite, OnlyMetaPlusDataIsTheFullFile) {
    ReferenceViaApi api;
    TempFile fm("meta"), ff("full");
    ASSERT_TRUE(lm_gguf_write_to_file(api.g, fm.c_str(), true));
    ASSERT_TRUE(lm_gguf_write_to_file(api.g, ff.c_str(), false));
    std::vector<uint8_t> meta = read_file(fm.path());
    ASSERT_EQ(meta.size(), lm_gguf_get_meta_size(api.g));
    // appending each tensor's bytes at its offset reproduces the full file
    std::vector<uint8_t> rebuilt = meta;
    for (size_t i = 0; i < api.payloads.size(); ++i) {
        const size_t at = meta.size() + lm_gguf_get_tensor_offset(api.g, (int64_t) i);
        ASSERT_GE(at, rebuilt.size());
        rebuilt.resize(at, 0);
        rebuilt.insert(rebuilt.end(), api.payloads[i].begin(), api.payloads[i].end());
    }
    rebuilt.resize((rebuilt.size() + 31) / 32 * 32, 0);
    EXPECT_EQ(rebuilt, read_file(ff.path()));
    // the metadata-only file names tensors whose data it lacks: refused
    LogCapture log;
    lm_gguf_init_params p = {true, nullptr};
    EXPECT_EQ(lm_gguf_init_from_file(fm.c_str(), p), nullptr);
    EXPECT_EQ(log.errors(), 1);
}

TEST(GgufWrite, RoundTripExtremeValues) {
    GgufPtr g(lm_gguf_init_empty());
    const float nan_f = std::numeric_limits<float>::quiet_NaN();
    const double inf_d = std::numeric_limits<double>::infinity();
    lm_gguf_set_val_u8(g, "u8", 255);
    lm_gguf_set_val_i8(g, "i8", -128);
    lm_gguf_set_val_u16(g, "u16", 65535);
    lm_gguf_set_val_i16(g, "i16", -32768);
    lm_gguf_set_val_u32(g, "u32", 0xffffffffu);
    lm_gguf_set_val_i32(g, "i32", std::numeric_limits<int32_t>::min());
    lm_gguf_set_val_f32(g, "f32.nan", nan_f);
    lm_gguf_set_val_f32(g, "f32.negzero", -0.0f);
    lm_gguf_set_val_u64(g, "u64", ~0ull);
    lm_gguf_set_val_i64(g, "i64", std::numeric_limits<int64_t>::min());
    lm_gguf_set_val_f64(g, "f64.inf", -inf_d);
    lm_gguf_set_val_bool(g, "bool", false);
    lm_gguf_set_val_str(g, "str.empty", "");
    const std::string long_str(100000, 'z');
    lm_gguf_set_val_str(g, "str.long", long_str.c_str());
    const uint64_t u64s[] = {0, 1, ~0ull};
    lm_gguf_set_arr_data(g, "arr.u64", LM_GGUF_TYPE_UINT64, u64s, 3);
    const int8_t i8s[] = {-128, 0, 127};
    lm_gguf_set_arr_data(g, "arr.i8", LM_GGUF_TYPE_INT8, i8s, 3);
    const uint16_t u16s[] = {0, 65535};
    lm_gguf_set_arr_data(g, "arr.u16", LM_GGUF_TYPE_UINT16, u16s, 2);
    const uint32_t u32s[] = {7};
    lm_gguf_set_arr_data(g, "arr.u32", LM_GGUF_TYPE_UINT32, u32s, 1);
    const int32_t i32s[] = {-7, 7};
    lm_gguf_set_arr_data(g, "arr.i32", LM_GGUF_TYPE_INT32, i32s, 2);
    const char * none[] = {nullptr};
    lm_gguf_set_arr_str(g, "arr.str.empty", none, 0);

    TempFile f("x");
    ASSERT_TRUE(lm_gguf_write_to_file(g, f.c_str(), false));
    lm_gguf_init_params p = {true, nullptr};
    GgufPtr r(lm_gguf_init_from_file(f.c_str(), p));
    ASSERT_NE(r.g, nullptr);
    ASSERT_EQ(lm_gguf_get_n_kv(r), lm_gguf_get_n_kv(g));
    for (int64_t i = 0; i < lm_gguf_get_n_kv(g); ++i) {
        EXPECT_STREQ(lm_gguf_get_key(r, i), lm_gguf_get_key(g, i)); // order is kept
    }
    EXPECT_EQ(lm_gguf_get_val_u8(r, lm_gguf_find_key(r, "u8")), 255);
    EXPECT_EQ(lm_gguf_get_val_i8(r, lm_gguf_find_key(r, "i8")), -128);
    EXPECT_EQ(lm_gguf_get_val_u16(r, lm_gguf_find_key(r, "u16")), 65535);
    EXPECT_EQ(lm_gguf_get_val_i16(r, lm_gguf_find_key(r, "i16")), -32768);
    EXPECT_EQ(lm_gguf_get_val_u32(r, lm_gguf_find_key(r, "u32")), 0xffffffffu);
    EXPECT_EQ(lm_gguf_get_val_i32(r, lm_gguf_find_key(r, "i32")), std::numeric_limits<int32_t>::min());
    EXPECT_TRUE(std::isnan(lm_gguf_get_val_f32(r, lm_gguf_find_key(r, "f32.nan"))));
    const float nz = lm_gguf_get_val_f32(r, lm_gguf_find_key(r, "f32.negzero"));
    EXPECT_TRUE(nz == 0.0f && std::signbit(nz));
    EXPECT_EQ(lm_gguf_get_val_u64(r, lm_gguf_find_key(r, "u64")), ~0ull);
    EXPECT_EQ(lm_gguf_get_val_i64(r, lm_gguf_find_key(r, "i64")), std::numeric_limits<int64_t>::min());
    EXPECT_EQ(lm_gguf_get_val_f64(r, lm_gguf_find_key(r, "f64.inf")), -inf_d);
    EXPECT_FALSE(lm_gguf_get_val_bool(r, lm_gguf_find_key(r, "bool")));
    EXPECT_STREQ(lm_gguf_get_val_str(r, lm_gguf_find_key(r, "str.empty")), "");
    EXPECT_EQ(std::string(lm_gguf_get_val_str(r, lm_gguf_find_key(r, "str.long"))), long_str);
    int64_t id = lm_gguf_find_key(r, "arr.u64");
    ASSERT_EQ(lm_gguf_get_arr_n(r, id), 3u);
    EXPECT_EQ(std::memcmp(lm_gguf_get_arr_data(r, id), u64s, sizeof(u64s)), 0);
    id = lm_gguf_find_key(r, "arr.i8");
    EXPECT_EQ(lm_gguf_get_arr_type(r, id), LM_GGUF_TYPE_INT8);
    EXPECT_EQ(std::memcmp(lm_gguf_get_arr_data(r, id), i8s, sizeof(i8s)), 0);
    id = lm_gguf_find_key(r, "arr.u16");
    EXPECT_EQ(std::memcmp(lm_gguf_get_arr_data(r, id), u16s, sizeof(u16s)), 0);
    id = lm_gguf_find_key(r, "arr.u32");
    EXPECT_EQ(lm_gguf_get_arr_type(r, id), LM_GGUF_TYPE_UINT32);
    EXPECT_EQ(std::memcmp(lm_gguf_get_arr_data(r, id), u32s, sizeof(u32s)), 0);
    id = lm_gguf_find_key(r, "arr.i32");
    EXPECT_EQ(std::memcmp(lm_gguf_get_arr_data(r, id), i32s, sizeof(i32s)), 0);
    id = lm_gguf_find_key(r, "arr.str.empty");
    EXPECT_EQ(lm_gguf_get_arr_type(r, id), LM_GGUF_TYPE_STRING);
    EXPECT_EQ(lm_gguf_get_arr_n(r, id), 0u);
}

TEST(GgufWrite, RoundTripTensorTypes) {
    struct Case {
        const char * name;
        lm_ggml_type type;
        std::vector<int64_t> ne;
        size_t nbytes;
    };
    // byte sizes from the block layouts: Q8_0 34 B / 32, Q4_0 18 B / 32, Q4_K 144 B / 256
    const std::vector<Case> cases = {
        {"f32", LM_GGML_TYPE_F32, {3, 5}, 60},
        {"f16", LM_GGML_TYPE_F16, {7}, 14},
        {"bf16", LM_GGML_TYPE_BF16, {2, 2, 2}, 16},
        {"q8_0", LM_GGML_TYPE_Q8_0, {64, 3}, 34 * 6},
        {"q4_0", LM_GGML_TYPE_Q4_0, {32, 1, 2, 2}, 18 * 4},
        {"q4_k", LM_GGML_TYPE_Q4_K, {256, 2}, 144 * 2},
        {"i32", LM_GGML_TYPE_I32, {5, 1, 1, 3}, 60},
        {"i8", LM_GGML_TYPE_I8, {1}, 1},
        {"empty", LM_GGML_TYPE_F32, {0, 4}, 0},
    };
    CtxPtr ctx(meta_ctx());
    GgufPtr g(lm_gguf_init_empty());
    std::vector<std::vector<uint8_t>> data;
    for (const Case & c : cases) {
        lm_ggml_tensor * t = new_tensor(ctx.c, c.name, c.type, c.ne);
        data.push_back(tensor_payload(c.name, c.nbytes));
        t->data = data.back().data();
        lm_gguf_add_tensor(g, t);
        EXPECT_EQ(lm_gguf_get_tensor_size(g, lm_gguf_find_tensor(g, c.name)), c.nbytes) << c.name;
    }
    TempFile f("t");
    ASSERT_TRUE(lm_gguf_write_to_file(g, f.c_str(), false));
    CtxPtr rctx;
    lm_gguf_init_params p = {false, &rctx.c};
    GgufPtr r(lm_gguf_init_from_file(f.c_str(), p));
    ASSERT_NE(r.g, nullptr);
    ASSERT_EQ(lm_gguf_get_n_tensors(r), (int64_t) cases.size());
    size_t expected_offset = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
        const Case & c = cases[i];
        SCOPED_TRACE(c.name);
        EXPECT_EQ(lm_gguf_get_tensor_offset(r, (int64_t) i), expected_offset);
        expected_offset += (c.nbytes + 31) / 32 * 32;
        lm_ggml_tensor * t = lm_ggml_get_tensor(rctx.c, c.name);
        ASSERT_NE(t, nullptr);
        EXPECT_EQ(t->type, c.type);
        for (size_t j = 0; j < 4; ++j) EXPECT_EQ(t->ne[j], j < c.ne.size() ? c.ne[j] : 1);
        ASSERT_EQ(lm_ggml_nbytes(t), c.nbytes);
        if (c.nbytes) {
            EXPECT_EQ(std::memcmp(t->data, data[i].data(), c.nbytes), 0);
        }
    }
}

TEST(GgufWrite, CopyFileThroughContexts) {
    // read with data, copy keys and tensors into a fresh context, write: same bytes
    const Reference ref = build_reference();
    TempFile in("in"), out("out");
    ASSERT_TRUE(write_file(in.path(), ref.bytes));
    CtxPtr ctx;
    lm_gguf_init_params p = {false, &ctx.c};
    GgufPtr src(lm_gguf_init_from_file(in.c_str(), p));
    ASSERT_NE(src.g, nullptr);
    GgufPtr dst(lm_gguf_init_empty());
    lm_gguf_set_kv(dst, src);
    for (int64_t i = 0; i < lm_gguf_get_n_tensors(src); ++i) {
        lm_gguf_add_tensor(dst, lm_ggml_get_tensor(ctx.c, lm_gguf_get_tensor_name(src, i)));
    }
    ASSERT_TRUE(lm_gguf_write_to_file(dst, out.c_str(), false));
    EXPECT_EQ(read_file(out.path()), ref.bytes);
    // and the read context itself writes the same file
    TempFile again("again");
    ASSERT_TRUE(lm_gguf_write_to_file(src, again.c_str(), false));
    EXPECT_EQ(read_file(again.path()), ref.bytes);
}

TEST(GgufWrite, TensorDataFromBackendBuffer) {
    CtxPtr ctx(meta_ctx());
    lm_ggml_tensor * t = new_tensor(ctx.c, "w", LM_GGML_TYPE_F32, {6, 2});
    lm_ggml_backend_buffer_t buf =
        lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx.c, lm_ggml_backend_cpu_buffer_type());
    ASSERT_NE(buf, nullptr);
    std::vector<float> vals(12);
    for (int i = 0; i < 12; ++i) vals[i] = 0.25f * (float) i - 1.0f;
    lm_ggml_backend_tensor_set(t, vals.data(), 0, sizeof(float) * 12);
    GgufPtr g(lm_gguf_init_empty());
    lm_gguf_add_tensor(g, t);
    TempFile f("b");
    ASSERT_TRUE(lm_gguf_write_to_file(g, f.c_str(), false));
    lm_ggml_backend_buffer_free(buf);
    const std::vector<uint8_t> bytes = read_file(f.path());
    const size_t off = lm_gguf_get_meta_size(g);
    ASSERT_GE(bytes.size(), off + 48);
    EXPECT_EQ(std::memcmp(bytes.data() + off, vals.data(), 48), 0);
}

TEST(GgufWrite, AlignmentKeyDrivesLayout) {
    ReferenceViaApi api;
    LogCapture log;
    lm_gguf_set_val_u32(api.g, LM_GGUF_KEY_GENERAL_ALIGNMENT, 64);
    EXPECT_EQ(lm_gguf_get_alignment(api.g), 64u);
    EXPECT_EQ(lm_gguf_get_tensor_offset(api.g, 1), 64u);
    EXPECT_EQ(lm_gguf_get_tensor_offset(api.g, 2), 128u);
    EXPECT_EQ(lm_gguf_get_meta_size(api.g) % 64, 0u);
    TempFile f("a");
    ASSERT_TRUE(lm_gguf_write_to_file(api.g, f.c_str(), false));
    {
        CtxPtr ctx;
        lm_gguf_init_params p = {false, &ctx.c};
        GgufPtr r(lm_gguf_init_from_file(f.c_str(), p));
        ASSERT_NE(r.g, nullptr);
        EXPECT_EQ(lm_gguf_get_alignment(r), 64u);
        EXPECT_EQ(lm_gguf_get_tensor_offset(r, 2), 128u);
        lm_ggml_tensor * t = lm_ggml_get_tensor(ctx.c, "blk.0.q8");
        ASSERT_NE(t, nullptr);
        EXPECT_EQ(std::memcmp(t->data, api.payloads[2].data(), 68), 0);
    }
    EXPECT_EQ(log.errors(), 0) << log.text();

    // invalid alignment values and types are refused, one error each, no change
    lm_gguf_set_val_u32(api.g, LM_GGUF_KEY_GENERAL_ALIGNMENT, 48);
    EXPECT_EQ(log.errors(), 1);
    lm_gguf_set_val_u32(api.g, LM_GGUF_KEY_GENERAL_ALIGNMENT, 0);
    EXPECT_EQ(log.errors(), 2);
    lm_gguf_set_val_i32(api.g, LM_GGUF_KEY_GENERAL_ALIGNMENT, 16);
    EXPECT_EQ(log.errors(), 3);
    lm_gguf_set_val_str(api.g, LM_GGUF_KEY_GENERAL_ALIGNMENT, "16");
    EXPECT_EQ(log.errors(), 4);
    const uint32_t arr[] = {16};
    lm_gguf_set_arr_data(api.g, LM_GGUF_KEY_GENERAL_ALIGNMENT, LM_GGUF_TYPE_UINT32, arr, 1);
    EXPECT_EQ(log.errors(), 5);
    EXPECT_EQ(lm_gguf_get_alignment(api.g), 64u);
    EXPECT_EQ(lm_gguf_get_kv_type(api.g, lm_gguf_find_key(api.g, LM_GGUF_KEY_GENERAL_ALIGNMENT)), LM_GGUF_TYPE_UINT32);

    // removing the key restores the default layout
    EXPECT_GE(lm_gguf_remove_key(api.g, LM_GGUF_KEY_GENERAL_ALIGNMENT), 0);
    EXPECT_EQ(lm_gguf_get_alignment(api.g), 32u);
    EXPECT_EQ(lm_gguf_get_tensor_offset(api.g, 2), 96u);
}

TEST(GgufWrite, SettersReplaceRemoveAndCopy) {
    GgufPtr g(lm_gguf_init_empty());
    lm_gguf_set_val_u32(g, "a", 1);
    lm_gguf_set_val_str(g, "b", "x");
    lm_gguf_set_val_f32(g, "a", 2.5f); // replaces "a", which moves to the end
    ASSERT_EQ(lm_gguf_get_n_kv(g), 2);
    EXPECT_STREQ(lm_gguf_get_key(g, 0), "b");
    EXPECT_STREQ(lm_gguf_get_key(g, 1), "a");
    EXPECT_EQ(lm_gguf_get_kv_type(g, 1), LM_GGUF_TYPE_FLOAT32);
    EXPECT_EQ(lm_gguf_get_val_f32(g, 1), 2.5f);
    const uint8_t bools[] = {0, 7, 1}; // any non-zero byte is true, stored as 1
    lm_gguf_set_arr_data(g, "bools", LM_GGUF_TYPE_BOOL, bools, 3);
    const uint8_t * stored = (const uint8_t *) lm_gguf_get_arr_data(g, lm_gguf_find_key(g, "bools"));
    EXPECT_EQ(stored[1], 1);
    EXPECT_EQ(lm_gguf_remove_key(g, "b"), 0);
    EXPECT_EQ(lm_gguf_remove_key(g, "b"), -1);
    EXPECT_EQ(lm_gguf_get_n_kv(g), 2);

    const char * strs[] = {"x", "yy"};
    lm_gguf_set_arr_str(g, "s", strs, 2);
    GgufPtr h(lm_gguf_init_empty());
    lm_gguf_set_val_u8(h, "a", 9); // overwritten by the copy
    lm_gguf_set_val_u8(h, "keep", 3);
    lm_gguf_set_kv(h, g);
    ASSERT_EQ(lm_gguf_get_n_kv(h), 4);
    EXPECT_EQ(lm_gguf_get_val_u8(h, lm_gguf_find_key(h, "keep")), 3);
    EXPECT_EQ(lm_gguf_get_val_f32(h, lm_gguf_find_key(h, "a")), 2.5f);
    EXPECT_STREQ(lm_gguf_get_arr_str(h, lm_gguf_find_key(h, "s"), 1), "yy");
    lm_gguf_set_kv(h, h); // copying onto itself changes nothing but order
    EXPECT_EQ(lm_gguf_get_n_kv(h), 4);
}

TEST(GgufWrite, SetTensorTypeAndData) {
    CtxPtr ctx(meta_ctx());
    GgufPtr g(lm_gguf_init_empty());
    lm_gguf_add_tensor(g, new_tensor(ctx.c, "a", LM_GGML_TYPE_F32, {64}));
    lm_gguf_add_tensor(g, new_tensor(ctx.c, "b", LM_GGML_TYPE_F32, {10}));
    EXPECT_EQ(lm_gguf_get_tensor_offset(g, 1), 256u);
    lm_gguf_set_tensor_type(g, "a", LM_GGML_TYPE_Q8_0); // 2 blocks of 34 bytes
    EXPECT_EQ(lm_gguf_get_tensor_size(g, 0), 68u);
    EXPECT_EQ(lm_gguf_get_tensor_offset(g, 1), 96u);
    LogCapture log;
    lm_gguf_set_tensor_type(g, "b", LM_GGML_TYPE_Q8_0); // 10 is not a multiple of 32
    EXPECT_EQ(log.errors(), 1);
    EXPECT_EQ(lm_gguf_get_tensor_type(g, 1), LM_GGML_TYPE_F32);
    lm_gguf_set_tensor_type(g, "zzz", LM_GGML_TYPE_F16);
    EXPECT_EQ(log.errors(), 2);

    // no data yet: writing fails with one error and leaves no file behind
    TempFile f("d");
    log.clear();
    EXPECT_FALSE(lm_gguf_write_to_file(g, f.c_str(), false));
    EXPECT_EQ(log.errors(), 1);
    EXPECT_TRUE(read_file(f.path()).empty());
    EXPECT_TRUE(lm_gguf_write_to_file(g, f.c_str(), true)); // metadata needs no data

    std::vector<uint8_t> a = tensor_payload("a", 68), b = tensor_payload("b", 40);
    lm_gguf_set_tensor_data(g, "a", a.data());
    lm_gguf_set_tensor_data(g, "b", b.data());
    ASSERT_TRUE(lm_gguf_write_to_file(g, f.c_str(), false));
    CtxPtr rctx;
    lm_gguf_init_params p = {false, &rctx.c};
    GgufPtr r(lm_gguf_init_from_file(f.c_str(), p));
    ASSERT_NE(r.g, nullptr);
    EXPECT_EQ(lm_gguf_get_tensor_type(r, 0), LM_GGML_TYPE_Q8_0);
    EXPECT_EQ(std::memcmp(lm_ggml_get_tensor(rctx.c, "a")->data, a.data(), 68), 0);
    EXPECT_EQ(std::memcmp(lm_ggml_get_tensor(rctx.c, "b")->data, b.data(), 40), 0);
}

TEST(GgufWrite, AddTensorErrors) {
    CtxPtr ctx(meta_ctx());
    GgufPtr g(lm_gguf_init_empty());
    LogCapture log;
    lm_ggml_tensor * t = new_tensor(ctx.c, "a", LM_GGML_TYPE_F32, {4, 4});
    lm_gguf_add_tensor(g, t);
    lm_gguf_add_tensor(g, t); // duplicate name
    EXPECT_EQ(log.errors(), 1);
    EXPECT_EQ(lm_gguf_get_n_tensors(g), 1);
    // a transposed view with data is not contiguous
    std::vector<float> backing(16);
    lm_ggml_tensor * src = new_tensor(ctx.c, "src", LM_GGML_TYPE_F32, {4, 4});
    src->data = backing.data();
    lm_ggml_tensor * tr = lm_ggml_transpose(ctx.c, src);
    lm_ggml_set_name(tr, "tr");
    lm_gguf_add_tensor(g, tr);
    EXPECT_EQ(log.errors(), 2);
    lm_gguf_add_tensor(g, nullptr);
    EXPECT_EQ(log.errors(), 3);
    EXPECT_EQ(lm_gguf_get_n_tensors(g), 1);
}

TEST(GgufWrite, UnwritablePathIsOneError) {
    ReferenceViaApi api;
    LogCapture log;
    EXPECT_FALSE(lm_gguf_write_to_file(api.g, "/nonexistent/dir/x.gguf", false));
    EXPECT_EQ(log.errors(), 1);
    EXPECT_NE(log.text().find("/nonexistent/dir/x.gguf"), std::string::npos);
}

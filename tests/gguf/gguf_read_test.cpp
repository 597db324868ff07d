// Reading the hand-encoded reference file: every value, every tensor info,
// the lm_ggml_context built with and without data, and GGUF v2.

#include "gguf_test_util.h"

#include <cmath>
#include <limits>

using namespace gguf_test;

namespace {

struct Loaded {
    lm_gguf_context * g = nullptr;
    lm_ggml_context * ctx = nullptr;
    ~Loaded() {
        lm_gguf_free(g);
        if (ctx) lm_ggml_free(ctx);
    }
};

void load(const std::vector<uint8_t> & bytes, Loaded & out, bool want_ctx, bool no_alloc, const TempFile & f) {
    ASSERT_TRUE(write_file(f.path(), bytes));
    lm_gguf_init_params p = {no_alloc, want_ctx ? &out.ctx : nullptr};
    out.g = lm_gguf_init_from_file(f.c_str(), p);
}

int64_t key_of(const lm_gguf_context * g, const char * k) {
    const int64_t id = lm_gguf_find_key(g, k);
    EXPECT_GE(id, 0) << k;
    return id;
}

} // namespace

TEST(GgufRead, ReferenceMetadata) {
    const Reference ref = build_reference();
    TempFile f("ref");
    Loaded l;
    LogCapture log;
    load(ref.bytes, l, false, true, f);
    ASSERT_NE(l.g, nullptr) << log.text();
    EXPECT_EQ(log.errors(), 0);

    EXPECT_EQ(lm_gguf_get_version(l.g), 3u);
    EXPECT_EQ(lm_gguf_get_alignment(l.g), 32u);
    EXPECT_EQ(lm_gguf_get_data_offset(l.g), ref.data_offset);
    EXPECT_EQ(ref.data_offset % 32, 0u);
    EXPECT_EQ(lm_gguf_get_n_kv(l.g), 20);
    EXPECT_EQ(lm_gguf_find_key(l.g, "no.such.key"), -1);

    EXPECT_STREQ(lm_gguf_get_key(l.g, 0), "general.architecture");
    EXPECT_STREQ(lm_gguf_get_val_str(l.g, 0), "llama");
    EXPECT_EQ(lm_gguf_get_kv_type(l.g, 0), LM_GGUF_TYPE_STRING);

    EXPECT_EQ(lm_gguf_get_val_u8(l.g, key_of(l.g, "t.u8")), 200);
    EXPECT_EQ(lm_gguf_get_val_i8(l.g, key_of(l.g, "t.i8")), -100);
    EXPECT_EQ(lm_gguf_get_val_u16(l.g, key_of(l.g, "t.u16")), 60000);
    EXPECT_EQ(lm_gguf_get_val_i16(l.g, key_of(l.g, "t.i16")), -30000);
    EXPECT_EQ(lm_gguf_get_val_u32(l.g, key_of(l.g, "t.u32")), 4000000000u);
    EXPECT_EQ(lm_gguf_get_val_i32(l.g, key_of(l.g, "t.i32")), -2000000000);
    EXPECT_EQ(lm_gguf_get_val_f32(l.g, key_of(l.g, "t.f32")), 3.25f);
    EXPECT_TRUE(lm_gguf_get_val_bool(l.g, key_of(l.g, "t.bool")));
    EXPECT_EQ(lm_gguf_get_val_u64(l.g, key_of(l.g, "t.u64")), (1ull << 63) + 5);
    EXPECT_EQ(lm_gguf_get_val_i64(l.g, key_of(l.g, "t.i64")), std::numeric_limits<int64_t>::min() + 7);
    EXPECT_EQ(lm_gguf_get_val_f64(l.g, key_of(l.g, "t.f64")), -2.5e300);
    EXPECT_STREQ(lm_gguf_get_val_str(l.g, key_of(l.g, "t.str")), "h\xc3\xa9llo w\xc3\xb6rld");

    const struct {
        const char * k;
        lm_gguf_type t;
    } types[] = {
        {"t.u8", LM_GGUF_TYPE_UINT8},    {"t.i8", LM_GGUF_TYPE_INT8},     {"t.u16", LM_GGUF_TYPE_UINT16},
        {"t.i16", LM_GGUF_TYPE_INT16},   {"t.u32", LM_GGUF_TYPE_UINT32},  {"t.i32", LM_GGUF_TYPE_INT32},
        {"t.f32", LM_GGUF_TYPE_FLOAT32}, {"t.bool", LM_GGUF_TYPE_BOOL},   {"t.u64", LM_GGUF_TYPE_UINT64},
        {"t.i64", LM_GGUF_TYPE_INT64},   {"t.f64", LM_GGUF_TYPE_FLOAT64}, {"t.str", LM_GGUF_TYPE_STRING},
    };
    for (const auto & kt : types) {
        EXPECT_EQ(lm_gguf_get_kv_type(l.g, key_of(l.g, kt.k)), kt.t) << kt.k;
    }

    int64_t id = key_of(l.g, "t.arr.u8");
    EXPECT_EQ(lm_gguf_get_kv_type(l.g, id), LM_GGUF_TYPE_ARRAY);
    EXPECT_EQ(lm_gguf_get_arr_type(l.g, id), LM_GGUF_TYPE_UINT8);
    ASSERT_EQ(lm_gguf_get_arr_n(l.g, id), 3u);
    const uint8_t * u8s = (const uint8_t *) lm_gguf_get_arr_data(l.g, id);
    EXPECT_EQ(u8s[0], 1);
    EXPECT_EQ(u8s[1], 2);
    EXPECT_EQ(u8s[2], 3);

    id = key_of(l.g, "t.arr.i16");
    EXPECT_EQ(lm_gguf_get_arr_type(l.g, id), LM_GGUF_TYPE_INT16);
    ASSERT_EQ(lm_gguf_get_arr_n(l.g, id), 2u);
    int16_t i16s[2];
    std::memcpy(i16s, lm_gguf_get_arr_data(l.g, id), sizeof(i16s));
    EXPECT_EQ(i16s[0], -1);
    EXPECT_EQ(i16s[1], 2);

    id = key_of(l.g, "t.arr.f32");
    ASSERT_EQ(lm_gguf_get_arr_n(l.g, id), 3u);
    float f32s[3];
    std::memcpy(f32s, lm_gguf_get_arr_data(l.g, id), sizeof(f32s));
    EXPECT_EQ(f32s[0], 0.5f);
    EXPECT_EQ(f32s[1], -1.5f);
    EXPECT_EQ(f32s[2], 2.25f);

    id = key_of(l.g, "t.arr.bool");
    EXPECT_EQ(lm_gguf_get_arr_type(l.g, id), LM_GGUF_TYPE_BOOL);
    ASSERT_EQ(lm_gguf_get_arr_n(l.g, id), 3u);
    const uint8_t * bs = (const uint8_t *) lm_gguf_get_arr_data(l.g, id);
    EXPECT_EQ(bs[0], 1);
    EXPECT_EQ(bs[1], 0);
    EXPECT_EQ(bs[2], 1);

    id = key_of(l.g, "t.arr.i64");
    EXPECT_EQ(lm_gguf_get_arr_type(l.g, id), LM_GGUF_TYPE_INT64);
    EXPECT_EQ(lm_gguf_get_arr_n(l.g, id), 0u);

    id = key_of(l.g, "t.arr.f64");
    ASSERT_EQ(lm_gguf_get_arr_n(l.g, id), 1u);
    double d;
    std::memcpy(&d, lm_gguf_get_arr_data(l.g, id), sizeof(d));
    EXPECT_EQ(d, 1e-300);

    id = key_of(l.g, "t.arr.str");
    EXPECT_EQ(lm_gguf_get_arr_type(l.g, id), LM_GGUF_TYPE_STRING);
    ASSERT_EQ(lm_gguf_get_arr_n(l.g, id), 3u);
    EXPECT_STREQ(lm_gguf_get_arr_str(l.g, id, 0), "a");
    EXPECT_STREQ(lm_gguf_get_arr_str(l.g, id, 1), "");
    EXPECT_STREQ(lm_gguf_get_arr_str(l.g, id, 2), "tokenizer \xe2\x96\x81piece");
    EXPECT_EQ(log.errors(), 0) << log.text();
}

TEST(GgufRead, ReferenceTensorInfos) {
    const Reference ref = build_reference();
    TempFile f("ref");
    Loaded l;
    load(ref.bytes, l, false, true, f);
    ASSERT_NE(l.g, nullptr);
    const std::vector<RefTensor> ts = reference_tensors();
    ASSERT_EQ(lm_gguf_get_n_tensors(l.g), (int64_t) ts.size());
    size_t expected_offset = 0;
    for (size_t i = 0; i < ts.size(); ++i) {
        EXPECT_STREQ(lm_gguf_get_tensor_name(l.g, (int64_t) i), ts[i].name.c_str());
        EXPECT_EQ(lm_gguf_find_tensor(l.g, ts[i].name.c_str()), (int64_t) i);
        EXPECT_EQ((int) lm_gguf_get_tensor_type(l.g, (int64_t) i), ts[i].type);
        EXPECT_EQ(lm_gguf_get_tensor_size(l.g, (int64_t) i), ts[i].nbytes);
        EXPECT_EQ(lm_gguf_get_tensor_offset(l.g, (int64_t) i), expected_offset);
        EXPECT_EQ(lm_gguf_get_data_offset(l.g) + lm_gguf_get_tensor_offset(l.g, (int64_t) i),
                  ref.at.at("data." + ts[i].name));
        expected_offset += (ts[i].nbytes + 31) / 32 * 32;
    }
    EXPECT_EQ(lm_gguf_find_tensor(l.g, "missing"), -1);
}

TEST(GgufRead, ContextWithData) {
    const Reference ref = build_reference();
    TempFile f("ref");
    Loaded l;
    load(ref.bytes, l, true, false, f);
    ASSERT_NE(l.g, nullptr);
    ASSERT_NE(l.ctx, nullptr);
    for (const RefTensor & rt : reference_tensors()) {
        lm_ggml_tensor * t = lm_ggml_get_tensor(l.ctx, rt.name.c_str());
        ASSERT_NE(t, nullptr) << rt.name;
        EXPECT_EQ((int) t->type, rt.type);
        for (size_t j = 0; j < 4; ++j) {
            EXPECT_EQ(t->ne[j], j < rt.ne.size() ? rt.ne[j] : 1) << rt.name << " dim " << j;
        }
        ASSERT_NE(t->data, nullptr);
        ASSERT_EQ(lm_ggml_nbytes(t), rt.nbytes);
        const std::vector<uint8_t> expect = tensor_payload(rt.name, rt.nbytes);
        EXPECT_EQ(std::memcmp(t->data, expect.data(), rt.nbytes), 0) << rt.name;
        EXPECT_EQ(std::memcmp(t->data, ref.bytes.data() + ref.at.at("data." + rt.name), rt.nbytes), 0);
    }
}

TEST(GgufRead, ContextNoAlloc) {
    const Reference ref = build_reference();
    TempFile f("ref");
    Loaded l;
    load(ref.bytes, l, true, true, f);
    ASSERT_NE(l.g, nullptr);
    ASSERT_NE(l.ctx, nullptr);
    int n = 0;
    for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(l.ctx); t; t = lm_ggml_get_next_tensor(l.ctx, t)) {
        EXPECT_EQ(t->data, nullptr) << t->name;
        EXPECT_EQ(lm_gguf_find_tensor(l.g, t->name), n);
        n++;
    }
    EXPECT_EQ(n, 3);
}

TEST(GgufRead, VersionTwoIsAccepted) {
    RefOptions o;
    o.version = 2;
    const Reference ref = build_reference(o);
    TempFile f("v2");
    Loaded l;
    load(ref.bytes, l, true, false, f);
    ASSERT_NE(l.g, nullptr);
    EXPECT_EQ(lm_gguf_get_version(l.g), 2u);
    EXPECT_EQ(lm_gguf_get_n_kv(l.g), 20);
}

TEST(GgufRead, ExplicitAlignment) {
    RefOptions o;
    o.alignment = 64;
    const Reference ref = build_reference(o);
    TempFile f("a64");
    Loaded l;
    load(ref.bytes, l, true, false, f);
    ASSERT_NE(l.g, nullptr);
    EXPECT_EQ(lm_gguf_get_alignment(l.g), 64u);
    EXPECT_EQ(lm_gguf_get_data_offset(l.g) % 64, 0u);
    EXPECT_EQ(lm_gguf_get_data_offset(l.g), ref.data_offset);
    EXPECT_EQ(lm_gguf_get_tensor_offset(l.g, 1), 64u);  // 48 bytes padded to 64
    EXPECT_EQ(lm_gguf_get_tensor_offset(l.g, 2), 128u); // + 16 padded to 64
}

TEST(GgufRead, EmptyFileWithoutTensors) {
    Enc e;
    e.raw("GGUF", 4);
    e.u32(3);
    e.i64(0);
    e.i64(0);
    TempFile f("empty");
    Loaded l;
    load(e.b, l, true, false, f);
    ASSERT_NE(l.g, nullptr);
    EXPECT_EQ(lm_gguf_get_n_kv(l.g), 0);
    EXPECT_EQ(lm_gguf_get_n_tensors(l.g), 0);
    ASSERT_NE(l.ctx, nullptr);
}

TEST(GgufRead, MissingFileIsOneError) {
    LogCapture log;
    lm_ggml_context * ctx = reinterpret_cast<lm_ggml_context *>(0x1); // must be reset to NULL
    lm_gguf_init_params p = {false, &ctx};
    EXPECT_EQ(lm_gguf_init_from_file("/nonexistent/dir/model.gguf", p), nullptr);
    EXPECT_EQ(ctx, nullptr);
    EXPECT_EQ(log.errors(), 1);
    EXPECT_NE(log.text().find("/nonexistent/dir/model.gguf"), std::string::npos);
    log.clear();
    EXPECT_EQ(lm_gguf_init_from_file("/tmp", p), nullptr); // a directory
    EXPECT_EQ(log.errors(), 1);
}

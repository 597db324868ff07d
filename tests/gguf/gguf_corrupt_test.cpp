// The corrupt-file corpus: variants of the reference file, each of which must
// give NULL, leave no lm_ggml_context behind, log exactly one error line that
// names a byte offset, and not crash (the suite also runs under ASan/UBSan).

#include "gguf_test_util.h"

#include <cinttypes>
#include <cstdint>
#include <limits>

using namespace gguf_test;

namespace {

constexpr uint64_t HUGE_U64 = (1ull << 63) - 1;

// Parses bytes in both modes (metadata only; context with data) and checks
// the failure contract. `expect` must appear in the error line.
void expect_rejected(const std::vector<uint8_t> & bytes, const std::string & expect, const std::string & why) {
    SCOPED_TRACE(why);
    TempFile f("bad");
    ASSERT_TRUE(write_file(f.path(), bytes));
    for (int mode = 0; mode < 2; ++mode) {
        LogCapture log;
        lm_ggml_context * ctx = nullptr;
        lm_gguf_init_params p = {false, mode == 1 ? &ctx : nullptr};
        lm_gguf_context * g = lm_gguf_init_from_file(f.c_str(), p);
        EXPECT_EQ(g, nullptr) << "mode " << mode;
        EXPECT_EQ(ctx, nullptr);
        EXPECT_EQ(log.errors(), 1) << log.text();
        EXPECT_NE(log.text().find(expect), std::string::npos) << "log: " << log.text() << "expected: " << expect;
        EXPECT_NE(log.text().find("byte offset"), std::string::npos) << log.text();
        lm_gguf_free(g);
        if (ctx) lm_ggml_free(ctx);
    }
}

bool accepted(const std::vector<uint8_t> & bytes, int * errors) {
    TempFile f("maybe");
    if (!write_file(f.path(), bytes)) return false;
    LogCapture log;
    lm_ggml_context * ctx = nullptr;
    lm_gguf_init_params p = {false, &ctx};
    lm_gguf_context * g = lm_gguf_init_from_file(f.c_str(), p);
    *errors = log.errors();
    const bool ok = g != nullptr;
    EXPECT_EQ(ok, ctx != nullptr);
    lm_gguf_free(g);
    if (ctx) lm_ggml_free(ctx);
    return ok;
}

Reference ref() { return build_reference(); }

template <typename T> std::vector<uint8_t> patched(const Reference & r, const std::string & field, T v) {
    std::vector<uint8_t> b = r.bytes;
    std::memcpy(b.data() + r.at.at(field), &v, sizeof(T));
    return b;
}

} // namespace

TEST(GgufCorrupt, BadMagic) {
    Reference r = ref();
    std::vector<uint8_t> b = r.bytes;
    b[3] = 'X';
    expect_rejected(b, "magic", "GGUX");
    expect_rejected(std::vector<uint8_t>(r.bytes.begin(), r.bytes.begin() + 3), "magic", "3-byte file");
    expect_rejected({}, "magic", "empty file");
}

TEST(GgufCorrupt, BadVersion) {
    const Reference r = ref();
    expect_rejected(patched<uint32_t>(r, "version", 0), "version 0", "v0");
    expect_rejected(patched<uint32_t>(r, "version", 1), "version 1", "v1");
    expect_rejected(patched<uint32_t>(r, "version", 4), "version 4", "v4");
    expect_rejected(patched<uint32_t>(r, "version", 0x03000000u), "big-endian", "byte-swapped v3");
}

TEST(GgufCorrupt, HugeAndNegativeCounts) {
    const Reference r = ref();
    expect_rejected(patched<int64_t>(r, "n_kv", (int64_t) HUGE_U64), "key/value count", "n_kv ~2^63");
    expect_rejected(patched<int64_t>(r, "n_kv", -1), "key/value count", "n_kv -1");
    expect_rejected(patched<int64_t>(r, "n_tensors", (int64_t) HUGE_U64), "tensor count", "n_tensors ~2^63");
    expect_rejected(patched<int64_t>(r, "n_tensors", -5), "tensor count", "n_tensors -5");
    expect_rejected(patched<int64_t>(r, "n_tensors", 1000), "tensor count", "n_tensors beyond the file");
    expect_rejected(patched<uint64_t>(r, "kv.t.arr.u8.count", HUGE_U64), "t.arr.u8", "u8 array length ~2^63");
    expect_rejected(patched<uint64_t>(r, "kv.t.arr.f32.count", (1ull << 62) + 1), "t.arr.f32",
                    "f32 array whose byte size overflows");
    expect_rejected(patched<uint64_t>(r, "kv.t.arr.str.count", HUGE_U64), "t.arr.str", "string array length ~2^63");
}

TEST(GgufCorrupt, BadStringLengths) {
    const Reference r = ref();
    expect_rejected(patched<uint64_t>(r, "kv.t.u8", HUGE_U64), "string length", "key length ~2^63");
    expect_rejected(patched<uint64_t>(r, "kv.t.str.value", HUGE_U64), "string length", "value length ~2^63");
    expect_rejected(patched<uint64_t>(r, "kv.t.arr.str.value", HUGE_U64), "string length", "array string length");
    expect_rejected(patched<uint64_t>(r, "ti.norm.weight", HUGE_U64), "string length", "tensor name length");
    // a length that runs exactly one byte past the end of the file
    const uint64_t past = r.bytes.size() - (r.at.at("kv.t.str.value") + 8) + 1;
    expect_rejected(patched<uint64_t>(r, "kv.t.str.value", past), "string length", "one byte too long");
    expect_rejected(patched<uint64_t>(r, "kv.t.u8", 0), "empty", "empty key");
    // a 64-byte tensor name (the limit is 63)
    {
        Enc e;
        e.raw("GGUF", 4);
        e.u32(3);
        e.i64(1);
        e.i64(0);
        e.str(std::string(64, 'n'));
        e.u32(1);
        e.i64(4);
        e.i32(0);
        e.u64(0);
        e.pad(32);
        const std::vector<uint8_t> data(16, 0);
        e.raw(data.data(), data.size());
        expect_rejected(e.b, "limit is 63", "tensor name too long");
    }
}

TEST(GgufCorrupt, DuplicateKeysAndTensorNames) {
    RefOptions o;
    o.duplicate_key = true;
    expect_rejected(build_reference(o).bytes, "duplicate key 't.u8'", "duplicate key");
    RefOptions t;
    t.duplicate_tensor = true;
    expect_rejected(build_reference(t).bytes, "duplicate tensor name 'tok_embd.weight'", "duplicate tensor");
}

TEST(GgufCorrupt, UnknownValueTypes) {
    const Reference r = ref();
    expect_rejected(patched<int32_t>(r, "kv.t.u16.type", 13), "unknown value type 13", "type 13");
    expect_rejected(patched<int32_t>(r, "kv.t.u16.type", -1), "unknown value type -1", "type -1");
}

TEST(GgufCorrupt, UnknownArrayElementTypes) {
    const Reference r = ref();
    const size_t elem = r.at.at("kv.t.arr.u8.type") + 4;
    std::vector<uint8_t> b = r.bytes;
    int32_t v = 77;
    std::memcpy(b.data() + elem, &v, 4);
    expect_rejected(b, "unknown array element type 77", "elem 77");
    v = LM_GGUF_TYPE_ARRAY;
    std::memcpy(b.data() + elem, &v, 4);
    expect_rejected(b, "arrays of arrays", "nested array");
}

TEST(GgufCorrupt, BadTensorTypes) {
    const Reference r = ref();
    expect_rejected(patched<int32_t>(r, "ti.norm.weight.type", LM_GGML_TYPE_COUNT), "unknown tensor type",
                    "type COUNT");
    expect_rejected(patched<int32_t>(r, "ti.norm.weight.type", 4), "unknown tensor type 4", "removed Q4_2");
    expect_rejected(patched<int32_t>(r, "ti.norm.weight.type", -1), "unknown tensor type -1", "type -1");
    expect_rejected(patched<int32_t>(r, "ti.norm.weight.type", 1000000), "unknown tensor type", "type 1e6");
    // F16 (8) retyped as Q8_0: 8 is not a multiple of the block size 32
    expect_rejected(patched<int32_t>(r, "ti.norm.weight.type", LM_GGML_TYPE_Q8_0), "block size", "ne0 % blck");
}

TEST(GgufCorrupt, BadDimensions) {
    const Reference r = ref();
    expect_rejected(patched<uint32_t>(r, "ti.norm.weight.n_dims", 0), "n_dims = 0", "n_dims 0");
    expect_rejected(patched<uint32_t>(r, "ti.norm.weight.n_dims", 5), "n_dims = 5", "n_dims 5");
    expect_rejected(patched<uint32_t>(r, "ti.norm.weight.n_dims", 0xffffffffu), "n_dims", "n_dims 2^32-1");
    expect_rejected(patched<int64_t>(r, "ti.norm.weight.ne0", -8), "negative", "ne0 -8");
    const size_t ne1 = r.at.at("ti.tok_embd.weight.ne0") + 8;
    std::vector<uint8_t> b = r.bytes;
    int64_t v = std::numeric_limits<int64_t>::min();
    std::memcpy(b.data() + ne1, &v, 8);
    expect_rejected(b, "negative", "ne1 INT64_MIN");
}

TEST(GgufCorrupt, ShapeOverflows) {
    // hand-built single-tensor files, so the shapes can be anything
    auto one_tensor = [](std::vector<int64_t> ne, int32_t type, uint64_t offset) {
        Enc e;
        e.raw("GGUF", 4);
        e.u32(3);
        e.i64(1);
        e.i64(0);
        e.str("w");
        e.u32((uint32_t) ne.size());
        for (int64_t d : ne) e.i64(d);
        e.i32(type);
        e.u64(offset);
        e.pad(32);
        e.b.resize(e.b.size() + 64, 0);
        return e.b;
    };
    // element count 2^32 * 2^32 overflows int64
    expect_rejected(one_tensor({1ll << 32, 1ll << 32}, 0, 0), "overflows int64", "ne product > int64");
    // a zero dimension does not hide an overflow of the others
    expect_rejected(one_tensor({0, 1ll << 40, 1ll << 40}, 0, 0), "overflows int64", "zero dim + overflow");
    // 2^62 F32 elements fit int64 but 2^64 bytes do not fit size_t
    expect_rejected(one_tensor({1ll << 62}, 0, 0), "overflows size_t", "bytes > SIZE_MAX");
    // fits size_t but not the file
    expect_rejected(one_tensor({1ll << 40}, 0, 0), "outside", "bytes > file");
    // offset + data offset overflows uint64
    expect_rejected(one_tensor({4}, 0, ~0ull - 31), "outside", "offset overflow");
}

TEST(GgufCorrupt, BadTensorDataPlacement) {
    const Reference r = ref();
    expect_rejected(patched<uint64_t>(r, "ti.norm.weight.offset", 68), "not a multiple of the alignment", "misaligned");
    expect_rejected(patched<uint64_t>(r, "ti.norm.weight.offset", 0), "overlaps", "overlap with the first");
    expect_rejected(patched<uint64_t>(r, "ti.tok_embd.weight.offset", 96), "overlaps", "overlap with the third");
    expect_rejected(patched<uint64_t>(r, "ti.blk.0.q8.offset", 1ull << 40), "outside", "far outside");
    expect_rejected(patched<uint64_t>(r, "ti.blk.0.q8.offset", 128), "outside", "ends 4 bytes past the file");
}

TEST(GgufCorrupt, BadAlignment) {
    for (uint32_t a : {0u, 3u, 48u, 0x80000001u}) {
        RefOptions o;
        o.alignment = 32;
        Reference r = build_reference(o);
        expect_rejected(patched<uint32_t>(r, "kv.general.alignment.value", a), "power of two",
                        "alignment " + std::to_string(a));
    }
    RefOptions o;
    o.alignment = 32;
    Reference r = build_reference(o);
    expect_rejected(patched<int32_t>(r, "kv.general.alignment.type", LM_GGUF_TYPE_INT32), "must be a u32",
                    "i32 alignment");
}

TEST(GgufCorrupt, TruncationAtSectionBoundaries) {
    const Reference r = ref();
    for (const auto & [name, off] : r.at) {
        if (off >= r.at.at("data_end")) continue; // the trailing padding is optional
        std::vector<uint8_t> b(r.bytes.begin(), r.bytes.begin() + off);
        expect_rejected(b, "", "truncated at " + name + " (" + std::to_string(off) + ")");
    }
}

TEST(GgufCorrupt, TruncationAtEveryByte) {
    // Every prefix that cuts into header, metadata or tensor data is refused
    // with one error; prefixes that only drop trailing padding are valid.
    const Reference r = ref();
    const size_t data_end = r.at.at("data_end");
    ASSERT_GT(r.bytes.size(), data_end); // the reference has trailing padding
    for (size_t n = 0; n <= r.bytes.size(); ++n) {
        std::vector<uint8_t> b(r.bytes.begin(), r.bytes.begin() + n);
        int errors = -1;
        const bool ok = accepted(b, &errors);
        EXPECT_EQ(ok, n >= data_end) << "prefix of " << n << " bytes";
        EXPECT_EQ(errors, ok ? 0 : 1) << "prefix of " << n << " bytes";
    }
}

TEST(GgufCorrupt, RandomByteFlipsNeverCrash) {
    // Each mutant either parses or fails with exactly one error line.
    const Reference r = ref();
    uint64_t s = 0x9e3779b97f4a7c15ull;
    auto next = [&s]() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    };
    int rejected = 0;
    for (int iter = 0; iter < 400; ++iter) {
        std::vector<uint8_t> b = r.bytes;
        const int flips = 1 + (int) (next() % 4);
        for (int k = 0; k < flips; ++k) {
            const size_t pos = next() % r.data_offset; // metadata only: data bytes are opaque
            b[pos] = (uint8_t) next();
        }
        int errors = -1;
        const bool ok = accepted(b, &errors);
        EXPECT_EQ(errors, ok ? 0 : 1) << "iteration " << iter;
        rejected += !ok;
    }
    EXPECT_GT(rejected, 100); // most metadata mutations are detected
}

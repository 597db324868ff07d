// The reference GGUF file, encoded byte by byte from the format description
// (header, key/values, tensor infos, padding, data), independent of the
// library's writer.

#include "gguf_test_util.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace gguf_test {

namespace {

// value type codes (GGUF facts)
enum : int32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    BOOL = 7,
    STR = 8,
    ARR = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12
};

void key(Enc & e, const std::string & k, int32_t type) {
    e.mark("kv." + k);
    e.str(k);
    e.mark("kv." + k + ".type");
    e.i32(type);
}

template <typename T> void scalar(Enc & e, const std::string & k, int32_t type, T v) {
    key(e, k, type);
    e.mark("kv." + k + ".value");
    e.put(v);
}

template <typename T> void array(Enc & e, const std::string & k, int32_t type, const std::vector<T> & v) {
    key(e, k, ARR);
    e.i32(type);
    e.mark("kv." + k + ".count");
    e.u64(v.size());
    e.mark("kv." + k + ".value");
    for (const T & x : v) e.put(x);
}

} // namespace

Reference build_reference(const RefOptions & opt) {
    Enc e;
    const std::vector<RefTensor> ts = reference_tensors();
    const int n_kv = 20 + (opt.alignment ? 1 : 0) + (opt.duplicate_key ? 1 : 0);

    e.raw("GGUF", 4);
    e.mark("version");
    e.u32(opt.version);
    e.mark("n_tensors");
    e.i64((int64_t) ts.size());
    e.mark("n_kv");
    e.i64(n_kv);

    key(e, "general.architecture", STR);
    e.mark("kv.general.architecture.value");
    e.str("llama");
    if (opt.alignment) {
        scalar<uint32_t>(e, "general.alignment", U32, opt.alignment);
    }
    scalar<uint8_t>(e, "t.u8", U8, 200);
    scalar<int8_t>(e, "t.i8", I8, -100);
    scalar<uint16_t>(e, "t.u16", U16, 60000);
    scalar<int16_t>(e, "t.i16", I16, -30000);
    scalar<uint32_t>(e, "t.u32", U32, 4000000000u);
    scalar<int32_t>(e, "t.i32", I32, -2000000000);
    scalar<float>(e, "t.f32", F32, 3.25f);
    scalar<uint8_t>(e, "t.bool", BOOL, 1);
    scalar<uint64_t>(e, "t.u64", U64, (1ull << 63) + 5);
    scalar<int64_t>(e, "t.i64", I64, std::numeric_limits<int64_t>::min() + 7);
    scalar<double>(e, "t.f64", F64, -2.5e300);
    key(e, "t.str", STR);
    e.mark("kv.t.str.value");
    e.str("h\xc3\xa9llo w\xc3\xb6rld");
    array<uint8_t>(e, "t.arr.u8", U8, {1, 2, 3});
    array<int16_t>(e, "t.arr.i16", I16, {-1, 2});
    array<float>(e, "t.arr.f32", F32, {0.5f, -1.5f, 2.25f});
    array<uint8_t>(e, "t.arr.bool", BOOL, {1, 0, 1});
    array<int64_t>(e, "t.arr.i64", I64, {});
    array<double>(e, "t.arr.f64", F64, {1e-300});
    key(e, "t.arr.str", ARR);
    e.i32(STR);
    e.mark("kv.t.arr.str.count");
    e.u64(3);
    e.mark("kv.t.arr.str.value");
    e.str("a");
    e.str("");
    e.str("tokenizer \xe2\x96\x81piece");
    if (opt.duplicate_key) {
        scalar<uint8_t>(e, "t.u8", U8, 7);
    }

    const size_t align = opt.alignment ? opt.alignment : 32;
    uint64_t offset = 0;
    for (size_t i = 0; i < ts.size(); ++i) {
        const RefTensor & t = ts[i];
        const std::string name = (opt.duplicate_tensor && i == 2) ? ts[0].name : t.name;
        e.mark("ti." + t.name);
        e.str(name);
        e.mark("ti." + t.name + ".n_dims");
        e.u32((uint32_t) t.ne.size());
        e.mark("ti." + t.name + ".ne0");
        for (int64_t d : t.ne) e.i64(d);
        e.mark("ti." + t.name + ".type");
        e.i32(t.type);
        e.mark("ti." + t.name + ".offset");
        e.u64(offset);
        offset += (t.nbytes + align - 1) / align * align;
    }
    e.mark("infos_end");
    e.pad(align);
    e.mark("data");
    for (const RefTensor & t : ts) {
        e.mark("data." + t.name);
        const std::vector<uint8_t> p = tensor_payload(t.name, t.nbytes);
        e.raw(p.data(), p.size());
        e.mark("data_end");
        e.pad(align);
    }

    Reference r;
    r.bytes = std::move(e.b);
    r.at = std::move(e.at);
    r.data_offset = r.at["data"];
    return r;
}

} // namespace gguf_test

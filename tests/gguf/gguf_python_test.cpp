// Cross-check with the `gguf` Python package (gguf-py, the reference writer
// and reader of the format): a file it writes is read by lmggml with the same
// values, and a file lmggml writes is read by it with the same values. The
// expected values are spelled out in both languages independently.
//
// The package is installed into a venv inside the build directory on first
// use (gguf_py_setup.sh). Without python3-venv or without access to PyPI the
// tests are skipped with the reason, since the check cannot run at all then.

#include "gguf_test_util.h"

#include "lmtest_fp.h"
#include "lmtest_quant.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include <sys/wait.h>

using namespace gguf_test;

namespace {

struct RunResult {
    int status = -1;
    std::string output;
};

RunResult run(const std::string & cmd) {
    RunResult r;
    FILE * p = popen((cmd + " 2>&1").c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

// Path of the venv's python, or "" with *why set when it cannot be had.
std::string venv_python(std::string * why) {
    static int status = -2;
    static std::string output;
    const std::string venv = LMGGML_GGUF_PY_VENV;
    if (status == -2) {
        RunResult r = run("sh '" LMGGML_GGUF_PY_DIR "/gguf_py_setup.sh' '" + venv + "'");
        status = r.status;
        output = r.output;
    }
    switch (status) {
        case 0: return venv + "/bin/python";
        case 10: *why = "python3 cannot create a venv (python3-venv missing?): " + output; break;
        case 11: *why = "pip could not install gguf and numpy (no network or PyPI unreachable): " + output; break;
        default: *why = "the gguf package is not usable (status " + std::to_string(status) + "): " + output; break;
    }
    return "";
}

// The cross-checks need the gguf/numpy packages in a venv (pip, network); without
// them (the sanitizer builds exclude these tests) they skip with the reason.
#define REQUIRE_PYTHON(py)                                                                                             \
    std::string why_;                                                                                                  \
    const std::string py = venv_python(&why_);                                                                         \
    if (py.empty()) {                                                                                                  \
        GTEST_SKIP() << why_;                                                                                          \
    }

RunResult cross(const std::string & py, const char * cmd, const std::string & path) {
    return run("'" + py + "' '" LMGGML_GGUF_PY_DIR "/gguf_cross.py' " + cmd + " '" + path + "'");
}

// The same literal formulas as gguf_cross.py.
double source_value(int i) { return ((i * 37) % 101 - 50) / 16.0; }
double quant_source(int i) { return ((i * 29) % 97 - 48) / 8.0; }

struct Opened {
    lm_gguf_context * g = nullptr;
    lm_ggml_context * ctx = nullptr;
    ~Opened() {
        lm_gguf_free(g);
        if (ctx) lm_ggml_free(ctx);
    }
    int64_t key(const char * k) const {
        const int64_t id = lm_gguf_find_key(g, k);
        EXPECT_GE(id, 0) << k;
        return id;
    }
    template <typename T> std::vector<T> arr(const char * k, lm_gguf_type type) const {
        const int64_t id = key(k);
        std::vector<T> v;
        if (id < 0) return v;
        EXPECT_EQ(lm_gguf_get_kv_type(g, id), LM_GGUF_TYPE_ARRAY) << k;
        EXPECT_EQ(lm_gguf_get_arr_type(g, id), type) << k;
        v.resize(lm_gguf_get_arr_n(g, id));
        if (!v.empty()) std::memcpy(v.data(), lm_gguf_get_arr_data(g, id), v.size() * sizeof(T));
        return v;
    }
};

void open_python_file(const std::string & py, const TempFile & f, Opened & o) {
    RunResult w = cross(py, "write", f.path());
    ASSERT_EQ(w.status, 0) << w.output;
    lm_gguf_init_params p = {false, &o.ctx};
    o.g = lm_gguf_init_from_file(f.c_str(), p);
    ASSERT_NE(o.g, nullptr);
}

// Test-side Q8_0 quantizer (block: fp16 scale d = amax/127, 32 int8 q = round(x/d)).
std::vector<uint8_t> q8_0_reference(const std::vector<float> & x) {
    std::vector<uint8_t> out;
    for (size_t b = 0; b < x.size() / 32; ++b) {
        double amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs((double) x[b * 32 + j]));
        const double d = amax / 127.0;
        const uint16_t dh = lmtest::f16_bits(d);
        out.push_back((uint8_t) (dh & 0xff));
        out.push_back((uint8_t) (dh >> 8));
        for (int j = 0; j < 32; ++j) {
            const double q = d != 0 ? std::round(x[b * 32 + j] / d) : 0.0;
            out.push_back((uint8_t) (int8_t) q);
        }
    }
    return out;
}

} // namespace

TEST(GgufPython, PythonFileReadsInLmggml) {
    REQUIRE_PYTHON(py);
    TempFile f("py");
    Opened o;
    open_python_file(py, f, o);
    if (HasFatalFailure()) return;
    const lm_gguf_context * g = o.g;

    EXPECT_STREQ(lm_gguf_get_val_str(g, o.key("general.architecture")), "crosscheck");
    EXPECT_EQ(lm_gguf_get_alignment(g), 64u);
    EXPECT_EQ(lm_gguf_get_data_offset(g) % 64, 0u);
    EXPECT_EQ(lm_gguf_get_val_u8(g, o.key("py.u8")), 250);
    EXPECT_EQ(lm_gguf_get_val_i8(g, o.key("py.i8")), -120);
    EXPECT_EQ(lm_gguf_get_val_u16(g, o.key("py.u16")), 65000);
    EXPECT_EQ(lm_gguf_get_val_i16(g, o.key("py.i16")), -32000);
    EXPECT_EQ(lm_gguf_get_val_u32(g, o.key("py.u32")), 4000000001u);
    EXPECT_EQ(lm_gguf_get_val_i32(g, o.key("py.i32")), -2000000001);
    EXPECT_EQ(lm_gguf_get_val_f32(g, o.key("py.f32")), 1.5f);
    EXPECT_EQ(lm_gguf_get_val_u64(g, o.key("py.u64")), 18446744073709551614ull);
    EXPECT_EQ(lm_gguf_get_val_i64(g, o.key("py.i64")), std::numeric_limits<int64_t>::min() + 1);
    EXPECT_EQ(lm_gguf_get_val_f64(g, o.key("py.f64")), -1.25e-300);
    EXPECT_TRUE(lm_gguf_get_val_bool(g, o.key("py.bool")));
    EXPECT_STREQ(lm_gguf_get_val_str(g, o.key("py.str")), "\xc3\xbcn\xc3\xaf"
                                                          "c\xc3\xb6"
                                                          "d\xc3\xa9 \xe2\x96\x81x");

    EXPECT_EQ(o.arr<uint8_t>("py.arr.u8", LM_GGUF_TYPE_UINT8), (std::vector<uint8_t>{0, 128, 255}));
    EXPECT_EQ(o.arr<int8_t>("py.arr.i8", LM_GGUF_TYPE_INT8), (std::vector<int8_t>{-128, 0, 127}));
    EXPECT_EQ(o.arr<uint16_t>("py.arr.u16", LM_GGUF_TYPE_UINT16), (std::vector<uint16_t>{1, 2, 65535}));
    EXPECT_EQ(o.arr<int16_t>("py.arr.i16", LM_GGUF_TYPE_INT16), (std::vector<int16_t>{-32768, 5, 32767}));
    EXPECT_EQ(o.arr<uint32_t>("py.arr.u32", LM_GGUF_TYPE_UINT32), (std::vector<uint32_t>{0, 7, 4294967295u}));
    EXPECT_EQ(o.arr<int32_t>("py.arr.i32", LM_GGUF_TYPE_INT32),
              (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -1, 2147483647}));
    EXPECT_EQ(o.arr<float>("py.arr.f32", LM_GGUF_TYPE_FLOAT32), (std::vector<float>{0.25f, -0.5f, 1024.0f}));
    EXPECT_EQ(o.arr<uint64_t>("py.arr.u64", LM_GGUF_TYPE_UINT64), (std::vector<uint64_t>{0, 1, ~0ull}));
    EXPECT_EQ(o.arr<int64_t>("py.arr.i64", LM_GGUF_TYPE_INT64),
              (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 0, std::numeric_limits<int64_t>::max()}));
    EXPECT_EQ(o.arr<double>("py.arr.f64", LM_GGUF_TYPE_FLOAT64), (std::vector<double>{1e300, -2.5, 0.0}));
    EXPECT_EQ(o.arr<uint8_t>("py.arr.bool", LM_GGUF_TYPE_BOOL), (std::vector<uint8_t>{1, 0, 1}));
    const int64_t s = o.key("py.arr.str");
    ASSERT_EQ(lm_gguf_get_arr_n(g, s), 3u);
    EXPECT_EQ(lm_gguf_get_arr_type(g, s), LM_GGUF_TYPE_STRING);
    EXPECT_STREQ(lm_gguf_get_arr_str(g, s, 0), "a");
    EXPECT_STREQ(lm_gguf_get_arr_str(g, s, 1), "");
    EXPECT_STREQ(lm_gguf_get_arr_str(g, s, 2), "\xe2\x96\x81"
                                               "b\xc3\xa9");

    // tensors: types, shapes in GGUF (ne) order, and values
    auto tensor = [&](const char * name, lm_ggml_type type, std::vector<int64_t> ne) -> lm_ggml_tensor * {
        lm_ggml_tensor * t = lm_ggml_get_tensor(o.ctx, name);
        EXPECT_NE(t, nullptr) << name;
        if (!t) return nullptr;
        EXPECT_EQ(t->type, type) << name;
        for (size_t j = 0; j < 4; ++j) EXPECT_EQ(t->ne[j], j < ne.size() ? ne[j] : 1) << name << " dim " << j;
        EXPECT_EQ(lm_gguf_get_tensor_offset(g, lm_gguf_find_tensor(g, name)) % 64, 0u) << name;
        return t;
    };
    if (lm_ggml_tensor * t = tensor("f32", LM_GGML_TYPE_F32, {4, 3})) {
        for (int i = 0; i < 12; ++i) EXPECT_EQ(((const float *) t->data)[i], (float) source_value(i)) << i;
    }
    if (lm_ggml_tensor * t = tensor("f16", LM_GGML_TYPE_F16, {8})) {
        for (int i = 0; i < 8; ++i) EXPECT_EQ(lmtest::f16_value(((const uint16_t *) t->data)[i]), source_value(i)) << i;
    }
    if (lm_ggml_tensor * t = tensor("bf16", LM_GGML_TYPE_BF16, {3, 2})) {
        for (int i = 0; i < 6; ++i)
            EXPECT_EQ(lmtest::bf16_value(((const uint16_t *) t->data)[i]), source_value(i)) << i;
    }
    if (lm_ggml_tensor * t = tensor("i32", LM_GGML_TYPE_I32, {6})) {
        for (int i = 0; i < 6; ++i) EXPECT_EQ(((const int32_t *) t->data)[i], i - 3);
    }
    // block formats: dequantized (test-side) within the format's step of the source
    const struct {
        const char * name;
        lm_ggml_type type;
        double levels;
    } quants[] = {
        {"q8_0", LM_GGML_TYPE_Q8_0, 254}, {"q4_0", LM_GGML_TYPE_Q4_0, 15}, {"q4_1", LM_GGML_TYPE_Q4_1, 15},
        {"q5_0", LM_GGML_TYPE_Q5_0, 31},  {"q5_1", LM_GGML_TYPE_Q5_1, 31},
    };
    for (const auto & q : quants) {
        lm_ggml_tensor * t = tensor(q.name, q.type, {64, 2});
        if (!t) continue;
        std::vector<double> deq(128);
        lmtest::quant_dequantize(q.type, (const uint8_t *) t->data, 128, deq.data());
        for (int b = 0; b < 4; ++b) {
            double lo = 1e30, hi = -1e30;
            for (int j = 0; j < 32; ++j) {
                lo = std::min(lo, quant_source(b * 32 + j));
                hi = std::max(hi, quant_source(b * 32 + j));
            }
            const double tol = (hi - lo) / q.levels * 1.01 + 1e-3; // one quantization step
            for (int j = 0; j < 32; ++j) {
                EXPECT_NEAR(deq[b * 32 + j], quant_source(b * 32 + j), tol) << q.name << " element " << b * 32 + j;
            }
        }
    }
}

TEST(GgufPython, LmggmlFileReadsInPython) {
    REQUIRE_PYTHON(py);
    lm_gguf_context * g = lm_gguf_init_empty();
    lm_gguf_set_val_u8(g, "lm.u8", 7);
    lm_gguf_set_val_i8(g, "lm.i8", -7);
    lm_gguf_set_val_u16(g, "lm.u16", 40000);
    lm_gguf_set_val_i16(g, "lm.i16", -20000);
    lm_gguf_set_val_u32(g, "lm.u32", 3000000000u);
    lm_gguf_set_val_i32(g, "lm.i32", -1000000000);
    lm_gguf_set_val_f32(g, "lm.f32", -0.75f);
    lm_gguf_set_val_u64(g, "lm.u64", (1ull << 63) + 11);
    lm_gguf_set_val_i64(g, "lm.i64", -(1ll << 62) - 3);
    lm_gguf_set_val_f64(g, "lm.f64", 6.02214076e23);
    lm_gguf_set_val_bool(g, "lm.bool", false);
    lm_gguf_set_val_str(g, "lm.str", "lmggml \xe2\x86\x92 gguf-py");
    const uint8_t u8s[] = {9, 8};
    lm_gguf_set_arr_data(g, "lm.arr.u8", LM_GGUF_TYPE_UINT8, u8s, 2);
    const int16_t i16s[] = {-300, 300};
    lm_gguf_set_arr_data(g, "lm.arr.i16", LM_GGUF_TYPE_INT16, i16s, 2);
    const uint32_t u32s[] = {1, 4294967295u};
    lm_gguf_set_arr_data(g, "lm.arr.u32", LM_GGUF_TYPE_UINT32, u32s, 2);
    const int64_t i64s[] = {-5, 5, 1ll << 40};
    lm_gguf_set_arr_data(g, "lm.arr.i64", LM_GGUF_TYPE_INT64, i64s, 3);
    const float f32s[] = {0.125f, -8.0f};
    lm_gguf_set_arr_data(g, "lm.arr.f32", LM_GGUF_TYPE_FLOAT32, f32s, 2);
    const double f64s[] = {0.1, 1e-10};
    lm_gguf_set_arr_data(g, "lm.arr.f64", LM_GGUF_TYPE_FLOAT64, f64s, 2);
    const bool bs[] = {false, true};
    lm_gguf_set_arr_data(g, "lm.arr.bool", LM_GGUF_TYPE_BOOL, bs, 2);
    const char * strs[] = {"", "tok", "\xc3\xa9\xc3\xa8"};
    lm_gguf_set_arr_str(g, "lm.arr.str", strs, 3);

    lm_ggml_init_params ip = {8 * lm_ggml_tensor_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    std::vector<float> f32(10);
    for (int i = 0; i < 10; ++i) f32[i] = (float) source_value(i);
    std::vector<uint16_t> f16(4);
    for (int i = 0; i < 4; ++i) f16[i] = lmtest::f16_bits(source_value(i));
    std::vector<int8_t> i8 = {-3, -2, -1, 0, 1, 2};
    std::vector<float> qsrc(128);
    for (int i = 0; i < 128; ++i) qsrc[i] = (float) quant_source(i);
    std::vector<uint8_t> q8 = q8_0_reference(qsrc);
    struct {
        const char * name;
        lm_ggml_type type;
        std::vector<int64_t> ne;
        void * data;
    } ts[] = {
        {"f32", LM_GGML_TYPE_F32, {5, 2}, f32.data()},
        {"f16", LM_GGML_TYPE_F16, {4}, f16.data()},
        {"i8", LM_GGML_TYPE_I8, {3, 1, 2}, i8.data()},
        {"q8_0", LM_GGML_TYPE_Q8_0, {64, 2}, q8.data()},
    };
    for (auto & t : ts) {
        lm_ggml_tensor * x = lm_ggml_new_tensor(ctx, t.type, (int) t.ne.size(), t.ne.data());
        lm_ggml_set_name(x, t.name);
        x->data = t.data;
        lm_gguf_add_tensor(g, x);
    }
    TempFile f("lm");
    ASSERT_TRUE(lm_gguf_write_to_file(g, f.c_str(), false));
    lm_gguf_free(g);
    lm_ggml_free(ctx);

    RunResult r = cross(py, "check", f.path());
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("OK"), std::string::npos) << r.output;
}

TEST(GgufPython, NestedArraysAreRefused) {
    // gguf-py can write arrays of arrays; ggml (and lmggml) cannot represent them
    REQUIRE_PYTHON(py);
    TempFile f("nested");
    RunResult w = cross(py, "nested", f.path());
    ASSERT_EQ(w.status, 0) << w.output;
    LogCapture log;
    lm_gguf_init_params p = {true, nullptr};
    EXPECT_EQ(lm_gguf_init_from_file(f.c_str(), p), nullptr);
    EXPECT_EQ(log.errors(), 1);
    EXPECT_NE(log.text().find("arrays of arrays"), std::string::npos) << log.text();
}

TEST(GgufPython, QuantizationIsBitExactWithPython) {
    // SPEC §4: block formats match files written by the gguf package bit for bit
    REQUIRE_PYTHON(py);
    TempFile f("q");
    Opened o;
    open_python_file(py, f, o);
    if (HasFatalFailure()) return;
    std::vector<float> src(128);
    for (int i = 0; i < 128; ++i) src[i] = (float) quant_source(i);
    const struct {
        const char * name;
        lm_ggml_type type;
    } quants[] = {
        {"q8_0", LM_GGML_TYPE_Q8_0}, {"q4_0", LM_GGML_TYPE_Q4_0}, {"q4_1", LM_GGML_TYPE_Q4_1},
        {"q5_0", LM_GGML_TYPE_Q5_0}, {"q5_1", LM_GGML_TYPE_Q5_1},
    };
    for (const auto & q : quants) {
        lm_ggml_tensor * t = lm_ggml_get_tensor(o.ctx, q.name);
        ASSERT_NE(t, nullptr) << q.name;
        std::vector<uint8_t> mine(lm_ggml_nbytes(t), 0xEE);
        const size_t n = lm_ggml_quantize_chunk(q.type, src.data(), mine.data(), 0, 2, 64, nullptr);
        EXPECT_EQ(n, mine.size()) << q.name;
        EXPECT_EQ(std::memcmp(mine.data(), t->data, mine.size()), 0) << q.name;
    }
}

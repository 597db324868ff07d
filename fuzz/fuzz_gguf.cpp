// libFuzzer target for the GGUF reader (lm_gguf_init_from_buffer).
//
// Beyond "no crash, no sanitizer report" it checks the reader's contract:
//  - a rejected input logs exactly one error line, an accepted one none;
//  - the three modes (metadata only, context without data, with data) agree;
//  - every accessor works on what was accepted, and a wrong-type access
//    returns 0 / NULL with one error line instead of aborting;
//  - an accepted file written back out is accepted again with the same
//    metadata bytes (write/read round trip is stable).
// A violated check calls __builtin_trap(), which libFuzzer reports as a crash.
//
// With LMGGML_GGUF_SEEDS=<dir> in the environment the binary instead writes
// a seed corpus of valid files into <dir> and exits.

#include "gguf/gguf-internal.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int g_errors = 0;
volatile uint64_t g_sink = 0; // keeps value reads from being optimised away

void count_errors(enum lm_ggml_log_level level, const char *, void *) {
    if (level == LM_GGML_LOG_LEVEL_ERROR) {
        g_errors++;
    }
}

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            std::fprintf(stderr, "fuzz_gguf: check failed: %s (line %d)\n", #cond, __LINE__);                          \
            __builtin_trap();                                                                                          \
        }                                                                                                              \
    } while (0)

void touch_values(const lm_gguf_context * g) {
    const int64_t n_kv = lm_gguf_get_n_kv(g);
    for (int64_t i = 0; i < n_kv; ++i) {
        const char * key = lm_gguf_get_key(g, i);
        CHECK(key != nullptr && lm_gguf_find_key(g, key) == i); // keys are unique
        const enum lm_gguf_type type = lm_gguf_get_kv_type(g, i);
        uint64_t sink = 0;
        switch (type) {
            case LM_GGUF_TYPE_UINT8: sink += lm_gguf_get_val_u8(g, i); break;
            case LM_GGUF_TYPE_INT8: sink += (uint64_t) lm_gguf_get_val_i8(g, i); break;
            case LM_GGUF_TYPE_UINT16: sink += lm_gguf_get_val_u16(g, i); break;
            case LM_GGUF_TYPE_INT16: sink += (uint64_t) lm_gguf_get_val_i16(g, i); break;
            case LM_GGUF_TYPE_UINT32: sink += lm_gguf_get_val_u32(g, i); break;
            case LM_GGUF_TYPE_INT32: sink += (uint64_t) lm_gguf_get_val_i32(g, i); break;
            case LM_GGUF_TYPE_FLOAT32: sink += (uint64_t) (lm_gguf_get_val_f32(g, i) != 0.0f); break;
            case LM_GGUF_TYPE_BOOL: sink += lm_gguf_get_val_bool(g, i); break;
            case LM_GGUF_TYPE_UINT64: sink += lm_gguf_get_val_u64(g, i); break;
            case LM_GGUF_TYPE_INT64: sink += (uint64_t) lm_gguf_get_val_i64(g, i); break;
            case LM_GGUF_TYPE_FLOAT64: sink += (uint64_t) (lm_gguf_get_val_f64(g, i) != 0.0); break;
            case LM_GGUF_TYPE_STRING: sink += std::strlen(lm_gguf_get_val_str(g, i)); break;
            case LM_GGUF_TYPE_ARRAY: {
                const enum lm_gguf_type et = lm_gguf_get_arr_type(g, i);
                const size_t n = lm_gguf_get_arr_n(g, i);
                if (et == LM_GGUF_TYPE_STRING) {
                    for (size_t j = 0; j < n; ++j) {
                        const char * s = lm_gguf_get_arr_str(g, i, j);
                        CHECK(s != nullptr);
                        sink += std::strlen(s);
                    }
                } else {
                    const uint8_t * d = static_cast<const uint8_t *>(lm_gguf_get_arr_data(g, i));
                    const size_t bytes = n * lm_gguf_type_size(et);
                    CHECK(bytes == 0 || d != nullptr);
                    for (size_t j = 0; j < bytes; ++j) {
                        sink += d[j];
                    }
                }
            } break;
            default: CHECK(false);
        }
        g_sink = g_sink + sink;
        // a wrong-type access is an error value, never an abort
        const int before = g_errors;
        const enum lm_gguf_type elem = type == LM_GGUF_TYPE_ARRAY ? lm_gguf_get_arr_type(g, i) : type;
        if (elem == LM_GGUF_TYPE_STRING) {
            CHECK(lm_gguf_get_val_u32(g, i) == 0);
        } else {
            CHECK(lm_gguf_get_val_str(g, i) == nullptr);
        }
        CHECK(g_errors == before + 1);
    }
    const int64_t n_t = lm_gguf_get_n_tensors(g);
    for (int64_t i = 0; i < n_t; ++i) {
        const char * name = lm_gguf_get_tensor_name(g, i);
        CHECK(name != nullptr && lm_gguf_find_tensor(g, name) == i);
        CHECK(lm_gguf_get_tensor_offset(g, i) % lm_gguf_get_alignment(g) == 0);
        (void) lm_gguf_get_tensor_type(g, i);
        (void) lm_gguf_get_tensor_size(g, i);
    }
}

void write_seeds(const char * dir);

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    if (const char * dir = std::getenv("LMGGML_GGUF_SEEDS")) {
        write_seeds(dir);
        std::exit(0);
    }
    lm_ggml_log_set(count_errors, nullptr);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    // metadata only
    g_errors = 0;
    lm_gguf_init_params meta = {true, nullptr};
    lm_gguf_context * g0 = lm_gguf_init_from_buffer(data, size, meta);
    CHECK(g_errors == (g0 ? 0 : 1));

    // tensors without data
    g_errors = 0;
    lm_ggml_context * c1 = nullptr;
    lm_gguf_init_params shapes = {true, &c1};
    lm_gguf_context * g1 = lm_gguf_init_from_buffer(data, size, shapes);
    CHECK((g1 != nullptr) == (g0 != nullptr) && (c1 != nullptr) == (g1 != nullptr));
    CHECK(g_errors == (g1 ? 0 : 1));

    // tensors with data
    g_errors = 0;
    lm_ggml_context * c2 = nullptr;
    lm_gguf_init_params full = {false, &c2};
    lm_gguf_context * g2 = lm_gguf_init_from_buffer(data, size, full);
    CHECK((g2 != nullptr) == (g0 != nullptr) && (c2 != nullptr) == (g2 != nullptr));
    CHECK(g_errors == (g2 ? 0 : 1));

    if (g2 != nullptr) {
        touch_values(g2);
    }
    // write back, except a tensor-less file whose alignment (up to 2^31)
    // would make the padding alone far larger than the input
    if (g2 != nullptr && (lm_gguf_get_n_tensors(g2) > 0 || lm_gguf_get_alignment(g2) <= (1u << 16))) {
        // write it back: the result must parse again with identical metadata
        std::vector<uint8_t> out, meta_a, meta_b;
        g_errors = 0;
        CHECK(lmggml::gguf::write_to_buffer(*g2, out));
        lm_gguf_context * g3 = lm_gguf_init_from_buffer(out.data(), out.size(), meta);
        CHECK(g3 != nullptr && g_errors == 0);
        lmggml::gguf::write_meta(*g2, meta_a);
        lmggml::gguf::write_meta(*g3, meta_b);
        CHECK(meta_a == meta_b);
        lm_gguf_free(g3);
    }
    lm_gguf_free(g0);
    lm_gguf_free(g1);
    lm_gguf_free(g2);
    if (c1) lm_ggml_free(c1);
    if (c2) lm_ggml_free(c2);
    return 0;
}

namespace {

// ---------------------------------------------------------------- seeds
// Small valid files covering every value type, arrays of strings, several
// tensor types and alignments, written with the library's writer.

void save(const lm_gguf_context * g, const std::string & path) {
    std::vector<uint8_t> bytes;
    if (!lmggml::gguf::write_to_buffer(*g, bytes)) {
        std::fprintf(stderr, "fuzz_gguf: cannot serialise %s\n", path.c_str());
        std::exit(1);
    }
    FILE * f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
        std::fprintf(stderr, "fuzz_gguf: cannot write %s\n", path.c_str());
        std::exit(1);
    }
}

void add_all_values(lm_gguf_context * g) {
    lm_gguf_set_val_str(g, "general.architecture", "llama");
    lm_gguf_set_val_u8(g, "u8", 1);
    lm_gguf_set_val_i8(g, "i8", -2);
    lm_gguf_set_val_u16(g, "u16", 3);
    lm_gguf_set_val_i16(g, "i16", -4);
    lm_gguf_set_val_u32(g, "u32", 5);
    lm_gguf_set_val_i32(g, "i32", -6);
    lm_gguf_set_val_f32(g, "f32", 0.5f);
    lm_gguf_set_val_u64(g, "u64", 7);
    lm_gguf_set_val_i64(g, "i64", -8);
    lm_gguf_set_val_f64(g, "f64", 0.25);
    lm_gguf_set_val_bool(g, "bool", true);
    const int32_t ints[] = {1, -1, 2};
    lm_gguf_set_arr_data(g, "arr.i32", LM_GGUF_TYPE_INT32, ints, 3);
    const float fl[] = {1.5f, -2.5f};
    lm_gguf_set_arr_data(g, "arr.f32", LM_GGUF_TYPE_FLOAT32, fl, 2);
    const char * toks[] = {"<s>", "</s>", "\xe2\x96\x81the", ""};
    lm_gguf_set_arr_str(g, "tokenizer.ggml.tokens", toks, 4);
}

void add_tensors(lm_gguf_context * g, lm_ggml_context * ctx, std::vector<std::vector<uint8_t>> & keep,
                 const std::vector<std::pair<lm_ggml_type, std::vector<int64_t>>> & specs) {
    int i = 0;
    for (const auto & [type, ne] : specs) {
        lm_ggml_tensor * t = lm_ggml_new_tensor(ctx, type, (int) ne.size(), ne.data());
        const std::string name = "t" + std::to_string(i++);
        lm_ggml_set_name(t, name.c_str());
        keep.emplace_back(lm_ggml_nbytes(t), (uint8_t) (0x11 * i));
        t->data = keep.back().data();
        lm_gguf_add_tensor(g, t);
    }
}

void write_seeds(const char * dir) {
    const std::string d(dir);
    lm_ggml_init_params ip = {16 * lm_ggml_tensor_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    std::vector<std::vector<uint8_t>> keep;
    keep.reserve(64);

    lm_gguf_context * g = lm_gguf_init_empty();
    save(g, d + "/empty.gguf");
    add_all_values(g);
    save(g, d + "/values.gguf");
    add_tensors(g, ctx, keep, {{LM_GGML_TYPE_F32, {4, 2}}, {LM_GGML_TYPE_F16, {3}}, {LM_GGML_TYPE_Q8_0, {32}}});
    save(g, d + "/values_tensors.gguf");
    lm_gguf_set_val_u32(g, LM_GGUF_KEY_GENERAL_ALIGNMENT, 64);
    save(g, d + "/align64.gguf");
    lm_gguf_free(g);

    g = lm_gguf_init_empty();
    lm_gguf_set_val_u32(g, LM_GGUF_KEY_GENERAL_ALIGNMENT, 1);
    add_tensors(g, ctx, keep, {{LM_GGML_TYPE_I8, {3}}, {LM_GGML_TYPE_BF16, {1, 2, 1, 2}}, {LM_GGML_TYPE_Q4_K, {256}}});
    save(g, d + "/align1_types.gguf");
    lm_gguf_free(g);

    g = lm_gguf_init_empty();
    add_tensors(g, ctx, keep, {{LM_GGML_TYPE_F32, {0, 3}}, {LM_GGML_TYPE_Q4_0, {64, 1, 1, 1}}});
    save(g, d + "/empty_tensor.gguf");
    lm_gguf_free(g);
    lm_ggml_free(ctx);
}

} // namespace

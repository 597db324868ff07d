// lmggml info: a GGUF file's metadata (key = value, long arrays and strings
// abbreviated) and its tensors (name, type, shape, bytes). Reads only the
// header: no weights are loaded.
#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "ggml.h"

#include "commands.h"
#include "common.h"
#include "gguf.h"

namespace cli {

namespace {

constexpr size_t kMaxItems = 8;      // array items shown
constexpr size_t kMaxStringLen = 80; // string bytes shown

// Escapes control characters; cut to kMaxStringLen unless full.
std::string show_string(const char * s, bool full) {
    std::string out;
    const std::string in = s ? s : "";
    for (size_t i = 0; i < in.size(); i++) {
        if (!full && out.size() >= kMaxStringLen) return out + "...(" + std::to_string(in.size()) + " bytes)";
        const char c = in[i];
        if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (c == '\r')
            out += "\\r";
        else
            out += c;
    }
    return out;
}

std::string show_scalar(lm_gguf_type t, const void * p) {
    char b[64];
    switch (t) {
        case LM_GGUF_TYPE_UINT8: std::snprintf(b, sizeof b, "%u", unsigned(*static_cast<const uint8_t *>(p))); break;
        case LM_GGUF_TYPE_INT8: std::snprintf(b, sizeof b, "%d", int(*static_cast<const int8_t *>(p))); break;
        case LM_GGUF_TYPE_UINT16: std::snprintf(b, sizeof b, "%u", unsigned(*static_cast<const uint16_t *>(p))); break;
        case LM_GGUF_TYPE_INT16: std::snprintf(b, sizeof b, "%d", int(*static_cast<const int16_t *>(p))); break;
        case LM_GGUF_TYPE_UINT32: std::snprintf(b, sizeof b, "%" PRIu32, *static_cast<const uint32_t *>(p)); break;
        case LM_GGUF_TYPE_INT32: std::snprintf(b, sizeof b, "%" PRId32, *static_cast<const int32_t *>(p)); break;
        case LM_GGUF_TYPE_UINT64: std::snprintf(b, sizeof b, "%" PRIu64, *static_cast<const uint64_t *>(p)); break;
        case LM_GGUF_TYPE_INT64: std::snprintf(b, sizeof b, "%" PRId64, *static_cast<const int64_t *>(p)); break;
        case LM_GGUF_TYPE_FLOAT32: std::snprintf(b, sizeof b, "%g", double(*static_cast<const float *>(p))); break;
        case LM_GGUF_TYPE_FLOAT64: std::snprintf(b, sizeof b, "%g", *static_cast<const double *>(p)); break;
        case LM_GGUF_TYPE_BOOL: return *static_cast<const int8_t *>(p) ? "true" : "false";
        default: return "?";
    }
    return b;
}

size_t scalar_size(lm_gguf_type t) {
    switch (t) {
        case LM_GGUF_TYPE_UINT8:
        case LM_GGUF_TYPE_INT8:
        case LM_GGUF_TYPE_BOOL: return 1;
        case LM_GGUF_TYPE_UINT16:
        case LM_GGUF_TYPE_INT16: return 2;
        case LM_GGUF_TYPE_UINT32:
        case LM_GGUF_TYPE_INT32:
        case LM_GGUF_TYPE_FLOAT32: return 4;
        case LM_GGUF_TYPE_UINT64:
        case LM_GGUF_TYPE_INT64:
        case LM_GGUF_TYPE_FLOAT64: return 8;
        default: return 0;
    }
}

std::string show_value(const lm_gguf_context * g, int64_t k, bool full) {
    const lm_gguf_type t = lm_gguf_get_kv_type(g, k);
    if (t == LM_GGUF_TYPE_STRING) return show_string(lm_gguf_get_val_str(g, k), full);
    if (t != LM_GGUF_TYPE_ARRAY) return show_scalar(t, lm_gguf_get_val_data(g, k));

    const lm_gguf_type at = lm_gguf_get_arr_type(g, k);
    const size_t n = lm_gguf_get_arr_n(g, k);
    const size_t shown = full ? n : std::min(n, kMaxItems);
    std::string out = "[";
    for (size_t i = 0; i < shown; i++) {
        if (i) out += ", ";
        if (at == LM_GGUF_TYPE_STRING) {
            out += '"';
            out += show_string(lm_gguf_get_arr_str(g, k, i), full);
            out += '"';
        } else if (const size_t sz = scalar_size(at); sz > 0) {
            out += show_scalar(at, static_cast<const uint8_t *>(lm_gguf_get_arr_data(g, k)) + i * sz);
        } else {
            out += "?";
        }
    }
    if (shown < n) out += ", ...";
    out += "]";
    if (shown < n) out += " (" + std::to_string(n) + " items, " + lm_gguf_type_name(at) + ")";
    return out;
}

std::string upper(std::string s) {
    for (char & c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// Reads each tensor's bytes from the file and runs lm_ggml_validate_row_data
// on them (NaN/Inf values, NaN/Inf block scales); the error names the first
// bad tensor and what the library found.
lmllm::Status check_tensor_data(const std::string & path, const lm_gguf_context * g) {
    std::FILE * f = std::fopen(path.c_str(), "rb");
    if (!f) return lmllm::Status::error("cannot open '" + path + "'");
    std::vector<uint8_t> buf;
    lmllm::Status result;
    const int64_t n = lm_gguf_get_n_tensors(g);
    for (int64_t i = 0; i < n && result.ok(); i++) {
        const char * name = lm_gguf_get_tensor_name(g, i);
        const size_t bytes = lm_gguf_get_tensor_size(g, i);
        const size_t offset = lm_gguf_get_data_offset(g) + lm_gguf_get_tensor_offset(g, i);
        buf.resize(bytes);
        if (fseeko(f, off_t(offset), SEEK_SET) != 0 || std::fread(buf.data(), 1, bytes, f) != bytes) {
            result =
                lmllm::Status::error(std::string("tensor '") + name + "': cannot read its " + std::to_string(bytes) +
                                     " bytes at offset " + std::to_string(offset) + " (truncated file?)");
        } else if (!lm_ggml_validate_row_data(lm_gguf_get_tensor_type(g, i), buf.data(), bytes)) {
            std::string why = last_library_error();
            // "lm_ggml_validate_row_data: data: found nan scale at block 3" -> "found nan ..."
            const size_t found = why.find("found ");
            if (found != std::string::npos) why = why.substr(found);
            result =
                lmllm::Status::error(std::string("tensor '") + name + "' (" +
                                     lm_ggml_type_name(lm_gguf_get_tensor_type(g, i)) + ") has invalid data: " + why);
        }
    }
    std::fclose(f);
    return result;
}

} // namespace

int cmd_info(int argc, char ** argv) {
    const std::string cmd = "info";
    std::string path, positional;
    bool full = false, verbose = false, check = false;
    ArgParser p(cmd, "info MODEL.gguf [--full] [--check]",
                "Prints a GGUF file's metadata (key = value) and tensors (name, type, shape, bytes).\n"
                "Long arrays and strings are abbreviated unless --full is given; --check also reads\n"
                "every tensor's data and validates it (exit code 1 names the first bad tensor).");
    p.positional(&positional, "MODEL.gguf");
    p.option({"-m", "--model"}, &path, "FILE", "the file (instead of the positional argument)");
    p.flag({"--full"}, &full, "print arrays and strings whole");
    p.flag({"--check"}, &check, "validate every tensor's data: non-finite floats, quantized block scales");
    p.flag({"-v", "--verbose"}, &verbose, "print the library's log messages");

    bool help = false;
    if (lmllm::Status s = p.parse(argc, argv, 2, help); !s.ok())
        return fail(cmd, s.message() + " (see lmggml info --help)");
    if (help) {
        std::fputs(p.help_text().c_str(), stdout);
        return 0;
    }
    setup_logging(verbose);
    if (!path.empty() && !positional.empty()) return fail(cmd, "give the file once (MODEL.gguf or -m MODEL.gguf)");
    if (path.empty()) path = positional;
    if (path.empty()) return fail(cmd, "no model given (lmggml info MODEL.gguf)");
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return fail(cmd, "cannot open '" + path + "': no such file");
    if (std::filesystem::is_directory(path, ec)) return fail(cmd, "'" + path + "' is a directory, not a model file");

    lm_ggml_context * meta = nullptr;
    lm_gguf_init_params gp = {/*no_alloc =*/true, &meta};
    lm_gguf_context * g = lm_gguf_init_from_file(path.c_str(), gp);
    if (!g) {
        const std::string why = last_library_error();
        return fail(cmd, "'" + path + "' is not a valid GGUF file" + (why.empty() ? "" : " (" + why + ")"));
    }

    const int64_t n_kv = lm_gguf_get_n_kv(g), n_tensors = lm_gguf_get_n_tensors(g);
    std::printf("file: %s\n", path.c_str());
    std::printf("GGUF version %u, %" PRId64 " keys, %" PRId64 " tensors, alignment %zu, data at offset %zu\n",
                lm_gguf_get_version(g), n_kv, n_tensors, lm_gguf_get_alignment(g), lm_gguf_get_data_offset(g));

    std::printf("\nmetadata:\n");
    for (int64_t k = 0; k < n_kv; k++)
        std::printf("  %s = %s\n", lm_gguf_get_key(g, k), show_value(g, k, full).c_str());

    // tensors: widths from the longest name
    size_t w = 4;
    for (int64_t i = 0; i < n_tensors; i++) w = std::max(w, std::string(lm_gguf_get_tensor_name(g, i)).size());
    std::printf("\ntensors:\n  %-*s  %-6s  %-20s  %12s\n", int(w), "name", "type", "shape", "bytes");
    uint64_t total = 0;
    for (int64_t i = 0; i < n_tensors; i++) {
        const char * name = lm_gguf_get_tensor_name(g, i);
        const lm_ggml_tensor * t = meta ? lm_ggml_get_tensor(meta, name) : nullptr;
        std::string shape = "?";
        if (t) {
            shape = "[";
            for (int d = 0; d < lm_ggml_n_dims(t); d++) shape += (d ? ", " : "") + std::to_string(t->ne[d]);
            shape += "]";
        }
        const size_t bytes = lm_gguf_get_tensor_size(g, i);
        total += bytes;
        std::printf("  %-*s  %-6s  %-20s  %12zu\n", int(w), name,
                    upper(lm_ggml_type_name(lm_gguf_get_tensor_type(g, i))).c_str(), shape.c_str(), bytes);
    }
    std::printf("\n%" PRId64 " tensors, %s\n", n_tensors, format_bytes(total).c_str());
    std::string bad;
    if (check) {
        const lmllm::Status s = check_tensor_data(path, g);
        if (s.ok())
            std::printf("check: the data of all %" PRId64 " tensors is valid\n", n_tensors);
        else
            bad = s.message();
    }
    if (meta) lm_ggml_free(meta);
    lm_gguf_free(g);
    if (!bad.empty()) return fail(cmd, bad);
    return 0;
}

} // namespace cli

// GGUF reader: parses header, key/values and tensor infos with every count,
// length, shape and offset checked against the input size and for overflow,
// then (on request) builds an lm_ggml_context with one tensor per info.
// A malformed input gives NULL and one error line naming the byte offset.

#include "gguf-internal.h"
#include "reader.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <sys/stat.h>
#include <unordered_map>
#include <vector>

using lmggml::gguf::Reader;

namespace {

// Smallest possible encodings, used to bound counts by the bytes left:
// key/value: key length (8) + one key byte + type (4) + one value byte;
// tensor info: name length (8) + n_dims (4) + ne[0] (8) + type (4) + offset (8).
constexpr uint64_t MIN_KV_BYTES = 8 + 1 + 4 + 1;
constexpr uint64_t MIN_TENSOR_INFO_BYTES = 8 + 4 + 8 + 4 + 8;

// Keys and names come from the file: keep log lines printable and short.
std::string printable(const std::string & s) {
    std::string out;
    const size_t n = std::min<size_t>(s.size(), 64);
    for (size_t i = 0; i < n; ++i) {
        const unsigned char c = (unsigned char) s[i];
        out += (c >= 0x20 && c < 0x7f) ? (char) c : '?';
    }
    if (s.size() > n) {
        out += "...";
    }
    return out;
}

const char * type_label(int type) {
    const char * name =
        (type >= 0 && type < LM_GGUF_TYPE_COUNT) ? lm_gguf_type_name((enum lm_gguf_type) type) : nullptr;
    return name ? name : "?";
}

// Positions of fields that later checks refer to in their messages.
struct FieldOffsets {
    uint64_t alignment_value = 0;
    std::vector<uint64_t> tensor_offset_field; // per tensor: where its data offset is stored
};

bool parse_header(Reader & r, lm_gguf_context & ctx, int64_t & n_tensors, int64_t & n_kv) {
    char magic[4];
    if (r.size() < 4) {
        return r.fail_at(0, "file is %llu bytes, too small for the GGUF magic", (unsigned long long) r.size());
    }
    r.read(magic, "magic");
    if (std::memcmp(magic, LM_GGUF_MAGIC, 4) != 0) {
        char shown[5];
        for (int i = 0; i < 4; ++i) {
            shown[i] = (magic[i] >= 0x20 && magic[i] < 0x7f) ? magic[i] : '?';
        }
        shown[4] = '\0';
        return r.fail_at(0, "bad magic '%s' (%02x %02x %02x %02x), expected 'GGUF'", shown, (unsigned char) magic[0],
                         (unsigned char) magic[1], (unsigned char) magic[2], (unsigned char) magic[3]);
    }
    if (!r.read(ctx.version, "version")) {
        return false;
    }
    if (ctx.version == 1) {
        return r.fail_at(4, "GGUF version 1 is no longer supported (versions 2 and 3 are)");
    }
    if (ctx.version != 2 && ctx.version != 3) {
        const uint32_t swapped = __builtin_bswap32(ctx.version);
        return r.fail_at(4, "unsupported GGUF version %u (versions 2 and 3 are supported)%s", ctx.version,
                         (swapped == 2 || swapped == 3) ? "; the file looks big-endian" : "");
    }
    if (!r.read(n_tensors, "tensor count") || !r.read(n_kv, "key/value count")) {
        return false;
    }
    const uint64_t left = r.remaining();
    if (n_tensors < 0 || (uint64_t) n_tensors > left / MIN_TENSOR_INFO_BYTES) {
        return r.fail_at(8, "tensor count %" PRId64 " is impossible for the %llu bytes that follow the header",
                         n_tensors, (unsigned long long) left);
    }
    if (n_kv < 0 || (uint64_t) n_kv > left / MIN_KV_BYTES) {
        return r.fail_at(16, "key/value count %" PRId64 " is impossible for the %llu bytes that follow the header",
                         n_kv, (unsigned long long) left);
    }
    if ((uint64_t) n_kv * MIN_KV_BYTES + (uint64_t) n_tensors * MIN_TENSOR_INFO_BYTES > left) {
        return r.fail_at(
            8, "%" PRId64 " tensors and %" PRId64 " key/values cannot fit in the %llu bytes that follow the header",
            n_tensors, n_kv, (unsigned long long) left);
    }
    return true;
}

// Reads `count` elements of `type` (never ARRAY) into kv.
bool read_values(Reader & r, lm_gguf_kv & kv, uint64_t count, const std::string & key) {
    char what[128];
    std::snprintf(what, sizeof(what), "value of key '%s'", printable(key).c_str());
    const uint64_t at = r.offset();
    if (kv.type == LM_GGUF_TYPE_STRING) {
        if (count > r.remaining() / 8) {
            return r.fail_at(at, "key '%s': %llu strings cannot fit in the %llu bytes left", printable(key).c_str(),
                             (unsigned long long) count, (unsigned long long) r.remaining());
        }
        kv.strs.reserve((size_t) std::min<uint64_t>(count, 1u << 16));
        for (uint64_t i = 0; i < count; ++i) {
            kv.strs.emplace_back();
            if (!r.read_string(kv.strs.back(), what)) {
                return false;
            }
        }
        return true;
    }
    const size_t esize = lmggml::gguf::value_type_size(kv.type);
    if (count > r.remaining() / esize) {
        return r.fail_at(at, "key '%s': %llu values of type %s need more than the %llu bytes left",
                         printable(key).c_str(), (unsigned long long) count, type_label(kv.type),
                         (unsigned long long) r.remaining());
    }
    kv.data.resize((size_t) (count * esize));
    if (!r.read_bytes(kv.data.data(), count * esize, what)) {
        return false;
    }
    if (kv.type == LM_GGUF_TYPE_BOOL) {
        for (uint8_t & b : kv.data) {
            b = b != 0;
        }
    }
    return true;
}

bool parse_kvs(Reader & r, lm_gguf_context & ctx, int64_t n_kv, FieldOffsets & fo) {
    std::unordered_map<std::string, int64_t> seen;
    for (int64_t i = 0; i < n_kv; ++i) {
        const uint64_t at_key = r.offset();
        lm_gguf_kv kv;
        char what[64];
        std::snprintf(what, sizeof(what), "key #%" PRId64, i);
        if (!r.read_string(kv.key, what)) {
            return false;
        }
        if (kv.key.empty()) {
            return r.fail_at(at_key, "key #%" PRId64 " is empty", i);
        }
        if (kv.key.find('\0') != std::string::npos) {
            return r.fail_at(at_key, "key #%" PRId64 " ('%s') contains a NUL byte", i, printable(kv.key).c_str());
        }
        const auto [it, inserted] = seen.emplace(kv.key, i);
        if (!inserted) {
            return r.fail_at(at_key, "duplicate key '%s' (keys #%" PRId64 " and #%" PRId64 ")",
                             printable(kv.key).c_str(), it->second, i);
        }
        const uint64_t at_type = r.offset();
        int32_t type = -1;
        if (!r.read(type, what)) {
            return false;
        }
        uint64_t count = 1;
        if (type == LM_GGUF_TYPE_ARRAY) {
            kv.is_array = true;
            const uint64_t at_elem = r.offset();
            if (!r.read(type, what)) {
                return false;
            }
            if (type == LM_GGUF_TYPE_ARRAY) {
                return r.fail_at(at_elem, "key '%s': arrays of arrays are not supported", printable(kv.key).c_str());
            }
            if (!lmggml::gguf::is_element_type(type)) {
                return r.fail_at(at_elem, "key '%s': unknown array element type %d", printable(kv.key).c_str(), type);
            }
            if (!r.read(count, what)) {
                return false;
            }
        } else if (!lmggml::gguf::is_element_type(type)) {
            return r.fail_at(at_type, "key '%s': unknown value type %d", printable(kv.key).c_str(), type);
        }
        kv.type = (enum lm_gguf_type) type;
        if (kv.key == LM_GGUF_KEY_GENERAL_ALIGNMENT) {
            fo.alignment_value = r.offset();
        }
        if (!read_values(r, kv, count, kv.key)) {
            return false;
        }
        ctx.kv.push_back(std::move(kv));
    }

    // general.alignment governs tensor offsets: it must be a u32 power of two
    for (const lm_gguf_kv & kv : ctx.kv) {
        if (kv.key != LM_GGUF_KEY_GENERAL_ALIGNMENT) {
            continue;
        }
        if (kv.is_array || kv.type != LM_GGUF_TYPE_UINT32) {
            return r.fail_at(fo.alignment_value, "%s must be a u32 scalar, found %s%s", LM_GGUF_KEY_GENERAL_ALIGNMENT,
                             kv.is_array ? "an array of " : "", type_label(kv.type));
        }
        uint32_t a;
        std::memcpy(&a, kv.data.data(), sizeof(a));
        if (a == 0 || (a & (a - 1)) != 0) {
            return r.fail_at(fo.alignment_value, "%s = %u is not a non-zero power of two",
                             LM_GGUF_KEY_GENERAL_ALIGNMENT, a);
        }
        ctx.alignment = a;
    }
    return true;
}

bool parse_tensor_info(Reader & r, lm_gguf_context & ctx, int64_t i, std::unordered_map<std::string, int64_t> & seen,
                       FieldOffsets & fo) {
    char what[64];
    std::snprintf(what, sizeof(what), "tensor info #%" PRId64, i);
    const uint64_t at_name = r.offset();
    std::string name;
    if (!r.read_string(name, what)) {
        return false;
    }
    if (name.size() >= LM_GGML_MAX_NAME) {
        return r.fail_at(at_name, "tensor #%" PRId64 ": name '%s' is %zu bytes, the limit is %d", i,
                         printable(name).c_str(), name.size(), LM_GGML_MAX_NAME - 1);
    }
    if (name.find('\0') != std::string::npos) {
        return r.fail_at(at_name, "tensor #%" PRId64 ": name '%s' contains a NUL byte", i, printable(name).c_str());
    }
    const auto [it, inserted] = seen.emplace(name, i);
    if (!inserted) {
        return r.fail_at(at_name, "duplicate tensor name '%s' (tensors #%" PRId64 " and #%" PRId64 ")",
                         printable(name).c_str(), it->second, i);
    }
    const char * nm = name.c_str();

    lm_gguf_tensor_info info;
    std::memset(&info.t, 0, sizeof(info.t));
    std::memcpy(info.t.name, name.data(), name.size());

    const uint64_t at_dims = r.offset();
    uint32_t n_dims = 0;
    if (!r.read(n_dims, what)) {
        return false;
    }
    if (n_dims < 1 || n_dims > LM_GGML_MAX_DIMS) {
        return r.fail_at(at_dims, "tensor '%s': n_dims = %u, must be 1..%d", nm, n_dims, LM_GGML_MAX_DIMS);
    }
    int64_t product = 1; // of the non-zero dimensions: every partial product core code forms must fit
    for (int j = 0; j < LM_GGML_MAX_DIMS; ++j) {
        info.t.ne[j] = 1;
        if ((uint32_t) j >= n_dims) {
            continue;
        }
        const uint64_t at_ne = r.offset();
        if (!r.read(info.t.ne[j], what)) {
            return false;
        }
        if (info.t.ne[j] < 0) {
            return r.fail_at(at_ne, "tensor '%s': ne[%d] = %" PRId64 " is negative", nm, j, info.t.ne[j]);
        }
        if (info.t.ne[j] != 0 && __builtin_mul_overflow(product, info.t.ne[j], &product)) {
            return r.fail_at(at_ne, "tensor '%s': the element count overflows int64 at ne[%d] = %" PRId64, nm, j,
                             info.t.ne[j]);
        }
    }

    const uint64_t at_type = r.offset();
    int32_t type = -1;
    if (!r.read(type, what)) {
        return false;
    }
    if (type < 0 || type >= LM_GGML_TYPE_COUNT || lm_ggml_blck_size((enum lm_ggml_type) type) <= 0 ||
        lm_ggml_type_size((enum lm_ggml_type) type) == 0) {
        return r.fail_at(at_type, "tensor '%s': unknown tensor type %d", nm, type);
    }
    info.t.type = (enum lm_ggml_type) type;
    const int64_t blck = lm_ggml_blck_size(info.t.type);
    if (info.t.ne[0] % blck != 0) {
        return r.fail_at(at_dims, "tensor '%s': ne[0] = %" PRId64 " is not a multiple of the %s block size %" PRId64,
                         nm, info.t.ne[0], lm_ggml_type_name(info.t.type), blck);
    }
    size_t nbytes = 0;
    if (!lmggml::gguf::tensor_nbytes(info.t.type, info.t.ne, &nbytes)) {
        return r.fail_at(at_dims, "tensor '%s': its size in bytes overflows size_t", nm);
    }
    lmggml::gguf::set_contiguous_strides(info.t);

    fo.tensor_offset_field.push_back(r.offset());
    if (!r.read(info.offset, what)) {
        return false;
    }
    ctx.info.push_back(info);
    return true;
}

// Tensor data must be aligned, inside the file and disjoint.
bool check_data_layout(Reader & r, lm_gguf_context & ctx, const FieldOffsets & fo) {
    const uint64_t end_of_infos = r.offset();
    const uint64_t data_offset = (end_of_infos + ctx.alignment - 1) / ctx.alignment * ctx.alignment;
    ctx.offset = (size_t) data_offset;
    ctx.size = 0;
    if (!ctx.info.empty() && data_offset > r.size()) {
        // writers always pad up to the data section; also bounds what
        // writing this context back out can cost (alignment up to 2^31)
        return r.fail_at(end_of_infos, "the data section would start at %llu, past the end of the %llu-byte file",
                         (unsigned long long) data_offset, (unsigned long long) r.size());
    }

    struct Range {
        uint64_t begin, end;
        size_t id;
    };
    std::vector<Range> ranges;
    ranges.reserve(ctx.info.size());
    for (size_t i = 0; i < ctx.info.size(); ++i) {
        const lm_gguf_tensor_info & ti = ctx.info[i];
        const uint64_t at = fo.tensor_offset_field[i];
        if (ti.offset % ctx.alignment != 0) {
            return r.fail_at(at, "tensor '%s': data offset %" PRIu64 " is not a multiple of the alignment %zu",
                             ti.t.name, ti.offset, ctx.alignment);
        }
        size_t nbytes = 0;
        lmggml::gguf::tensor_nbytes(ti.t.type, ti.t.ne, &nbytes); // checked while parsing
        if (nbytes == 0) {
            continue; // nothing to read, nothing to overlap
        }
        uint64_t begin = 0, end = 0;
        if (__builtin_add_overflow(data_offset, ti.offset, &begin) ||
            __builtin_add_overflow(begin, (uint64_t) nbytes, &end) || end > r.size()) {
            return r.fail_at(at, "tensor '%s': data at offset %" PRIu64 " (+%zu bytes) lies outside the %llu-byte file",
                             ti.t.name, ti.offset, nbytes, (unsigned long long) r.size());
        }
        ranges.push_back({ti.offset, ti.offset + nbytes, i});
        ctx.size = std::max<size_t>(ctx.size, (size_t) (ti.offset + nbytes));
    }
    std::sort(ranges.begin(), ranges.end(), [](const Range & a, const Range & b) { return a.begin < b.begin; });
    for (size_t k = 1; k < ranges.size(); ++k) {
        if (ranges[k].begin < ranges[k - 1].end) {
            const size_t a = ranges[k - 1].id, b = ranges[k].id;
            return r.fail_at(fo.tensor_offset_field[b],
                             "tensor '%s': data [%" PRIu64 ", %" PRIu64 ") overlaps tensor '%s' [%" PRIu64 ", %" PRIu64
                             ")",
                             ctx.info[b].t.name, ranges[k].begin, ranges[k].end, ctx.info[a].t.name,
                             ranges[k - 1].begin, ranges[k - 1].end);
        }
    }
    return true;
}

// Builds the lm_ggml_context: one tensor per info, and (no_alloc = false)
// a blob holding the data section that the tensors point into.
bool make_ggml_context(Reader & r, lm_gguf_context & ctx, bool no_alloc, lm_ggml_context ** out) {
    const size_t n = ctx.info.size();
    const size_t mem_size = (n + 1) * lm_ggml_tensor_overhead() + (no_alloc ? 0 : ctx.size + LM_GGML_MEM_ALIGN) + 256;
    lm_ggml_init_params ip = {/*mem_size =*/mem_size, /*mem_buffer =*/nullptr, /*no_alloc =*/no_alloc};
    lm_ggml_context * gctx = lm_ggml_init(ip);
    if (gctx == nullptr) {
        return r.fail_at(ctx.offset, "cannot create an lm_ggml_context of %zu bytes for %zu tensors", mem_size, n);
    }
    uint8_t * blob = nullptr;
    if (!no_alloc) {
        lm_ggml_tensor * data = lm_ggml_new_tensor_1d(gctx, LM_GGML_TYPE_I8, (int64_t) ctx.size);
        if (data == nullptr) {
            lm_ggml_free(gctx);
            return r.fail_at(ctx.offset, "cannot allocate %zu bytes for the tensor data", ctx.size);
        }
        lm_ggml_set_name(data, "GGUF tensor data binary blob");
        blob = static_cast<uint8_t *>(data->data);
        if (!r.seek(ctx.offset < r.size() ? ctx.offset : r.size(), "tensor data") ||
            !r.read_bytes(blob, ctx.size, "tensor data")) {
            lm_ggml_free(gctx);
            return false;
        }
        ctx.data = blob;
    }
    lm_ggml_set_no_alloc(gctx, true);
    for (lm_gguf_tensor_info & ti : ctx.info) {
        lm_ggml_tensor * cur = lm_ggml_new_tensor(gctx, ti.t.type, LM_GGML_MAX_DIMS, ti.t.ne);
        if (cur == nullptr) {
            lm_ggml_free(gctx);
            return r.fail_at(ctx.offset, "cannot create tensor '%s' in the lm_ggml_context", ti.t.name);
        }
        lm_ggml_set_name(cur, ti.t.name);
        if (blob != nullptr) {
            // an empty tensor may name any offset (nothing is read there):
            // keep its pointer inside the blob
            cur->data = blob + std::min<uint64_t>(ti.offset, ctx.size);
            ti.t.data = cur->data; // lets the context be written back out
        }
    }
    lm_ggml_set_no_alloc(gctx, no_alloc);
    *out = gctx;
    return true;
}

lm_gguf_context * parse(Reader & r, const lm_gguf_init_params & params) {
    std::unique_ptr<lm_gguf_context> ctx(new lm_gguf_context);
    FieldOffsets fo;
    int64_t n_tensors = 0, n_kv = 0;
    bool ok = parse_header(r, *ctx, n_tensors, n_kv) && parse_kvs(r, *ctx, n_kv, fo);
    if (ok) {
        std::unordered_map<std::string, int64_t> seen;
        for (int64_t i = 0; ok && i < n_tensors; ++i) {
            ok = parse_tensor_info(r, *ctx, i, seen, fo);
        }
    }
    ok = ok && check_data_layout(r, *ctx, fo);
    if (ok && params.ctx != nullptr) {
        ok = make_ggml_context(r, *ctx, params.no_alloc, params.ctx);
    }
    return ok ? ctx.release() : nullptr;
}

lm_gguf_context * parse_logged(Reader & r, const lm_gguf_init_params & params, const char * fn,
                               const std::string & what) {
    try {
        lm_gguf_context * ctx = parse(r, params);
        if (ctx == nullptr) {
            LM_GGML_LOG_ERROR("%s: %s: %s (at byte offset %llu)\n", fn, what.c_str(), r.error().c_str(),
                              (unsigned long long) r.error_offset());
        }
        return ctx;
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("%s: %s: out of memory while parsing near byte offset %llu\n", fn, what.c_str(),
                          (unsigned long long) r.offset());
    } catch (const std::exception & e) {
        LM_GGML_LOG_ERROR("%s: %s: %s near byte offset %llu\n", fn, what.c_str(), e.what(),
                          (unsigned long long) r.offset());
    }
    if (params.ctx != nullptr && *params.ctx != nullptr) {
        lm_ggml_free(*params.ctx);
        *params.ctx = nullptr;
    }
    return nullptr;
}

} // namespace

extern "C" struct lm_gguf_context * lm_gguf_init_from_buffer(const void * data, size_t size,
                                                             struct lm_gguf_init_params params) {
    if (params.ctx != nullptr) {
        *params.ctx = nullptr;
    }
    if (data == nullptr && size != 0) {
        LM_GGML_LOG_ERROR("lm_gguf_init_from_buffer: data is NULL\n");
        return nullptr;
    }
    static const uint8_t empty = 0;
    Reader r(data ? data : &empty, size);
    return parse_logged(r, params, "lm_gguf_init_from_buffer", "buffer");
}

extern "C" struct lm_gguf_context * lm_gguf_init_from_file(const char * fname, struct lm_gguf_init_params params) {
    if (params.ctx != nullptr) {
        *params.ctx = nullptr;
    }
    if (fname == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_init_from_file: fname is NULL\n");
        return nullptr;
    }
    FILE * f = std::fopen(fname, "rb");
    if (f == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_init_from_file: cannot open '%s': %s\n", fname, std::strerror(errno));
        return nullptr;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        LM_GGML_LOG_ERROR("lm_gguf_init_from_file: '%s' is not a regular file\n", fname);
        std::fclose(f);
        return nullptr;
    }
    lm_gguf_context * ctx = nullptr;
    try { // the reader's buffer and the name are allocated before parse_logged's own guard
        Reader r(f, (uint64_t) st.st_size);
        ctx = parse_logged(r, params, "lm_gguf_init_from_file", std::string("'") + fname + "'");
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_gguf_init_from_file: '%s': out of memory\n", fname);
    }
    std::fclose(f);
    return ctx;
}

// ggml's entry point for an already open file (exported for tests and tools,
// C++ linkage as in ggml). The image must start at the file's beginning.
struct lm_gguf_context * lm_gguf_init_from_file_impl(FILE * file, struct lm_gguf_init_params params) {
    if (params.ctx != nullptr) {
        *params.ctx = nullptr;
    }
    if (file == nullptr) {
        LM_GGML_LOG_ERROR("lm_gguf_init_from_file_impl: file is NULL\n");
        return nullptr;
    }
    struct stat st;
    if (fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode)) {
        LM_GGML_LOG_ERROR("lm_gguf_init_from_file_impl: file is not a regular file\n");
        return nullptr;
    }
    if (fseeko(file, 0, SEEK_SET) != 0) {
        LM_GGML_LOG_ERROR("lm_gguf_init_from_file_impl: cannot seek to the start: %s\n", std::strerror(errno));
        return nullptr;
    }
    try {
        Reader r(file, (uint64_t) st.st_size);
        return parse_logged(r, params, "lm_gguf_init_from_file_impl", "file");
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_gguf_init_from_file_impl: out of memory\n");
    }
    return nullptr;
}

// lmggml quantize: rewrites a GGUF model with its weight matrices in another
// type, as llama.cpp's llama-quantize does with a pure (single-type) mix:
// every 2-D or larger "*.weight" tensor takes the type, norms and other 1-D
// tensors keep theirs (F32), and a matrix whose rows the type's block does
// not divide takes llama.cpp's fallback type. Metadata is copied, with
// general.file_type updated. Tensors are converted one at a time (rows split
// over threads) and streamed to the output file.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "common.h"
#include "ggml.h"
#include "gguf.h"
#include "imatrix.h"

namespace cli {

namespace {

using lmllm::Status;

// The types lm_ggml_quantize_chunk writes.
const lm_ggml_type kTargets[] = {
    LM_GGML_TYPE_F32,    LM_GGML_TYPE_F16,     LM_GGML_TYPE_BF16,  LM_GGML_TYPE_Q4_0,    LM_GGML_TYPE_Q4_1,
    LM_GGML_TYPE_Q5_0,   LM_GGML_TYPE_Q5_1,    LM_GGML_TYPE_Q8_0,  LM_GGML_TYPE_Q2_K,    LM_GGML_TYPE_Q3_K,
    LM_GGML_TYPE_Q4_K,   LM_GGML_TYPE_Q5_K,    LM_GGML_TYPE_Q6_K,  LM_GGML_TYPE_IQ2_XXS, LM_GGML_TYPE_IQ2_XS,
    LM_GGML_TYPE_IQ2_S,  LM_GGML_TYPE_IQ3_XXS, LM_GGML_TYPE_IQ3_S, LM_GGML_TYPE_IQ1_S,   LM_GGML_TYPE_IQ1_M,
    LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_IQ4_XS,  LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0,
};

std::string upper(std::string s) {
    for (char & c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

std::string target_names() {
    std::string out;
    for (lm_ggml_type t : kTargets) out += (out.empty() ? "" : ", ") + upper(lm_ggml_type_name(t));
    return out;
}

lmllm::Result<lm_ggml_type> parse_type(const std::string & name) {
    for (lm_ggml_type t : kTargets)
        if (upper(name) == upper(lm_ggml_type_name(t))) return t;
    return Status::error("unknown type '" + name +
                         "' (lmggml quantizes every matrix to one type; valid: " + target_names() + ")");
}

// As llama-quantize: these types are refused without an importance matrix.
bool needs_imatrix(lm_ggml_type t) {
    return lm_ggml_quantize_requires_imatrix(t) || t == LM_GGML_TYPE_IQ2_S || t == LM_GGML_TYPE_IQ1_M;
}

// llama.cpp's general.file_type (enum llama_ftype) of a single-type model.
uint32_t file_type(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_F32: return 0;
        case LM_GGML_TYPE_F16: return 1;
        case LM_GGML_TYPE_Q4_0: return 2;
        case LM_GGML_TYPE_Q4_1: return 3;
        case LM_GGML_TYPE_Q8_0: return 7;
        case LM_GGML_TYPE_Q5_0: return 8;
        case LM_GGML_TYPE_Q5_1: return 9;
        case LM_GGML_TYPE_Q2_K: return 10;
        case LM_GGML_TYPE_Q3_K: return 12;
        case LM_GGML_TYPE_Q4_K: return 15;
        case LM_GGML_TYPE_Q5_K: return 17;
        case LM_GGML_TYPE_Q6_K: return 18;
        case LM_GGML_TYPE_IQ2_XXS: return 19;
        case LM_GGML_TYPE_IQ2_XS: return 20;
        case LM_GGML_TYPE_IQ3_XXS: return 23;
        case LM_GGML_TYPE_IQ1_S: return 24;
        case LM_GGML_TYPE_IQ4_NL: return 25;
        case LM_GGML_TYPE_IQ3_S: return 26;
        case LM_GGML_TYPE_IQ2_S: return 28;
        case LM_GGML_TYPE_IQ4_XS: return 30;
        case LM_GGML_TYPE_IQ1_M: return 31;
        case LM_GGML_TYPE_BF16: return 32;
        case LM_GGML_TYPE_TQ1_0: return 36;
        case LM_GGML_TYPE_TQ2_0: return 37;
        default: return 0;
    }
}

// llama.cpp's replacement when the type's block does not divide a row.
lm_ggml_type fallback(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_TQ1_0:
        case LM_GGML_TYPE_TQ2_0:
        case LM_GGML_TYPE_IQ2_XXS:
        case LM_GGML_TYPE_IQ2_XS:
        case LM_GGML_TYPE_IQ2_S:
        case LM_GGML_TYPE_IQ3_XXS:
        case LM_GGML_TYPE_IQ3_S:
        case LM_GGML_TYPE_IQ1_S:
        case LM_GGML_TYPE_IQ1_M:
        case LM_GGML_TYPE_Q2_K:
        case LM_GGML_TYPE_Q3_K:
        case LM_GGML_TYPE_IQ4_XS: return LM_GGML_TYPE_IQ4_NL;
        case LM_GGML_TYPE_Q4_K: return LM_GGML_TYPE_Q5_0;
        case LM_GGML_TYPE_Q5_K: return LM_GGML_TYPE_Q5_1;
        case LM_GGML_TYPE_Q6_K: return LM_GGML_TYPE_Q8_0;
        default: return LM_GGML_TYPE_F16;
    }
}

bool ends_with(const std::string & s, const std::string & tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Which tensors take the new type: the weight matrices, except those
// llama.cpp keeps as they are (MoE routers, position and type embeddings,
// SSM convolutions).
bool quantizable(const lm_ggml_tensor * t) {
    const std::string name = t->name;
    if (lm_ggml_n_dims(t) < 2 || !ends_with(name, "weight")) return false;
    for (const char * keep : {"ffn_gate_inp", "pos_embd", "token_types", "ssm_conv1d", "_norm"})
        if (name.find(keep) != std::string::npos) return false;
    return true;
}

struct Plan {
    lm_ggml_tensor * t = nullptr; // shape and source type (from the input's metadata)
    lm_ggml_type type;            // output type
    const std::vector<float> * imatrix = nullptr;
};

// Converts one tensor's bytes `in` (type p.t->type) to p.type.
Status convert(const Plan & p, const std::vector<uint8_t> & in, std::vector<uint8_t> & out, int32_t n_threads) {
    const int64_t n_per_row = p.t->ne[0];
    const int64_t nrows = lm_ggml_nrows(p.t);
    const int64_t n = n_per_row * nrows;
    std::vector<float> f32(static_cast<size_t>(n));
    if (p.t->type == LM_GGML_TYPE_F32) {
        std::memcpy(f32.data(), in.data(), size_t(n) * sizeof(float));
    } else {
        const auto * tr = lm_ggml_get_type_traits(p.t->type);
        if (!tr || !tr->to_float)
            return Status::error(std::string(p.t->name) + ": cannot read type " + lm_ggml_type_name(p.t->type));
        tr->to_float(in.data(), f32.data(), n);
    }
    out.assign(lm_ggml_row_size(p.type, n_per_row) * size_t(nrows), 0);
    // rows of one matrix (ne2/ne3 slices) share an imatrix slice
    const int64_t rows_per_mat = p.t->ne[1];
    const int64_t n_mat = nrows / rows_per_mat;
    const int64_t nth = std::max<int64_t>(1, std::min<int64_t>(n_threads, rows_per_mat / 8));
    std::vector<size_t> written(size_t(n_mat * nth), 0);
    for (int64_t m = 0; m < n_mat; m++) {
        const float * im = nullptr;
        if (p.imatrix) im = p.imatrix->data() + (p.imatrix->size() == size_t(n_per_row) ? 0 : size_t(m * n_per_row));
        std::vector<std::thread> workers;
        for (int64_t i = 0; i < nth; i++) {
            const int64_t r0 = m * rows_per_mat + rows_per_mat * i / nth;
            const int64_t r1 = m * rows_per_mat + rows_per_mat * (i + 1) / nth;
            auto work = [&, r0, r1, i, m]() {
                written[size_t(m * nth + i)] = r1 > r0 ? lm_ggml_quantize_chunk(p.type, f32.data(), out.data(),
                                                                                r0 * n_per_row, r1 - r0, n_per_row, im)
                                                       : 1;
            };
            if (i + 1 == nth)
                work();
            else
                workers.emplace_back(work);
        }
        for (std::thread & w : workers) w.join();
    }
    if (std::find(written.begin(), written.end(), size_t(0)) != written.end())
        return Status::error(std::string(p.t->name) + ": quantization to " + lm_ggml_type_name(p.type) +
                             " failed: " + last_library_error());
    return Status();
}

struct GgufDeleter {
    void operator()(lm_gguf_context * c) const { lm_gguf_free(c); }
};
struct CtxDeleter {
    void operator()(lm_ggml_context * c) const { lm_ggml_free(c); }
};

} // namespace

int cmd_quantize(int argc, char ** argv) {
    const std::string cmd = "quantize";
    std::vector<std::string> args;
    std::string imatrix_path;
    bool allow_requantize = false, verbose = false;
    int32_t n_threads = -1;

    ArgParser p(cmd, "quantize IN.gguf OUT.gguf TYPE [--imatrix FILE] [--allow-requantize]",
                "Writes OUT.gguf: IN.gguf with its weight matrices converted to TYPE (norms and other 1-D\n"
                "tensors stay as they are; a matrix whose rows TYPE's block does not divide takes llama.cpp's\n"
                "fallback type). TYPE: " +
                    target_names() +
                    ".\n"
                    "IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M need --imatrix.");
    p.positionals(&args);
    p.option({"--imatrix"}, &imatrix_path, "FILE",
             "importance matrix (llama.cpp's imatrix.dat) weighting the rounding");
    p.flag({"--allow-requantize"}, &allow_requantize, "convert tensors that are already quantized (quality suffers)");
    p.option({"-t", "--threads"}, &n_threads, "N", "threads (default: the usable cores not busy with other work)");
    p.flag({"-v", "--verbose"}, &verbose, "print the library's log messages");

    bool help = false;
    if (Status s = p.parse(argc, argv, 2, help); !s.ok())
        return fail(cmd, s.message() + " (see lmggml quantize --help)");
    if (help) {
        std::fputs(p.help_text().c_str(), stdout);
        return 0;
    }
    setup_logging(verbose);
    if (args.size() != 3) return fail(cmd, "expected IN.gguf OUT.gguf TYPE (see lmggml quantize --help)");
    const std::string & in_path = args[0];
    const std::string & out_path = args[1];
    auto type_r = parse_type(args[2]);
    if (!type_r.ok()) return fail(cmd, type_r.status().message());
    const lm_ggml_type type = type_r.value();
    if (n_threads != -1 && (n_threads < 1 || n_threads > LM_GGML_MAX_N_THREADS))
        return fail(cmd, "-t must be between 1 and " + std::to_string(LM_GGML_MAX_N_THREADS));
    if (n_threads < 0) n_threads = default_threads();
    if (needs_imatrix(type) && imatrix_path.empty())
        return fail(cmd, std::string("quantizing to ") + upper(lm_ggml_type_name(type)) +
                             " needs an importance matrix (--imatrix FILE, from llama.cpp's llama-imatrix)");
    std::error_code ec;
    if (std::filesystem::equivalent(in_path, out_path, ec)) return fail(cmd, "OUT.gguf must differ from IN.gguf");
    std::map<std::string, std::vector<float>> imatrix;
    if (!imatrix_path.empty()) {
        auto r = read_imatrix(imatrix_path);
        if (!r.ok()) return fail(cmd, r.status().message());
        imatrix = std::move(r.value());
    }

    lm_ggml_context * meta_raw = nullptr;
    std::unique_ptr<lm_gguf_context, GgufDeleter> in(lm_gguf_init_from_file(in_path.c_str(), {true, &meta_raw}));
    std::unique_ptr<lm_ggml_context, CtxDeleter> meta(meta_raw);
    if (!in) {
        const std::string why = last_library_error();
        return fail(cmd, "cannot read '" + in_path + "' as GGUF" + (why.empty() ? "" : ": " + why));
    }

    // the plan, checked in full before anything is written
    std::vector<Plan> plan;
    int n_fallback = 0;
    const int64_t n_tensors = lm_gguf_get_n_tensors(in.get());
    for (int64_t i = 0; i < n_tensors; i++) {
        lm_ggml_tensor * t = lm_ggml_get_tensor(meta.get(), lm_gguf_get_tensor_name(in.get(), i));
        if (!t) return fail(cmd, "'" + in_path + "': tensor " + std::to_string(i) + " is missing from its metadata");
        Plan pl{t, t->type, nullptr};
        if (quantizable(t)) {
            lm_ggml_type want = type;
            while (t->ne[0] % lm_ggml_blck_size(want) != 0) want = fallback(want);
            n_fallback += want != type;
            if (lm_ggml_is_quantized(t->type) && t->type != want && !allow_requantize)
                return fail(cmd, std::string("tensor '") + t->name + "' is already " + lm_ggml_type_name(t->type) +
                                     ": requantizing loses quality; give --allow-requantize to do it anyway");
            pl.type = want;
            if (auto it = imatrix.find(t->name); it != imatrix.end()) {
                const size_t nval = it->second.size();
                const int64_t n_mat = lm_ggml_nrows(t) / t->ne[1];
                if (nval != size_t(t->ne[0]) && nval != size_t(t->ne[0] * n_mat))
                    return fail(cmd, "imatrix entry '" + it->first + "' has " + std::to_string(nval) +
                                         " values; the tensor's rows have " + std::to_string(t->ne[0]));
                pl.imatrix = &it->second;
            } else if (needs_imatrix(want) && want != t->type) {
                return fail(cmd, std::string("the importance matrix has no entry for '") + t->name + "', which " +
                                     upper(lm_ggml_type_name(want)) + " needs");
            }
        }
        plan.push_back(pl);
    }

    std::unique_ptr<lm_gguf_context, GgufDeleter> out(lm_gguf_init_empty());
    lm_gguf_set_kv(out.get(), in.get());
    lm_gguf_set_val_u32(out.get(), "general.quantization_version", LM_GGML_QNT_VERSION);
    lm_gguf_set_val_u32(out.get(), "general.file_type", file_type(type));
    for (const Plan & pl : plan) {
        lm_gguf_add_tensor(out.get(), pl.t);
        lm_gguf_set_tensor_type(out.get(), pl.t->name, pl.type);
        if (lm_gguf_get_tensor_type(out.get(), lm_gguf_find_tensor(out.get(), pl.t->name)) != pl.type)
            return fail(cmd, std::string("cannot describe tensor '") + pl.t->name +
                                 "' in the output: " + last_library_error());
    }

    std::FILE * fin = std::fopen(in_path.c_str(), "rb");
    if (!fin) return fail(cmd, "cannot open '" + in_path + "': " + std::strerror(errno));
    std::unique_ptr<std::FILE, int (*)(std::FILE *)> fin_guard(fin, std::fclose);
    std::FILE * fout = std::fopen(out_path.c_str(), "wb");
    if (!fout) return fail(cmd, "cannot create '" + out_path + "': " + std::strerror(errno));
    bool closed = false;
    auto abort_out = [&](const std::string & msg) {
        if (!closed) std::fclose(fout);
        closed = true;
        std::filesystem::remove(out_path, ec); // no half-written model left behind
        return fail(cmd, msg);
    };

    std::vector<uint8_t> header(lm_gguf_get_meta_size(out.get()));
    lm_gguf_get_meta_data(out.get(), header.data());
    if (std::fwrite(header.data(), 1, header.size(), fout) != header.size())
        return abort_out("cannot write '" + out_path + "'");

    // the grid I-quants' search tables, built before the threads share them
    for (const Plan & pl : plan)
        if (pl.type != pl.t->type) lm_ggml_quantize_init(pl.type);
    const size_t align = lm_gguf_get_alignment(out.get());
    const size_t data_offset = lm_gguf_get_data_offset(in.get());
    uint64_t bytes_in = 0, bytes_out = 0;
    std::vector<uint8_t> src, dst;
    const double t0 = now_seconds();
    for (size_t i = 0; i < plan.size(); i++) {
        const Plan & pl = plan[i];
        src.resize(lm_gguf_get_tensor_size(in.get(), int64_t(i)));
        if (std::fseek(fin, long(data_offset + lm_gguf_get_tensor_offset(in.get(), int64_t(i))), SEEK_SET) != 0 ||
            std::fread(src.data(), 1, src.size(), fin) != src.size())
            return abort_out("'" + in_path + "' is truncated: tensor '" + pl.t->name + "' lies past its end");
        const std::vector<uint8_t> * data = &src;
        if (pl.type != pl.t->type) {
            if (Status s = convert(pl, src, dst, n_threads); !s.ok()) return abort_out(s.message());
            data = &dst;
        }
        const size_t padded = (data->size() + align - 1) / align * align;
        const std::vector<uint8_t> zeros(padded - data->size(), 0);
        if (std::fwrite(data->data(), 1, data->size(), fout) != data->size() ||
            std::fwrite(zeros.data(), 1, zeros.size(), fout) != zeros.size())
            return abort_out("cannot write '" + out_path + "'");
        bytes_in += src.size();
        bytes_out += data->size();
        std::printf("[%4zu/%4zu] %-32s %-8s -> %-8s %10s -> %10s\n", i + 1, plan.size(), pl.t->name,
                    lm_ggml_type_name(pl.t->type), lm_ggml_type_name(pl.type), format_bytes(src.size()).c_str(),
                    format_bytes(data->size()).c_str());
    }
    closed = true;
    if (std::fclose(fout) != 0) return abort_out("cannot write '" + out_path + "'");
    std::printf("quantized to %s in %.2f s: %s -> %s%s\n", upper(lm_ggml_type_name(type)).c_str(), now_seconds() - t0,
                format_bytes(bytes_in).c_str(), format_bytes(bytes_out).c_str(),
                n_fallback
                    ? (" (" + std::to_string(n_fallback) + " matrices took a fallback type: rows not a multiple of " +
                       std::to_string(lm_ggml_blck_size(type)) + ")")
                          .c_str()
                    : "");
    return 0;
}

} // namespace cli

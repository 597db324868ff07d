// Shared pieces of the subcommands (see common.h).
#include "common.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <system_error>

#include "ggml-backend.h"
#include "ggml.h"
#include "lmllm/split.h"

#ifndef LMGGML_VERSION
#define LMGGML_VERSION "unknown"
#endif
#ifndef LMGGML_COMMIT
#define LMGGML_COMMIT "unknown"
#endif

namespace cli {

using lmllm::Result;
using lmllm::Status;

namespace {

struct LogState {
    std::mutex mu;
    bool verbose = false;
    bool in_error = false; // a CONT line continues the previous level
    std::string last_error;
};
LogState g_log;

void log_hook(enum lm_ggml_log_level level, const char * text, void *) {
    std::lock_guard<std::mutex> lock(g_log.mu);
    if (g_log.verbose) std::fputs(text, stderr);
    if (level != LM_GGML_LOG_LEVEL_CONT) g_log.in_error = level == LM_GGML_LOG_LEVEL_ERROR;
    if (!g_log.in_error) return;
    if (level == LM_GGML_LOG_LEVEL_ERROR) g_log.last_error.clear();
    g_log.last_error += text;
    while (!g_log.last_error.empty() && g_log.last_error.back() == '\n') g_log.last_error.pop_back();
}

// A one-line bar redrawn in place; silent when stderr is not a terminal.
class ProgressBar {
public:
    explicit ProgressBar(std::string label) : label_(std::move(label)), tty_(isatty(STDERR_FILENO) == 1) {}
    void update(float f) {
        if (!tty_) return;
        const int pct = static_cast<int>(std::lround(f * 100.0f));
        if (pct == last_) return;
        last_ = pct;
        constexpr int kWidth = 30;
        const int fill = pct * kWidth / 100;
        std::fprintf(stderr, "\r%s [%s%s] %3d%%", label_.c_str(), std::string(size_t(fill), '#').c_str(),
                     std::string(size_t(kWidth - fill), '.').c_str(), pct);
        std::fflush(stderr);
    }
    void finish() {
        if (tty_ && last_ >= 0) std::fprintf(stderr, "\r\033[K"); // erase the bar
    }

private:
    std::string label_;
    bool tty_;
    int last_ = -1;
};

} // namespace

int fail(const std::string & command, const std::string & message) {
    std::fprintf(stderr, "lmggml%s%s: error: %s\n", command.empty() ? "" : " ", command.c_str(), message.c_str());
    return 1;
}

void setup_logging(bool verbose) {
    {
        std::lock_guard<std::mutex> lock(g_log.mu);
        g_log.verbose = verbose;
    }
    lm_ggml_log_set(log_hook, nullptr);
}

std::string last_library_error() {
    std::lock_guard<std::mutex> lock(g_log.mu);
    return g_log.last_error;
}

std::string build_commit() { return LMGGML_COMMIT; }
std::string build_version() { return LMGGML_VERSION; }
std::string build_info() { return std::string("lmggml ") + LMGGML_VERSION + " (" + LMGGML_COMMIT + ")"; }

Result<std::string> read_text_file(const std::string & path) {
    std::FILE * f = std::fopen(path.c_str(), "rb");
    if (!f) return Status::error("cannot open '" + path + "': " + std::strerror(errno));
    std::string text;
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    const bool bad = std::ferror(f) != 0;
    std::fclose(f);
    if (bad) return Status::error("cannot read '" + path + "'");
    return text;
}

double now_seconds() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

std::string format_bytes(uint64_t n) {
    char buf[64];
    if (n >= (1ull << 30))
        std::snprintf(buf, sizeof buf, "%.2f GiB", double(n) / double(1ull << 30));
    else if (n >= (1ull << 20))
        std::snprintf(buf, sizeof buf, "%.2f MiB", double(n) / double(1ull << 20));
    else if (n >= (1ull << 10))
        std::snprintf(buf, sizeof buf, "%.2f KiB", double(n) / double(1ull << 10));
    else
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
    return buf;
}

std::string format_count(uint64_t n) {
    char buf[64];
    if (n >= 1000000000ull)
        std::snprintf(buf, sizeof buf, "%.2f B", double(n) / 1e9);
    else if (n >= 1000000ull)
        std::snprintf(buf, sizeof buf, "%.2f M", double(n) / 1e6);
    else if (n >= 1000ull)
        std::snprintf(buf, sizeof buf, "%.2f K", double(n) / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(n));
    return buf;
}

void add_model_options(ArgParser & p, ModelOptions & o, bool short_device) {
    p.option({"-m", "--model"}, &o.path, "FILE", "model file (GGUF)");
    const std::vector<std::string> device_names = {short_device ? "-d" : "-dev", "--device"};
    p.option(device_names, &o.device, "NAME[,...]",
             "put the layers on these devices, split by -ts (see `lmggml devices`)");
    p.option({"-ngl", "--n-gpu-layers"}, &o.n_gpu_layers, "N",
             "with --device: layers placed there, the last N (default: all)");
    p.option({"-ts", "--tensor-split"}, &o.tensor_split, "A,B,...",
             "the offloaded layers' shares, one per device in order (default: by free memory)");
    p.option({"--rpc"}, &o.rpc, "HOST:PORT[,...]",
             "add the devices of these RPC servers; the layers go to them unless --device names others");
    p.option({"--rpc-auth-key"}, &o.rpc_key_file, "FILE",
             "the key the --rpc servers require, read from FILE (else env LMGGML_RPC_AUTH_KEY)");
    p.flag({"--no-mmap"}, &o.no_mmap, "read the weights instead of mapping the file");
    p.flag({"--no-repack"}, &o.no_repack,
           "keep the CPU's matrix weights mapped from the file, in its layout (no repacked copy)");
    p.flag({"-v", "--verbose"}, &o.verbose, "print the library's log messages");
}

void add_context_options(ArgParser & p, ContextOptions & o) {
    p.option({"-c", "--ctx-size"}, &o.n_ctx, "N",
             "context size in tokens (default " + std::to_string(o.n_ctx) + ", 0: the model's)");
    p.option({"-b", "--batch-size"}, &o.n_batch, "N",
             "max tokens per decode (default " + std::to_string(o.n_batch) + ")");
    p.option({"-t", "--threads"}, &o.n_threads, "N",
             "CPU threads (default: the usable cores not busy with other work)");
    add_flash_attn_option(p, o);
}

void add_flash_attn_option(ArgParser & p, ContextOptions & o) {
    p.flag({"--no-flash-attn"}, &o.no_flash_attn,
           "attention as separate products and softmax over a transposed V cache (default: one fused op)");
}

void add_sampling_options(ArgParser & p, lmllm::SamplerParams & s) {
    auto num = [](float v) {
        char b[32];
        std::snprintf(b, sizeof b, "%g", double(v));
        return std::string(b);
    };
    p.option({"--temp"}, &s.temperature, "T", "temperature, <= 0: greedy (default " + num(s.temperature) + ")");
    p.option({"--top-k"}, &s.top_k, "K",
             "keep the K most likely tokens, 0: off (default " + std::to_string(s.top_k) + ")");
    p.option({"--top-p"}, &s.top_p, "P",
             "nucleus: smallest set with probability >= P, 1: off (default " + num(s.top_p) + ")");
    p.option({"--min-p"}, &s.min_p, "P",
             "drop tokens below P x the best one's probability, 0: off (default " + num(s.min_p) + ")");
    p.option({"--repeat-penalty"}, &s.repeat_penalty, "R",
             "penalise repeated tokens, 1: off (default " + num(s.repeat_penalty) + ")");
    p.option({"--repeat-last-n"}, &s.repeat_last_n, "N",
             "tokens the penalties look back at, -1: all (default " + std::to_string(s.repeat_last_n) + ")");
    p.option({"--presence-penalty"}, &s.presence_penalty, "P",
             "subtract P from a seen token's logit, 0: off (default " + num(s.presence_penalty) + ")");
    p.option({"--frequency-penalty"}, &s.frequency_penalty, "F",
             "subtract F x its count from a seen token's logit, 0: off (default " + num(s.frequency_penalty) + ")");
    p.seed_option({"-s", "--seed"}, &s.seed, "random seed, -1: random (default -1)");
}

Status check_model_context_options(const ModelOptions & mo, const ContextOptions & co) {
    if (co.n_threads != -1 && (co.n_threads < 1 || co.n_threads > LM_GGML_MAX_N_THREADS))
        return Status::error("-t must be between 1 and " + std::to_string(LM_GGML_MAX_N_THREADS) + " (got " +
                             std::to_string(co.n_threads) + ")");
    if (co.n_batch < 1) return Status::error("-b must be >= 1");
    if (mo.n_gpu_layers < -1) return Status::error("-ngl must be >= 0 (or -1: all layers)");
    if (mo.n_gpu_layers != -1 && mo.device.empty() && mo.rpc.empty())
        return Status::error("-ngl places layers on a device: give one with --device NAME (see `lmggml devices`)");
    return Status();
}

Status check_sampling(const lmllm::SamplerParams & s) {
    if (s.top_p < 0.0f || s.top_p > 1.0f) return Status::error("--top-p must be in [0, 1]");
    if (s.min_p < 0.0f || s.min_p > 1.0f) return Status::error("--min-p must be in [0, 1]");
    if (s.repeat_penalty <= 0.0f) return Status::error("--repeat-penalty must be > 0");
    if (s.top_k < 0) return Status::error("--top-k must be >= 0");
    if (s.repeat_last_n < -1) return Status::error("--repeat-last-n must be >= -1");
    return Status();
}

Result<std::unique_ptr<lmllm::Model>> load_model(const ModelOptions & o) {
    if (o.path.empty()) return Status::error("no model given (use -m MODEL.gguf)");
    std::error_code ec;
    const auto st = std::filesystem::status(o.path, ec);
    if (ec || !std::filesystem::exists(st)) return Status::error("cannot open '" + o.path + "': no such file");
    if (std::filesystem::is_directory(st)) return Status::error("'" + o.path + "' is a directory, not a model file");

    lmllm::ModelParams mp;
    mp.use_mmap = !o.no_mmap;
    mp.repack = !o.no_repack;
    std::vector<std::string> devices;
    for (size_t start = 0; !o.device.empty();) {
        const size_t comma = o.device.find(',', start);
        devices.push_back(o.device.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (devices.back().empty()) return Status::error("--device: an empty name in '" + o.device + "'");
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    std::vector<float> split;
    if (!o.tensor_split.empty()) { // checked before any server is contacted
        auto ts = lmllm::parse_tensor_split(o.tensor_split);
        if (!ts.ok()) return ts.status();
        split = ts.value();
        if (o.device.empty() && o.rpc.empty())
            return Status::error("--tensor-split splits the layers over devices: name them with --device A,B or --rpc");
    }
    if (!o.rpc.empty()) {
        std::vector<std::string> remote;
        if (Status s = add_rpc_servers(o.rpc, remote, o.rpc_key_file); !s.ok()) return s;
        if (devices.empty()) devices = remote; // -d, when given, chooses among all devices
    }
    if (!devices.empty()) {
        lm_ggml_backend_load_all();
        std::string names;
        for (const std::string & d : devices) {
            if (!lm_ggml_backend_dev_by_name(d.c_str()))
                return Status::error("unknown device '" + d + "' (see `lmggml devices`)");
            names += (names.empty() ? "" : ", ") + d;
        }
        if (!split.empty() && split.size() != devices.size())
            return Status::error("--tensor-split has " + std::to_string(split.size()) + " proportions for " +
                                 std::to_string(devices.size()) + " devices (" + names +
                                 "): give one per device, in order");
        mp.devices = devices;
        mp.n_gpu_layers = o.n_gpu_layers;
        mp.tensor_split = split;
    }
    ProgressBar bar("loading " + std::filesystem::path(o.path).filename().string());
    mp.progress = [&bar](float f) {
        bar.update(f);
        return true;
    };
    const double t0 = now_seconds();
    auto r = lmllm::Model::load(o.path, mp);
    bar.finish();
    if (!r.ok()) {
        std::string msg = r.status().message();
        if (msg.empty()) msg = last_library_error();
        return Status::error(msg.empty() ? "cannot load '" + o.path + "'" : msg);
    }
    const lmllm::Model & m = *r.value();
    std::fprintf(stderr, "model: %s, %s params, %s, loaded in %.2f s\n", m.description().c_str(),
                 format_count(m.n_params()).c_str(), format_bytes(m.size_bytes()).c_str(), now_seconds() - t0);
    if (o.verbose) std::fprintf(stderr, "placement: %s\n", m.placement().c_str());
    return r;
}

Result<std::unique_ptr<lmllm::Context>> make_context(const lmllm::Model & m, const ContextOptions & o,
                                                     bool all_logits) {
    lmllm::ContextParams cp;
    cp.n_ctx = o.n_ctx;
    cp.n_batch = o.n_batch;
    cp.n_threads = o.n_threads > 0 ? o.n_threads : default_threads();
    if (o.n_threads <= 0 && g_log.verbose) std::fprintf(stderr, "%s\n", default_threads_note().c_str());
    const uint32_t n_train = m.hparams().n_ctx_train;
    if (n_train > 0 && o.n_ctx > n_train)
        std::fprintf(stderr,
                     "warning: a context of %u tokens exceeds the model's training context (%u): "
                     "quality may degrade past it\n",
                     o.n_ctx, n_train);
    cp.all_logits = all_logits;
    cp.flash_attn = !o.no_flash_attn;
    auto r = lmllm::Context::create(m, cp);
    if (!r.ok() && r.status().message().empty())
        return Status::error("cannot create the context: " + last_library_error());
    return r;
}

} // namespace cli

#pragma once
// Pieces every subcommand shares: error reporting, the library log hook,
// the loading progress bar, model loading with clear errors, option groups.

#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "lmllm/context.h"
#include "lmllm/model.h"
#include "lmllm/sampler.h"

namespace cli {

// Prints "lmggml <command>: error: <message>" on stderr and returns exit code 1.
int fail(const std::string & command, const std::string & message);

// Routes lmggml's log: dropped unless verbose, but the last error line is kept
// so a failure without its own message can still be explained.
void setup_logging(bool verbose);
std::string last_library_error();

// "lmggml 0.1.0 (abc1234)"
std::string build_info();
std::string build_commit();
std::string build_version();

// The whole file; errors name the path.
lmllm::Result<std::string> read_text_file(const std::string & path);

double now_seconds();
// The usable cores (affinity mask) minus those other processes keep busy,
// sampled once from /proc/stat (threads.cpp); at least 1.
int32_t default_threads();
std::string default_threads_note(); // how it was chosen, for -v

// "85.77 MiB", "134.52 M"
std::string format_bytes(uint64_t n);
std::string format_count(uint64_t n);

// Options shared by the commands that load a model.
struct ModelOptions {
    std::string path;
    std::string device;        // NAME[,NAME...]: devices for the layers; empty: CPU only (or the --rpc devices)
    int32_t n_gpu_layers = -1; // with a device: layers placed there (-1: all)
    std::string tensor_split;  // -ts a,b,...: the layers' shares of the devices (lmllm/split.h)
    bool no_mmap = false;
    bool no_repack = false;
    bool verbose = false;
    std::string rpc;          // --rpc HOST:PORT[,...]: servers whose devices join the registry
    std::string rpc_key_file; // --rpc-auth-key FILE: the key those servers require (else env LMGGML_RPC_AUTH_KEY)
};
// short_device: -d is --device (bench takes -dev, as llama-bench, and keeps -d for --n-depth)
void add_model_options(ArgParser & p, ModelOptions & o, bool short_device = true);

struct ContextOptions {
    uint32_t n_ctx = 2048;
    uint32_t n_batch = 512;
    int32_t n_threads = -1; // -1: default_threads()
    bool no_flash_attn = false;
};
void add_context_options(ArgParser & p, ContextOptions & o);
// --no-flash-attn alone (bench has its own size and thread options)
void add_flash_attn_option(ArgParser & p, ContextOptions & o);
void add_sampling_options(ArgParser & p, lmllm::SamplerParams & s);
// The checks every command that loads a model makes on its options: threads
// 1..LM_GGML_MAX_N_THREADS (-1: the default), batch >= 1, -ngl only with a
// device. One message naming the option.
lmllm::Status check_model_context_options(const ModelOptions & mo, const ContextOptions & co);
// Rejects out-of-range sampling settings with one message.
lmllm::Status check_sampling(const lmllm::SamplerParams & s);
// Registers the devices of the RPC servers in list (HOST:PORT[,HOST:PORT...]);
// their names are appended to devices, server by server (rpc_devices.cpp).
// key_file, when not empty, holds the key the servers require (rpc_key.cpp).
lmllm::Status add_rpc_servers(const std::string & list, std::vector<std::string> & devices,
                              const std::string & key_file = "");
// The RPC auth key in path: the file less trailing whitespace; empty or
// unreadable is an error; a file that others may read gets a warning.
lmllm::Status read_rpc_key_file(const std::string & path, std::string & key);

// Checks the file, loads it with a progress bar on stderr (when stderr is a
// terminal) and reports what was loaded. Errors are one line, ready for fail().
lmllm::Result<std::unique_ptr<lmllm::Model>> load_model(const ModelOptions & o);

lmllm::Result<std::unique_ptr<lmllm::Context>> make_context(const lmllm::Model & m, const ContextOptions & o,
                                                            bool all_logits = false);

} // namespace cli

// lmggml: the command-line program. `lmggml <command> [options]`; each
// command lives in its own file (cmd_*.cpp).
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "commands.h"
#include "common.h"

namespace {

struct Command {
    const char * name;
    int (*fn)(int, char **);
    const char * summary;
};

const Command kCommands[] = {
    {"run", cli::cmd_run, "generate text from a prompt"},
    {"chat", cli::cmd_chat, "interactive chat in the model's chat template"},
    {"bench", cli::cmd_bench, "prompt processing and generation speed (tokens/s)"},
    {"perplexity", cli::cmd_perplexity, "perplexity of the model over a text file"},
    {"info", cli::cmd_info, "metadata and tensors of a GGUF file"},
    {"quantize", cli::cmd_quantize, "convert a GGUF model's weights to another type"},
    {"tokenize", cli::cmd_tokenize, "print the tokens of a text"},
    {"devices", cli::cmd_devices, "list the available devices"},
    {"rpc-server", cli::cmd_rpc_server, "serve this machine's devices to RPC clients"},
};

void usage(std::FILE * out) {
    std::fprintf(out, "usage: lmggml <command> [options]   (lmggml <command> --help for its options)\n\ncommands:\n");
    for (const Command & c : kCommands) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
    std::fprintf(out, "\n%s\n", cli::build_info().c_str());
}

} // namespace

int main(int argc, char ** argv) {
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    const std::string name = argv[1];
    if (name == "-h" || name == "--help" || name == "help") {
        usage(stdout);
        return 0;
    }
    if (name == "--version" || name == "version") {
        std::printf("%s\n", cli::build_info().c_str());
        return 0;
    }
    for (const Command & c : kCommands) {
        if (name == c.name) {
            try {
                return c.fn(argc, argv);
            } catch (const std::bad_alloc &) {
                return cli::fail(name, "out of memory");
            } catch (const std::exception & e) {
                return cli::fail(name, e.what());
            }
        }
    }
    return cli::fail("", "unknown command '" + name + "' (run lmggml --help)");
}

// lmggml devices: every registered device (after loading the backend plugins
// found next to the program and in the usual places) with its type,
// description and memory.
#include <cstdio>

#include "commands.h"
#include "common.h"
#include "ggml-backend.h"

namespace cli {

namespace {

const char * type_name(enum lm_ggml_backend_dev_type t) {
    switch (t) {
        case LM_GGML_BACKEND_DEVICE_TYPE_CPU: return "CPU";
        case LM_GGML_BACKEND_DEVICE_TYPE_GPU: return "GPU";
        case LM_GGML_BACKEND_DEVICE_TYPE_ACCEL: return "ACCEL";
    }
    return "?";
}

} // namespace

int cmd_devices(int argc, char ** argv) {
    const std::string cmd = "devices";
    bool verbose = false;
    ArgParser p(cmd, "devices",
                "Lists the registered devices: name, type, description, memory (free / total),\n"
                "and the backend registry each belongs to.");
    p.flag({"-v", "--verbose"}, &verbose, "print the library's log messages (e.g. plugins tried)");
    bool help = false;
    if (lmllm::Status s = p.parse(argc, argv, 2, help); !s.ok())
        return fail(cmd, s.message() + " (see lmggml devices --help)");
    if (help) {
        std::fputs(p.help_text().c_str(), stdout);
        return 0;
    }
    setup_logging(verbose);
    lm_ggml_backend_load_all();

    const size_t n = lm_ggml_backend_dev_count();
    std::printf("%zu device%s (%zu backend registr%s)\n", n, n == 1 ? "" : "s", lm_ggml_backend_reg_count(),
                lm_ggml_backend_reg_count() == 1 ? "y" : "ies");
    for (size_t i = 0; i < n; i++) {
        lm_ggml_backend_dev_t d = lm_ggml_backend_dev_get(i);
        size_t free = 0, total = 0;
        lm_ggml_backend_dev_memory(d, &free, &total);
        lm_ggml_backend_reg_t reg = lm_ggml_backend_dev_backend_reg(d);
        std::printf("  %zu: %-10s %-5s %s\n", i, lm_ggml_backend_dev_name(d), type_name(lm_ggml_backend_dev_type(d)),
                    lm_ggml_backend_dev_description(d));
        std::printf("     memory: %s free / %s total, registry: %s\n", format_bytes(free).c_str(),
                    format_bytes(total).c_str(), reg ? lm_ggml_backend_reg_name(reg) : "?");
    }
    return 0;
}

} // namespace cli

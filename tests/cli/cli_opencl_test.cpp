// The `lmggml` program with the OpenCL plugin: `devices` lists the device
// and `run -d OpenCL0` (every layer, or one with -ngl 1) prints the CPU's
// greedy continuation of the tiny model (F32 weights: the two differ by
// rounding only, far below any gap between the tiny model's logits).
// Skips without the program, the plugin or an OpenCL device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "cli_util.h"
#include "ggml-backend.h"
#include "lmtest_backends.h"

using clitest::run_cli;

namespace {

bool have_opencl() {
    lmtest::load_backends_once(LMGGML_PLUGIN_DIR);
    return lm_ggml_backend_dev_by_name("OpenCL0") != nullptr;
}

#ifdef LMGGML_CLI
#define REQUIRE_CLI_AND_OPENCL()                                                                                       \
    if (!have_opencl()) {                                                                                              \
        const char * req = std::getenv("LMGGML_REQUIRE_OPENCL");                                                       \
        if (req != nullptr && std::strcmp(req, "1") == 0) {                                                            \
            FAIL() << "LMGGML_REQUIRE_OPENCL=1 but no OpenCL device is registered";                                    \
        }                                                                                                              \
        GTEST_SKIP() << "no OpenCL device (opencl plugin not built, or no OpenCL platform such as pocl-opencl-icd)";   \
    }
#else
#define REQUIRE_CLI_AND_OPENCL() GTEST_SKIP() << "the lmggml program is not built (LMGGML_BUILD_TOOLS=OFF)"
#endif

TEST(CliOpenCL, DevicesListsIt) {
    REQUIRE_CLI_AND_OPENCL();
    auto r = run_cli({"devices"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("OpenCL0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("registry: OpenCL"), std::string::npos) << r.out;
}

TEST(CliOpenCL, RunOnTheDeviceGivesTheCpusTokens) {
    REQUIRE_CLI_AND_OPENCL();
    const std::string model = clitest::tiny_model("tiny_ocl.gguf");
    ASSERT_FALSE(model.empty());
    const std::vector<std::string> base = {"run", "-m", model,    "-p", "the sea",
                                           "-n",  "16", "--temp", "0",  "--no-summary"};
    auto cpu = run_cli(base);
    ASSERT_EQ(cpu.rc, 0) << cpu.err;
    ASSERT_FALSE(cpu.out.empty());
    for (const char * ngl : {"1000", "1"}) {
        std::vector<std::string> args = base;
        args.insert(args.end(), {"-d", "OpenCL0", "-ngl", ngl});
        auto dev = run_cli(args);
        ASSERT_EQ(dev.rc, 0) << dev.err;
        EXPECT_EQ(dev.out, cpu.out) << "-ngl " << ngl;
    }
}

} // namespace

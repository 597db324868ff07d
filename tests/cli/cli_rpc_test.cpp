// --rpc on the CLI: the program puts layers on the device of an RPC server
// (started here, in the test process, through the RPC plugin on 127.0.0.1
// and an ephemeral port) and must produce the same greedy tokens as the CPU
// alone; an unreachable server is an error message, not a hang.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli_util.h"
#include "ggml-backend.h"
#include "ggml-rpc.h"

using clitest::run_cli;

namespace {

// an in-process server for the CPU device, or "" when the plugin is absent
std::string loopback_server() {
    static std::string endpoint = [] {
        lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR);
        lm_ggml_backend_reg_t rpc = lm_ggml_backend_reg_by_name("RPC");
        auto start = rpc ? reinterpret_cast<decltype(&lm_ggml_backend_rpc_server_start)>(
                               lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_server_start"))
                         : nullptr;
        auto port_of = rpc ? reinterpret_cast<decltype(&lm_ggml_backend_rpc_server_port)>(
                                 lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_server_port"))
                           : nullptr;
        lm_ggml_backend_dev_t cpu = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
        if (start == nullptr || port_of == nullptr || cpu == nullptr) {
            return std::string();
        }
        lm_ggml_backend_rpc_server_t s = start("127.0.0.1:0", nullptr, 2, 1, &cpu); // lives until the process ends
        return s ? "127.0.0.1:" + std::to_string(port_of(s)) : std::string();
    }();
    return endpoint;
}

TEST(CliRpc, RunOnRemoteLayersGivesTheCpusTokens) {
    REQUIRE_CLI();
    const std::string ep = loopback_server();
    if (ep.empty()) GTEST_SKIP() << "the RPC plugin is not built";
    const std::string model = clitest::tiny_model("tiny.gguf");
    ASSERT_FALSE(model.empty());
    const std::vector<std::string> base = {"run",    "-m", model, "-p", "hello world", "-n", "12",
                                           "--temp", "0",  "-t",  "2"};
    auto cpu = run_cli(base);
    ASSERT_EQ(cpu.rc, 0) << cpu.err;
    ASSERT_FALSE(cpu.out.empty());
    for (const char * ngl : {"-1", "1"}) {
        auto args = base;
        args.insert(args.end(), {"--rpc", ep, "-ngl", ngl});
        auto r = run_cli(args);
        ASSERT_EQ(r.rc, 0) << "-ngl " << ngl << ": " << r.err;
        EXPECT_EQ(r.out, cpu.out) << "-ngl " << ngl;
    }
}

TEST(CliRpc, UnreachableServerIsAnError) {
    REQUIRE_CLI();
    if (loopback_server().empty()) GTEST_SKIP() << "the RPC plugin is not built";
    const std::string model = clitest::tiny_model("tiny.gguf");
    auto r = run_cli({"run", "-m", model, "-p", "hi", "-n", "1", "--rpc", "127.0.0.1:1"});
    EXPECT_NE(r.rc, 0);
    EXPECT_NE(r.err.find("cannot reach an RPC server at '127.0.0.1:1'"), std::string::npos) << r.err;
}

} // namespace

namespace {

// --rpc-auth-key FILE and env LMGGML_RPC_AUTH_KEY against an in-process
// server that requires a key (docs/RPC.md, Authentication)
TEST(CliRpc, AuthKeyFromFileOrEnvIsProven) {
    REQUIRE_CLI();
    lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR);
    lm_ggml_backend_reg_t rpc = lm_ggml_backend_reg_by_name("RPC");
    auto start = rpc ? reinterpret_cast<decltype(&lm_ggml_backend_rpc_server_start_auth)>(
                           lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_server_start_auth"))
                     : nullptr;
    auto port_of = rpc ? reinterpret_cast<decltype(&lm_ggml_backend_rpc_server_port)>(
                             lm_ggml_backend_reg_get_proc_address(rpc, "lm_ggml_backend_rpc_server_port"))
                       : nullptr;
    if (start == nullptr || port_of == nullptr) GTEST_SKIP() << "the RPC plugin is not built";
    lm_ggml_backend_dev_t cpu = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    const std::string key = "cli-test-key-0123456789";
    lm_ggml_backend_rpc_server_t s =
        start("127.0.0.1:0", nullptr, 2, 1, &cpu, key.c_str()); // lives until the process ends
    ASSERT_NE(s, nullptr);
    const std::string ep = "127.0.0.1:" + std::to_string(port_of(s));
    const std::string model = clitest::tiny_model("tiny.gguf");
    const std::vector<std::string> base = {"run",    "-m", model, "-p", "hello world", "-n", "6",
                                           "--temp", "0",  "-t",  "2"};
    auto cpu_run = run_cli(base);
    ASSERT_EQ(cpu_run.rc, 0) << cpu_run.err;

    auto args = base;
    args.insert(args.end(), {"--rpc", ep, "--rpc-auth-key", clitest::temp_file("rpc.key", key + "\n")});
    auto r = run_cli(args);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, cpu_run.out);

    args = base;
    args.insert(args.end(),
                {"--rpc", ep, "--rpc-auth-key", clitest::temp_file("wrong.key", "not-the-key-0123456789\n")});
    r = run_cli(args);
    EXPECT_NE(r.rc, 0);
    EXPECT_NE(r.err.find("refused this client's key"), std::string::npos) << r.err;

    args = base;
    args.insert(args.end(), {"--rpc", ep});
    r = run_cli(args);
    EXPECT_NE(r.rc, 0) << "no key against a server that requires one";

    setenv("LMGGML_RPC_AUTH_KEY", key.c_str(), 1); // the child inherits it
    r = run_cli(args);
    unsetenv("LMGGML_RPC_AUTH_KEY");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, cpu_run.out);
}

} // namespace

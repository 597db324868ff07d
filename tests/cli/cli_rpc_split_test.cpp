// --rpc A,B -ts 1,1: the layers split over two `lmggml rpc-server`
// processes started here (127.0.0.1, free ports), giving the CPU's greedy
// tokens; -v prints the placement; a wrong -ts is a one-line error.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cli_util.h"

using clitest::run_cli;

namespace {

#ifdef LMGGML_CLI
// A port nothing listens on now (the kernel's pick for an ephemeral bind).
int free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof(a);
    int port = 0;
    if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr *>(&a), &n) == 0) {
        port = ntohs(a.sin_port);
    }
    if (fd >= 0) close(fd);
    return port;
}

bool accepts(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(uint16_t(port));
    const bool ok = fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0;
    if (fd >= 0) close(fd);
    return ok;
}

// `lmggml rpc-server -p PORT -d CPU -t 1`, killed with the test process.
struct ServerProcess {
    pid_t pid = -1;
    int port = 0;
    ServerProcess() {
        port = free_port();
        const std::string p = std::to_string(port);
        pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            const int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            dup2(null, 2);
            execl(LMGGML_CLI, LMGGML_CLI, "rpc-server", "-p", p.c_str(), "-d", "CPU", "-t", "1",
                  static_cast<char *>(nullptr));
            _exit(127);
        }
        for (int i = 0; i < 100 && pid > 0 && !accepts(port); i++) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
    ~ServerProcess() {
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
        }
    }
    std::string endpoint() const { return "127.0.0.1:" + std::to_string(port); }
};
#endif

TEST(CliRpcSplit, TwoServersGiveTheCpusTokens) {
    REQUIRE_CLI();
#ifdef LMGGML_CLI
    ServerProcess a, b;
    ASSERT_TRUE(accepts(a.port) && accepts(b.port)) << "the rpc-server processes did not start";
    tiny::Spec spec = clitest::tiny_spec();
    spec.n_layer = 4;
    const std::string model = clitest::tiny_model("tiny4.gguf", spec);
    ASSERT_FALSE(model.empty());
    const std::vector<std::string> base = {"run",    "-m", model, "-p", "hello world", "-n", "12",
                                           "--temp", "0",  "-t",  "1"};
    auto cpu = run_cli(base);
    ASSERT_EQ(cpu.rc, 0) << cpu.err;
    ASSERT_FALSE(cpu.out.empty());
    const std::string servers = a.endpoint() + "," + b.endpoint();
    if (run_cli({"run", "-m", model, "-p", "hi", "-n", "1", "--rpc", servers}).err.find("RPC plugin") !=
        std::string::npos) {
        GTEST_SKIP() << "the RPC plugin is not built";
    }
    struct Case {
        std::vector<std::string> extra;
        std::string placement;
    };
    const Case cases[] = {
        {{"-ts", "1,1"}, "placement: layers 0-1: RPC0, 2-3: RPC1; output: RPC1"},
        {{"-ts", "3,1"}, "placement: layers 0-2: RPC0, 3: RPC1; output: RPC1"},
        {{"-ts", "1,1", "-ngl", "2"}, "placement: layers 0-1: CPU, 2: RPC0, 3: RPC1; output: RPC1"},
        {{"-d", "RPC1,CPU,RPC0", "-ts", "1,2,1"}, "placement: layers 0: RPC1, 1-2: CPU, 3: RPC0; output: RPC0"},
    };
    for (const Case & c : cases) {
        auto args = base;
        args.insert(args.end(), {"--rpc", servers, "-v"});
        args.insert(args.end(), c.extra.begin(), c.extra.end());
        auto r = run_cli(args);
        ASSERT_EQ(r.rc, 0) << c.placement << ": " << r.err;
        EXPECT_EQ(r.out, cpu.out) << c.placement;
        EXPECT_NE(r.err.find(c.placement), std::string::npos) << r.err;
    }

    auto r = run_cli({"run", "-m", model, "-p", "hi", "-n", "1", "--rpc", servers, "-ts", "1,1,1"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("--tensor-split has 3 proportions for 2 devices (RPC0, RPC1)"), std::string::npos) << r.err;
    r = run_cli({"run", "-m", model, "-p", "hi", "-n", "1", "--rpc", servers, "-ts", "1,abc"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("'abc' is not a number"), std::string::npos) << r.err;
    r = run_cli({"run", "-m", model, "-p", "hi", "-n", "1", "-ts", "1,1"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("--tensor-split splits the layers over devices"), std::string::npos) << r.err;

    // the other model commands take the same options
    r = run_cli({"bench", "-m", model, "-p", "8", "-n", "2", "-r", "1", "-t", "1", "--rpc", servers, "-ts", "1,1"});
    EXPECT_EQ(r.rc, 0) << r.err;
    r = run_cli({"perplexity", "-m", model, "-f", clitest::temp_file("ppl.txt", std::string(400, 'a')), "-c", "64",
                 "-t", "1", "--rpc", servers, "-ts", "1,1"});
    EXPECT_EQ(r.rc, 0) << r.err;
    r = run_cli({"chat", "-m", model, "-n", "4", "--temp", "0", "-t", "1", "--rpc", servers, "-ts", "1,1"},
                "hello\n/exit\n");
    EXPECT_EQ(r.rc, 0) << r.err;
#endif
}

} // namespace

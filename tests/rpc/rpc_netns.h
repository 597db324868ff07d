#pragma once
// Network namespaces for the multi-host RPC test: each "host" is a namespace
// made here (ip netns add) joined to the root namespace by a veth pair, with
// its own address. Needs root and iproute2. Everything made is removed by the
// destructor; namespaces a killed earlier run left behind (their creator's
// pid is gone) are removed on the next start.

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace rpctest {

// runs a shell command quietly; its exit status
inline int sh(const std::string & cmd) {
    const int st = std::system((cmd + " >/dev/null 2>&1").c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// why the namespaces cannot be made here, or "" when they can be tried
inline std::string netns_unavailable() {
    if (geteuid() != 0) return "needs root (ip netns add); .ci/run runs it as root";
    if (sh("command -v ip") != 0) return "needs iproute2's `ip` (apt-get install iproute2)";
    if (sh("ip netns list") != 0) return "`ip netns` does not work here";
    return "";
}

class Hosts {
public:
    static constexpr const char * kPrefix = "lmrpc";

    // n namespaces "lmrpc<pid>_<k>", host k at address(k), the root side at .1
    explicit Hosts(int n) : tag_(std::string(kPrefix) + std::to_string(getpid())) {
        remove_stale();
        const int net = (int) (getpid() % 80) * 3; // third octets net..net+2: parallel runs rarely meet
        for (int k = 0; k < n; k++) {
            const std::string ns = tag_ + "_" + std::to_string(k), h = tag_ + "h" + std::to_string(k),
                              g = tag_ + "g" + std::to_string(k);
            const std::string sub = "10.231." + std::to_string(net + k);
            names_.push_back(ns);
            addrs_.push_back(sub + ".2");
            const std::vector<std::string> cmds = {
                "ip netns add " + ns,
                "ip link add " + h + " type veth peer name " + g,
                "ip link set " + g + " netns " + ns,
                "ip addr add " + sub + ".1/24 dev " + h,
                "ip link set " + h + " up",
                "ip -n " + ns + " addr add " + sub + ".2/24 dev " + g,
                "ip -n " + ns + " link set " + g + " up",
                "ip -n " + ns + " link set lo up",
            };
            for (const std::string & c : cmds) {
                if (sh(c) != 0) {
                    error_ = "`" + c + "` failed";
                    return;
                }
            }
        }
    }

    ~Hosts() {
        for (pid_t p : pids_) {
            kill(p, SIGKILL);
            waitpid(p, nullptr, 0);
        }
        for (size_t k = 0; k < names_.size(); k++) {
            sh("ip netns del " + names_[k]); // takes its end of the veth pair, and so the pair
            sh("ip link del " + tag_ + "h" + std::to_string(k));
        }
    }

    const std::string & error() const { return error_; }
    const std::string & address(int k) const { return addrs_[k]; }

    // runs argv inside namespace k, output to log; its pid (the program's
    // own: `ip netns exec` execs it), which dies with this process
    pid_t spawn(int k, const std::vector<std::string> & argv, const std::string & log) {
        std::vector<std::string> full = {"ip", "netns", "exec", names_[k]};
        full.insert(full.end(), argv.begin(), argv.end());
        std::vector<char *> args; // built before fork: the child only makes system calls
        for (std::string & a : full) args.push_back(a.data());
        args.push_back(nullptr);
        const pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
            }
            execvp("ip", args.data());
            _exit(127);
        }
        if (pid > 0) pids_.push_back(pid);
        return pid;
    }

    // SIGKILL, reaped; true when pid was one of ours
    bool kill_now(pid_t pid) {
        for (size_t i = 0; i < pids_.size(); i++) {
            if (pids_[i] == pid) {
                kill(pid, SIGKILL);
                waitpid(pid, nullptr, 0);
                pids_.erase(pids_.begin() + (long) i);
                return true;
            }
        }
        return false;
    }

private:
    // a running process (a killed one may linger as a zombie until reaped)
    static bool alive(const std::string & pid) {
        FILE * f = std::fopen(("/proc/" + pid + "/stat").c_str(), "r");
        if (f == nullptr) return false;
        char buf[512] = {};
        const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
        std::fclose(f);
        const char * paren = std::strrchr(buf, ')'); // the state follows the command name
        return n > 0 && paren != nullptr && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
    }

    // namespaces of earlier runs whose process is gone (killed before its destructor ran)
    static void remove_stale() {
        FILE * f = popen("ip netns list 2>/dev/null", "r");
        if (f == nullptr) return;
        char line[256];
        std::vector<std::string> stale;
        while (std::fgets(line, sizeof(line), f)) {
            std::string name = line;
            name = name.substr(0, name.find_first_of(" \n"));
            const size_t plen = std::string(kPrefix).size(), us = name.find('_');
            if (name.rfind(kPrefix, 0) != 0 || us == std::string::npos || us <= plen) continue;
            const std::string pid = name.substr(plen, us - plen);
            if (pid.find_first_not_of("0123456789") == std::string::npos && !alive(pid)) stale.push_back(name);
        }
        pclose(f);
        for (const std::string & s : stale) sh("ip netns del " + s);
    }

    std::string tag_, error_;
    std::vector<std::string> names_, addrs_;
    std::vector<pid_t> pids_;
};

} // namespace rpctest

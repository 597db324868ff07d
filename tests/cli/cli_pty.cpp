// The pseudo-terminal driver of the CLI tests (see cli_pty.h).
#include "cli_pty.h"

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace clitest {

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

} // namespace

PtySession::~PtySession() {
    if (pid_ > 0 && status_ < 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
}

bool PtySession::start(const std::vector<std::string> & args) {
#ifdef LMGGML_CLI
    std::vector<std::string> all = {LMGGML_CLI};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (std::string & a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    // a terminal as a shell leaves it: canonical lines, echo, ^C and ^D
    struct termios tio = {};
    tio.c_iflag = ICRNL | IXON;
    tio.c_oflag = OPOST | ONLCR;
    tio.c_cflag = CS8 | CREAD | B38400;
    tio.c_lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK;
    tio.c_cc[VINTR] = 3;
    tio.c_cc[VEOF] = 4;
    tio.c_cc[VERASE] = 127;
    tio.c_cc[VMIN] = 1;
    struct winsize ws = {24, 200, 0, 0};
    pid_ = forkpty(&fd_, nullptr, &tio, &ws);
    if (pid_ < 0) return false;
    if (pid_ == 0) {
        execv(argv[0], argv.data());
        _exit(127);
    }
    return true;
#else
    (void) args;
    return false;
#endif
}

void PtySession::type(const std::string & bytes) {
    size_t done = 0;
    while (fd_ >= 0 && done < bytes.size()) {
        const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        done += size_t(n);
    }
}

bool PtySession::pump(double timeout_s) {
    struct pollfd p = {fd_, POLLIN, 0};
    const int r = poll(&p, 1, int(timeout_s * 1000.0));
    if (r <= 0) return r == 0 || errno == EINTR;
    char buf[4096];
    const ssize_t n = read(fd_, buf, sizeof buf);
    if (n <= 0) return n < 0 && errno == EINTR; // EIO: the program closed the terminal
    out_.append(buf, size_t(n));
    return true;
}

bool PtySession::wait_for(const std::string & needle, size_t from, double timeout_s) {
    const double end = now() + timeout_s;
    while (true) {
        if (out_.size() > from && out_.find(needle, from) != std::string::npos) return true;
        const double left = end - now();
        if (left <= 0 || !pump(left < 0.1 ? left : 0.1)) return false;
    }
}

bool PtySession::wait_for_bytes(size_t n, size_t from, double timeout_s) {
    const double end = now() + timeout_s;
    while (out_.size() < from + n) {
        const double left = end - now();
        if (left <= 0 || !pump(left < 0.1 ? left : 0.1)) return false;
    }
    return true;
}

int PtySession::wait_exit(double timeout_s) {
    if (pid_ <= 0) return -1;
    const double end = now() + timeout_s;
    while (status_ < 0) {
        int st = 0;
        const pid_t r = waitpid(pid_, &st, WNOHANG);
        if (r == pid_) {
            status_ = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
            break;
        }
        if (now() > end) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
            status_ = 255;
            return -1;
        }
        pump(0.05); // keep draining so the program never blocks on a full terminal
    }
    // what it wrote last
    for (struct pollfd p = {fd_, POLLIN, 0}; poll(&p, 1, 0) > 0 && (p.revents & POLLIN) && pump(0.0);) {
    }
    return status_;
}

} // namespace clitest

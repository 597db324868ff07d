// The chat's console (see console.h).
#include "console.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace cli {

namespace {

volatile std::sig_atomic_t g_interrupt = 0;

void on_sigint(int) {
    if (g_interrupt) _exit(130); // the reply did not stop: the user insists
    g_interrupt = 1;
}

std::string g_pending; // bytes read after the last returned line

} // namespace

void install_interrupt_handler() {
    struct sigaction sa = {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; // no SA_RESTART: a read waiting at the prompt returns EINTR
    sigaction(SIGINT, &sa, nullptr);
}

bool interrupt_requested() { return g_interrupt != 0; }

void clear_interrupt() { g_interrupt = 0; }

ReadResult read_line(std::string & line) {
    while (true) {
        const size_t nl = g_pending.find('\n');
        if (nl != std::string::npos) {
            line = g_pending.substr(0, nl);
            g_pending.erase(0, nl + 1);
            return ReadResult::LINE;
        }
        if (interrupt_requested()) return ReadResult::INTERRUPTED;
        // waits in slices: the signal may be taken by one of the library's
        // threads, and then this thread's wait is not interrupted
        struct pollfd p = {STDIN_FILENO, POLLIN, 0};
        const int ready = ::poll(&p, 1, 200);
        if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
        char buf[4096];
        const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
        if (n > 0) {
            g_pending.append(buf, size_t(n));
        } else if (n < 0 && errno == EINTR) {
            if (interrupt_requested()) return ReadResult::INTERRUPTED;
        } else if (!g_pending.empty()) { // a last line without a newline
            line.swap(g_pending);
            g_pending.clear();
            return ReadResult::LINE;
        } else {
            return ReadResult::END;
        }
    }
}

} // namespace cli

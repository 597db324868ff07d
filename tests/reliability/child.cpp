// fork/pipe plumbing for child.h.
#include "child.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <exception>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REL_HAVE_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define REL_HAVE_LSAN 1
#endif
#ifdef REL_HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#endif

namespace rel {

std::string ChildStatus::describe() const {
    char buf[96];
    if (exited && exit_code == kExitException) {
        std::snprintf(buf, sizeof(buf), "a C++ exception escaped (exit %d)", exit_code);
    } else if (exited) {
        std::snprintf(buf, sizeof(buf), "exit %d%s", exit_code, got_result ? "" : " without a result");
    } else if (signal != 0) {
        std::snprintf(buf, sizeof(buf), "signal %d (%s)", signal, strsignal(signal));
    } else {
        std::snprintf(buf, sizeof(buf), "unknown end");
    }
    return buf;
}

ChildStatus run_in_child(const std::function<void(void * out)> & body, void * out, size_t out_size,
                         unsigned timeout_s) {
    ChildStatus st;
    int fds[2];
    if (pipe(fds) != 0) {
        return st;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return st;
    }
    if (pid == 0) {
        close(fds[0]);
        alarm(timeout_s);
        // an exception must never unwind into the test framework's copy in
        // the child (it would run the parent's teardown); an exception that
        // left a C function of the library is itself a finding
        try {
            body(out);
        } catch (const std::exception & e) {
            std::fprintf(stderr, "run_in_child: C++ exception escaped: %s\n", e.what());
            std::fflush(stderr);
            _exit(kExitException);
        } catch (...) {
            std::fprintf(stderr, "run_in_child: C++ exception escaped\n");
            std::fflush(stderr);
            _exit(kExitException);
        }
        const char * p = static_cast<const char *>(out);
        size_t left = out_size;
        while (left > 0) {
            const ssize_t n = write(fds[1], p, left);
            if (n <= 0) break;
            p += n;
            left -= (size_t) n;
        }
        close(fds[1]);
        std::fflush(stdout);
        std::fflush(stderr);
        _exit(0);
    }
    close(fds[1]);
    char * p = static_cast<char *>(out);
    size_t got = 0;
    while (got < out_size) {
        const ssize_t n = read(fds[0], p + got, out_size - got);
        if (n <= 0) break;
        got += (size_t) n;
    }
    close(fds[0]);
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) return st;
    }
    st.got_result = got == out_size;
    if (WIFEXITED(wstatus)) {
        st.exited = true;
        st.exit_code = WEXITSTATUS(wstatus);
    } else if (WIFSIGNALED(wstatus)) {
        st.signal = WTERMSIG(wstatus);
    }
    return st;
}

bool leak_check_now() {
#ifdef REL_HAVE_LSAN
    return __lsan_do_recoverable_leak_check() != 0;
#else
    return false;
#endif
}

bool have_leak_checker() {
#ifdef REL_HAVE_LSAN
    return true;
#else
    return false;
#endif
}

} // namespace rel

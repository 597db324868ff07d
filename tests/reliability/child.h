#pragma once
// Runs a piece of test code in a forked child process, so that a crash, an
// abort or a sanitizer report in the library ends the child and becomes a
// recorded finding instead of ending the whole test binary. The child sends
// a fixed-size result back through a pipe.

#include <cstddef>
#include <functional>
#include <string>

namespace rel {

// Exit code of a child whose body let a C++ exception escape.
constexpr int kExitException = 86;

struct ChildStatus {
    bool exited = false; // ended through exit/_exit (not a signal)
    int exit_code = -1;
    int signal = 0;          // the signal that ended it, 0 if none
    bool got_result = false; // the child delivered its whole result

    bool clean() const { return exited && exit_code == 0 && got_result; }
    std::string describe() const; // "exit 0", "signal 6 (Aborted)", ...
};

// Forks; the child runs body(out) and sends out_size bytes of *out back, then
// _exits without running atexit handlers or test-framework teardown. A child
// that runs longer than timeout_s is killed by SIGALRM. The parent copies the
// result into *out when it arrives.
ChildStatus run_in_child(const std::function<void(void * out)> & body, void * out, size_t out_size,
                         unsigned timeout_s = 120);

// In a child: asks LeakSanitizer for a leak check now (true when it found
// leaks and printed a report). Always false in builds without LSan.
bool leak_check_now();

// True when this binary was built with AddressSanitizer/LeakSanitizer.
bool have_leak_checker();

} // namespace rel

#pragma once
// Drives the `lmggml` program in a pseudo-terminal, as a user at a terminal
// does: its stdin, stdout and stderr are the terminal, typed bytes go through
// the line discipline (Ctrl-C becomes SIGINT, Ctrl-D the end of input).

#include <sys/types.h>

#include <string>
#include <vector>

namespace clitest {

class PtySession {
public:
    PtySession() = default;
    PtySession(const PtySession &) = delete;
    PtySession & operator=(const PtySession &) = delete;
    ~PtySession(); // kills the program if it still runs

    // Starts `lmggml args...`; false when the program is not built or forkpty fails.
    bool start(const std::vector<std::string> & args);

    // Types bytes at the terminal ("\x03" is Ctrl-C, "\x04" Ctrl-D).
    void type(const std::string & bytes);

    // Reads until the output after offset `from` contains `needle`; false on
    // timeout or when the program exits first.
    bool wait_for(const std::string & needle, size_t from, double timeout_s);
    // Reads until the output holds at least `n` bytes after `from`.
    bool wait_for_bytes(size_t n, size_t from, double timeout_s);

    // Waits for the program to end: its exit code, 128 + N when killed by
    // signal N, -1 on timeout (the program is then killed).
    int wait_exit(double timeout_s);

    const std::string & output() const { return out_; }
    size_t size() const { return out_.size(); }

private:
    bool pump(double timeout_s); // reads what is available; false when the terminal closed
    int fd_ = -1;
    pid_t pid_ = -1;
    int status_ = -1;
    std::string out_;
};

} // namespace clitest

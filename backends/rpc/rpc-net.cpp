// TCP plumbing: see rpc-net.h.

#include "rpc-net.h"
#include "rpc-log.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rpc {

namespace {

constexpr int kStopPollMs = 100; // how often a blocked server thread checks its stop flag

using Clock = std::chrono::steady_clock;

void set_nodelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// A client may wait on a long compute with no deadline; keepalive probes
// still notice a peer host that vanished (about a minute), so it cannot hang.
void set_keepalive(int fd) {
    int one = 1, idle = 30, interval = 10, count = 3;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

// Polls fd for events until ready, the deadline, or stop. timeout_ms <= 0: no deadline.
bool wait_for(int fd, short events, int timeout_ms, const std::atomic<bool> * stop) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        if (stop != nullptr && stop->load()) {
            return false;
        }
        int slice = stop != nullptr ? kStopPollMs : -1;
        if (timeout_ms > 0) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) {
                return false;
            }
            slice = slice < 0 ? (int) std::min<long long>(left, INT_MAX) : (int) std::min<long long>(left, slice);
        }
        pollfd p = {fd, events, 0};
        const int r = poll(&p, 1, slice);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        if (r > 0) {
            return true; // readable, writable, or an error/hangup the next call reports
        }
    }
}

} // namespace

bool parse_endpoint(const std::string & endpoint, std::string & host, int & port, bool allow_zero) {
    const size_t colon = endpoint.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 >= endpoint.size()) {
        return false;
    }
    host = endpoint.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2); // [::1]:port
    }
    const std::string p = endpoint.substr(colon + 1);
    if (p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) {
        return false;
    }
    port = std::atoi(p.c_str());
    return port <= 65535 && (port > 0 || allow_zero);
}

int tcp_connect(const std::string & host, int port, int timeout_ms) {
    addrinfo hints = {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo * res = nullptr;
    const std::string service = std::to_string(port);
    if (getaddrinfo(host.c_str(), service.c_str(), &hints, &res) != 0 || res == nullptr) {
        log_error("rpc: cannot resolve '%s'\n", host.c_str());
        return -1;
    }
    int fd = -1;
    for (addrinfo * ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            continue;
        }
        // non-blocking connect so the timeout applies, then back to blocking
        const int flags = fcntl(fd, F_GETFL, 0);
        fcntl(fd, F_SETFL, flags | O_NONBLOCK);
        int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (r < 0 && errno == EINPROGRESS && wait_for(fd, POLLOUT, timeout_ms, nullptr)) {
            int err = 0;
            socklen_t len = sizeof(err);
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            r = err == 0 ? 0 : -1;
        }
        if (r < 0) {
            close(fd);
            fd = -1;
            continue;
        }
        fcntl(fd, F_SETFL, flags);
    }
    freeaddrinfo(res);
    if (fd < 0) {
        log_error("rpc: cannot connect to %s:%d\n", host.c_str(), port);
        return -1;
    }
    tcp_tune(fd);
    return fd;
}

int tcp_listen(const std::string & host, int port, int * bound_port) {
    addrinfo hints = {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo * res = nullptr;
    const std::string service = std::to_string(port);
    if (getaddrinfo(host.c_str(), service.c_str(), &hints, &res) != 0 || res == nullptr) {
        log_error("rpc: cannot resolve '%s'\n", host.c_str());
        return -1;
    }
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 16) < 0) {
            log_error("rpc: cannot listen on %s:%d: %s\n", host.c_str(), port, std::strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd >= 0 && bound_port != nullptr) {
        sockaddr_storage ss = {};
        socklen_t len = sizeof(ss);
        getsockname(fd, (sockaddr *) &ss, &len);
        *bound_port = ss.ss_family == AF_INET6 ? ntohs(((sockaddr_in6 *) &ss)->sin6_port)
                                               : ntohs(((sockaddr_in *) &ss)->sin_port);
    }
    return fd;
}

void tcp_tune(int fd) {
    set_nodelay(fd);
    set_keepalive(fd);
}

void tcp_close(int fd) {
    if (fd >= 0) {
        close(fd);
    }
}

bool send_all(int fd, const void * data, size_t n, int timeout_ms) {
    const uint8_t * p = static_cast<const uint8_t *>(data);
    while (n > 0) {
        const ssize_t r = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r > 0) {
            p += r;
            n -= (size_t) r;
            continue;
        }
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!wait_for(fd, POLLOUT, timeout_ms, nullptr)) {
                return false;
            }
            continue;
        }
        return false;
    }
    return true;
}

bool recv_all(int fd, void * data, size_t n, int timeout_ms, const std::atomic<bool> * stop) {
    uint8_t * p = static_cast<uint8_t *>(data);
    while (n > 0) {
        const ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
        if (r > 0) {
            p += r;
            n -= (size_t) r;
            continue;
        }
        if (r == 0) {
            return false; // peer closed
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!wait_for(fd, POLLIN, timeout_ms, stop)) {
                return false;
            }
            continue;
        }
        return false;
    }
    return true;
}

bool wait_readable(int fd, int timeout_ms, const std::atomic<bool> * stop) {
    return wait_for(fd, POLLIN, timeout_ms, stop);
}

} // namespace rpc

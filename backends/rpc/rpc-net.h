#pragma once
// TCP plumbing for the RPC client and server: endpoints, connect, listen,
// and whole-message send/receive with deadlines (poll based, no signals).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace rpc {

// "host:port" -> host, port (1..65535; 0 allowed when allow_zero: pick one)
bool parse_endpoint(const std::string & endpoint, std::string & host, int & port, bool allow_zero = false);

// A connected socket, or -1 (reason logged). timeout_ms bounds the connect.
int tcp_connect(const std::string & host, int port, int timeout_ms);

// A listening socket bound to host:port, or -1; *bound_port gets the port
// actually bound (useful with port 0).
int tcp_listen(const std::string & host, int port, int * bound_port);

// No Nagle delay (messages are small and answered at once) and keepalive
// probes (a vanished peer host is noticed in about a minute).
void tcp_tune(int fd);

void tcp_close(int fd);

// Sends/receives exactly n bytes. timeout_ms: the longest wait for progress
// (<= 0: no limit). stop, when given, is polled so a server can shut down.
bool send_all(int fd, const void * data, size_t n, int timeout_ms);
bool recv_all(int fd, void * data, size_t n, int timeout_ms, const std::atomic<bool> * stop = nullptr);

// Waits until fd is readable; false on timeout, stop, or error.
bool wait_readable(int fd, int timeout_ms, const std::atomic<bool> * stop);

} // namespace rpc

// The server's listening loop: one thread accepts, one thread per connection
// serves (rpc-session.cpp), up to max_connections at once.

#include "rpc-server.h"

#include "rpc-log.h"
#include "rpc-net.h"
#include "rpc-session.h"

#include <arpa/inet.h>
#include <list>
#include <mutex>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace rpc {

struct Server {
    ServerOptions opts;
    int listen_fd = -1;
    int port = 0;
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> next_handle{1}; // buffer handles, unique across connections
    std::thread acceptor;

    struct Conn {
        std::thread thread;
        std::atomic<bool> done{false};
    };
    std::mutex mutex;
    std::list<Conn> conns;

    void reap() {
        std::lock_guard<std::mutex> lock(mutex);
        for (auto it = conns.begin(); it != conns.end();) {
            if (it->done.load()) {
                it->thread.join();
                it = conns.erase(it);
            } else {
                ++it;
            }
        }
    }

    void accept_loop() {
        while (!stop.load()) {
            if (!wait_readable(listen_fd, 0, &stop)) {
                break;
            }
            sockaddr_storage ss = {};
            socklen_t len = sizeof(ss);
            const int fd = accept4(listen_fd, (sockaddr *) &ss, &len, SOCK_CLOEXEC);
            if (fd < 0) {
                continue;
            }
            tcp_tune(fd);
            char host[INET6_ADDRSTRLEN] = "?";
            int peer_port = 0;
            if (ss.ss_family == AF_INET) {
                inet_ntop(AF_INET, &((sockaddr_in *) &ss)->sin_addr, host, sizeof(host));
                peer_port = ntohs(((sockaddr_in *) &ss)->sin_port);
            } else if (ss.ss_family == AF_INET6) {
                inet_ntop(AF_INET6, &((sockaddr_in6 *) &ss)->sin6_addr, host, sizeof(host));
                peer_port = ntohs(((sockaddr_in6 *) &ss)->sin6_port);
            }
            std::string peer = std::string(host) + ":" + std::to_string(peer_port);
            reap();
            std::lock_guard<std::mutex> lock(mutex);
            if ((int) conns.size() >= opts.max_connections) {
                log_error("rpc-server: %s: refused, %d connections already served\n", peer.c_str(),
                          opts.max_connections);
                close(fd);
                continue;
            }
            log_info("rpc-server: %s: connected\n", peer.c_str());
            Conn & c = conns.emplace_back();
            c.thread = std::thread([this, fd, peer, &c] {
                {
                    Session s(opts, fd, peer, next_handle);
                    s.serve(stop);
                }
                close(fd);
                log_info("rpc-server: %s: connection closed\n", peer.c_str());
                c.done = true;
            });
        }
    }
};

Server * server_start(const ServerOptions & opts) {
    if (opts.devices.empty()) {
        log_error("rpc-server: no devices to serve\n");
        return nullptr;
    }
    for (lm_ggml_backend_dev_t d : opts.devices) {
        if (d == nullptr) {
            log_error("rpc-server: a NULL device\n");
            return nullptr;
        }
    }
    auto * s = new Server;
    s->opts = opts;
    s->listen_fd = tcp_listen(opts.host, opts.port, &s->port);
    if (s->listen_fd < 0) {
        delete s;
        return nullptr;
    }
    s->acceptor = std::thread([s] { s->accept_loop(); });
    return s;
}

int server_port(const Server * s) { return s ? s->port : 0; }

void server_stop(Server * s) {
    if (s == nullptr) {
        return;
    }
    s->stop = true;
    shutdown(s->listen_fd, SHUT_RDWR);
    s->acceptor.join();
    {
        std::lock_guard<std::mutex> lock(s->mutex);
        for (auto & c : s->conns) {
            c.thread.join();
        }
        s->conns.clear();
    }
    close(s->listen_fd);
    delete s;
}

} // namespace rpc

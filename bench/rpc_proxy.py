#!/usr/bin/env python3
"""A counting proxy for llama.cpp's RPC protocol (7.0.0), for measurements.

Forwards one TCP port to an RPC server, reads the client's messages
(| cmd u8 | size u64 | payload |, self-delimiting, so no answer needs to be
parsed) and counts the bytes both ways between one GRAPH_COMPUTE and the
next: with one graph per token in generation, the median of those counts is
the traffic per generated token; the first count also holds the model load.
GRAPH_RECOMPUTE (a graph run again without being sent) ends a count too.

    bench/rpc_proxy.py LISTEN_PORT SERVER_PORT [--ops]

prints one JSON line per closed connection ({"graphs": [[up, down], ...]});
--ops also prints each distinct node kind the client sends (wire op number,
type, source types, op params), to list what a client's graphs hold.
"""
import argparse
import json
import socket
import struct
import sys
import threading

CMD_GRAPH_COMPUTE = 10
CMD_GRAPH_RECOMPUTE = 16
TENSOR = 296  # rpc_tensor on the wire


def tensor_fields(b, at):
    tid, typ = struct.unpack_from("<QI", b, at)
    ne = struct.unpack_from("<4I", b, at + 20)
    nb = struct.unpack_from("<4I", b, at + 36)
    op = struct.unpack_from("<I", b, at + 52)[0]
    params = struct.unpack_from("<16i", b, at + 56)
    src = struct.unpack_from("<10Q", b, at + 124)
    name = b[at + 228:at + 292].split(b"\0")[0].decode(errors="replace")
    return dict(id=tid, type=typ, ne=ne, nb=nb, op=op, params=params, src=src, name=name)


def node_kinds(payload):
    """{(op, type, src types, params without zeros at the end): example name} of a graph's nodes."""
    n_nodes = struct.unpack_from("<I", payload, 4)[0]
    ids = struct.unpack_from("<%dQ" % n_nodes, payload, 8)
    at = 8 + 8 * n_nodes
    n_t = struct.unpack_from("<I", payload, at)[0]
    ts = {}
    for i in range(n_t):
        t = tensor_fields(payload, at + 4 + TENSOR * i)
        ts[t["id"]] = t
    kinds = {}
    for nid in ids:
        t = ts[nid]
        srcs = tuple(ts[s]["type"] if s in ts else None for s in t["src"] if s)
        params = list(t["params"])
        while params and params[-1] == 0:
            params.pop()
        kinds.setdefault((t["op"], t["type"], srcs, tuple(params)), t["name"])
    return kinds


class Conn:
    def __init__(self, client, upstream, ops, seen, lock):
        self.c, self.s, self.ops, self.seen, self.lock = client, upstream, ops, seen, lock
        self.graphs = []  # [up, down] bytes per interval that ends with a GRAPH_COMPUTE
        self.up = self.down = 0

    def pump_down(self):
        try:
            while True:
                b = self.s.recv(1 << 16)
                if not b:
                    break
                self.down += len(b)
                self.c.sendall(b)
        except OSError:
            pass
        for x in (self.c, self.s):
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def recv_exact(self, n):
        out = bytearray()
        while len(out) < n:
            b = self.c.recv(min(n - len(out), 1 << 20))
            if not b:
                raise EOFError
            out += b
        return bytes(out)

    def pump_up(self):
        try:
            while True:
                head = self.recv_exact(9)
                cmd, size = struct.unpack("<BQ", head)
                self.s.sendall(head)
                keep = cmd == CMD_GRAPH_COMPUTE and self.ops
                payload = bytearray() if keep else None
                left = size
                while left:
                    b = self.recv_exact(min(left, 1 << 20))
                    left -= len(b)
                    self.s.sendall(b)
                    if keep:
                        payload += b
                self.up += 9 + size
                if cmd in (CMD_GRAPH_COMPUTE, CMD_GRAPH_RECOMPUTE):
                    self.graphs.append([self.up, self.down])
                    self.up = self.down = 0
                    if keep:
                        with self.lock:
                            for k, name in node_kinds(bytes(payload)).items():
                                if k not in self.seen:
                                    self.seen[k] = name
                                    print(json.dumps({"op": k[0], "type": k[1], "src": k[2], "params": k[3],
                                                      "name": name}), flush=True)
        except (EOFError, OSError):
            pass
        for x in (self.c, self.s):
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(listen_port, server_port, ops, sink=None, ready=None):
    """Runs forever; sink(dict) gets each closed connection's counts (default:
    printed as a JSON line); ready (a threading.Event) is set once listening."""
    seen, lock = {}, threading.Lock()
    if sink is None:
        def sink(d):
            print(json.dumps(d), flush=True)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", listen_port))
    ls.listen(16)
    if ready is not None:
        ready.set()
    while True:
        c, _ = ls.accept()
        s = socket.create_connection(("127.0.0.1", server_port))
        for x in (c, s):
            x.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = Conn(c, s, ops, seen, lock)
        down = threading.Thread(target=conn.pump_down, daemon=True)
        down.start()

        def run(conn=conn, down=down):
            conn.pump_up()
            down.join()
            conn.graphs.append([conn.up, conn.down])  # what came after the last graph
            with lock:
                sink({"graphs": conn.graphs})
        threading.Thread(target=run, daemon=True).start()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("listen_port", type=int)
    ap.add_argument("server_port", type=int)
    ap.add_argument("--ops", action="store_true")
    a = ap.parse_args()
    serve(a.listen_port, a.server_port, a.ops)

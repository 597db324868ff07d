// GRAPH_COMPUTE on the server: the payload's tensors are checked one by one
// in the order sent, each source must be a tensor sent before it (so ids
// cannot dangle and the graph cannot hold a cycle), and each computed node
// is rebuilt through lmggml's op constructor and must match what was sent.

#include "rpc-enums.h"
#include "rpc-peer-ops.h"
#include "rpc-rebuild.h"
#include "rpc-session.h"

#include <cstddef>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <unordered_set>

namespace rpc {

namespace {

struct Built {
    lm_ggml_tensor * t;
    OwnedBuffer * owner;
};

std::string name_of(const WireTensor & w) { return std::string(w.name, strnlen(w.name, sizeof(w.name))); }

bool same_shape(const lm_ggml_tensor * t, const CheckedTensor & c, bool with_strides) {
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] != c.ne[i] || (with_strides && t->nb[i] != c.nb[i])) {
            return false;
        }
    }
    return t->type == c.type;
}

} // namespace

bool Session::build_graph(const std::vector<uint8_t> & payload, uint32_t & device, StoredGraph & out,
                          std::string & why) {
    const uint8_t * p = payload.data();
    const size_t n = payload.size();
    uint32_t n_nodes = 0, n_tensors = 0;
    std::memcpy(&device, p, 4);
    std::memcpy(&n_nodes, p + 4, 4);
    if (backend_for(device, why) == nullptr) {
        return false;
    }
    if (n_nodes == 0 || n_nodes > opts_.max_nodes) {
        why = "graph of " + std::to_string(n_nodes) + " nodes";
        return false;
    }
    const size_t nodes_at = 8;
    const size_t count_at = nodes_at + 8 * (size_t) n_nodes;
    if (n < count_at + 4) {
        why = "graph payload shorter than its node list";
        return false;
    }
    std::memcpy(&n_tensors, p + count_at, 4);
    if (n_tensors > opts_.max_tensors || n != count_at + 4 + sizeof(WireTensor) * (size_t) n_tensors) {
        why = "graph payload size does not match its " + std::to_string(n_tensors) + " tensors";
        return false;
    }
    const uint8_t * tensors_at = p + count_at + 4;

    // nodes built as more than one lmggml node (row-id guards, peer ops):
    // each adds at most one graph node and four tensors
    size_t n_extra = 0;
    for (uint32_t i = 0; i < n_tensors; i++) {
        uint32_t op;
        std::memcpy(&op, tensors_at + sizeof(WireTensor) * i + offsetof(WireTensor, op), sizeof(op));
        n_extra += op == kWireOpGetRows || is_peer_op(op);
    }
    const size_t graph_size = n_nodes + n_extra;
    lm_ggml_init_params ip = {
        /*.mem_size   =*/lm_ggml_tensor_overhead() * (2 * (size_t) n_tensors + 4 * n_extra + 16) +
            lm_ggml_graph_overhead_custom(graph_size, false),
        /*.mem_buffer =*/nullptr,
        /*.no_alloc   =*/true,
    };
    out.ctx = lm_ggml_init(ip);
    if (out.ctx == nullptr) {
        why = "out of memory for the graph";
        return false;
    }
    lm_ggml_context * ctx = out.ctx;
    out.guards = std::make_shared<RowGuards>();
    std::unordered_map<uint64_t, std::vector<lm_ggml_tensor *>> before; // guard nodes that run before a node

    // Which tensors matter: the nodes, and what they read (sources, view
    // sources). Clients send every tensor reachable through sources, also
    // those behind a graph input that was computed elsewhere (e.g. the
    // weights of the split before); those are never read and need no buffer.
    std::unordered_map<uint64_t, uint32_t> index_of;
    index_of.reserve(n_tensors);
    for (uint32_t i = 0; i < n_tensors; i++) {
        uint64_t id;
        std::memcpy(&id, tensors_at + sizeof(WireTensor) * i + offsetof(WireTensor, id), sizeof(id));
        if (id == 0 || !index_of.emplace(id, i).second) {
            why = "tensor " + std::to_string(i) + ": id 0 or sent twice";
            return false;
        }
    }
    std::unordered_set<uint64_t> node_ids, needed;
    for (uint32_t i = 0; i < n_nodes; i++) {
        uint64_t id;
        std::memcpy(&id, p + nodes_at + 8 * (size_t) i, 8);
        auto it = index_of.find(id);
        if (it == index_of.end()) {
            why = "node " + std::to_string(i) + ": id " + std::to_string(id) + " is not a tensor of the graph";
            return false;
        }
        node_ids.insert(id);
        needed.insert(id);
        WireTensor w;
        std::memcpy(&w, tensors_at + sizeof(WireTensor) * it->second, sizeof(w));
        for (size_t k = 0; k < kWireMaxSrc; k++) {
            const uint64_t s = w.src[k]; // by value: the wire struct is packed
            if (s != 0) {
                needed.insert(s);
            }
        }
        if (const uint64_t v = w.view_src; v != 0) {
            needed.insert(v);
        }
    }

    std::unordered_map<uint64_t, Built> built;
    built.reserve(n_tensors);
    for (uint32_t i = 0; i < n_tensors; i++) {
        WireTensor w;
        std::memcpy(&w, tensors_at + sizeof(WireTensor) * i, sizeof(w));
        const std::string label = "tensor " + std::to_string(i) + " '" + name_of(w) + "'";
        // ids by value: containers take references, and the wire struct is packed
        const uint64_t id = w.id, view_src_id = w.view_src;
        uint64_t src_ids[kWireMaxSrc];
        std::memcpy(src_ids, w.src, sizeof(src_ids));
        if (needed.count(id) == 0) {
            continue; // never read: not materialized at all
        }
        const bool is_node = node_ids.count(id) != 0;
        CheckedTensor c;
        if (!check_tensor(w, true, c, why)) {
            why = label + ": " + why;
            return false;
        }
        if (c.owner->device != device) {
            why = label + ": in a buffer of another device";
            return false;
        }
        const int32_t flags = w.flags & ~kWireFlagCompute;
        if ((flags & ~(int32_t) (LM_GGML_TENSOR_FLAG_INPUT | LM_GGML_TENSOR_FLAG_OUTPUT | LM_GGML_TENSOR_FLAG_PARAM |
                                 LM_GGML_TENSOR_FLAG_LOSS)) != 0) {
            why = label + ": unknown flags";
            return false;
        }
        if (!is_node) {
            // an input: read as it is, wherever it came from (its op and
            // sources were computed elsewhere and are not looked at)
            lm_ggml_tensor * t = lm_ggml_new_tensor_4d(ctx, c.type, c.ne[0], c.ne[1], c.ne[2], c.ne[3]);
            if (t == nullptr) {
                why = label + ": cannot create the input";
                return false;
            }
            for (int d = 0; d < 4; d++) {
                t->nb[d] = c.nb[d];
            }
            t->data = c.host_data;
            t->buffer = c.owner->buf;
            t->flags = flags;
            built[id] = {t, c.owner};
            continue;
        }
        lm_ggml_tensor * src[kWireMaxSrc] = {};
        // ggml's cast is a CPY whose second source is the node itself
        const bool self_cast = src_ids[1] == id && op_from_wire(w.op) == LM_GGML_OP_CPY;
        for (size_t k = 0; k < kWireMaxSrc; k++) {
            if (src_ids[k] == 0 || (k == 1 && self_cast)) {
                continue;
            }
            auto it = built.find(src_ids[k]);
            if (it == built.end()) {
                why = label + ": source " + std::to_string(k) + " is not a tensor sent before it";
                return false;
            }
            src[k] = it->second.t;
        }
        Built view_src = {nullptr, nullptr};
        if (view_src_id != 0) {
            auto it = built.find(view_src_id);
            if (it == built.end()) {
                why = label + ": view source is not a tensor sent before it";
                return false;
            }
            view_src = it->second;
        }
        if (is_peer_op(w.op)) {
            std::vector<lm_ggml_tensor *> nodes;
            const WirePlace place = {&c, view_src_id != 0,
                                     view_src.t != nullptr && view_src.owner == c.owner &&
                                         (uintptr_t) view_src.t->data + w.view_offs == (uintptr_t) c.host_data};
            int32_t wire_params[kWireMaxOpParams / 4];
            std::memcpy(wire_params, w.op_params, sizeof(wire_params));
            lm_ggml_tensor * t = build_peer_op(ctx, w.op, wire_params, src, place, *out.guards, nodes, why);
            if (t == nullptr) {
                why = label + ": " + why;
                return false;
            }
            nodes.pop_back(); // the result itself
            before[id] = std::move(nodes);
            t->flags = flags;
            lm_ggml_set_name(t, name_of(w).c_str());
            built[id] = {t, c.owner};
            continue;
        }
        const int op = op_from_wire(w.op);
        if (op < 0) {
            why = label + ": op " + std::to_string(w.op) + " has no lmggml counterpart";
            return false;
        }
        int32_t params[kWireMaxOpParams / 4];
        std::memcpy(params, w.op_params, sizeof(params));
        if (!op_params_from_wire((lm_ggml_op) op, params)) {
            why = label + ": op params with enum values lmggml does not have";
            return false;
        }

        lm_ggml_tensor * t = nullptr;
        if (op == LM_GGML_OP_NONE) {
            why = label + ": a node without an op";
            return false;
        } else {
            if (!op_rebuildable((lm_ggml_op) op)) {
                why = label + ": op " + lm_ggml_op_name((lm_ggml_op) op) + " is not accepted over RPC";
                return false;
            }
            if (self_cast) {
                t = src[0] != nullptr && lm_ggml_nelements(src[0]) == c.ne[0] * c.ne[1] * c.ne[2] * c.ne[3]
                        ? lm_ggml_cast(ctx, src[0], c.type)
                        : nullptr;
                src[1] = t; // compared below like any other source
            } else {
                t = rebuild_node(ctx, (lm_ggml_op) op, params, src, c.ne, c.nb);
            }
            if (t == nullptr) {
                why = label + ": " + lm_ggml_op_name((lm_ggml_op) op) + " refused by its constructor";
                return false;
            }
            if (t->op != op || !same_shape(t, c, false) || std::memcmp(t->op_params, params, sizeof(params)) != 0) {
                why = label + ": " + lm_ggml_op_name((lm_ggml_op) op) +
                      " does not match its rebuilt form (type, shape or op params)";
                return false;
            }
            for (size_t k = 0; k < kWireMaxSrc; k++) {
                if (t->src[k] != src[k]) {
                    why = label + ": sources do not match the op's";
                    return false;
                }
            }
            // Views and in-place results are checked by address: the wire's
            // view source may be the root of a view this server received as a
            // plain input, so tensor identity would not match.
            const bool wire_view_ok = view_src.t != nullptr && view_src.owner == c.owner &&
                                      (uintptr_t) view_src.t->data + w.view_offs == (uintptr_t) c.host_data;
            if (t->view_src != nullptr) {
                // a view (VIEW, RESHAPE, PERMUTE, TRANSPOSE, CPY's destination)
                if ((uintptr_t) t->view_src->data + t->view_offs != (uintptr_t) c.host_data ||
                    !same_shape(t, c, true) || !wire_view_ok) {
                    why = label + ": view does not match its rebuilt form";
                    return false;
                }
                t->data = c.host_data;
                t->buffer = c.owner->buf;
            } else if (view_src.t != nullptr) {
                // in place: the result lies exactly over its first source
                lm_ggml_tensor * a = src[0];
                if (!wire_view_ok || c.host_data != a->data || c.type != a->type) {
                    why = label + ": in-place result not over its first source";
                    return false;
                }
                for (int d = 0; d < 4; d++) {
                    if (c.ne[d] != a->ne[d] || c.nb[d] != a->nb[d]) {
                        why = label + ": in-place result not over its first source";
                        return false;
                    }
                    t->nb[d] = a->nb[d];
                }
                t->view_src = view_src.t;
                t->view_offs = w.view_offs;
                t->data = a->data;
                t->buffer = a->buffer;
            } else {
                if (!same_shape(t, c, true)) {
                    why = label + ": result strides are not the op's";
                    return false;
                }
                t->data = c.host_data;
                t->buffer = c.owner->buf;
            }
        }
        if (op == LM_GGML_OP_GET_ROWS && lm_ggml_backend_buffer_is_host(src[1]->buffer)) {
            // its ids are checked against the table when the graph runs (a
            // guard reads host memory; other devices rely on their kernel);
            // rows written over the ids would change them after the check
            // (found by the fuzzer), and no allocator places them so
            const uint8_t * ids_at = (const uint8_t *) src[1]->data;
            const uint8_t * out_at = (const uint8_t *) c.host_data;
            if (ids_at < out_at + c.span && out_at < ids_at + lm_ggml_nbytes(src[1])) {
                why = label + ": GET_ROWS writes over its own ids";
                return false;
            }
            lm_ggml_tensor * guard = guard_rows(ctx, src[1], src[0]->ne[1], *out.guards);
            if (guard == nullptr) {
                why = label + ": GET_ROWS ids cannot be guarded";
                return false;
            }
            before[id] = {guard};
        }
        t->flags = flags;
        char name[kWireMaxName + 1];
        std::memcpy(name, w.name, kWireMaxName);
        name[kWireMaxName] = '\0';
        lm_ggml_set_name(t, name);
        built[id] = {t, c.owner};
    }

    out.graph = lm_ggml_new_graph_custom(ctx, graph_size, false);
    if (out.graph == nullptr) {
        why = "cannot create the graph";
        return false;
    }
    lm_ggml_backend_t be = backends_[device];
    std::unordered_set<uint64_t> seen;
    for (uint32_t i = 0; i < n_nodes; i++) {
        uint64_t id;
        std::memcpy(&id, p + nodes_at + 8 * (size_t) i, 8);
        auto it = built.find(id); // every node was built above, or refused
        if (it == built.end() || !seen.insert(id).second) {
            why = "node " + std::to_string(i) + " listed twice";
            return false;
        }
        std::vector<lm_ggml_tensor *> run;
        if (auto b = before.find(id); b != before.end()) {
            run = b->second;
        }
        run.push_back(it->second.t);
        for (lm_ggml_tensor * t : run) {
            if (!lm_ggml_backend_supports_op(be, t)) {
                why = "node " + std::to_string(i) + " (" + lm_ggml_op_name(t->op) + ") is not supported by the device";
                return false;
            }
            lm_ggml_graph_add_node(out.graph, t);
        }
    }
    return true;
}

bool graph_rows_ok(const StoredGraph & g, std::string & why) {
    if (g.guards != nullptr && g.guards->bad.exchange(false)) {
        why = "a row id of GET_ROWS or SET_ROWS outside its table";
        return false;
    }
    return true;
}

} // namespace rpc

// The peer's SET_ROWS and GLU rebuilt as lmggml nodes, and the row-id
// guards: see rpc-peer-ops.h. The checks are the peer constructor's asserts
// (facts of its ggml.c) plus the placement of the result.

#include "rpc-peer-ops.h"

#include <cstring>

namespace rpc {

namespace {

bool rows_packed(const lm_ggml_tensor * t) {
    return t->ne[0] == lm_ggml_blck_size(t->type) || t->nb[0] == lm_ggml_type_size(t->type);
}

bool params_zero_from(const int32_t * p, int from) {
    for (int i = from; i < (int) (kWireMaxOpParams / 4); i++) {
        if (p[i] != 0) {
            return false;
        }
    }
    return true;
}

bool same_layout(const lm_ggml_tensor * t, const CheckedTensor & c) {
    for (int d = 0; d < 4; d++) {
        if (t->ne[d] != c.ne[d] || t->nb[d] != c.nb[d]) {
            return false;
        }
    }
    return t->type == c.type;
}

void place_at(lm_ggml_tensor * t, void * data, lm_ggml_backend_buffer_t buf) {
    t->data = data;
    t->buffer = buf;
}

lm_ggml_tensor * build_set_rows(lm_ggml_context * ctx, const int32_t * p, lm_ggml_tensor * const * s,
                                const WirePlace & at, RowGuards & guards, std::vector<lm_ggml_tensor *> & nodes,
                                std::string & why) {
    lm_ggml_tensor * b = s[0]; // the rows
    lm_ggml_tensor * c = s[1]; // their row ids in the table
    lm_ggml_tensor * a = s[2]; // the table
    if (a == nullptr || b == nullptr || c == nullptr || s[3] != nullptr || !params_zero_from(p, 0)) {
        why = "SET_ROWS takes rows, ids and a table and no op params";
        return nullptr;
    }
    if (a->ne[0] != b->ne[0] || a->ne[2] != b->ne[2] || a->ne[3] != b->ne[3] || b->ne[1] != c->ne[0] || c->ne[1] == 0 ||
        c->ne[2] == 0 || b->ne[2] % c->ne[1] != 0 || b->ne[3] % c->ne[2] != 0 || c->ne[3] != 1) {
        why = "SET_ROWS shapes do not fit (table, rows and ids)";
        return nullptr;
    }
    if ((b->type != LM_GGML_TYPE_F32 && b->type != LM_GGML_TYPE_F16) ||
        (c->type != LM_GGML_TYPE_I64 && c->type != LM_GGML_TYPE_I32) || !set_rows_type_ok(a->type) || !rows_packed(a) ||
        !rows_packed(b)) {
        why = "SET_ROWS types or row layout not taken";
        return nullptr;
    }
    // the result is the table itself (a view of it), exactly
    const CheckedTensor & w = *at.c;
    if (!at.is_view || !at.view_ok || w.host_data != a->data || !same_layout(a, w)) {
        why = "SET_ROWS result is not a view over its whole table";
        return nullptr;
    }
    // the op checks each id itself and skips a row out of range (no guard:
    // the client's ids are left as they are)
    guards.guards.push_back({&guards.bad, a->ne[1]});
    lm_ggml_tensor * r =
        lm_ggml_map_custom3_inplace(ctx, a, b, c, set_rows_op, LM_GGML_N_TASKS_MAX, &guards.guards.back());
    if (r == nullptr) {
        why = "SET_ROWS cannot be built";
        return nullptr;
    }
    place_at(r, a->data, a->buffer);
    nodes.push_back(r);
    return r;
}

lm_ggml_tensor * build_glu(lm_ggml_context * ctx, const int32_t * p, lm_ggml_tensor * const * s, const WirePlace & at,
                           std::vector<lm_ggml_tensor *> & nodes, std::string & why) {
    lm_ggml_tensor * a = s[0];
    lm_ggml_tensor * b = s[1];
    lm_ggml_unary_op act;
    switch (p[0]) {
        case kGluReglu: act = LM_GGML_UNARY_OP_RELU; break;
        case kGluGeglu: act = LM_GGML_UNARY_OP_GELU; break;
        case kGluSwiglu: act = LM_GGML_UNARY_OP_SILU; break;
        case kGluGegluQuick: act = LM_GGML_UNARY_OP_GELU_QUICK; break;
        default: why = "GLU op " + std::to_string(p[0]) + " not taken"; return nullptr;
    }
    if (a == nullptr || s[2] != nullptr || (p[1] != 0 && p[1] != 1) || !params_zero_from(p, 2)) {
        why = "GLU sources or op params not taken";
        return nullptr;
    }
    if ((a->type != LM_GGML_TYPE_F32 && a->type != LM_GGML_TYPE_F16) || !lm_ggml_is_contiguous_1(a) ||
        (b != nullptr && (!lm_ggml_is_contiguous_1(b) || !lm_ggml_are_same_shape(a, b) || a->type != b->type)) ||
        (b == nullptr && a->ne[0] % 2 != 0)) {
        why = "GLU sources of a shape or type the op does not take";
        return nullptr;
    }
    lm_ggml_tensor * gate = a;
    lm_ggml_tensor * up = b;
    if (b == nullptr) {
        // one tensor: gate and up are the halves of each row (swapped: up first)
        const int64_t nc = a->ne[0] / 2;
        const size_t half = (size_t) nc * lm_ggml_type_size(a->type);
        gate = lm_ggml_view_4d(ctx, a, nc, a->ne[1], a->ne[2], a->ne[3], a->nb[1], a->nb[2], a->nb[3], p[1] ? half : 0);
        up = lm_ggml_view_4d(ctx, a, nc, a->ne[1], a->ne[2], a->ne[3], a->nb[1], a->nb[2], a->nb[3], p[1] ? 0 : half);
        if (gate == nullptr || up == nullptr) {
            why = "GLU halves cannot be made";
            return nullptr;
        }
        place_at(gate, (char *) a->data + (p[1] ? half : 0), a->buffer);
        place_at(up, (char *) a->data + (p[1] ? 0 : half), a->buffer);
    }
    // act(gate) into the result's memory, then times up in place
    lm_ggml_tensor * t = lm_ggml_unary(ctx, gate, act);
    const CheckedTensor & w = *at.c;
    if (t == nullptr || at.is_view || !same_layout(t, w)) {
        why = "GLU result is not a new packed tensor of its shape";
        return nullptr;
    }
    place_at(t, w.host_data, w.owner->buf);
    lm_ggml_tensor * r = lm_ggml_mul_inplace(ctx, t, up);
    if (r == nullptr) {
        why = "GLU product cannot be built";
        return nullptr;
    }
    place_at(r, t->data, t->buffer);
    nodes.push_back(t);
    nodes.push_back(r);
    return r;
}

} // namespace

bool is_peer_op(uint32_t wire_op) { return wire_op == kWireOpSetRows || wire_op == kWireOpGlu; }

lm_ggml_tensor * guard_rows(lm_ggml_context * ctx, lm_ggml_tensor * ids, int64_t rows, RowGuards & g) {
    if (ids->type != LM_GGML_TYPE_I32 && ids->type != LM_GGML_TYPE_I64) {
        return nullptr;
    }
    g.guards.push_back({&g.bad, rows});
    lm_ggml_tensor * t = lm_ggml_map_custom1_inplace(ctx, ids, row_guard_op, 1, &g.guards.back());
    if (t != nullptr) {
        place_at(t, ids->data, ids->buffer);
    }
    return t;
}

lm_ggml_tensor * build_peer_op(lm_ggml_context * ctx, uint32_t wire_op, const int32_t * params,
                               lm_ggml_tensor * const * src, const WirePlace & place, RowGuards & guards,
                               std::vector<lm_ggml_tensor *> & nodes, std::string & why) {
    for (int k = 3; k < LM_GGML_MAX_SRC; k++) {
        if (src[k] != nullptr) {
            why = "peer op with more sources than it takes";
            return nullptr;
        }
    }
    if (place.c->owner == nullptr) {
        why = "peer op result without a buffer";
        return nullptr;
    }
    switch (wire_op) {
        case kWireOpSetRows: return build_set_rows(ctx, params, src, place, guards, nodes, why);
        case kWireOpGlu: return build_glu(ctx, params, src, place, nodes, why);
        default: why = "not a peer op"; return nullptr;
    }
}

} // namespace rpc

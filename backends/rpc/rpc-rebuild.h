#pragma once
// Graph nodes received over the wire are never trusted as they come: each
// one is rebuilt through lmggml's own op constructor from its sources and
// decoded op params, and accepted only when the constructor's tensor has the
// same type, shape, op params and sources (see rpc-graph.cpp). An op that is
// not listed here cannot travel: the client's supports_op refuses it and the
// server refuses a graph holding it. Custom and map ops (function pointers)
// are never listed.

#include "ggml.h"

#include <cstdint>

namespace rpc {

bool op_rebuildable(lm_ggml_op op);

// The constructor's tensor for (op, params, src), or NULL when the op is not
// rebuildable or the constructor refuses the inputs. ne/nb: the wire shape
// and strides, which view-like ops (VIEW, RESHAPE, CONT) take as arguments.
lm_ggml_tensor * rebuild_node(lm_ggml_context * ctx, lm_ggml_op op, const int32_t * params,
                              lm_ggml_tensor * const * src, const int64_t * ne, const size_t * nb);

// The client's side of the same rule: would a server rebuild this node as it
// is? (type, shape and op params, from stand-ins of its sources)
bool rebuild_accepts(const lm_ggml_tensor * node);

} // namespace rpc

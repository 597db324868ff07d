#pragma once
// Nodes of the peer's (llama.cpp's newer ggml) graphs whose ops lmggml's ggml
// does not have, rebuilt on the server as lmggml nodes with the same result:
//
//   SET_ROWS (wire op 42): dst[:, ids[i, i2 % n11, i3 % n12], i2, i3] = src[:, i, i2, i3],
//       the KV-cache store; a server-side op (rpc-row-ops.cpp) in place on dst.
//   GLU (wire op 100): act(gate) * up, with gate and up two tensors or the two
//       halves of each row of one; UNARY(act) into the result's memory, then
//       MUL in place. REGLU, GEGLU, SWIGLU, GEGLU_QUICK (lmggml's activations).
//
// Row ids are data, known only when the graph runs. SET_ROWS checks each id
// as it stores (a row out of range is skipped); GET_ROWS, whose lmggml kernel
// aborts on such an id, reads its ids through a guard node (a server-side op)
// that replaces one out of range by 0 first. Both raise the graph's flag and
// the server then refuses the graph (closes the connection): nothing is read
// or written outside a table. No function pointer ever comes from the wire:
// the functions are the server's own.

#include "ggml.h"
#include "rpc-session.h"

#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace rpc {

constexpr uint32_t kWireOpGetRows = 40; // lmggml has it; its ids are guarded too
constexpr uint32_t kWireOpSetRows = 42;
constexpr uint32_t kWireOpGlu = 100;

// the peer's ggml_glu_op values
enum WireGlu : int32_t { kGluReglu = 0, kGluGeglu = 1, kGluSwiglu = 2, kGluGegluQuick = 5 };

// One guard's bounds; the deque of a graph keeps their addresses stable.
struct RowGuard {
    std::atomic<bool> * bad;
    int64_t rows; // ids must lie in [0, rows)
};

struct RowGuards {
    std::atomic<bool> bad{false};
    std::deque<RowGuard> guards;
};

// true for the wire ops built here (they have no lmggml enum value)
bool is_peer_op(uint32_t wire_op);

// A guard node over row ids `ids` (I32 or I64) for a table of `rows` rows:
// an in-place server op on the ids; the op that reads them must run after it.
lm_ggml_tensor * guard_rows(lm_ggml_context * ctx, lm_ggml_tensor * ids, int64_t rows, RowGuards & g);

// Where the wire put a node: its checked tensor, and whether it is a view
// (view source sent, `view_ok`: the view source is in the same buffer and
// its data plus view_offs is the node's data).
struct WirePlace {
    const CheckedTensor * c;
    bool is_view;
    bool view_ok;
};

// Builds wire node `wire_op` (is_peer_op) from its sources and wire op params
// with the peer constructor's checks, and places its result where the wire
// says, after checking that place is the one the peer's op gives. Nodes to
// run go to `nodes` in order, the result last. NULL with `why` on refusal.
lm_ggml_tensor * build_peer_op(lm_ggml_context * ctx, uint32_t wire_op, const int32_t * params,
                               lm_ggml_tensor * const * src, const WirePlace & place, RowGuards & guards,
                               std::vector<lm_ggml_tensor *> & nodes, std::string & why);

// rpc-row-ops.cpp: the server's own functions behind the guard and SET_ROWS
void row_guard_op(lm_ggml_tensor * dst, const lm_ggml_tensor * ids, int ith, int nth, void * userdata);
void set_rows_op(lm_ggml_tensor * dst, const lm_ggml_tensor * table, const lm_ggml_tensor * src,
                 const lm_ggml_tensor * ids, int ith, int nth, void * userdata);
// the types SET_ROWS can store (a CPU conversion from F32 exists)
bool set_rows_type_ok(lm_ggml_type dst_type);

} // namespace rpc

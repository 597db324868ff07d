#pragma once
// Translation between lmggml's enum numbers and the RPC peer's (llama.cpp's
// ggml at protocol 7.0.0), matched by name. The wire always carries the
// peer's numbers; both our client and our server translate at the edge.

#include "ggml.h"

#include <cstddef>
#include <cstdint>

namespace rpc {

struct EnumPair {
    int16_t lm;   // lmggml's value
    int16_t wire; // the peer's value, -1 when it has none
};

extern const EnumPair kOpPairs[];
extern const size_t kOpPairCount;
extern const EnumPair kUnaryPairs[];
extern const size_t kUnaryPairCount;
extern const EnumPair kTypePairs[];
extern const size_t kTypePairCount;

// the peer's tensor flag that marks a node to be computed (its CPU backend
// skips graph nodes without it); lmggml has no such flag
constexpr int32_t kWireFlagCompute = 16;

// -1 when there is no counterpart
int op_to_wire(lm_ggml_op op);
int op_from_wire(uint32_t op);
int unary_to_wire(lm_ggml_unary_op op);
int unary_from_wire(int32_t op);
int type_to_wire(lm_ggml_type type);
int type_from_wire(uint32_t type);

// Op params that hold enum values differ too: UNARY's op (word 0) and the
// precision of MUL_MAT (word 0) and FLASH_ATTN_EXT (word 3), whose F32 is 1
// here and 10 on the wire. Rewrites params in place; false when a value has
// no counterpart (the node cannot travel).
bool op_params_to_wire(lm_ggml_op op, int32_t * params);
bool op_params_from_wire(lm_ggml_op op, int32_t * params);

} // namespace rpc

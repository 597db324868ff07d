#pragma once
// Shared by the graph-construction functions in src/core/ops_*.cpp: argument
// checks, result creation and the shape predicates ggml keeps private.
// The layout each op produces is documented in docs/OPS.md.

#include "ggml-impl.h"

#include <initializer_list>

namespace lmggml::ops {

struct Arg {
    const char * name;
    const void * ptr;
};

// A NULL context or tensor (typically the NULL result of an earlier op whose
// context ran out of memory) is bad input, not a programmer error: log one
// line and let the caller return NULL so failures propagate down a graph.
inline bool args_ok(const char * fn, std::initializer_list<Arg> args) {
    for (const Arg & a : args) {
        if (a.ptr == nullptr) {
            LM_GGML_LOG_ERROR("%s: %s: is NULL\n", fn, a.name);
            return false;
        }
    }
    return true;
}

// Element-wise ops write a tensor shaped like a: a fresh one, or for the
// _inplace variants a view of a (the kernel then writes into a's memory).
inline lm_ggml_tensor * like(lm_ggml_context * ctx, lm_ggml_tensor * a, bool inplace) {
    return inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
}

// Sets op and sources on a freshly built result; NULL passes through.
inline lm_ggml_tensor * finish(lm_ggml_tensor * r, lm_ggml_op op, lm_ggml_tensor * s0 = nullptr,
                               lm_ggml_tensor * s1 = nullptr, lm_ggml_tensor * s2 = nullptr,
                               lm_ggml_tensor * s3 = nullptr) {
    if (r == nullptr) {
        return nullptr;
    }
    r->op = op;
    r->src[0] = s0;
    r->src[1] = s1;
    r->src[2] = s2;
    r->src[3] = s3;
    return r;
}

// Rows are packed: element stride is the type size and dims 2, 3 follow dim 1
// without gaps (dim 1 itself may be strided).
inline bool is_padded_1d(const lm_ggml_tensor * t) {
    return t->nb[0] == lm_ggml_type_size(t->type) && t->nb[2] == t->nb[1] * t->ne[1] && t->nb[3] == t->nb[2] * t->ne[2];
}

// t1 is t0 repeated along dims 1..3 only (same row length).
inline bool can_repeat_rows(const lm_ggml_tensor * t0, const lm_ggml_tensor * t1) {
    return t0->ne[0] == t1->ne[0] && lm_ggml_can_repeat(t0, t1);
}

// a (weights) can multiply b: same row length, a broadcast over b's dims 2, 3.
// (Zero-sized broadcast dims in a are refused instead of dividing by zero.)
inline bool can_mul_mat(const lm_ggml_tensor * a, const lm_ggml_tensor * b) {
    return a->ne[0] == b->ne[0] && a->ne[2] != 0 && a->ne[3] != 0 && b->ne[2] % a->ne[2] == 0 &&
           b->ne[3] % a->ne[3] == 0;
}

} // namespace lmggml::ops

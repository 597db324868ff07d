#pragma once
// Shared helpers for the element-wise kernel family (ew_*.cpp): thread
// partitioning, row coordinates, and strided float loads/stores for the
// float storage types (F32, F16, BF16). Everything here is pure and inline.

#include "kernel.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "thread_share.h"

namespace lm_cpu_ew {

// Elements converted per step when a row is not plain contiguous F32; sized
// to stay in L1 together with two companion buffers.
inline constexpr int64_t kChunk = 256;

using lm_cpu::Range;
using lm_cpu::split;

// Rows of a tensor: every index combination of dims 1..3.
inline int64_t nrows(const lm_ggml_tensor * t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

inline bool is_empty(const lm_ggml_tensor * t) {
    return t->ne[0] == 0 || t->ne[1] == 0 || t->ne[2] == 0 || t->ne[3] == 0;
}

inline bool same_shape(const lm_ggml_tensor * a, const lm_ggml_tensor * b) {
    return a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3];
}

// Row ir of a tensor with shape ne -> its (i1, i2, i3).
struct RowIdx {
    int64_t i1, i2, i3;
};
inline RowIdx row_idx(int64_t ir, const int64_t * ne) {
    const int64_t i3 = ir / (ne[1] * ne[2]);
    const int64_t r = ir - i3 * ne[1] * ne[2];
    const int64_t i2 = r / ne[1];
    return {r - i2 * ne[1], i2, i3};
}

inline const char * row_ptr(const lm_ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return static_cast<const char *>(t->data) + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}
inline char * row_ptr_mut(lm_ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return static_cast<char *>(t->data) + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

// ---------------------------------------------------------------- float types
inline bool is_float_type(lm_ggml_type t) {
    return t == LM_GGML_TYPE_F32 || t == LM_GGML_TYPE_F16 || t == LM_GGML_TYPE_BF16;
}

inline size_t float_type_size(lm_ggml_type t) { return t == LM_GGML_TYPE_F32 ? 4 : 2; }

inline float load_one(lm_ggml_type t, const char * p) {
    switch (t) {
        case LM_GGML_TYPE_F16: {
            lm_ggml_fp16_t h;
            std::memcpy(&h, p, sizeof(h));
            return lm_ggml_compute_fp16_to_fp32(h);
        }
        case LM_GGML_TYPE_BF16: {
            lm_ggml_bf16_t h;
            std::memcpy(&h, p, sizeof(h));
            return lm_ggml_compute_bf16_to_fp32(h);
        }
        default: {
            float f;
            std::memcpy(&f, p, sizeof(f));
            return f;
        }
    }
}

inline void store_one(lm_ggml_type t, char * p, float v) {
    switch (t) {
        case LM_GGML_TYPE_F16: {
            const lm_ggml_fp16_t h = lm_ggml_compute_fp32_to_fp16(v);
            std::memcpy(p, &h, sizeof(h));
        } break;
        case LM_GGML_TYPE_BF16: {
            const lm_ggml_bf16_t h = lm_ggml_compute_fp32_to_bf16(v);
            std::memcpy(p, &h, sizeof(h));
        } break;
        default: std::memcpy(p, &v, sizeof(v)); break;
    }
}

// n elements of type t, `stride` bytes apart, widened to float into out[0..n).
void load_run(lm_ggml_type t, const char * src, size_t stride, int64_t n, float * out);
// in[0..n) rounded to type t into n elements `stride` bytes apart.
void store_run(lm_ggml_type t, char * dst, size_t stride, int64_t n, const float * in);

// Copies n elements between two strided runs: byte copies of `unit` bytes
// when the types match, float conversion otherwise (both float types).
void copy_run(lm_ggml_type st, const char * src, size_t s_stride, lm_ggml_type dt, char * dst, size_t d_stride,
              int64_t n, size_t unit);

// Copies flat (row-major) elements [f0, f1) of src into the same flat
// positions of dst, which may have a different shape and layout (DUP/CPY
// semantics). Units are elements, or blocks for same-type quantized copies.
void copy_flat_range(const lm_ggml_tensor * src, lm_ggml_tensor * dst, int64_t f0, int64_t f1);

// Units (elements, or blocks of a block type) per row and in total.
inline int64_t units_per_row(const lm_ggml_tensor * t) { return t->ne[0] / lm_ggml_blck_size(t->type); }

} // namespace lm_cpu_ew

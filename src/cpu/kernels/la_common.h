#pragma once
// Helpers shared by the linear-algebra kernels (la_*.cpp): splitting work
// across threads, scratch layout, strided row addressing and the float
// primitives (dot, fp16/bf16 widening) the kernels are written with.
// Everything here is pure and header-only so the compiler can inline and
// vectorise it inside each kernel's loops.

#include "kernel.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "thread_share.h"

namespace lmggml::cpu::la {

// Scratch sections handed to different threads start on their own cache line.
constexpr size_t kLine = 64;

constexpr size_t pad_line(size_t n) { return (n + kLine - 1) & ~(kLine - 1); }

using lm_cpu::Range;
using lm_cpu::split;

// A barrier is only needed when several threads share the node.
inline void sync(const lm_cpu_params * p) {
    if (p->nth > 1) {
        lm_cpu_barrier_wait(p);
    }
}

// Address of element (0, i1, i2, i3) of t.
inline const char * row_of(const lm_ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return (const char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}
inline char * row_of(lm_ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

// ---------------------------------------------------------------- fp16 / bf16
// Branch-free widening (exact for every input, NaN and subnormals included),
// so loops that convert on the fly still vectorise.
inline float fp16_to_f32(lm_ggml_fp16_t h) {
    const uint32_t w = (uint32_t) h << 16;
    const uint32_t sign = w & 0x80000000u;
    const uint32_t two_w = w + w; // exponent and mantissa at the top, sign dropped
    // normal, Inf, NaN: place the fields, then rebias the exponent by 2^-112
    const float normal = std::bit_cast<float>((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
    // subnormal: 0.5 + m * 2^-24, minus 0.5, is exactly m * 2^-24
    const float subnormal = std::bit_cast<float>((two_w >> 17) | (126u << 23)) - 0.5f;
    // select without a branch (a conditional here stops vectorisation)
    const uint32_t is_sub = 0u - (uint32_t) (two_w < (1u << 27));
    const uint32_t mag = (std::bit_cast<uint32_t>(subnormal) & is_sub) | (std::bit_cast<uint32_t>(normal) & ~is_sub);
    return std::bit_cast<float>(sign | mag);
}

inline float bf16_to_f32(uint16_t b) { return std::bit_cast<float>((uint32_t) b << 16); }

// ---------------------------------------------------------------- float primitives
// Reductions keep kLanes independent partial sums: the compiler maps them to
// vector registers without -ffast-math, and the result does not depend on
// how rows are split across threads.
constexpr int kLanes = 16;

inline float reduce_lanes(float * acc) {
    for (int w = kLanes / 2; w > 0; w /= 2) {
        for (int j = 0; j < w; ++j) {
            acc[j] += acc[j + w];
        }
    }
    return acc[0];
}

inline float dot_f32(int64_t n, const float * LM_GGML_RESTRICT x, const float * LM_GGML_RESTRICT y) {
    float acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
            acc[j] += x[i + j] * y[i + j];
        }
    }
    float tail = 0.0f;
    for (; i < n; ++i) {
        tail += x[i] * y[i];
    }
    return reduce_lanes(acc) + tail;
}

inline float dot_f16(int64_t n, const lm_ggml_fp16_t * LM_GGML_RESTRICT x, const lm_ggml_fp16_t * LM_GGML_RESTRICT y) {
    float acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
            acc[j] += fp16_to_f32(x[i + j]) * fp16_to_f32(y[i + j]);
        }
    }
    float tail = 0.0f;
    for (; i < n; ++i) {
        tail += fp16_to_f32(x[i]) * fp16_to_f32(y[i]);
    }
    return reduce_lanes(acc) + tail;
}

inline float dot_bf16(int64_t n, const uint16_t * LM_GGML_RESTRICT x, const uint16_t * LM_GGML_RESTRICT y) {
    float acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
            acc[j] += bf16_to_f32(x[i + j]) * bf16_to_f32(y[i + j]);
        }
    }
    float tail = 0.0f;
    for (; i < n; ++i) {
        tail += bf16_to_f32(x[i]) * bf16_to_f32(y[i]);
    }
    return reduce_lanes(acc) + tail;
}

// y += x * v
inline void mad_f32(int64_t n, float * LM_GGML_RESTRICT y, const float * LM_GGML_RESTRICT x, float v) {
    for (int64_t i = 0; i < n; ++i) {
        y[i] += x[i] * v;
    }
}

inline void scale_f32(int64_t n, float * y, float v) {
    for (int64_t i = 0; i < n; ++i) {
        y[i] *= v;
    }
}

} // namespace lmggml::cpu::la

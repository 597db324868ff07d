#pragma once
// Test scaffolding for the element-wise CPU kernels: tensors laid out by hand
// (contiguous, padded, permuted), guard bytes around every destination,
// element access in double, and a runner that calls a kernel from nth real
// threads. References are computed by each test in double precision.

#include <gtest/gtest.h>

#include "cpu/kernels/kernel.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace ewtest {

using Shape = std::array<int64_t, 4>;

// A context big enough for every test's tensors; freed with the test.
class Context {
public:
    explicit Context(size_t mem = 32u << 20) {
        lm_ggml_init_params p{mem, nullptr, false};
        ctx_ = lm_ggml_init(p);
    }
    ~Context() { lm_ggml_free(ctx_); }
    Context(const Context &) = delete;
    Context & operator=(const Context &) = delete;
    lm_ggml_context * get() const { return ctx_; }

private:
    lm_ggml_context * ctx_;
};

enum class Layout {
    Contiguous,
    Padded, // a view with gaps after each row/plane and a one-element offset
    Swap,   // physical dims (1,0,3,2): logical dim 0 is strided
    Cycle,  // physical dims (1,2,0,3)
};

inline const char * layout_name(Layout l) {
    switch (l) {
        case Layout::Contiguous: return "cont";
        case Layout::Padded: return "padded";
        case Layout::Swap: return "swap";
        default: return "cycle";
    }
}

inline lm_ggml_tensor * make(lm_ggml_context * ctx, lm_ggml_type type, Shape ne, Layout layout = Layout::Contiguous) {
    switch (layout) {
        case Layout::Contiguous: return lm_ggml_new_tensor_4d(ctx, type, ne[0], ne[1], ne[2], ne[3]);
        case Layout::Padded: {
            lm_ggml_tensor * base = lm_ggml_new_tensor_4d(ctx, type, ne[0] + 3, ne[1] + 2, ne[2] + 1, ne[3]);
            return lm_ggml_view_4d(ctx, base, ne[0], ne[1], ne[2], ne[3], base->nb[1], base->nb[2], base->nb[3],
                                   base->nb[0]);
        }
        case Layout::Swap: {
            lm_ggml_tensor * base = lm_ggml_new_tensor_4d(ctx, type, ne[1], ne[0], ne[3], ne[2]);
            return lm_ggml_permute(ctx, base, 1, 0, 3, 2);
        }
        default: {
            // permute(base, 2, 0, 1, 3): result ne[2] = base ne0, ne[0] = base ne1, ne[1] = base ne2
            lm_ggml_tensor * base = lm_ggml_new_tensor_4d(ctx, type, ne[2], ne[0], ne[1], ne[3]);
            return lm_ggml_permute(ctx, base, 2, 0, 1, 3);
        }
    }
}

// The tensor owning the memory a tensor (or view) lives in.
inline const lm_ggml_tensor * storage_of(const lm_ggml_tensor * t) { return t->view_src ? t->view_src : t; }

// ---------------------------------------------------------------- element access
inline size_t offset_of(const lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

inline double get(const lm_ggml_tensor * t, int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) {
    const char * p = static_cast<const char *>(t->data) + offset_of(t, i0, i1, i2, i3);
    switch (t->type) {
        case LM_GGML_TYPE_F32: {
            float v;
            std::memcpy(&v, p, 4);
            return v;
        }
        case LM_GGML_TYPE_F16: {
            lm_ggml_fp16_t v;
            std::memcpy(&v, p, 2);
            return lm_ggml_fp16_to_fp32(v);
        }
        case LM_GGML_TYPE_BF16: {
            lm_ggml_bf16_t v;
            std::memcpy(&v, p, 2);
            return lm_ggml_bf16_to_fp32(v);
        }
        case LM_GGML_TYPE_I32: {
            int32_t v;
            std::memcpy(&v, p, 4);
            return v;
        }
        case LM_GGML_TYPE_I16: {
            int16_t v;
            std::memcpy(&v, p, 2);
            return v;
        }
        default: ADD_FAILURE() << "get: unsupported type"; return 0;
    }
}

inline void set(lm_ggml_tensor * t, double v, int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) {
    char * p = static_cast<char *>(t->data) + offset_of(t, i0, i1, i2, i3);
    switch (t->type) {
        case LM_GGML_TYPE_F32: {
            float f = static_cast<float>(v);
            std::memcpy(p, &f, 4);
        } break;
        case LM_GGML_TYPE_F16: {
            lm_ggml_fp16_t h = lm_ggml_fp32_to_fp16(static_cast<float>(v));
            std::memcpy(p, &h, 2);
        } break;
        case LM_GGML_TYPE_BF16: {
            lm_ggml_bf16_t h = lm_ggml_fp32_to_bf16(static_cast<float>(v));
            std::memcpy(p, &h, 2);
        } break;
        case LM_GGML_TYPE_I32: {
            int32_t x = static_cast<int32_t>(v);
            std::memcpy(p, &x, 4);
        } break;
        case LM_GGML_TYPE_I16: {
            int16_t x = static_cast<int16_t>(v);
            std::memcpy(p, &x, 2);
        } break;
        default: ADD_FAILURE() << "set: unsupported type"; break;
    }
}

inline int64_t numel(const lm_ggml_tensor * t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }

// Calls fn(i0, i1, i2, i3, flat) over the logical elements in row-major order.
template <class F> void for_each(const lm_ggml_tensor * t, const F & fn) {
    int64_t flat = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < t->ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < t->ne[1]; ++i1)
                for (int64_t i0 = 0; i0 < t->ne[0]; ++i0) fn(i0, i1, i2, i3, flat++);
}

// Deterministic pseudo-random values in [lo, hi).
class Rng {
public:
    explicit Rng(uint32_t seed) : s_(seed * 2654435761u + 1u) {}
    double next(double lo, double hi) {
        s_ = s_ * 1664525u + 1013904223u;
        return lo + (hi - lo) * ((s_ >> 8) / double(1u << 24));
    }

private:
    uint32_t s_;
};

inline void fill(lm_ggml_tensor * t, uint32_t seed, double lo = -2.0, double hi = 2.0) {
    Rng r(seed);
    for_each(t,
             [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t) { set(t, r.next(lo, hi), i0, i1, i2, i3); });
}

// Logical elements in row-major order, as stored (after rounding to the type).
inline std::vector<double> values(const lm_ggml_tensor * t) {
    std::vector<double> v(numel(t));
    for_each(t, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t f) { v[f] = get(t, i0, i1, i2, i3); });
    return v;
}

// ---------------------------------------------------------------- guard bytes
constexpr uint8_t kGuard = 0xA5;

// Fills the whole storage of t with the guard byte, so unwritten elements
// and stray writes both show.
inline void poison(lm_ggml_tensor * t) {
    const lm_ggml_tensor * s = storage_of(t);
    std::memset(s->data, kGuard, lm_ggml_nbytes(s));
}

// Every byte of t's storage that is not part of one of t's elements must
// still hold the guard byte.
inline void expect_guards_intact(const lm_ggml_tensor * t) {
    const lm_ggml_tensor * s = storage_of(t);
    const size_t n = lm_ggml_nbytes(s);
    std::vector<bool> covered(n, false);
    const size_t esz = lm_ggml_type_size(t->type);
    const size_t base = static_cast<const char *>(t->data) - static_cast<const char *>(s->data);
    for_each(t, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t) {
        const size_t o = base + offset_of(t, i0, i1, i2, i3);
        for (size_t k = 0; k < esz && o + k < n; ++k) covered[o + k] = true;
    });
    const uint8_t * bytes = static_cast<const uint8_t *>(s->data);
    size_t bad = 0;
    for (size_t k = 0; k < n; ++k) {
        if (!covered[k] && bytes[k] != kGuard) ++bad;
    }
    EXPECT_EQ(bad, 0u) << "bytes outside the destination were written";
}

// ---------------------------------------------------------------- running kernels
inline const lm_cpu_op_table & table() {
    static const lm_cpu_op_table t = [] {
        lm_cpu_op_table tab{};
        lm_cpu_register_elementwise_ops(&tab);
        return tab;
    }();
    return t;
}

inline const lm_cpu_op_desc & op_desc(lm_ggml_op op) { return table().ops[op]; }
inline const lm_cpu_op_desc & unary_desc(lm_ggml_unary_op op) { return table().unary[op]; }

// Calls forward from nth concurrent threads (ith = 0..nth-1), as the runtime does.
inline void run(lm_cpu_forward_fn fn, lm_ggml_tensor * dst, int nth) {
    ASSERT_NE(fn, nullptr);
    if (nth == 1) {
        lm_cpu_params p{0, 1, 0, nullptr, nullptr, nullptr, 0};
        fn(&p, dst);
        return;
    }
    std::vector<std::thread> threads;
    for (int ith = 0; ith < nth; ++ith) {
        threads.emplace_back([=] {
            lm_cpu_params p{ith, nth, 0, nullptr, nullptr, nullptr, 0};
            fn(&p, dst);
        });
    }
    for (auto & t : threads) t.join();
}

// Checks supports(), then runs the op's kernel.
inline void run_op(lm_ggml_op op, lm_ggml_tensor * dst, int nth) {
    dst->op = op;
    const lm_cpu_op_desc & d = op_desc(op);
    ASSERT_NE(d.forward, nullptr) << lm_ggml_op_name(op);
    if (d.supports) {
        ASSERT_TRUE(d.supports(dst)) << lm_ggml_op_name(op) << " says unsupported";
    }
    run(d.forward, dst, d.single_thread ? 1 : nth);
}

inline bool supports(lm_ggml_op op, lm_ggml_tensor * dst) {
    dst->op = op;
    const lm_cpu_op_desc & d = op_desc(op);
    return d.forward && (!d.supports || d.supports(dst));
}

// ---------------------------------------------------------------- comparison
struct Tol {
    double rel;
    double abs;
};

inline Tol tol_for(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_F16: return {1.5e-3, 1e-4};
        case LM_GGML_TYPE_BF16: return {1e-2, 1e-3};
        default: return {2e-6, 1e-6};
    }
}

// dst's elements (row-major) against ref, within tol of |ref|.
inline void expect_close(const lm_ggml_tensor * dst, const std::vector<double> & ref, Tol tol, const char * what = "") {
    ASSERT_EQ(static_cast<int64_t>(ref.size()), numel(dst)) << what;
    int failures = 0;
    for_each(dst, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t f) {
        const double got = get(dst, i0, i1, i2, i3);
        const double want = ref[f];
        const bool ok = (std::isnan(want) && std::isnan(got)) || (std::isinf(want) && got == want) ||
                        std::fabs(got - want) <= tol.abs + tol.rel * std::fabs(want);
        if (!ok && failures++ < 5) {
            ADD_FAILURE() << what << ": element (" << i0 << "," << i1 << "," << i2 << "," << i3 << ") got " << got
                          << " want " << want;
        }
    });
    EXPECT_EQ(failures, 0) << what;
}

inline void set_srcs(lm_ggml_tensor * dst, lm_ggml_tensor * a, lm_ggml_tensor * b = nullptr) {
    dst->src[0] = a;
    dst->src[1] = b;
}

// ne with a's shape, e.g. for dup(a)
inline Shape shape_of(const lm_ggml_tensor * t) { return {t->ne[0], t->ne[1], t->ne[2], t->ne[3]}; }

} // namespace ewtest

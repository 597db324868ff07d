#pragma once
// Helpers for the linear-algebra kernel tests: a context, inputs filled with
// deterministic random data, element access in double (test-side decoders,
// independent of the library's), NMSE, and running a node's kernel through
// the CPU op table on 1..n real threads that share one barrier.

#include "cpu/kernels/kernel.h"
#include "cpu/threadpool.h" // lm_cpu_barrier
#include "cpu/chunks.h"     // lm_cpu_chunk_slot
#include "lmtest_rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace latest {

class Context {
public:
    explicit Context(size_t mb = 64) {
        lm_ggml_init_params ip = {mb * 1024 * 1024, nullptr, false};
        ctx_ = lm_ggml_init(ip);
    }
    ~Context() {
        if (ctx_ != nullptr) {
            lm_ggml_free(ctx_);
        }
    }
    Context(const Context &) = delete;
    Context & operator=(const Context &) = delete;

    lm_ggml_context * get() const { return ctx_; }
    operator lm_ggml_context *() const { return ctx_; }

private:
    lm_ggml_context * ctx_ = nullptr;
};

// ---------------------------------------------------------------- test-side formats
inline double f16_decode(uint16_t h) {
    const int sign = (h >> 15) & 1;
    const int exp = (h >> 10) & 0x1f;
    const int man = h & 0x3ff;
    double v;
    if (exp == 0) {
        v = std::ldexp((double) man, -24);
    } else if (exp == 31) {
        v = man == 0 ? INFINITY : NAN;
    } else {
        v = std::ldexp(1.0 + man / 1024.0, exp - 15);
    }
    return sign ? -v : v;
}

inline double bf16_decode(uint16_t b) {
    const uint32_t bits = (uint32_t) b << 16;
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

// A random F16 value in about [-2, 2] chosen as bits (exact in every format).
inline uint16_t random_f16(lmtest::Rng & rng) {
    const uint16_t sign = (uint16_t) (rng.next() & 1) << 15;
    const uint16_t exp = (uint16_t) rng.int_in(9, 15); // 2^-6 .. 2^0 (times 1.m)
    const uint16_t man = (uint16_t) rng.int_in(0, 1023);
    return sign | (uint16_t) (exp << 10) | man;
}

// ---------------------------------------------------------------- element access
inline const char * elem_ptr(const lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (const char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

inline double get(const lm_ggml_tensor * t, int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) {
    const char * p = elem_ptr(t, i0, i1, i2, i3);
    switch (t->type) {
        case LM_GGML_TYPE_F32: {
            float v;
            memcpy(&v, p, 4);
            return v;
        }
        case LM_GGML_TYPE_F16: {
            uint16_t v;
            memcpy(&v, p, 2);
            return f16_decode(v);
        }
        case LM_GGML_TYPE_BF16: {
            uint16_t v;
            memcpy(&v, p, 2);
            return bf16_decode(v);
        }
        case LM_GGML_TYPE_I32: {
            int32_t v;
            memcpy(&v, p, 4);
            return v;
        }
        default: ADD_FAILURE() << "get: unsupported type"; return 0.0;
    }
}

// Fills every element of t (any strides) with random data: uniform in
// [lo, hi) for F32, random_f16 for F16, truncated floats for BF16.
inline void fill(lm_ggml_tensor * t, lmtest::Rng & rng, double lo = -1.0, double hi = 1.0) {
    for (int64_t i3 = 0; i3 < t->ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < t->ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < t->ne[1]; ++i1)
                for (int64_t i0 = 0; i0 < t->ne[0]; ++i0) {
                    char * p = (char *) elem_ptr(t, i0, i1, i2, i3);
                    if (t->type == LM_GGML_TYPE_F32) {
                        const float v = (float) rng.uniform(lo, hi);
                        memcpy(p, &v, 4);
                    } else if (t->type == LM_GGML_TYPE_F16) {
                        const uint16_t v = random_f16(rng);
                        memcpy(p, &v, 2);
                    } else if (t->type == LM_GGML_TYPE_BF16) {
                        const float f = (float) rng.uniform(lo, hi);
                        uint32_t bits;
                        memcpy(&bits, &f, 4);
                        const uint16_t v = (uint16_t) (bits >> 16);
                        memcpy(p, &v, 2);
                    } else {
                        ADD_FAILURE() << "fill: unsupported type";
                    }
                }
}

inline void set_f32(lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
    memcpy((char *) elem_ptr(t, i0, i1, i2, i3), &v, 4);
}

// Reference values in dst's logical order (i0 fastest).
using Ref = std::vector<double>;

inline Ref make_ref(const lm_ggml_tensor * dst, const std::function<double(int64_t, int64_t, int64_t, int64_t)> & f) {
    Ref r;
    r.reserve((size_t) lm_ggml_nelements(dst));
    for (int64_t i3 = 0; i3 < dst->ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < dst->ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < dst->ne[1]; ++i1)
                for (int64_t i0 = 0; i0 < dst->ne[0]; ++i0) {
                    r.push_back(f(i0, i1, i2, i3));
                }
    return r;
}

inline Ref read(const lm_ggml_tensor * t) {
    return make_ref(t, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) { return get(t, i0, i1, i2, i3); });
}

// NMSE over finite reference values; non-finite ones must be reproduced
// exactly (same infinity, or NaN for NaN), and a non-finite result where
// the reference is finite fails outright (returns +inf).
inline double nmse(const Ref & expected, const Ref & actual) {
    EXPECT_EQ(expected.size(), actual.size());
    double err = 0.0, norm = 0.0;
    for (size_t i = 0; i < expected.size() && i < actual.size(); ++i) {
        const double e = expected[i], a = actual[i];
        if (!std::isfinite(e)) {
            const bool same = (std::isnan(e) && std::isnan(a)) || e == a;
            if (!same) {
                return INFINITY;
            }
            continue;
        }
        if (!std::isfinite(a)) {
            return INFINITY;
        }
        err += (a - e) * (a - e);
        norm += e * e;
    }
    return norm > 0.0 ? err / norm : err;
}

// ---------------------------------------------------------------- running a kernel
inline const lm_cpu_op_desc & desc_of(const lm_ggml_tensor * dst) { return lm_cpu_get_op_table()->ops[dst->op]; }

inline bool supported(const lm_ggml_tensor * dst) {
    const lm_cpu_op_desc & d = desc_of(dst);
    return d.forward != nullptr && (d.supports == nullptr || d.supports(dst));
}

// A kernel to run: by default the op table's entry for dst.
struct Kernel {
    std::function<void(const lm_cpu_params *, lm_ggml_tensor *)> forward;
    std::function<size_t(const lm_ggml_tensor *, int)> work_size;
};

inline Kernel table_kernel(const lm_ggml_tensor * dst) {
    const lm_cpu_op_desc & d = desc_of(dst);
    Kernel k;
    k.forward = d.forward;
    if (d.work_size != nullptr) {
        k.work_size = d.work_size;
    }
    return k;
}

// Runs dst's kernel on nth threads (real std::threads sharing a barrier).
// Scratch is exactly work_size() bytes, followed by guard bytes that must
// survive: a kernel writing past its declared scratch fails the test.
inline void run(lm_ggml_tensor * dst, int nth, const Kernel & kernel = {}) {
    Kernel d = kernel;
    if (!d.forward) {
        ASSERT_TRUE(supported(dst));
        ASSERT_FALSE(desc_of(dst).single_thread && nth > 1);
        d = table_kernel(dst);
    }
    ASSERT_TRUE((bool) d.forward);

    constexpr size_t kGuard = 256;
    const size_t ws = d.work_size ? d.work_size(dst, nth) : 0;
    std::vector<uint8_t> buf(ws + kGuard + 64);
    uint8_t * w = buf.data() + ((64 - ((uintptr_t) buf.data() % 64)) % 64);
    memset(w + ws, 0xA5, kGuard);

    lm_cpu_barrier barrier;
    barrier.n = nth;
    std::vector<lm_cpu_chunk_slot> slots((size_t) nth); // chunked kernels share out work as in a graph
    std::vector<std::thread> threads;
    for (int ith = 1; ith < nth; ++ith) {
        threads.emplace_back([&, ith] {
            const lm_cpu_params p = {ith, nth, ws, w, &barrier, slots.data(), 1};
            d.forward(&p, dst);
        });
    }
    const lm_cpu_params p0 = {0, nth, ws, w, &barrier, slots.data(), 1};
    d.forward(&p0, dst);
    for (auto & t : threads) {
        t.join();
    }
    for (size_t i = 0; i < kGuard; ++i) {
        if (w[ws + i] != 0xA5) {
            ADD_FAILURE() << "kernel wrote past its work_size (" << ws << " bytes) at +" << i;
            break;
        }
    }
}

// Runs with 1, 2 and 3 threads: each result must match the reference within
// max_nmse, and all must be bit-identical (work splitting never changes a value).
// Before each run dst is poisoned so every element must be written again;
// in-place ops pass `reset` instead, which restores their input.
inline void check(lm_ggml_tensor * dst, const Ref & ref, double max_nmse, const std::string & what = "",
                  const std::function<void()> & reset = {}, const Kernel & kernel = {}) {
    SCOPED_TRACE(what);
    Ref first;
    for (int nth : {1, 2, 3}) {
        SCOPED_TRACE("threads " + std::to_string(nth));
        if (reset) {
            reset();
        } else {
            lmtest::Rng poison(99);
            fill(dst, poison, 1e6, 2e6);
        }
        run(dst, nth, kernel);
        const Ref got = read(dst);
        const double e = nmse(ref, got);
        EXPECT_LE(e, max_nmse);
        if (nth == 1) {
            first = got;
        } else {
            ASSERT_EQ(first.size(), got.size());
            for (size_t i = 0; i < got.size(); ++i) {
                const bool same = got[i] == first[i] || (std::isnan(got[i]) && std::isnan(first[i]));
                if (!same) {
                    ADD_FAILURE() << "result depends on the thread count at element " << i;
                    break;
                }
            }
        }
    }
}

} // namespace latest

#pragma once
// Helpers for the per-ISA kernel tests: the levels this CPU runs, random
// inputs with awkward blocks, rows placed against an unreadable page (a
// kernel that reads past its data crashes the test), and double-precision
// decoding of weight rows through the type traits.
#include "cpu/arch/kernels.h"
#include "lmtest_rng.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace simdtest {

namespace arch = lmggml::cpu::arch;

// Every optimized level this CPU runs (scalar excluded: it is the twin).
inline std::vector<const arch::KernelSet *> vector_levels() {
    std::vector<const arch::KernelSet *> out;
    for (int i = 1; i < arch::kIsaCount; ++i) {
        if (const arch::KernelSet * k = arch::kernels_for((arch::Isa) i)) out.push_back(k);
    }
    return out;
}

inline const arch::KernelSet & scalar_level() { return *arch::kernels_for(arch::Isa::scalar); }

// The scalar level and every optimized one.
inline std::vector<const arch::KernelSet *> all_levels() {
    std::vector<const arch::KernelSet *> v = {&scalar_level()};
    for (const arch::KernelSet * k : vector_levels()) v.push_back(k);
    return v;
}

// n floats: mostly uniform in [-1, 1), with awkward 32-value blocks mixed in
// (all zero, one nonzero value, a negative maximum, ties of the maximum with
// both signs, values on exact half steps of the quantization grid).
inline std::vector<float> activations(size_t n, uint64_t seed) {
    lmtest::Rng rng(seed);
    std::vector<float> x(n);
    for (float & v : x) v = (float) rng.uniform(-1.0, 1.0);
    for (size_t b = 0; (b + 1) * 32 <= n; ++b) {
        float * p = x.data() + b * 32;
        switch (rng.int_in(0, 7)) {
            case 0: std::memset(p, 0, 32 * sizeof(float)); break;
            case 1:
                std::memset(p, 0, 32 * sizeof(float));
                p[rng.int_in(0, 31)] = -0.75f;
                break;
            case 2: p[5] = -3.0f; break;
            case 3:
                p[3] = 2.0f;
                p[17] = -2.0f;
                break;
            case 4: // amax 254: levels x * 127 / 254 = x / 2, so odd integers are exact ties
                for (int j = 0; j < 32; ++j) p[j] = (float) (j % 2 ? 2 * j - 31 : 31 - 2 * j);
                p[0] = 254.0f;
                break;
            default: break;
        }
    }
    return x;
}

// Bytes ending exactly at an inaccessible page: reading one byte past the
// end faults. `size` bytes, data() aligned to `align` only if size allows.
class GuardedBytes {
public:
    explicit GuardedBytes(size_t size) : size_(size) {
        page_ = (size_t) sysconf(_SC_PAGESIZE);
        span_ = (size + page_ - 1) / page_ * page_ + page_;
        base_ = (uint8_t *) mmap(nullptr, span_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT_NE(base_, MAP_FAILED);
        mprotect(base_ + span_ - page_, page_, PROT_NONE);
        data_ = base_ + span_ - page_ - size;
    }
    ~GuardedBytes() { munmap(base_, span_); }
    GuardedBytes(const GuardedBytes &) = delete;
    GuardedBytes & operator=(const GuardedBytes &) = delete;

    uint8_t * data() { return data_; }
    size_t size() const { return size_; }

private:
    size_t size_, page_, span_;
    uint8_t * base_;
    uint8_t * data_;
};

// 64-byte aligned scratch filled with `fill`.
class Aligned {
public:
    explicit Aligned(size_t size, uint8_t fill = 0) : buf_(size + 64, fill) {
        data_ = buf_.data() + ((64 - ((uintptr_t) buf_.data() % 64)) % 64);
    }
    uint8_t * data() { return data_; }

private:
    std::vector<uint8_t> buf_;
    uint8_t * data_;
};

// m weight rows of `type`, k values each, ldw bytes apart (ldw >= row size),
// from random floats with an occasional outlier; the last row ends at a
// guard page. Returns also the rows decoded to double (through to_float).
struct WeightRows {
    lm_ggml_type type;
    int64_t k, m;
    size_t ldw;
    std::unique_ptr<GuardedBytes> bytes;
    std::vector<std::vector<double>> decoded;

    const uint8_t * row(int64_t i) const { return bytes->data() + i * ldw; }
};

inline WeightRows make_weights(lm_ggml_type type, int64_t k, int64_t m, size_t extra, uint64_t seed) {
    WeightRows w;
    w.type = type;
    w.k = k;
    w.m = m;
    const size_t rs = lm_ggml_row_size(type, k);
    w.ldw = rs + extra;
    w.bytes = std::make_unique<GuardedBytes>((size_t) (m - 1) * w.ldw + rs);
    lmtest::Rng rng(seed);
    std::vector<float> src((size_t) k), dec((size_t) k);
    for (int64_t i = 0; i < m; ++i) {
        for (float & v : src) v = (float) rng.uniform(-1.0, 1.0) * (rng.int_in(0, 40) == 0 ? 8.0f : 1.0f);
        uint8_t * row = w.bytes->data() + i * w.ldw;
        if (type == LM_GGML_TYPE_F32) {
            std::memcpy(row, src.data(), rs);
        } else if (type == LM_GGML_TYPE_F16) {
            lm_ggml_fp32_to_fp16_row(src.data(), (lm_ggml_fp16_t *) row, k);
        } else {
            lm_ggml_quantize_chunk(type, src.data(), row, 0, 1, k, nullptr);
        }
        if (type == LM_GGML_TYPE_F32) {
            std::memcpy(dec.data(), row, rs);
        } else {
            lm_ggml_get_type_traits(type)->to_float(row, dec.data(), k);
        }
        w.decoded.emplace_back(dec.begin(), dec.end());
    }
    return w;
}

inline std::string level_name(const arch::KernelSet & k) { return k.name; }

} // namespace simdtest

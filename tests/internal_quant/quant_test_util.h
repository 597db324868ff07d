#pragma once
// Helpers for the quantization tests: a platform-independent input generator
// (integer arithmetic and exact power-of-two scaling only, so every compiler
// and CPU produces the same floats), a byte digest, and double references.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace qtest {

struct Rng {
    uint32_t s;
    explicit Rng(uint32_t seed) : s(seed ? seed : 1u) {}
    uint32_t next() { // xorshift32
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        return s;
    }
};

// Bell-shaped values in about [-4, 4] (sigma ~0.6) with 2^-15 resolution;
// with outliers, every 37th value is multiplied by 8. Every 7th group of 32
// values is all zero so the zero-block paths are exercised.
inline std::vector<float> make_input(size_t n, uint32_t seed, bool outliers = true) {
    Rng r(seed);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) {
        int32_t a = 0;
        for (int k = 0; k < 4; ++k) a += (int32_t) (r.next() >> 16);
        a -= 131070;                             // sum of four u16 minus its mean: |a| < 2^18
        float v = (float) a * (1.0f / 32768.0f); // exact
        if (outliers && i % 37 == 0) v *= 8.0f;  // exact
        if ((i / 32) % 7 == 6) v = 0.0f;
        x[i] = v;
    }
    return x;
}

// Positive importance weights with 2^-12 resolution.
inline std::vector<float> make_weights(size_t n, uint32_t seed) {
    Rng r(seed);
    std::vector<float> w(n);
    for (size_t i = 0; i < n; ++i) w[i] = (float) ((r.next() >> 16) + 1) * (1.0f / 4096.0f);
    return w;
}

inline uint64_t fnv1a64(const void * data, size_t n) {
    const auto * p = static_cast<const uint8_t *>(data);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

inline std::string hex(const void * data, size_t n) {
    const auto * p = static_cast<const uint8_t *>(data);
    std::string s;
    char buf[3];
    for (size_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof(buf), "%02x", p[i]);
        s += buf;
    }
    return s;
}

// sum (a-b)^2 / sum b^2 in double
inline double nmse(const float * a, const float * b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; ++i) {
        const double d = (double) a[i] - (double) b[i];
        num += d * d;
        den += (double) b[i] * (double) b[i];
    }
    return den > 0 ? num / den : num;
}

inline double dot_double(const float * a, const float * b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += (double) a[i] * (double) b[i];
    return s;
}

} // namespace qtest

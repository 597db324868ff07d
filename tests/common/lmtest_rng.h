#pragma once
// Deterministic pseudo-random numbers for test data (splitmix64): the same
// seed gives the same data on every platform and standard library.

#include <cstdint>
#include <string_view>

namespace lmtest {

class Rng {
public:
    explicit Rng(uint64_t seed) : state_(seed) {}

    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // uniform in [lo, hi)
    double uniform(double lo, double hi) {
        const double u = static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
        return lo + (hi - lo) * u;
    }
    // uniform integer in [lo, hi]
    int64_t int_in(int64_t lo, int64_t hi) {
        const uint64_t span = static_cast<uint64_t>(hi - lo) + 1u;
        return lo + static_cast<int64_t>(next() % span);
    }

private:
    uint64_t state_;
};

// FNV-1a: a stable seed from a name.
inline uint64_t seed_from_name(std::string_view name) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : name) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

} // namespace lmtest

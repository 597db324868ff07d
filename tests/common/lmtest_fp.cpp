#include "lmtest_fp.h"

#include <cmath>
#include <cstring>

namespace lmtest {
namespace {

// A binary floating-point format with an implicit leading bit.
struct Format {
    int mant_bits; // stored fraction bits
    int exp_bias;
    int exp_max; // all-ones exponent field (inf/NaN)
};

constexpr Format kF16 = {10, 15, 31};
constexpr Format kBF16 = {7, 127, 255};

// Encodes |v| (finite, non-negative) into exponent/fraction fields with one
// round-to-nearest-even step; returns the field bits without the sign.
uint32_t encode_magnitude(double a, const Format & f) {
    const int min_normal_exp = 1 - f.exp_bias;
    if (a == 0.0) {
        return 0;
    }
    int e2 = 0;
    std::frexp(a, &e2); // a = m * 2^e2, m in [0.5, 1)
    int e = e2 - 1;     // a = s * 2^e, s in [1, 2)
    if (e < min_normal_exp) {
        // subnormal: integer multiple of the smallest step 2^(min_normal_exp - mant_bits)
        const double q = std::nearbyint(std::ldexp(a, f.mant_bits - min_normal_exp));
        return static_cast<uint32_t>(q); // q == 2^mant_bits becomes the smallest normal, as it should
    }
    double frac = std::nearbyint(std::ldexp(a, f.mant_bits - e)) - std::ldexp(1.0, f.mant_bits);
    if (frac >= std::ldexp(1.0, f.mant_bits)) { // rounded up to the next power of two
        frac = 0;
        e += 1;
    }
    const int field = e + f.exp_bias;
    if (field >= f.exp_max) {
        return static_cast<uint32_t>(f.exp_max) << f.mant_bits; // inf
    }
    return (static_cast<uint32_t>(field) << f.mant_bits) | static_cast<uint32_t>(frac);
}

uint16_t encode(double v, const Format & f) {
    const uint32_t sign = std::signbit(v) ? 1u : 0u;
    const int total_bits = 1 + f.mant_bits + (f.exp_bias == 15 ? 5 : 8);
    const uint32_t sign_bit = sign << (total_bits - 1);
    if (std::isnan(v)) {
        return static_cast<uint16_t>((static_cast<uint32_t>(f.exp_max) << f.mant_bits) | (1u << (f.mant_bits - 1)));
    }
    if (std::isinf(v)) {
        return static_cast<uint16_t>(sign_bit | (static_cast<uint32_t>(f.exp_max) << f.mant_bits));
    }
    return static_cast<uint16_t>(sign_bit | encode_magnitude(std::fabs(v), f));
}

double decode(uint16_t bits, const Format & f) {
    const int total_bits = 1 + f.mant_bits + (f.exp_bias == 15 ? 5 : 8);
    const bool neg = (bits >> (total_bits - 1)) & 1u;
    const uint32_t field = (bits >> f.mant_bits) & static_cast<uint32_t>(f.exp_max);
    const uint32_t frac = bits & ((1u << f.mant_bits) - 1u);
    double a = 0.0;
    if (field == static_cast<uint32_t>(f.exp_max)) {
        a = frac ? NAN : INFINITY;
    } else if (field == 0) {
        a = std::ldexp(static_cast<double>(frac), 1 - f.exp_bias - f.mant_bits);
    } else {
        a = std::ldexp(static_cast<double>(frac + (1u << f.mant_bits)),
                       static_cast<int>(field) - f.exp_bias - f.mant_bits);
    }
    return neg ? -a : a;
}

} // namespace

uint16_t f16_bits(double v) { return encode(v, kF16); }
double f16_value(uint16_t bits) { return decode(bits, kF16); }
uint16_t bf16_bits(double v) { return encode(v, kBF16); }
double bf16_value(uint16_t bits) { return decode(bits, kBF16); }

} // namespace lmtest

#pragma once
// Test-side half-precision formats, written independently of the library so
// that test inputs and references never depend on the code under test.
// Rounding is round-to-nearest-even from the exact (double) value, the IEEE
// default that ggml's converters implement.

#include <cstdint>

namespace lmtest {

uint16_t f16_bits(double v); // IEEE binary16, overflow -> inf, NaN -> quiet NaN
double f16_value(uint16_t bits);
uint16_t bf16_bits(double v); // bfloat16 (top half of binary32)
double bf16_value(uint16_t bits);

inline double round_f16(double v) { return f16_value(f16_bits(v)); }
inline double round_bf16(double v) { return bf16_value(bf16_bits(v)); }
inline double round_f32(double v) { return static_cast<double>(static_cast<float>(v)); }

} // namespace lmtest

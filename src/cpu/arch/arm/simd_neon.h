#pragma once
// Small NEON helpers of the ARM64 kernel files. Everything is static (or in
// an anonymous namespace): each per-level file gets its own copy compiled
// with its own flags, so no dotprod code can become the copy the linker
// keeps for a baseline caller (the x86 files follow the same rule).
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

namespace lmggml::cpu::arch::arm {

// IEEE binary16 <-> float with the hardware conversions (round to nearest even)
static inline float from_f16(uint16_t h) {
    __fp16 v;
    std::memcpy(&v, &h, sizeof(v));
    return (float) v;
}

static inline uint16_t to_f16(float f) {
    const __fp16 v = (__fp16) f;
    uint16_t h;
    std::memcpy(&h, &v, sizeof(h));
    return h;
}

// 4 / 8 F16 values at p widened to float
static inline float32x4_t load_f16x4(const uint16_t * p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }

} // namespace lmggml::cpu::arch::arm

#endif

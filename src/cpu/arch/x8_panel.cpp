// Gemm panels (layouts.h "Gemm (block types)") packed straight from weights
// in the x8 layout. A panel's 16-row group is two x8 groups, and an x8 chunk
// t (4 level bytes of each of 8 rows) is already half of the panel's vector
// t (4 values of each of 16 rows): the packer only splits nibbles, adds the
// unsigned offset and widens the F16 header, with no per-row gathering.
// Plain C++ (baseline flags, every level shares the panel bytes); the loops
// over 32 bytes vectorize. Twin: ref::gemm_pack_panel_* of the unpacked rows.
#include "x8.h"

#include "layouts.h"

#include "../../core/ggml-impl.h"
#include "../../quant/q_iq4_tq.h"

#include <cstring>

namespace lmggml::cpu::arch::x8 {

using namespace layout;

namespace {

constexpr int64_t kGroups = kPanelRows / kGroupRows; // 16-row groups per panel

enum class Levels { q4, iq4_nl, q5, q8 };

// Unit b of one x8 group into half h (rows 8h..8h+7) of panel block pb.
template <Levels kL> void unit_to_panel(const Format & f, int64_t b, const uint8_t * unit, int h, uint8_t * pb) {
    const uint8_t * hdr = unit + header_offset(f, b);
    const uint8_t * lv = unit + levels_offset(f, b);
    auto * d = reinterpret_cast<float *>(pb + kPanelScaleOffset) + 8 * h;
    auto * mn = reinterpret_cast<float *>(pb + kPanelMinOffset) + 8 * h;
    for (int r = 0; r < (int) kX8Rows; ++r) {
        lm_half v;
        std::memcpy(&v, hdr + 2 * r, sizeof(v));
        d[r] = lm_ggml_compute_fp16_to_fp32(v);
        if (f.fields == 2) {
            std::memcpy(&v, hdr + 16 + 2 * r, sizeof(v));
            mn[r] = lm_ggml_compute_fp16_to_fp32(v);
        } else {
            mn[r] = 0.0f;
        }
    }
    uint8_t * q = pb + 32 * h; // vector t of the panel: pb + 64 t, this half's 32 bytes
    if constexpr (kL == Levels::q8) {
        for (int t = 0; t < 8; ++t) {
            for (int i = 0; i < 32; ++i) q[64 * t + i] = (uint8_t) (lv[32 * t + i] ^ 0x80); // level + 128
        }
    } else if constexpr (kL == Levels::q5) {
        uint32_t qh[8];
        std::memcpy(qh, lv, sizeof(qh)); // chunk 0: row r's high bits
        for (int t = 0; t < 4; ++t) {
            const uint8_t * src = lv + 32 * (1 + t);
            for (int r = 0; r < 8; ++r) {
                for (int i = 0; i < 4; ++i) {
                    const int j = 4 * t + i;
                    const uint8_t s = src[4 * r + i];
                    q[64 * t + 4 * r + i] = (uint8_t) ((s & 15) | (((qh[r] >> j) & 1u) << 4));
                    q[64 * (t + 4) + 4 * r + i] = (uint8_t) ((s >> 4) | (((qh[r] >> (j + 16)) & 1u) << 4));
                }
            }
        }
    } else {
        for (int t = 0; t < 4; ++t) {
            const uint8_t * src = lv + 32 * t;
            for (int i = 0; i < 32; ++i) {
                if constexpr (kL == Levels::iq4_nl) { // the level + 128 (the activation's c takes 128 sum(q) out)
                    q[64 * t + i] = (uint8_t) (lm_quant_kvalues_iq4nl[src[i] & 15] + 128);
                    q[64 * (t + 4) + i] = (uint8_t) (lm_quant_kvalues_iq4nl[src[i] >> 4] + 128);
                } else {
                    q[64 * t + i] = (uint8_t) (src[i] & 15);
                    q[64 * (t + 4) + i] = (uint8_t) (src[i] >> 4);
                }
            }
        }
    }
}

// Half h of panel block pb for rows past the matrix: zeros, as the twin
void zero_half(int h, uint8_t * pb) {
    for (int t = 0; t < 8; ++t) std::memset(pb + 64 * t + 32 * h, 0, 32);
    std::memset(pb + kPanelScaleOffset + 32 * h, 0, 32);
    std::memset(pb + kPanelMinOffset + 32 * h, 0, 32);
}

template <Levels kL>
void pack(const Format & f, int64_t k, const uint8_t * groups, size_t group_bytes, int64_t m, uint8_t * panel) {
    const int64_t units = m / kX8Rows; // x8 groups in this panel (m is whole groups)
    const size_t unit_bytes = kX8Rows * f.block_bytes;
    for (int64_t b = 0; b < k / kQK; ++b) {
        for (int64_t u = 0; u < kGroups * 2; ++u) {
            uint8_t * pb = panel + (b * kGroups + u / 2) * kPanelBlockBytes;
            if (u < units) {
                unit_to_panel<kL>(f, b, groups + u * group_bytes + b * unit_bytes, (int) (u % 2), pb);
            } else {
                zero_half((int) (u % 2), pb);
            }
        }
    }
}

} // namespace

bool pack_panel(lm_ggml_type type, int64_t k, const void * groups, size_t group_bytes, int64_t m, void * panel) {
    Format f;
    if (!format_of(type, &f) || m % kX8Rows != 0 || m <= 0 || m > kPanelRows || k % kQK != 0) return false;
    const auto * g = static_cast<const uint8_t *>(groups);
    auto * p = static_cast<uint8_t *>(panel);
    switch (type) {
        case LM_GGML_TYPE_Q4_0:
        case LM_GGML_TYPE_Q4_1: pack<Levels::q4>(f, k, g, group_bytes, m, p); return true;
        case LM_GGML_TYPE_IQ4_NL: pack<Levels::iq4_nl>(f, k, g, group_bytes, m, p); return true;
        case LM_GGML_TYPE_Q5_0:
        case LM_GGML_TYPE_Q5_1: pack<Levels::q5>(f, k, g, group_bytes, m, p); return true;
        case LM_GGML_TYPE_Q8_0: pack<Levels::q8>(f, k, g, group_bytes, m, p); return true;
        default: return false;
    }
}

} // namespace lmggml::cpu::arch::x8

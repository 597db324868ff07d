// Scalar twins of the Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS RowDot kernels (layouts.h,
// "RowDot rows") and the packers of their activation rows, which every level
// shares: Q8_K (src/quant's reference quantizer, as ggml's x86 path), for
// Q4_K with the levels reordered to line up with the weights' nibbles and a
// sum per sub-block, for Q6_K (also Q2_K, Q3_K) in order with Q8_K's sums per 16 values; for
// IQ4_XS one scale per 32-value sub-block (act_block_q8).
#include "layouts.h"
#include "ref.h"

#include "../../core/ggml-impl.h"
#include "../../quant/q_iq4_tq.h"
#include "../../quant/q_search.h"
#include "../../quant/q_unpack.h"
#include "../../quant/quants.h"

#include <cstring>
#include <type_traits>

namespace lmggml::cpu::arch::ref {
namespace {

using namespace layout;

// position in a packed super-block of value v (0..255) of the Q8_K block
int packed_pos(int v) {
    const int sub = v / 32, i = v % 32;
    // vector t = sub % 2 + 2 (sub / 4) holds sub-block sub in its half (sub / 2) % 2
    return 64 * (sub % 2 + 2 * (sub / 4)) + 32 * ((sub / 2) % 2) + i;
}

} // namespace

void rowdot_pack_q4_K(const float * x, void * vact, int64_t k) {
    auto * out = static_cast<uint8_t *>(vact);
    std::memset(out, 0, rowdot_k_size(k));
    for (int64_t sb = 0; sb < k / kQKK; ++sb) {
        lm_block_q8_K y;
        lm_quant_quantize_row_q8_K_ref(x + sb * kQKK, &y, kQKK);
        uint8_t * g = out + sb * kKGroupBytes;
        for (int v = 0; v < kQKK; ++v) g[packed_pos(v)] = (uint8_t) y.qs[v];
        auto * bs = reinterpret_cast<int32_t *>(g + 256);
        for (int s = 0; s < 8; ++s) bs[s] = y.bsums[2 * s] + y.bsums[2 * s + 1];
        std::memcpy(g + 288, &y.d, sizeof(float));
    }
}

namespace {

// Q4_K and Q5_K (whose qh bit s of byte i is bit 4 of value i of sub-block s)
template <class Block>
void rowdot_k4(int64_t k, int64_t m, const void * w, size_t ldw, const void * vact, float * dst) {
    constexpr bool kFifthBit = std::is_same_v<Block, lm_block_q5_K>;
    const auto * act = static_cast<const uint8_t *>(vact);
    for (int64_t r = 0; r < m; ++r) {
        const auto * x = reinterpret_cast<const Block *>(static_cast<const char *>(w) + r * ldw);
        float acc = 0;
        for (int64_t sb = 0; sb < k / kQKK; ++sb) {
            const uint8_t * g = act + sb * kKGroupBytes;
            const auto * bs = reinterpret_cast<const int32_t *>(g + 256);
            float dy;
            std::memcpy(&dy, g + 288, sizeof(float));
            int isum = 0, msum = 0;
            for (int s = 0; s < 8; ++s) {
                uint8_t sc, mn;
                lm_quant::get_scale_min_k4(s, x[sb].scales, &sc, &mn);
                int dot = 0;
                for (int i = 0; i < 32; ++i) {
                    const int v = 32 * s + i; // its nibble: low (s even) or high half of qs[32 (s / 2) + i]
                    int qw = (x[sb].qs[32 * (s / 2) + i] >> (4 * (s % 2))) & 15;
                    if constexpr (kFifthBit) qw += ((x[sb].qh[i] >> s) & 1) << 4;
                    dot += qw * (int8_t) g[packed_pos(v)];
                }
                isum += sc * dot;
                msum += mn * bs[s];
            }
            acc += lm_ggml_compute_fp16_to_fp32(x[sb].d) * dy * (float) isum -
                   lm_ggml_compute_fp16_to_fp32(x[sb].dmin) * dy * (float) msum;
        }
        dst[r] = acc;
    }
}

} // namespace

void rowdot_q4_K(int64_t k, int64_t m, const void * w, size_t ldw, const void * vact, float * dst) {
    rowdot_k4<lm_block_q4_K>(k, m, w, ldw, vact, dst);
}

void rowdot_q5_K(int64_t k, int64_t m, const void * w, size_t ldw, const void * vact, float * dst) {
    rowdot_k4<lm_block_q5_K>(k, m, w, ldw, vact, dst);
}

void rowdot_pack_q6_K(const float * x, void * vact, int64_t k) {
    auto * out = static_cast<uint8_t *>(vact);
    std::memset(out, 0, rowdot_k6_size(k));
    for (int64_t sb = 0; sb < k / kQKK; ++sb) {
        lm_block_q8_K y;
        lm_quant_quantize_row_q8_K_ref(x + sb * kQKK, &y, kQKK);
        uint8_t * g = out + sb * kK6GroupBytes;
        std::memcpy(g, y.qs, kQKK);
        auto * bs = reinterpret_cast<int32_t *>(g + 256);
        for (int j = 0; j < 16; ++j) bs[j] = y.bsums[j];
        std::memcpy(g + 320, &y.d, sizeof(float));
    }
}

namespace {

// Q2_K, Q3_K and Q6_K on Q6_K's activation rows: signed levels from
// src/quant's unpackers, each 16-value group's dot times its scale, minus
// its minimum times the group's sum (Q2_K; the others have none).
struct Groups16 {
    int8_t q[kQKK];
    int sc[kQKK / 16], mn[kQKK / 16];
    float d, dmin;
};

Groups16 groups_q2_K(const lm_block_q2_K & x) {
    Groups16 g{};
    uint8_t lv[kQKK];
    lm_quant::unpack_q2_K(x, lv);
    for (int v = 0; v < kQKK; ++v) g.q[v] = (int8_t) lv[v];
    for (int grp = 0; grp < 16; ++grp) g.sc[grp] = x.scales[grp] & 0xF, g.mn[grp] = x.scales[grp] >> 4;
    g.d = lm_ggml_compute_fp16_to_fp32(x.d);
    g.dmin = lm_ggml_compute_fp16_to_fp32(x.dmin);
    return g;
}

Groups16 groups_q3_K(const lm_block_q3_K & x) {
    Groups16 g{};
    lm_quant::unpack_q3_K(x, g.q, g.sc);
    g.d = lm_ggml_compute_fp16_to_fp32(x.d);
    return g;
}

Groups16 groups_q6_K(const lm_block_q6_K & x) {
    Groups16 g{};
    lm_quant::unpack_q6_K(x, g.q);
    for (int grp = 0; grp < 16; ++grp) g.sc[grp] = x.scales[grp];
    g.d = lm_ggml_compute_fp16_to_fp32(x.d);
    return g;
}

template <typename Block, Groups16 (*Decode)(const Block &)>
void rowdot_k16(int64_t k, int64_t m, const void * w, size_t ldw, const void * vact, float * dst) {
    const auto * act = static_cast<const uint8_t *>(vact);
    for (int64_t r = 0; r < m; ++r) {
        const auto * x = reinterpret_cast<const Block *>(static_cast<const char *>(w) + r * ldw);
        float acc = 0;
        for (int64_t sb = 0; sb < k / kQKK; ++sb) {
            const uint8_t * g = act + sb * kK6GroupBytes;
            const auto * q = reinterpret_cast<const int8_t *>(g);
            const auto * bs = reinterpret_cast<const int32_t *>(g + 256);
            float dy;
            std::memcpy(&dy, g + 320, sizeof(float));
            const Groups16 wg = Decode(x[sb]);
            int isum = 0, msum = 0;
            for (int grp = 0; grp < 16; ++grp) {
                int dot = 0;
                for (int v = 16 * grp; v < 16 * grp + 16; ++v) dot += wg.q[v] * q[v];
                isum += wg.sc[grp] * dot;
                msum += wg.mn[grp] * bs[grp];
            }
            acc += wg.d * dy * (float) isum - wg.dmin * dy * (float) msum;
        }
        dst[r] = acc;
    }
}

} // namespace

void rowdot_q2_K(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    rowdot_k16<lm_block_q2_K, groups_q2_K>(k, m, w, ldw, act, dst);
}
void rowdot_q3_K(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    rowdot_k16<lm_block_q3_K, groups_q3_K>(k, m, w, ldw, act, dst);
}
void rowdot_q6_K(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    rowdot_k16<lm_block_q6_K, groups_q6_K>(k, m, w, ldw, act, dst);
}

void rowdot_pack_iq4_xs(const float * x, void * vact, int64_t k) {
    auto * out = static_cast<uint8_t *>(vact);
    std::memset(out, 0, rowdot_iq4_xs_size(k));
    for (int64_t sb = 0; sb < k / kQKK; ++sb) {
        uint8_t * g = out + sb * kIQ4XSGroupBytes;
        auto * dy = reinterpret_cast<float *>(g + 384);
        for (int s = 0; s < 8; ++s) {
            int8_t q[32];
            dy[s] = act_block_q8(x + sb * kQKK + 32 * s, 32, q);
            uint8_t * lo = g + 128 * (s / 4) + 16 * (s % 4);
            for (int j = 0; j < 16; ++j) {
                lo[j] = (uint8_t) q[j];
                lo[64 + j] = (uint8_t) q[16 + j];
            }
        }
        auto * c = reinterpret_cast<int32_t *>(g + 256);
        for (int h = 0; h < 2; ++h) {
            for (int l = 0; l < 16; ++l) {
                int sum = 0;
                for (int i = 0; i < 4; ++i)
                    sum += (int8_t) g[128 * h + 4 * l + i] + (int8_t) g[128 * h + 64 + 4 * l + i];
                c[16 * h + l] = -128 * sum;
            }
        }
    }
}

void rowdot_iq4_xs(int64_t k, int64_t m, const void * w, size_t ldw, const void * vact, float * dst) {
    const auto * act = static_cast<const uint8_t *>(vact);
    for (int64_t r = 0; r < m; ++r) {
        const auto * x = reinterpret_cast<const lm_block_iq4_xs *>(static_cast<const char *>(w) + r * ldw);
        float acc = 0;
        for (int64_t sb = 0; sb < k / kQKK; ++sb) {
            const uint8_t * g = act + sb * kIQ4XSGroupBytes;
            const float d = lm_ggml_compute_fp16_to_fp32(x[sb].d);
            for (int s = 0; s < 8; ++s) {
                // value i < 16 of sub-block s sits at lo[i], value 16 + i at lo[64 + i]
                const auto * lo = reinterpret_cast<const int8_t *>(g + 128 * (s / 4) + 16 * (s % 4));
                int dot = 0;
                for (int i = 0; i < 16; ++i) {
                    const uint8_t b = x[sb].qs[16 * s + i];
                    dot += lm_quant_kvalues_iq4nl[b & 15] * lo[i] + lm_quant_kvalues_iq4nl[b >> 4] * lo[64 + i];
                }
                float dy;
                std::memcpy(&dy, g + 384 + 4 * s, sizeof(float));
                acc += d * dy * (float) (lm_quant_iq4_xs_scale(&x[sb], s) * dot);
            }
        }
        dst[r] = acc;
    }
}

const RowDot kRowDotQ4_K = {rowdot_k_size, rowdot_pack_q4_K, rowdot_q4_K};
const RowDot kRowDotQ5_K = {rowdot_k_size, rowdot_pack_q4_K, rowdot_q5_K};
const RowDot kRowDotQ2_K = {rowdot_k6_size, rowdot_pack_q6_K, rowdot_q2_K};
const RowDot kRowDotQ3_K = {rowdot_k6_size, rowdot_pack_q6_K, rowdot_q3_K};
const RowDot kRowDotQ6_K = {rowdot_k6_size, rowdot_pack_q6_K, rowdot_q6_K};
const RowDot kRowDotIQ4_XS = {rowdot_iq4_xs_size, rowdot_pack_iq4_xs, rowdot_iq4_xs};

} // namespace lmggml::cpu::arch::ref

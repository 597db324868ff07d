// Scalar twins of the K-quant Gemm kernels (layouts.h): activation rows
// quantized to int8 with one scale per sub-block (act_block_q8),
// and panels of Q4_K / Q5_K (32-value blocks) and Q2_K / Q3_K / Q6_K
// (16-value blocks, levels + 32) decoded with src/quant's unpackers.
#include "layouts.h"
#include "ref.h"

#include "../../core/ggml-impl.h"
#include "../../quant/q_iq4_tq.h"
#include "../../quant/q_search.h"
#include "../../quant/q_unpack.h"
#include "../../quant/quants.h"

#include <cstring>

namespace lmggml::cpu::arch::ref {
namespace {

using namespace layout;

constexpr int64_t kGroups = kPanelRows / kGroupRows;

// kOff (kV = 32 only): the offset the panel added to the weights' levels
// (IQ4_XS: 128); then s = 0 and c = kOff * sum of the sub-block. kV = 16:
// c = 32 * sum (the levels' + 32), s = d * sum only with kS (Q2_K's minimum).
template <int kV, int kOff = 0, bool kS = kV == 32 && kOff == 0>
void pack_act_k(const float * x, void * vact, int64_t k) {
    const int64_t nb = k / kV;
    auto * q = static_cast<int8_t *>(vact);
    auto * d = reinterpret_cast<float *>(q + k);
    auto * s = d + nb;
    auto * c = reinterpret_cast<int32_t *>(s + nb);
    for (int64_t b = 0; b < nb; ++b) {
        int8_t * qb = q + b * kV;
        d[b] = act_block_q8(x + b * kV, kV, qb);
        int sum = 0;
        for (int i = 0; i < kV; ++i) sum += qb[i];
        s[b] = kS ? d[b] * (float) sum : 0.0f;
        c[b] = kV == 32 ? kOff * sum : 32 * sum;
    }
}

// One block (sub-block) of a weight row: kV unsigned levels, scale, minimum.
template <int kV> struct Levels {
    uint8_t v[kV];
    float d, m;
};

// Q4_K and Q5_K: 32-value sub-blocks with 6-bit scale and min
template <typename Block, void (*Unpack)(const Block &, uint8_t *)> Levels<32> levels_k4(const void * row, int64_t b) {
    const auto & x = static_cast<const Block *>(row)[b / 8];
    uint8_t q[LM_QK_K], sc, mn;
    Unpack(x, q);
    lm_quant::get_scale_min_k4((int) (b % 8), x.scales, &sc, &mn);
    Levels<32> l;
    std::memcpy(l.v, q + 32 * (b % 8), 32);
    l.d = lm_ggml_compute_fp16_to_fp32(x.d) * sc;
    l.m = -lm_ggml_compute_fp16_to_fp32(x.dmin) * mn;
    return l;
}

Levels<16> levels_q6_K(const void * row, int64_t b) {
    const auto & x = static_cast<const lm_block_q6_K *>(row)[b / 16];
    int8_t q[LM_QK_K];
    lm_quant::unpack_q6_K(x, q);
    Levels<16> l;
    for (int i = 0; i < 16; ++i) l.v[i] = (uint8_t) (q[16 * (b % 16) + i] + 32);
    l.d = lm_ggml_compute_fp16_to_fp32(x.d) * x.scales[b % 16];
    l.m = 0.0f;
    return l;
}

// Q2_K: 16-value groups, levels 0..3 (+ 32), 4-bit scale and minimum
Levels<16> levels_q2_K(const void * row, int64_t b) {
    const auto & x = static_cast<const lm_block_q2_K *>(row)[b / 16];
    uint8_t q[LM_QK_K];
    lm_quant::unpack_q2_K(x, q);
    Levels<16> l;
    for (int i = 0; i < 16; ++i) l.v[i] = (uint8_t) (q[16 * (b % 16) + i] + 32);
    l.d = lm_ggml_compute_fp16_to_fp32(x.d) * (float) (x.scales[b % 16] & 0xF);
    l.m = -lm_ggml_compute_fp16_to_fp32(x.dmin) * (float) (x.scales[b % 16] >> 4);
    return l;
}

// Q3_K: 16-value groups, levels -4..3 (+ 32), a signed 6-bit scale
Levels<16> levels_q3_K(const void * row, int64_t b) {
    const auto & x = static_cast<const lm_block_q3_K *>(row)[b / 16];
    int8_t q[LM_QK_K];
    int sc[LM_QK_K / 16];
    lm_quant::unpack_q3_K(x, q, sc);
    Levels<16> l;
    for (int i = 0; i < 16; ++i) l.v[i] = (uint8_t) (q[16 * (b % 16) + i] + 32);
    l.d = lm_ggml_compute_fp16_to_fp32(x.d) * (float) sc[b % 16];
    l.m = 0.0f;
    return l;
}

// IQ4_XS: 32-value sub-blocks with a 6-bit signed scale; levels + 128
Levels<32> levels_iq4_xs(const void * row, int64_t b) {
    const auto & x = static_cast<const lm_block_iq4_xs *>(row)[b / 8];
    const int ib = (int) (b % 8);
    Levels<32> l;
    for (int j = 0; j < 16; ++j) {
        l.v[j] = (uint8_t) (lm_quant_kvalues_iq4nl[x.qs[16 * ib + j] & 15] + 128);
        l.v[j + 16] = (uint8_t) (lm_quant_kvalues_iq4nl[x.qs[16 * ib + j] >> 4] + 128);
    }
    l.d = lm_ggml_compute_fp16_to_fp32(x.d) * (float) lm_quant_iq4_xs_scale(&x, ib);
    l.m = 0.0f;
    return l;
}

template <int kV, Levels<kV> (*Decode)(const void *, int64_t)>
void pack_panel_k(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    constexpr size_t kBlock = panel_block_bytes<kV>();
    auto * panel = static_cast<uint8_t *>(vpanel);
    std::memset(panel, 0, gemm_qv_panel_size<kV>(k));
    for (int64_t b = 0; b < k / kV; ++b) {
        for (int64_t g = 0; g < kGroups; ++g) {
            uint8_t * pb = panel + (b * kGroups + g) * kBlock;
            auto * d = reinterpret_cast<float *>(pb + 16 * kV);
            for (int64_t r = 0; r < kGroupRows && g * kGroupRows + r < m; ++r) {
                const Levels<kV> l = Decode(static_cast<const char *>(w) + (g * kGroupRows + r) * ldw, b);
                for (int t = 0; t < kV / 4; ++t) std::memcpy(pb + 64 * t + 4 * r, l.v + 4 * t, 4);
                d[r] = l.d;
                d[16 + r] = l.m;
            }
        }
    }
}

} // namespace

void gemm_pack_act_q4_K(const float * x, void * act, int64_t k) { pack_act_k<32>(x, act, k); }
void gemm_pack_act_q6_K(const float * x, void * act, int64_t k) { pack_act_k<16>(x, act, k); }
void gemm_pack_act_q2_K(const float * x, void * act, int64_t k) { pack_act_k<16, 0, true>(x, act, k); }
void gemm_pack_panel_q2_K(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_k<16, levels_q2_K>(w, ldw, m, k, p);
}
void gemm_pack_panel_q3_K(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_k<16, levels_q3_K>(w, ldw, m, k, p);
}
void gemm_pack_act_iq4_xs(const float * x, void * act, int64_t k) { pack_act_k<32, 128>(x, act, k); }
void gemm_pack_panel_iq4_xs(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_k<32, levels_iq4_xs>(w, ldw, m, k, p);
}
void gemm_pack_panel_q4_K(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_k<32, levels_k4<lm_block_q4_K, lm_quant::unpack_q4_K>>(w, ldw, m, k, p);
}
void gemm_pack_panel_q5_K(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_k<32, levels_k4<lm_block_q5_K, lm_quant::unpack_q5_K>>(w, ldw, m, k, p);
}
void gemm_pack_panel_q6_K(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_k<16, levels_q6_K>(w, ldw, m, k, p);
}

const Gemm kGemmQ4_K = {kPanelRows,        gemm_q_act_size,      gemm_pack_act_q4_K,
                        gemm_q_panel_size, gemm_pack_panel_q4_K, gemm_compute_q};
const Gemm kGemmQ5_K = {kPanelRows,        gemm_q_act_size,      gemm_pack_act_q4_K,
                        gemm_q_panel_size, gemm_pack_panel_q5_K, gemm_compute_q};
// Q3_K on Q6_K's activation rows (no minimum); Q2_K's carry s for its minimum
const Gemm kGemmQ2_K = {kPanelRows,          gemm_q16_act_size,    gemm_pack_act_q2_K,
                        gemm_q16_panel_size, gemm_pack_panel_q2_K, gemm_compute_q16};
const Gemm kGemmQ3_K = {kPanelRows,          gemm_q16_act_size,    gemm_pack_act_q6_K,
                        gemm_q16_panel_size, gemm_pack_panel_q3_K, gemm_compute_q16};
const Gemm kGemmQ6_K = {kPanelRows,          gemm_q16_act_size,    gemm_pack_act_q6_K,
                        gemm_q16_panel_size, gemm_pack_panel_q6_K, gemm_compute_q16};
const Gemm kGemmIQ4_XS = {kPanelRows,        gemm_q_act_size,        gemm_pack_act_iq4_xs,
                          gemm_q_panel_size, gemm_pack_panel_iq4_xs, gemm_compute_q};

} // namespace lmggml::cpu::arch::ref

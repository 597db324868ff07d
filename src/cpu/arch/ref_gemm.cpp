// Scalar twins of the Gemm kernels (layouts.h): activation rows, weight
// panels and the panel x columns product, for the 32-value block types and
// for F32 / F16 weights.
#include "layouts.h"
#include "ref.h"

#include "../../core/ggml-impl.h"
#include "../../quant/q_iq4_tq.h"
#include "../../quant/quants.h"

#include <cstring>

namespace lmggml::cpu::arch::ref {
namespace {

using namespace layout;

constexpr int64_t kGroups = kPanelRows / kGroupRows;

float f16(lm_half h) { return lm_ggml_compute_fp16_to_fp32(h); }

// ---------------------------------------------------------------- activation rows
template <int kOffset, bool kMin> void pack_act_q(const float * x, void * vact, int64_t k) {
    const int64_t nb = k / kQK;
    auto * q = static_cast<int8_t *>(vact);
    auto * d = reinterpret_cast<float *>(q + k);
    auto * s = d + nb;
    auto * c = reinterpret_cast<int32_t *>(s + nb);
    for (int64_t b = 0; b < nb; ++b) {
        lm_block_q8_1 blk;
        quantize_row_q8_1(x + b * kQK, &blk, kQK);
        std::memcpy(q + b * kQK, blk.qs, kQK);
        int sum = 0;
        for (int8_t v : blk.qs) sum += v;
        d[b] = f16(blk.d);
        s[b] = kMin ? f16(blk.s) : 0.0f;
        c[b] = kOffset * sum;
    }
}

// ---------------------------------------------------------------- panels
// Block b of one weight row as 32 unsigned levels (value order), scale and minimum.
struct Levels {
    uint8_t v[32];
    float d, m;
};

Levels levels_q4_0(const void * row, int64_t b) {
    const auto & x = static_cast<const lm_block_q4_0 *>(row)[b];
    Levels l{};
    for (int j = 0; j < 16; ++j) {
        l.v[j] = x.qs[j] & 15;
        l.v[j + 16] = x.qs[j] >> 4;
    }
    l.d = f16(x.d);
    return l;
}

Levels levels_q4_1(const void * row, int64_t b) {
    const auto & x = static_cast<const lm_block_q4_1 *>(row)[b];
    Levels l{};
    for (int j = 0; j < 16; ++j) {
        l.v[j] = x.qs[j] & 15;
        l.v[j + 16] = x.qs[j] >> 4;
    }
    l.d = f16(x.d);
    l.m = f16(x.m);
    return l;
}

template <typename Block> void levels_q5(const Block & x, Levels & l) {
    uint32_t qh;
    std::memcpy(&qh, x.qh, sizeof(qh));
    for (int j = 0; j < 16; ++j) {
        l.v[j] = (uint8_t) ((x.qs[j] & 15) | (((qh >> j) & 1u) << 4));
        l.v[j + 16] = (uint8_t) ((x.qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4));
    }
}

Levels levels_q5_0(const void * row, int64_t b) {
    const auto & x = static_cast<const lm_block_q5_0 *>(row)[b];
    Levels l{};
    levels_q5(x, l);
    l.d = f16(x.d);
    return l;
}

Levels levels_q5_1(const void * row, int64_t b) {
    const auto & x = static_cast<const lm_block_q5_1 *>(row)[b];
    Levels l{};
    levels_q5(x, l);
    l.d = f16(x.d);
    l.m = f16(x.m);
    return l;
}

Levels levels_q8_0(const void * row, int64_t b) {
    const auto & x = static_cast<const lm_block_q8_0 *>(row)[b];
    Levels l{};
    for (int j = 0; j < 32; ++j) l.v[j] = (uint8_t) (x.qs[j] + 128);
    l.d = f16(x.d);
    return l;
}

// IQ4_NL: each nibble's level + 128 (the activation's c takes 128 * sum back out)
Levels levels_iq4_nl(const void * row, int64_t b) {
    const auto & x = static_cast<const lm_block_iq4_nl *>(row)[b];
    Levels l{};
    for (int j = 0; j < 16; ++j) {
        l.v[j] = (uint8_t) (lm_quant_kvalues_iq4nl[x.qs[j] & 15] + 128);
        l.v[j + 16] = (uint8_t) (lm_quant_kvalues_iq4nl[x.qs[j] >> 4] + 128);
    }
    l.d = f16(x.d);
    return l;
}

template <Levels (*Decode)(const void *, int64_t)>
void pack_panel_q(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    auto * panel = static_cast<uint8_t *>(vpanel);
    std::memset(panel, 0, gemm_q_panel_size(k));
    for (int64_t b = 0; b < k / kQK; ++b) {
        for (int64_t g = 0; g < kGroups; ++g) {
            uint8_t * pb = panel + (b * kGroups + g) * kPanelBlockBytes;
            auto * d = reinterpret_cast<float *>(pb + 512);
            auto * mn = d + 16;
            for (int64_t r = 0; r < kGroupRows && g * kGroupRows + r < m; ++r) {
                const Levels l = Decode(static_cast<const char *>(w) + (g * kGroupRows + r) * ldw, b);
                for (int t = 0; t < 8; ++t) {
                    std::memcpy(pb + 64 * t + 4 * r, l.v + 4 * t, 4);
                }
                d[r] = l.d;
                mn[r] = l.m;
            }
        }
    }
}

} // namespace

void gemm_pack_act_q4_0(const float * x, void * act, int64_t k) { pack_act_q<8, false>(x, act, k); }
void gemm_pack_act_q4_1(const float * x, void * act, int64_t k) { pack_act_q<0, true>(x, act, k); }
void gemm_pack_act_q5_0(const float * x, void * act, int64_t k) { pack_act_q<16, false>(x, act, k); }
void gemm_pack_act_q5_1(const float * x, void * act, int64_t k) { pack_act_q<0, true>(x, act, k); }
void gemm_pack_act_q8_0(const float * x, void * act, int64_t k) { pack_act_q<128, false>(x, act, k); }

void gemm_pack_panel_q4_0(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_q<levels_q4_0>(w, ldw, m, k, p);
}
void gemm_pack_panel_q4_1(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_q<levels_q4_1>(w, ldw, m, k, p);
}
void gemm_pack_panel_q5_0(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_q<levels_q5_0>(w, ldw, m, k, p);
}
void gemm_pack_panel_q5_1(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_q<levels_q5_1>(w, ldw, m, k, p);
}
void gemm_pack_panel_q8_0(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_q<levels_q8_0>(w, ldw, m, k, p);
}
void gemm_pack_panel_iq4_nl(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_q<levels_iq4_nl>(w, ldw, m, k, p);
}

namespace {

// kV values per block; the panel's unsigned levels times the activation
// levels, less the offset correction, scaled; plus the minimum term
template <int kV>
void compute_q(const void * vpanel, int64_t m, int64_t k, const void * vact, size_t lda, int64_t n, float * dst,
               size_t ldd) {
    constexpr size_t kBlock = panel_block_bytes<kV>();
    const auto * panel = static_cast<const uint8_t *>(vpanel);
    const int64_t nb = k / kV;
    for (int64_t j = 0; j < n; ++j) {
        const auto * q = static_cast<const int8_t *>(vact) + j * lda;
        const auto * d = reinterpret_cast<const float *>(q + k);
        const auto * s = d + nb;
        const auto * c = reinterpret_cast<const int32_t *>(s + nb);
        for (int64_t i = 0; i < m; ++i) {
            const int64_t g = i / kGroupRows, r = i % kGroupRows;
            float acc = 0;
            for (int64_t b = 0; b < nb; ++b) {
                const uint8_t * pb = panel + (b * kGroups + g) * kBlock;
                int isum = 0;
                for (int t = 0; t < kV / 4; ++t) {
                    for (int u = 0; u < 4; ++u) isum += pb[64 * t + 4 * r + u] * q[b * kV + 4 * t + u];
                }
                const auto * pd = reinterpret_cast<const float *>(pb + 16 * kV);
                acc += pd[r] * d[b] * (float) (isum - c[b]) + pd[16 + r] * s[b];
            }
            dst[j * ldd + i] = acc;
        }
    }
}

} // namespace

void gemm_compute_q(const void * p, int64_t m, int64_t k, const void * a, size_t lda, int64_t n, float * d,
                    size_t ldd) {
    compute_q<32>(p, m, k, a, lda, n, d, ldd);
}
void gemm_compute_q16(const void * p, int64_t m, int64_t k, const void * a, size_t lda, int64_t n, float * d,
                      size_t ldd) {
    compute_q<16>(p, m, k, a, lda, n, d, ldd);
}

// ---------------------------------------------------------------- F32 / F16
void gemm_pack_act_f32(const float * x, void * act, int64_t k) { std::memcpy(act, x, (size_t) k * sizeof(float)); }

void gemm_pack_act_f16(const float * x, void * act, int64_t k) {
    auto * out = static_cast<float *>(act);
    for (int64_t i = 0; i < k; ++i) out[i] = f16(lm_ggml_compute_fp32_to_fp16(x[i]));
}

namespace {

template <typename T, float (*Load)(T)>
void pack_panel_f(const void * w, size_t ldw, int64_t m, int64_t k, void * vpanel) {
    auto * panel = static_cast<float *>(vpanel);
    for (int64_t kk = 0; kk < k; ++kk) {
        for (int64_t i = 0; i < kPanelRows; ++i) {
            T v{}; // memcpy: the tests also hand in rows at unaligned addresses
            if (i < m) std::memcpy(&v, static_cast<const char *>(w) + i * ldw + kk * sizeof(T), sizeof(T));
            panel[kk * kPanelRows + i] = i < m ? Load(v) : 0.0f;
        }
    }
}

float load_f32(float v) { return v; }

} // namespace

void gemm_pack_panel_f32(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_f<float, load_f32>(w, ldw, m, k, p);
}
void gemm_pack_panel_f16(const void * w, size_t ldw, int64_t m, int64_t k, void * p) {
    pack_panel_f<lm_half, f16>(w, ldw, m, k, p);
}

void gemm_compute_f(const void * vpanel, int64_t m, int64_t k, const void * vact, size_t lda, int64_t n, float * dst,
                    size_t ldd) {
    const auto * panel = static_cast<const float *>(vpanel);
    for (int64_t j = 0; j < n; ++j) {
        const auto * x = reinterpret_cast<const float *>(static_cast<const char *>(vact) + j * lda);
        for (int64_t i = 0; i < m; ++i) {
            float acc = 0;
            for (int64_t kk = 0; kk < k; ++kk) acc += panel[kk * kPanelRows + i] * x[kk];
            dst[j * ldd + i] = acc;
        }
    }
}

const Gemm kGemmQ4_0 = {kPanelRows,        gemm_q_act_size,      gemm_pack_act_q4_0,
                        gemm_q_panel_size, gemm_pack_panel_q4_0, gemm_compute_q};
const Gemm kGemmQ4_1 = {kPanelRows,        gemm_q_act_size,      gemm_pack_act_q4_1,
                        gemm_q_panel_size, gemm_pack_panel_q4_1, gemm_compute_q};
const Gemm kGemmQ5_0 = {kPanelRows,        gemm_q_act_size,      gemm_pack_act_q5_0,
                        gemm_q_panel_size, gemm_pack_panel_q5_0, gemm_compute_q};
const Gemm kGemmQ5_1 = {kPanelRows,        gemm_q_act_size,      gemm_pack_act_q5_1,
                        gemm_q_panel_size, gemm_pack_panel_q5_1, gemm_compute_q};
const Gemm kGemmQ8_0 = {kPanelRows,        gemm_q_act_size,      gemm_pack_act_q8_0,
                        gemm_q_panel_size, gemm_pack_panel_q8_0, gemm_compute_q};
const Gemm kGemmIQ4_NL = {kPanelRows,        gemm_q_act_size,        gemm_pack_act_q8_0,
                          gemm_q_panel_size, gemm_pack_panel_iq4_nl, gemm_compute_q};
const Gemm kGemmF32 = {kPanelRows,        gemm_f_act_size,     gemm_pack_act_f32,
                       gemm_f_panel_size, gemm_pack_panel_f32, gemm_compute_f};
const Gemm kGemmF16 = {kPanelRows,        gemm_f_act_size,     gemm_pack_act_f16,
                       gemm_f_panel_size, gemm_pack_panel_f16, gemm_compute_f};

namespace {

template <typename T, float (*Load)(T)>
void rowdot_f(int64_t k, int64_t m, const void * w, size_t ldw, const void * vact, float * dst) {
    const auto * x = static_cast<const float *>(vact);
    for (int64_t i = 0; i < m; ++i) {
        float acc = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
            T v;
            std::memcpy(&v, static_cast<const char *>(w) + i * ldw + kk * sizeof(T), sizeof(T));
            acc += Load(v) * x[kk];
        }
        dst[i] = acc;
    }
}

} // namespace

const RowDot kRowDotF32 = {gemm_f_act_size, gemm_pack_act_f32, rowdot_f<float, load_f32>};
const RowDot kRowDotF16 = {gemm_f_act_size, gemm_pack_act_f16, rowdot_f<lm_half, f16>};

} // namespace lmggml::cpu::arch::ref

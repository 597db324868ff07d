// Scalar twins of the RowDot kernels (matrix x vector on packed activation
// rows, layouts.h). They compute each weight block's product directly from
// the block format, so they also check the packed extras (sy, cy) that only
// the vector kernels use.
#include "layouts.h"
#include "ref.h"

#include "../../core/ggml-impl.h"
#include "../../quant/q_iq4_tq.h"
#include "../../quant/quants.h"

#include <cstring>

namespace lmggml::cpu::arch::ref {
namespace {

using namespace layout;

float f16(lm_half h) { return lm_ggml_compute_fp16_to_fp32(h); }

// One block's levels (ggml x86 rounding, see ref_act.cpp), F16-rounded d and q8_1's s.
struct QBlock {
    int8_t q[32];
    float d, s;
    int sum;
};

QBlock quantize(const float * x) {
    lm_block_q8_1 b;
    quantize_row_q8_1(x, &b, kQK);
    QBlock r;
    std::memcpy(r.q, b.qs, sizeof(r.q));
    r.d = f16(b.d);
    r.s = f16(b.s);
    r.sum = 0;
    for (int8_t v : r.q) r.sum += v;
    return r;
}

// Q4_0 and Q4_1 rows: groups of 4 blocks
template <bool kMin> void pack_q4(const float * x, void * vact, int64_t k) {
    const int64_t nb = k / kQK;
    auto * out = static_cast<uint8_t *>(vact);
    std::memset(out, 0, rowdot_q4_size(k));
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t * g = out + (b / 4) * kQ4GroupBytes;
        const int bi = (int) (b % 4);
        const QBlock q = quantize(x + b * kQK);
        std::memcpy(g + 16 * bi, q.q, 16);
        std::memcpy(g + 64 + 16 * bi, q.q + 16, 16);
        auto * dy = reinterpret_cast<float *>(g + 128);
        if constexpr (kMin) {
            const int slot = 2 * ((bi % 2) * 2 + bi / 2); // d0 s0 d2 s2 d1 s1 d3 s3
            reinterpret_cast<float *>(g + 256)[slot] = q.d;
            reinterpret_cast<float *>(g + 256)[slot + 1] = q.s;
        }
        for (int l = 4 * bi; l < 4 * bi + 4; ++l) {
            dy[l] = q.d;
            if constexpr (kMin) {
                reinterpret_cast<float *>(g + 192)[l] = q.s / 4;
            } else {
                const int j = 4 * (l % 4); // lane l multiplies values j..j+3 and 16+j..16+j+3
                int s = 0;
                for (int i = 0; i < 4; ++i) s += q.q[j + i] + q.q[16 + j + i];
                reinterpret_cast<int32_t *>(g + 192)[l] = 8 * s;
            }
        }
    }
}

// the activation levels of block b of a packed Q4 row, in value order
void unpack_q4_act(const uint8_t * act, int64_t b, int8_t * q, float * d, float * s) {
    const uint8_t * g = act + (b / 4) * kQ4GroupBytes;
    const int bi = (int) (b % 4);
    std::memcpy(q, g + 16 * bi, 16);
    std::memcpy(q + 16, g + 64 + 16 * bi, 16);
    *d = reinterpret_cast<const float *>(g + 128)[4 * bi];
    *s = reinterpret_cast<const float *>(g + 192)[4 * bi] * 4; // Q4_1 only
}

} // namespace

void rowdot_pack_q4_0(const float * x, void * act, int64_t k) { pack_q4<false>(x, act, k); }
void rowdot_pack_q4_1(const float * x, void * act, int64_t k) { pack_q4<true>(x, act, k); }

void rowdot_pack_q8_0(const float * x, void * vact, int64_t k) {
    const int64_t nb = k / kQK;
    auto * out = static_cast<uint8_t *>(vact);
    std::memset(out, 0, rowdot_q8_size(k));
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t * g = out + (b / 2) * kQ8GroupBytes;
        const int bi = (int) (b % 2);
        const QBlock q = quantize(x + b * kQK);
        std::memcpy(g + 32 * bi, q.q, 32);
        for (int l = 8 * bi; l < 8 * bi + 8; ++l) {
            reinterpret_cast<float *>(g + 64)[l] = q.d;
            const int j = 4 * (l % 8);
            reinterpret_cast<int32_t *>(g + 128)[l] = 128 * (q.q[j] + q.q[j + 1] + q.q[j + 2] + q.q[j + 3]);
        }
    }
}

namespace {

// One body for the 32-value formats that read the Q4_0 / Q4_1 activation
// rows (layouts.h; Q5_0, Q5_1 and IQ4_NL too): Levels gives the levels of
// values j and j + 16 of a block, kMin adds Q4_1's and Q5_1's m * s.
template <typename Block, void (*Levels)(const Block &, int, int &, int &), bool kMin>
void rowdot_32(int64_t k, int64_t m, const void * w, size_t ldw, const void * vact, float * dst) {
    const auto * act = static_cast<const uint8_t *>(vact);
    for (int64_t r = 0; r < m; ++r) {
        const auto * x = reinterpret_cast<const Block *>(static_cast<const char *>(w) + r * ldw);
        float acc = 0;
        for (int64_t b = 0; b < k / kQK; ++b) {
            int8_t q[32];
            float d, s;
            unpack_q4_act(act, b, q, &d, &s);
            int isum = 0;
            for (int j = 0; j < 16; ++j) {
                int lo, hi;
                Levels(x[b], j, lo, hi);
                isum += lo * q[j] + hi * q[j + 16];
            }
            if constexpr (kMin) {
                acc += f16(x[b].d) * d * (float) isum + f16(x[b].m) * s;
            } else {
                acc += f16(x[b].d) * d * (float) isum;
            }
        }
        dst[r] = acc;
    }
}

void levels_q4_0(const lm_block_q4_0 & x, int j, int & lo, int & hi) {
    lo = (x.qs[j] & 15) - 8;
    hi = (x.qs[j] >> 4) - 8;
}
void levels_q4_1(const lm_block_q4_1 & x, int j, int & lo, int & hi) {
    lo = x.qs[j] & 15;
    hi = x.qs[j] >> 4;
}
// Q5_0 / Q5_1: the fifth bit of value j is bit j of qh
template <typename Block, int kOffset> void levels_q5(const Block & x, int j, int & lo, int & hi) {
    uint32_t qh;
    std::memcpy(&qh, x.qh, sizeof(qh));
    lo = ((x.qs[j] & 15) | (int) ((qh >> j) & 1) << 4) - kOffset;
    hi = ((x.qs[j] >> 4) | (int) ((qh >> (j + 16)) & 1) << 4) - kOffset;
}
void levels_iq4_nl(const lm_block_iq4_nl & x, int j, int & lo, int & hi) {
    lo = lm_quant_kvalues_iq4nl[x.qs[j] & 15];
    hi = lm_quant_kvalues_iq4nl[x.qs[j] >> 4];
}

} // namespace

void rowdot_q4_0(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    rowdot_32<lm_block_q4_0, levels_q4_0, false>(k, m, w, ldw, act, dst);
}
void rowdot_q4_1(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    rowdot_32<lm_block_q4_1, levels_q4_1, true>(k, m, w, ldw, act, dst);
}
void rowdot_q5_0(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    rowdot_32<lm_block_q5_0, levels_q5<lm_block_q5_0, 16>, false>(k, m, w, ldw, act, dst);
}
void rowdot_q5_1(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    rowdot_32<lm_block_q5_1, levels_q5<lm_block_q5_1, 0>, true>(k, m, w, ldw, act, dst);
}
void rowdot_iq4_nl(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst) {
    rowdot_32<lm_block_iq4_nl, levels_iq4_nl, false>(k, m, w, ldw, act, dst);
}

void rowdot_q8_0(int64_t k, int64_t m, const void * w, size_t ldw, const void * vact, float * dst) {
    const auto * act = static_cast<const uint8_t *>(vact);
    for (int64_t r = 0; r < m; ++r) {
        const auto * x = reinterpret_cast<const lm_block_q8_0 *>(static_cast<const char *>(w) + r * ldw);
        float acc = 0;
        for (int64_t b = 0; b < k / kQK; ++b) {
            const uint8_t * g = act + (b / 2) * kQ8GroupBytes;
            const auto * q = reinterpret_cast<const int8_t *>(g + 32 * (b % 2));
            const float d = reinterpret_cast<const float *>(g + 64)[8 * (b % 2)];
            int isum = 0;
            for (int j = 0; j < 32; ++j) isum += x[b].qs[j] * q[j];
            acc += f16(x[b].d) * d * (float) isum;
        }
        dst[r] = acc;
    }
}

const RowDot kRowDotQ4_0 = {rowdot_q4_size, rowdot_pack_q4_0, rowdot_q4_0};
const RowDot kRowDotQ4_1 = {rowdot_q4_size, rowdot_pack_q4_1, rowdot_q4_1};
const RowDot kRowDotQ8_0 = {rowdot_q8_size, rowdot_pack_q8_0, rowdot_q8_0};
const RowDot kRowDotQ5_0 = {rowdot_q4_size, rowdot_pack_q4_0, rowdot_q5_0};
const RowDot kRowDotQ5_1 = {rowdot_q4_size, rowdot_pack_q4_1, rowdot_q5_1};
const RowDot kRowDotIQ4_NL = {rowdot_q4_size, rowdot_pack_q4_0, rowdot_iq4_nl};

} // namespace lmggml::cpu::arch::ref

#include "lmtest_quant.h"

#include "lmtest_fp.h"
#include "lmtest_iq4_tq.h"
#include "lmtest_iq_grid.h"

#include <cstring>

namespace lmtest {
namespace {

constexpr int64_t kQK = 32;   // elements per block of the simple formats
constexpr int64_t kQKK = 256; // elements per super-block of the k-quants

void put_half(uint8_t * p, double v) {
    const uint16_t b = f16_bits(v);
    std::memcpy(p, &b, 2);
}
double get_half(const uint8_t * p) {
    uint16_t b;
    std::memcpy(&b, p, 2);
    return f16_value(b);
}
void random_bytes(uint8_t * p, size_t n, Rng & rng) {
    for (size_t i = 0; i < n; ++i) {
        p[i] = static_cast<uint8_t>(rng.next() >> 56);
    }
}

// Q4_0: d (f16), qs[16]; x = (nibble - 8) * d, low nibbles are elements 0..15
void deq_q4_0(const uint8_t * b, double * y) {
    const double d = get_half(b);
    const uint8_t * qs = b + 2;
    for (int j = 0; j < 16; ++j) {
        y[j] = ((qs[j] & 0x0F) - 8) * d;
        y[j + 16] = ((qs[j] >> 4) - 8) * d;
    }
}
// Q4_1: d, m (f16), qs[16]; x = nibble * d + m
void deq_q4_1(const uint8_t * b, double * y) {
    const double d = get_half(b), m = get_half(b + 2);
    const uint8_t * qs = b + 4;
    for (int j = 0; j < 16; ++j) {
        y[j] = (qs[j] & 0x0F) * d + m;
        y[j + 16] = (qs[j] >> 4) * d + m;
    }
}
// Q5_0: d, qh (32 high bits, bit j for element j), qs[16]; x = (q5 - 16) * d
void deq_q5_0(const uint8_t * b, double * y) {
    const double d = get_half(b);
    uint32_t qh;
    std::memcpy(&qh, b + 2, 4);
    const uint8_t * qs = b + 6;
    for (int j = 0; j < 16; ++j) {
        const int lo = (qs[j] & 0x0F) | (((qh >> j) & 1u) << 4);
        const int hi = (qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4);
        y[j] = (lo - 16) * d;
        y[j + 16] = (hi - 16) * d;
    }
}
// Q5_1: d, m, qh, qs[16]; x = q5 * d + m
void deq_q5_1(const uint8_t * b, double * y) {
    const double d = get_half(b), m = get_half(b + 2);
    uint32_t qh;
    std::memcpy(&qh, b + 4, 4);
    const uint8_t * qs = b + 8;
    for (int j = 0; j < 16; ++j) {
        const int lo = (qs[j] & 0x0F) | (((qh >> j) & 1u) << 4);
        const int hi = (qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4);
        y[j] = lo * d + m;
        y[j + 16] = hi * d + m;
    }
}
// Q8_0: d, qs[32] (int8); x = q * d
void deq_q8_0(const uint8_t * b, double * y) {
    const double d = get_half(b);
    for (int j = 0; j < 32; ++j) {
        y[j] = static_cast<int8_t>(b[2 + j]) * d;
    }
}
// Q4_K: d, dmin (f16), scales[12] (eight 6-bit scale/min pairs), qs[128].
// Sub-block s (32 elements) uses scale sc_s*d and min m_s*dmin; the 64-element
// chunk c stores sub-block 2c in the low nibbles and 2c+1 in the high nibbles.
void k4_scale_min(int s, const uint8_t * q, int * sc, int * m) {
    if (s < 4) {
        *sc = q[s] & 63;
        *m = q[s + 4] & 63;
    } else {
        *sc = (q[s + 4] & 0x0F) | ((q[s - 4] >> 6) << 4);
        *m = (q[s + 4] >> 4) | ((q[s] >> 6) << 4);
    }
}
void deq_q4_k(const uint8_t * b, double * y) {
    const double d = get_half(b), dmin = get_half(b + 2);
    const uint8_t * scales = b + 4;
    const uint8_t * qs = b + 16;
    for (int c = 0; c < 4; ++c) {
        int sc0, m0, sc1, m1;
        k4_scale_min(2 * c, scales, &sc0, &m0);
        k4_scale_min(2 * c + 1, scales, &sc1, &m1);
        for (int l = 0; l < 32; ++l) {
            y[64 * c + l] = d * sc0 * (qs[32 * c + l] & 0x0F) - dmin * m0;
            y[64 * c + 32 + l] = d * sc1 * (qs[32 * c + l] >> 4) - dmin * m1;
        }
    }
}
// Q6_K: ql[128] (low 4 bits), qh[64] (high 2 bits), scales[16] (int8), d.
// Each 128-element half h: element 32*k + l (k = 0..3, l = 0..31) takes its
// low nibble from ql[64h + l + 32*(k&1)] (>>4 for k >= 2), its high bits from
// qh[32h + l] >> 2k, and scale scales[8h + l/16 + 2k]; x = d * scale * (q6 - 32).
void deq_q6_k(const uint8_t * b, double * y) {
    const uint8_t * ql = b;
    const uint8_t * qh = b + 128;
    const int8_t * sc = reinterpret_cast<const int8_t *>(b + 192);
    const double d = get_half(b + 208);
    for (int h = 0; h < 2; ++h) {
        for (int k = 0; k < 4; ++k) {
            for (int l = 0; l < 32; ++l) {
                const uint8_t lowsrc = ql[64 * h + l + 32 * (k & 1)];
                const int low = (k >= 2) ? (lowsrc >> 4) : (lowsrc & 0x0F);
                const int high = (qh[32 * h + l] >> (2 * k)) & 3;
                const int q = (low | (high << 4)) - 32;
                y[128 * h + 32 * k + l] = d * sc[8 * h + l / 16 + 2 * k] * q;
            }
        }
    }
}

} // namespace

bool quant_layout(lm_ggml_type type, BlockLayout * out) {
    switch (type) {
        case LM_GGML_TYPE_Q4_0: *out = {kQK, 18}; return true;
        case LM_GGML_TYPE_Q4_1: *out = {kQK, 20}; return true;
        case LM_GGML_TYPE_Q5_0: *out = {kQK, 22}; return true;
        case LM_GGML_TYPE_Q5_1: *out = {kQK, 24}; return true;
        case LM_GGML_TYPE_Q8_0: *out = {kQK, 34}; return true;
        case LM_GGML_TYPE_Q4_K: *out = {kQKK, 144}; return true;
        case LM_GGML_TYPE_Q6_K: *out = {kQKK, 210}; return true;
        default:
            if (iqgrid::handles(type)) {
                *out = {kQKK, iqgrid::block_bytes(type)};
                return true;
            }
            if (!iq4tq::handles(type)) return false;
            iq4tq::layout(type, &out->block_elems, &out->block_bytes);
            return true;
    }
}

void quant_random_blocks(lm_ggml_type type, int64_t n_blocks, Rng & rng, uint8_t * out) {
    BlockLayout L{};
    if (!quant_layout(type, &L)) {
        return;
    }
    if (iq4tq::handles(type)) {
        for (int64_t i = 0; i < n_blocks; ++i) iq4tq::random_block(type, rng, out + i * L.block_bytes);
        return;
    }
    if (iqgrid::handles(type)) {
        for (int64_t i = 0; i < n_blocks; ++i) iqgrid::random_block(type, rng, out + i * L.block_bytes);
        return;
    }
    for (int64_t i = 0; i < n_blocks; ++i) {
        uint8_t * b = out + i * L.block_bytes;
        random_bytes(b, L.block_bytes, rng); // every bit pattern of the quants is valid
        switch (type) {
            case LM_GGML_TYPE_Q4_0: put_half(b, rng.uniform(0.02, 0.15)); break;
            case LM_GGML_TYPE_Q5_0: put_half(b, rng.uniform(0.01, 0.07)); break;
            case LM_GGML_TYPE_Q8_0: put_half(b, rng.uniform(0.002, 0.01)); break;
            case LM_GGML_TYPE_Q4_1:
                put_half(b, rng.uniform(0.02, 0.13));
                put_half(b + 2, rng.uniform(-1.0, 0.0));
                break;
            case LM_GGML_TYPE_Q5_1:
                put_half(b, rng.uniform(0.01, 0.06));
                put_half(b + 2, rng.uniform(-1.0, 0.0));
                break;
            case LM_GGML_TYPE_Q4_K:
                put_half(b, rng.uniform(0.0005, 0.002));     // * 6-bit scale * nibble
                put_half(b + 2, rng.uniform(0.0005, 0.015)); // * 6-bit min
                break;
            case LM_GGML_TYPE_Q6_K:
                put_half(b + 208, rng.uniform(0.0002, 0.0008)); // * int8 scale * (q - 32)
                break;
            default: break;
        }
    }
}

void quant_dequantize(lm_ggml_type type, const uint8_t * blocks, int64_t n, double * out) {
    BlockLayout L{};
    if (!quant_layout(type, &L)) {
        return;
    }
    for (int64_t i = 0; i < n / L.block_elems; ++i) {
        const uint8_t * b = blocks + i * L.block_bytes;
        double * y = out + i * L.block_elems;
        if (iq4tq::handles(type)) {
            iq4tq::dequantize_block(type, b, y);
            continue;
        }
        if (iqgrid::handles(type)) {
            iqgrid::dequantize_block(type, b, y);
            continue;
        }
        switch (type) {
            case LM_GGML_TYPE_Q4_0: deq_q4_0(b, y); break;
            case LM_GGML_TYPE_Q4_1: deq_q4_1(b, y); break;
            case LM_GGML_TYPE_Q5_0: deq_q5_0(b, y); break;
            case LM_GGML_TYPE_Q5_1: deq_q5_1(b, y); break;
            case LM_GGML_TYPE_Q8_0: deq_q8_0(b, y); break;
            case LM_GGML_TYPE_Q4_K: deq_q4_k(b, y); break;
            case LM_GGML_TYPE_Q6_K: deq_q6_k(b, y); break;
            default: break;
        }
    }
}

} // namespace lmtest

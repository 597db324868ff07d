// The x8 layout of repacked weights (x8.h, layouts.h "RowDotX8").
#include "x8.h"

#include "layouts.h"
#include "ref.h"

#include "../../core/ggml-impl.h"
#include "../../quant/q_iq4_tq.h"
#include "../../quant/quants.h"

#include <cstring>

namespace lmggml::cpu::arch::x8 {

using namespace layout;

bool format_of(lm_ggml_type type, Format * f) {
    switch (type) {
        case LM_GGML_TYPE_Q4_0: *f = {sizeof(lm_block_q4_0), 1, 4, true}; return true;
        case LM_GGML_TYPE_Q4_1: *f = {sizeof(lm_block_q4_1), 2, 4, false}; return true;
        // Q5_0 / Q5_1: chunk 0 is the block's qh (lane r = row r's 32 high bits), chunks 1-4 its qs
        case LM_GGML_TYPE_Q5_0: *f = {sizeof(lm_block_q5_0), 1, 5, true}; return true;
        case LM_GGML_TYPE_Q5_1: *f = {sizeof(lm_block_q5_1), 2, 5, false}; return true;
        case LM_GGML_TYPE_Q8_0: *f = {sizeof(lm_block_q8_0), 1, 8, true}; return true;
        case LM_GGML_TYPE_IQ4_NL: *f = {sizeof(lm_block_iq4_nl), 1, 4, true}; return true;
        default: return false;
    }
}

// Row r's field i sits at header + 16 i + 2 r of the unit, its chunk t at
// levels + 32 t + 4 r.
void pack_unit(const Format & f, int64_t b, const uint8_t * rows, size_t ldw, uint8_t * unit) {
    uint8_t * hdr = unit + header_offset(f, b);
    uint8_t * lv = unit + levels_offset(f, b);
    for (int r = 0; r < kX8Rows; ++r) {
        const uint8_t * src = rows + r * ldw;
        for (int i = 0; i < f.fields; ++i) std::memcpy(hdr + 16 * i + 2 * r, src + 2 * i, 2);
        for (int t = 0; t < f.chunks; ++t) std::memcpy(lv + 32 * t + 4 * r, src + 2 * f.fields + 4 * t, 4);
    }
}

void unpack_unit(const Format & f, int64_t b, const uint8_t * unit, uint8_t * rows, size_t ldw) {
    const uint8_t * hdr = unit + header_offset(f, b);
    const uint8_t * lv = unit + levels_offset(f, b);
    for (int r = 0; r < kX8Rows; ++r) {
        uint8_t * dst = rows + r * ldw;
        for (int i = 0; i < f.fields; ++i) std::memcpy(dst + 2 * i, hdr + 16 * i + 2 * r, 2);
        for (int t = 0; t < f.chunks; ++t) std::memcpy(dst + 2 * f.fields + 4 * t, lv + 32 * t + 4 * r, 4);
    }
}

void pack_group(const Format & f, int64_t k, const void * rows, size_t ldw, void * group) {
    const auto * in = static_cast<const uint8_t *>(rows);
    auto * out = static_cast<uint8_t *>(group);
    for (int64_t b = 0; b < k / kQK; ++b)
        pack_unit(f, b, in + b * f.block_bytes, ldw, out + b * kX8Rows * f.block_bytes);
}

void unpack_group(const Format & f, int64_t k, const void * group, void * rows, size_t ldw) {
    const auto * in = static_cast<const uint8_t *>(group);
    auto * out = static_cast<uint8_t *>(rows);
    for (int64_t b = 0; b < k / kQK; ++b)
        unpack_unit(f, b, in + b * kX8Rows * f.block_bytes, out + b * f.block_bytes, ldw);
}

void gather_block(const Format & f, int64_t k, const void * group, int r, int64_t b, void * out) {
    (void) k;
    const auto * unit = static_cast<const uint8_t *>(group) + b * kX8Rows * f.block_bytes;
    const auto * hdr = unit + header_offset(f, b);
    const auto * lv = unit + levels_offset(f, b);
    auto * dst = static_cast<uint8_t *>(out);
    for (int i = 0; i < f.fields; ++i) std::memcpy(dst + 2 * i, hdr + 16 * i + 2 * r, 2);
    for (int t = 0; t < f.chunks; ++t) std::memcpy(dst + 2 * f.fields + 4 * t, lv + 32 * t + 4 * r, 4);
}

namespace {

// q4_0: s = -8 d sum(q) (F32); q4_1: s = q8_1's s; offset: s holds the
// int32 kOff * sum(q) (the offset the kernels' unsigned levels carry)
enum class Kind { q4_0, q4_1, offset };

template <Kind kKind, int kOff = 0> void pack_act(const float * x, void * vact, int64_t k) {
    const int64_t nb = k / kQK;
    auto * out = static_cast<uint8_t *>(vact);
    auto * d = reinterpret_cast<float *>(out + nb * 32);
    float * s = d + nb;
    for (int64_t b = 0; b < nb; ++b) {
        lm_block_q8_1 q;
        ref::quantize_row_q8_1(x + b * kQK, &q, kQK);
        std::memcpy(out + b * 32, q.qs, 32);
        int sum = 0;
        for (int8_t v : q.qs) sum += v;
        d[b] = lm_ggml_compute_fp16_to_fp32(q.d);
        if constexpr (kKind == Kind::q4_1) s[b] = lm_ggml_compute_fp16_to_fp32(q.s);
        if constexpr (kKind == Kind::q4_0) s[b] = -8.0f * d[b] * (float) sum;
        if constexpr (kKind == Kind::offset) {
            const int32_t c = kOff * sum;
            std::memcpy(&s[b], &c, sizeof(c));
        }
    }
    const size_t used = (size_t) nb * (32 + 8);
    std::memset(out + used, 0, rowdot_x8_act_size(k) - used);
}

} // namespace

void pack_act_q4_0(const float * x, void * act, int64_t k) { pack_act<Kind::q4_0>(x, act, k); }
void pack_act_q4_1(const float * x, void * act, int64_t k) { pack_act<Kind::q4_1>(x, act, k); }
void pack_act_off16(const float * x, void * act, int64_t k) { pack_act<Kind::offset, 16>(x, act, k); }
void pack_act_off128(const float * x, void * act, int64_t k) { pack_act<Kind::offset, 128>(x, act, k); }

} // namespace lmggml::cpu::arch::x8

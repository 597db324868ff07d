// Weights repacked 8 rows at a time (src/cpu/arch/x8.h, layouts.h
// "RowDotX8"): the byte positions of the x8 layout as documented, and the
// RowDotX8 kernels of every vector level against the scalar twin and the
// twin against a double product of the decoded weights and activations.
// The repacked groups end at an unreadable page.
#include "cpu/arch/layouts.h"
#include "cpu/arch/ref.h"
#include "cpu/arch/x8.h"
#include "quant/quants.h"
#include "simd_test_util.h"

namespace {

using namespace simdtest;
namespace ref = lmggml::cpu::arch::ref;
namespace layout = lmggml::cpu::arch::layout;
namespace x8 = lmggml::cpu::arch::x8;

const lm_ggml_type kTypes[] = {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0,
                               LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_IQ4_NL};

const arch::RowDotX8 * twin(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_Q4_0: return &ref::kRowDotX8Q4_0;
        case LM_GGML_TYPE_Q5_0: return &ref::kRowDotX8Q5_0;
        case LM_GGML_TYPE_Q5_1: return &ref::kRowDotX8Q5_1;
        case LM_GGML_TYPE_Q8_0: return &ref::kRowDotX8Q8_0;
        case LM_GGML_TYPE_IQ4_NL: return &ref::kRowDotX8IQ4_NL;
        default: return &ref::kRowDotX8Q4_1;
    }
}

// with a minimum m (ggml's d * q + m), whose product term is m * s
bool has_min(lm_ggml_type t) { return t == LM_GGML_TYPE_Q4_1 || t == LM_GGML_TYPE_Q5_1; }

// header F16 fields and level bytes per block (Q5: qh, then qs), written
// out for the test; alternate: the header after the levels in even units
struct Geometry {
    int fields, levels;
    bool alternate;
};
Geometry geometry(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_Q4_0: return {1, 16, true};
        case LM_GGML_TYPE_Q5_0: return {1, 20, true};
        case LM_GGML_TYPE_Q5_1: return {2, 20, false};
        case LM_GGML_TYPE_Q8_0: return {1, 32, true};
        case LM_GGML_TYPE_IQ4_NL: return {1, 16, true};
        default: return {2, 16, false};
    }
}

// x86: every type but Q8_0 from AVX2 up, Q8_0 at the AVX-512 VNNI level only
bool vector_kernel_expected(lm_ggml_type t) {
#if defined(__x86_64__) || defined(__i386__)
    if (t != LM_GGML_TYPE_Q8_0) return true; // AVX2 has them
    return arch::kernels_for(arch::Isa::avx512_vnni) != nullptr;
#else
    (void) t;
    return false;
#endif
}

TEST(X8Layout, BytePositionsAndRoundTrip) {
    for (lm_ggml_type t : kTypes) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        x8::Format f;
        ASSERT_TRUE(x8::format_of(t, &f));
        const Geometry g = geometry(t);
        const size_t bs = lm_ggml_type_size(t);
        ASSERT_EQ(f.block_bytes, bs);
        const int64_t k = 96, nb = 3;
        const size_t ldw = bs * nb + 5; // rows further apart than a row
        std::vector<uint8_t> rows(8 * ldw);
        lmtest::Rng rng(7 + t);
        for (uint8_t & v : rows) v = (uint8_t) rng.int_in(0, 255);
        std::vector<uint8_t> group(8 * bs * nb, 0xEE);
        x8::pack_group(f, k, rows.data(), ldw, group.data());
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t * unit = group.data() + b * 8 * bs;
            // Q4_0, Q5_0, Q8_0, IQ4_NL: the header after the levels in even units, before them in odd ones
            const bool last = g.alternate && b % 2 == 0;
            const size_t hdr = last ? (size_t) 8 * g.levels : 0, lv = last ? 0 : (size_t) 16 * g.fields;
            for (int r = 0; r < 8; ++r) {
                const uint8_t * blk = rows.data() + r * ldw + b * bs;
                for (int i = 0; i < 2 * g.fields; ++i) {
                    ASSERT_EQ(unit[hdr + 16 * (i / 2) + 2 * r + i % 2], blk[i])
                        << "block " << b << " row " << r << " header byte " << i;
                }
                for (int j = 0; j < g.levels; ++j) {
                    ASSERT_EQ(unit[lv + 32 * (j / 4) + 4 * r + j % 4], blk[2 * g.fields + j])
                        << "block " << b << " row " << r << " level byte " << j;
                }
                std::vector<uint8_t> one(bs);
                x8::gather_block(f, k, group.data(), r, b, one.data());
                ASSERT_EQ(std::memcmp(one.data(), blk, bs), 0) << "gather block " << b << " row " << r;
            }
        }
        std::vector<uint8_t> back(8 * ldw, 0);
        x8::unpack_group(f, k, group.data(), back.data(), ldw);
        for (int r = 0; r < 8; ++r) {
            ASSERT_EQ(std::memcmp(back.data() + r * ldw, rows.data() + r * ldw, bs * nb), 0) << "row " << r;
        }
    }
    x8::Format f;
    EXPECT_FALSE(x8::format_of(LM_GGML_TYPE_Q4_K, &f));
    EXPECT_FALSE(x8::format_of(LM_GGML_TYPE_Q6_K, &f));
    EXPECT_FALSE(x8::format_of(LM_GGML_TYPE_F16, &f));
}

TEST(X8Layout, ActivationRow) {
    const int64_t k = 96;
    const std::vector<float> x = activations((size_t) k, 31);
    std::vector<uint8_t> q(lm_ggml_row_size(LM_GGML_TYPE_Q8_1, k));
    ref::quantize_row_q8_1(x.data(), q.data(), k);
    for (lm_ggml_type t : kTypes) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        const size_t as = twin(t)->act_size(k);
        ASSERT_EQ(as, layout::pad64((size_t) (k / 32) * 40));
        Aligned act(as, 0x5A);
        twin(t)->pack_act(x.data(), act.data(), k);
        const float * d = reinterpret_cast<const float *>(act.data() + (k / 32) * 32);
        for (int64_t b = 0; b < k / 32; ++b) {
            const auto * blk = reinterpret_cast<const lm_block_q8_1 *>(q.data() + b * sizeof(lm_block_q8_1));
            ASSERT_EQ(std::memcmp(act.data() + b * 32, blk->qs, 32), 0) << "levels of block " << b;
            int sum = 0;
            for (int8_t v : blk->qs) sum += v;
            const float dr = lm_ggml_fp16_to_fp32(blk->d);
            EXPECT_EQ(d[b], dr);
            if (has_min(t)) {
                EXPECT_EQ(d[k / 32 + b], lm_ggml_fp16_to_fp32(blk->s)) << "s of block " << b;
            } else if (t == LM_GGML_TYPE_Q4_0) {
                EXPECT_EQ(d[k / 32 + b], -8.0f * dr * (float) sum) << "s of block " << b;
            } else { // the int32 offset * sum(q) of the unsigned levels
                int32_t c;
                std::memcpy(&c, &d[k / 32 + b], sizeof(c));
                EXPECT_EQ(c, (t == LM_GGML_TYPE_Q5_0 ? 16 : 128) * sum) << "offset sum of block " << b;
            }
        }
        for (size_t i = (size_t) (k / 32) * 40; i < as; ++i) ASSERT_EQ(act.data()[i], 0) << "padding byte " << i;
    }
}

// double product of row r with the q8_1-decoded activation, and a float bound
struct Expected {
    double value, tol;
};

Expected expected(const WeightRows & w, int64_t r, const std::vector<double> & a, const std::vector<double> & s) {
    double v = 0, mag = 0;
    for (int64_t i = 0; i < w.k; ++i) {
        v += w.decoded[r][i] * a[i];
        mag += std::fabs(w.decoded[r][i] * a[i]);
    }
    double tol = 4e-6 * mag + 1e-30;
    if (has_min(w.type)) { // F16(d * sum q) for the block sum: 2^-11 relative, times |m| <= 8
        for (double sb : s) tol += 8.0 * std::fabs(sb) / 2048.0 + 1e-7;
    }
    return {v, tol};
}

TEST(SimdRowDotX8, ProductsMatchTwinAndDouble) {
    for (lm_ggml_type t : kTypes) {
        for (int64_t k : {32, 64, 96, 160, 576, 1536}) {
            for (int64_t groups : {1, 3}) {
                SCOPED_TRACE(std::string(lm_ggml_type_name(t)) + " k " + std::to_string(k) + " groups " +
                             std::to_string(groups));
                const int64_t m = 8 * groups;
                const WeightRows w = make_weights(t, k, m, 0, 900 + k + m);
                x8::Format f;
                ASSERT_TRUE(x8::format_of(t, &f));
                GuardedBytes packed((size_t) m * lm_ggml_row_size(t, k));
                const size_t group = 8 * w.ldw;
                for (int64_t g = 0; g < groups; ++g)
                    x8::pack_group(f, k, w.row(8 * g), w.ldw, packed.data() + g * group);

                const std::vector<float> x = activations((size_t) k, 1000 + k);
                std::vector<uint8_t> q(lm_ggml_row_size(LM_GGML_TYPE_Q8_1, k));
                ref::quantize_row_q8_1(x.data(), q.data(), k);
                std::vector<float> dec((size_t) k);
                lm_ggml_get_type_traits(LM_GGML_TYPE_Q8_1)->to_float(q.data(), dec.data(), k);
                const std::vector<double> a(dec.begin(), dec.end());
                std::vector<double> s;
                for (int64_t b = 0; b < k / 32; ++b) {
                    s.push_back(lm_ggml_fp16_to_fp32(reinterpret_cast<const lm_block_q8_1 *>(q.data())[b].s));
                }

                const arch::RowDotX8 * tw = twin(t);
                Aligned act(tw->act_size(k), 0x5A);
                tw->pack_act(x.data(), act.data(), k);
                std::vector<float> want((size_t) m, NAN);
                tw->dot_groups(k, groups, packed.data(), act.data(), want.data());
                for (int64_t r = 0; r < m; ++r) {
                    const Expected e = expected(w, r, a, s);
                    EXPECT_NEAR(want[r], e.value, e.tol) << "twin row " << r;
                }
                int checked = 0;
                for (const arch::KernelSet * lv : vector_levels()) {
                    const arch::RowDotX8 * rx = lv->rowdot_x8[t];
                    if (rx == nullptr) continue;
                    ++checked;
                    ASSERT_EQ(rx->act_size(k), tw->act_size(k));
                    Aligned act2(rx->act_size(k), 0x5A);
                    rx->pack_act(x.data(), act2.data(), k);
                    EXPECT_EQ(std::memcmp(act2.data(), act.data(), rx->act_size(k)), 0)
                        << lv->name << " packed activations";
                    // every group count, the last group always read (it ends at the guard page)
                    for (int64_t g0 = 0; g0 < groups; ++g0) {
                        std::vector<float> got((size_t) m, NAN);
                        rx->dot_groups(k, groups - g0, packed.data() + g0 * group, act2.data(), got.data());
                        for (int64_t r = 8 * g0; r < m; ++r) {
                            EXPECT_NEAR(got[r - 8 * g0], want[r], expected(w, r, a, s).tol) << lv->name << " row " << r;
                        }
                    }
                }
                if (vector_levels().empty()) GTEST_SKIP() << "no vector level on this CPU: only the twin was checked";
                if (vector_kernel_expected(t)) {
                    EXPECT_GT(checked, 0) << "no level has a RowDotX8 kernel for this type";
                }
            }
        }
    }
}

} // namespace

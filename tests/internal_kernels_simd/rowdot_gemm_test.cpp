// RowDot and Gemm kernels (src/cpu/arch/layouts.h) of every vector level:
// packed activations and panels byte for byte equal to the scalar twin's,
// products within float rounding of the twin, and the twin within rounding
// of a double product of the decoded weights and decoded activations.
// Weight rows end at an unreadable page; rows are placed ldw bytes apart
// with ldw larger than a row.
#include "cpu/arch/layouts.h"
#include "cpu/arch/ref.h"
#include "quant/quants.h"
#include "simd_test_util.h"

namespace {

using namespace simdtest;
namespace ref = lmggml::cpu::arch::ref;
namespace layout = lmggml::cpu::arch::layout;

const arch::RowDot * ref_rowdot(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_Q4_0: return &ref::kRowDotQ4_0;
        case LM_GGML_TYPE_Q4_1: return &ref::kRowDotQ4_1;
        case LM_GGML_TYPE_Q8_0: return &ref::kRowDotQ8_0;
        case LM_GGML_TYPE_Q5_0: return &ref::kRowDotQ5_0;
        case LM_GGML_TYPE_Q5_1: return &ref::kRowDotQ5_1;
        case LM_GGML_TYPE_IQ4_NL: return &ref::kRowDotIQ4_NL;
        case LM_GGML_TYPE_Q4_K: return &ref::kRowDotQ4_K;
        case LM_GGML_TYPE_Q5_K: return &ref::kRowDotQ5_K;
        case LM_GGML_TYPE_Q2_K: return &ref::kRowDotQ2_K;
        case LM_GGML_TYPE_Q3_K: return &ref::kRowDotQ3_K;
        case LM_GGML_TYPE_Q6_K: return &ref::kRowDotQ6_K;
        case LM_GGML_TYPE_IQ4_XS: return &ref::kRowDotIQ4_XS;
        case LM_GGML_TYPE_F32: return &ref::kRowDotF32;
        case LM_GGML_TYPE_F16: return &ref::kRowDotF16;
        default: return nullptr;
    }
}

const arch::Gemm * ref_gemm(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_Q4_0: return &ref::kGemmQ4_0;
        case LM_GGML_TYPE_Q4_1: return &ref::kGemmQ4_1;
        case LM_GGML_TYPE_Q5_0: return &ref::kGemmQ5_0;
        case LM_GGML_TYPE_Q5_1: return &ref::kGemmQ5_1;
        case LM_GGML_TYPE_Q8_0: return &ref::kGemmQ8_0;
        case LM_GGML_TYPE_IQ4_NL: return &ref::kGemmIQ4_NL;
        case LM_GGML_TYPE_F32: return &ref::kGemmF32;
        case LM_GGML_TYPE_F16: return &ref::kGemmF16;
        case LM_GGML_TYPE_Q4_K: return &ref::kGemmQ4_K;
        case LM_GGML_TYPE_Q5_K: return &ref::kGemmQ5_K;
        case LM_GGML_TYPE_Q2_K: return &ref::kGemmQ2_K;
        case LM_GGML_TYPE_Q3_K: return &ref::kGemmQ3_K;
        case LM_GGML_TYPE_Q6_K: return &ref::kGemmQ6_K;
        case LM_GGML_TYPE_IQ4_XS: return &ref::kGemmIQ4_XS;
        default: return nullptr;
    }
}

bool has_min(lm_ggml_type t) { return t == LM_GGML_TYPE_Q4_1 || t == LM_GGML_TYPE_Q5_1; }
// activations quantized as Q8_K
bool is_k_quant(lm_ggml_type t) {
    return t == LM_GGML_TYPE_Q2_K || t == LM_GGML_TYPE_Q3_K || t == LM_GGML_TYPE_Q4_K || t == LM_GGML_TYPE_Q5_K ||
           t == LM_GGML_TYPE_Q6_K || t == LM_GGML_TYPE_IQ4_XS;
}
// values per block of the K-quant Gemm's activation rows and panels
int k_block_values(lm_ggml_type t) {
    return t == LM_GGML_TYPE_Q2_K || t == LM_GGML_TYPE_Q3_K || t == LM_GGML_TYPE_Q6_K ? 16 : 32;
}

// What the activation row stands for, decoded from the F32 input the same
// way the packers quantize it (ggml x86 rounding; F16 rounding for F16
// weights), and the q8_1 s values of each block (min types).
struct Decoded {
    std::vector<double> x;
    std::vector<double> s; // per block
};

// The K-quant Gemm rows (layouts.h): int8 with one scale per sub-block of
// kv values, d = max|x| / 127, level = x * (127 / max|x|) rounded to nearest even.
Decoded decode_act_per_block(const std::vector<float> & x, int kv) {
    Decoded d;
    for (size_t b = 0; b + kv <= x.size(); b += kv) {
        float amax = 0.0f;
        for (int i = 0; i < kv; ++i) amax = std::max(amax, std::fabs(x[b + i]));
        const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (int i = 0; i < kv; ++i) d.x.push_back(std::nearbyint(x[b + i] * id) * (amax / 127.0f));
    }
    return d;
}

Decoded decode_act(lm_ggml_type t, const std::vector<float> & x) {
    Decoded d;
    const int64_t k = (int64_t) x.size();
    if (t == LM_GGML_TYPE_F32) {
        d.x.assign(x.begin(), x.end());
        return d;
    }
    if (t == LM_GGML_TYPE_F16) {
        for (float v : x) d.x.push_back(lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16(v)));
        return d;
    }
    if (t == LM_GGML_TYPE_IQ4_XS) { // the RowDot rows: one d per 32-value sub-block
        return decode_act_per_block(x, 32);
    }
    if (is_k_quant(t)) { // activations quantized as Q8_K (src/quant's reference)
        std::vector<uint8_t> q(lm_ggml_row_size(LM_GGML_TYPE_Q8_K, k));
        lm_quant_quantize_row_q8_K_ref(x.data(), q.data(), k);
        std::vector<float> dec((size_t) k);
        lm_ggml_get_type_traits(LM_GGML_TYPE_Q8_K)->to_float(q.data(), dec.data(), k);
        d.x.assign(dec.begin(), dec.end());
        return d;
    }
    // the twin converter's q8_1 blocks (checked against hand cases in act_test.cpp)
    std::vector<uint8_t> q(lm_ggml_row_size(LM_GGML_TYPE_Q8_1, k));
    ref::quantize_row_q8_1(x.data(), q.data(), k);
    std::vector<float> dec((size_t) k);
    lm_ggml_get_type_traits(LM_GGML_TYPE_Q8_1)->to_float(q.data(), dec.data(), k);
    d.x.assign(dec.begin(), dec.end());
    for (int64_t b = 0; b < k / 32; ++b) {
        uint16_t s;
        std::memcpy(&s, q.data() + b * 36 + 2, 2);
        d.s.push_back(lm_ggml_fp16_to_fp32(s));
    }
    return d;
}

// The exact product of weight row r with the decoded activation, and a
// bound for float rounding (plus, for min types, the F16 rounding of s).
struct Expected {
    double value, tol;
};

Expected expected(const WeightRows & w, int64_t r, const Decoded & a) {
    double v = 0, mag = 0;
    for (int64_t i = 0; i < w.k; ++i) {
        v += w.decoded[r][i] * a.x[i];
        mag += std::fabs(w.decoded[r][i] * a.x[i]);
    }
    double tol = 2e-6 * mag + 1e-30;
    if (has_min(w.type)) {
        // ggml uses F16(d * sum q) for the block sum: up to 2^-11 relative, times |m| <= 8
        for (double s : a.s) tol += 8.0 * std::fabs(s) / 2048.0 + 1e-7;
    }
    return {v, tol};
}

// ---------------------------------------------------------------- RowDot
TEST(SimdRowDot, PackAndProductMatchTwin) {
    if (vector_levels().empty()) GTEST_SKIP() << "no vector level on this CPU";
    const std::vector<int64_t> block_ks = {32, 64, 96, 128, 160, 192, 224, 256, 288, 576, 1536};
    // float rows: around the 8-float vector and its multiples, 4-row groups plus leftovers
    // (4100: ARM's FMLAL F16 RowDot converts the activation 4096 values at a time)
    const std::vector<int64_t> float_ks = {1, 3, 7, 8, 9, 15, 16, 17, 33, 64, 100, 576, 4100};
    // K-quants: 1 to 8 whole super-blocks
    const std::vector<int64_t> super_ks = {256, 512, 768, 1024, 1280, 1536, 1792, 2048};

    for (lm_ggml_type t :
         {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
          LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K,
          LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_IQ4_XS, LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
        const arch::RowDot * tw = ref_rowdot(t);
        const bool is_float = t == LM_GGML_TYPE_F32 || t == LM_GGML_TYPE_F16;
        for (int64_t k : is_float ? float_ks : is_k_quant(t) ? super_ks : block_ks) {
            const int64_t nb = (k + 31) / 32;
            SCOPED_TRACE(std::string(lm_ggml_type_name(t)) + " k " + std::to_string(k));
            const int64_t m = is_float ? 9 : 5;
            const WeightRows w = make_weights(t, k, m, nb % 2 ? 0 : 6, 500 + k);
            const std::vector<float> x = activations((size_t) k, 600 + k);
            const Decoded a = decode_act(t, x);

            const size_t as = tw->act_size(k);
            Aligned want_act(as, 0x5A);
            tw->pack_act(x.data(), want_act.data(), k);
            std::vector<float> want(m);
            tw->dot_rows(k, m, w.row(0), w.ldw, want_act.data(), want.data());
            for (int64_t r = 0; r < m; ++r) {
                const Expected e = expected(w, r, a);
                EXPECT_NEAR(want[r], e.value, e.tol) << "twin row " << r;
            }
            for (const arch::KernelSet * lv : vector_levels()) {
                const arch::RowDot * rd = lv->rowdot[t];
                if (rd == nullptr) continue;
                ASSERT_EQ(rd->act_size(k), as);
                Aligned act(as, 0x5A);
                rd->pack_act(x.data(), act.data(), k);
                EXPECT_EQ(std::memcmp(act.data(), want_act.data(), as), 0) << lv->name << " packed activations";
                // every row count up to m, starting at every row: the last row is always read
                for (int64_t r0 = 0; r0 < m; ++r0) {
                    std::vector<float> got(m, NAN);
                    rd->dot_rows(k, m - r0, w.row(r0), w.ldw, act.data(), got.data());
                    for (int64_t r = r0; r < m; ++r) {
                        const Expected e = expected(w, r, a);
                        EXPECT_NEAR(got[r - r0], want[r], e.tol) << lv->name << " row " << r;
                    }
                }
            }
        }
    }
}

// Weights at the ends of their level range against activations of one
// sign (levels all +127 or all -127): the largest int16 pair sums the
// kernels' byte products can reach (maddubs saturates silently). The
// quantized rows keep their block scales; every other byte is `fill`.
struct Extreme {
    lm_ggml_type type;
    size_t block_bytes;
    size_t keep_begin, keep_end; // the block's scale bytes, kept
    uint8_t fill;
};

TEST(SimdRowDot, ExtremeLevelsMatchTwin) {
    if (vector_levels().empty()) GTEST_SKIP() << "no vector level on this CPU";
    const Extreme cases[] = {
        {LM_GGML_TYPE_Q4_0, 18, 0, 2, 0xFF},      // levels 15 (unsigned)
        {LM_GGML_TYPE_Q4_1, 20, 0, 4, 0xFF},      // 15
        {LM_GGML_TYPE_Q5_0, 22, 0, 2, 0xFF},      // 31
        {LM_GGML_TYPE_Q5_1, 24, 0, 4, 0xFF},      // 31
        {LM_GGML_TYPE_Q8_0, 34, 0, 2, 0x80},      // -128
        {LM_GGML_TYPE_IQ4_NL, 18, 0, 2, 0x00},    // -127
        {LM_GGML_TYPE_Q4_K, 144, 0, 4, 0xFF},     // 15, scales and mins 63
        {LM_GGML_TYPE_Q5_K, 176, 0, 4, 0xFF},     // 31, scales and mins 63
        {LM_GGML_TYPE_Q6_K, 210, 208, 210, 0xFF}, // 63, scales -1
        {LM_GGML_TYPE_Q2_K, 84, 80, 84, 0xFF},    // 3, scales and mins 15
        {LM_GGML_TYPE_Q3_K, 110, 108, 110, 0xFF}, // 3, scales 31
        {LM_GGML_TYPE_IQ4_XS, 136, 0, 8, 0x00},   // -127
        {LM_GGML_TYPE_IQ4_XS, 136, 0, 8, 0xFF},   // 113
    };
    for (const Extreme & c : cases) {
        const bool kq = is_k_quant(c.type);
        for (int64_t k : kq ? std::vector<int64_t>{256, 768} : std::vector<int64_t>{32, 160, 256}) {
            for (float sign : {1.0f, -1.0f}) {
                SCOPED_TRACE(std::string(lm_ggml_type_name(c.type)) + " k " + std::to_string(k) + " sign " +
                             std::to_string(sign));
                const int64_t m = 5;
                WeightRows w = make_weights(c.type, k, m, 0, 900 + k);
                ASSERT_EQ(lm_ggml_row_size(c.type, k) % c.block_bytes, 0u);
                for (int64_t r = 0; r < m; ++r) {
                    uint8_t * row = w.bytes->data() + r * w.ldw;
                    for (size_t i = 0; i < lm_ggml_row_size(c.type, k); ++i) {
                        const size_t o = i % c.block_bytes;
                        if (o < c.keep_begin || o >= c.keep_end) row[i] = c.fill;
                    }
                    std::vector<float> dec((size_t) k);
                    lm_ggml_get_type_traits(c.type)->to_float(row, dec.data(), k);
                    w.decoded[r].assign(dec.begin(), dec.end());
                }
                const std::vector<float> x((size_t) k, sign);
                const Decoded a = decode_act(c.type, x);
                const arch::RowDot * tw = ref_rowdot(c.type);
                Aligned act(tw->act_size(k), 0x5A);
                tw->pack_act(x.data(), act.data(), k);
                std::vector<float> want(m);
                tw->dot_rows(k, m, w.row(0), w.ldw, act.data(), want.data());
                for (int64_t r = 0; r < m; ++r) {
                    const Expected e = expected(w, r, a);
                    EXPECT_NEAR(want[r], e.value, e.tol) << "twin row " << r;
                }
                for (const arch::KernelSet * lv : vector_levels()) {
                    const arch::RowDot * rd = lv->rowdot[c.type];
                    if (rd == nullptr) continue;
                    std::vector<float> got(m, NAN);
                    rd->dot_rows(k, m, w.row(0), w.ldw, act.data(), got.data());
                    for (int64_t r = 0; r < m; ++r) {
                        EXPECT_NEAR(got[r], want[r], expected(w, r, a).tol) << lv->name << " row " << r;
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------- Gemm
void check_gemm(lm_ggml_type t, int64_t k, int64_t m, int64_t n) {
    SCOPED_TRACE(std::string(lm_ggml_type_name(t)) + " k " + std::to_string(k) + " m " + std::to_string(m) + " n " +
                 std::to_string(n));
    const arch::Gemm * tw = ref_gemm(t);
    const WeightRows w = make_weights(t, k, m, 10, 700 + k * 31 + m);
    const size_t as = tw->act_size(k);
    const size_t lda = layout::pad64(as) + 64; // rows further apart than needed
    std::vector<std::vector<float>> xs;
    std::vector<Decoded> decoded;
    Aligned want_act(lda * n, 0x5A);
    for (int64_t j = 0; j < n; ++j) {
        xs.push_back(activations((size_t) k, 800 + 7 * j + k));
        decoded.push_back(is_k_quant(t) ? decode_act_per_block(xs.back(), k_block_values(t))
                                        : decode_act(t, xs.back()));
        tw->pack_act(xs.back().data(), want_act.data() + j * lda, k);
    }
    const size_t ps = tw->panel_size(k);
    Aligned want_panel(ps, 0x33);
    tw->pack_panel(w.row(0), w.ldw, m, k, want_panel.data());
    const size_t ldd = (size_t) m + 3;
    std::vector<float> want(ldd * n, -7.0f);
    tw->compute(want_panel.data(), m, k, want_act.data(), lda, n, want.data(), ldd);
    for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i) {
            const Expected e = expected(w, i, decoded[j]);
            ASSERT_NEAR(want[j * ldd + i], e.value, e.tol) << "twin (" << i << ", " << j << ")";
        }
        for (size_t i = (size_t) m; i < ldd; ++i) ASSERT_EQ(want[j * ldd + i], -7.0f) << "twin wrote past m";
    }

    for (const arch::KernelSet * lv : vector_levels()) {
        const arch::Gemm * gm = lv->gemm[t];
        if (gm == nullptr) continue;
        ASSERT_EQ(gm->act_size(k), as);
        ASSERT_EQ(gm->panel_size(k), ps);
        ASSERT_EQ(gm->panel_rows, tw->panel_rows);
        Aligned act(lda * n, 0x5A);
        for (int64_t j = 0; j < n; ++j) gm->pack_act(xs[j].data(), act.data() + j * lda, k);
        for (int64_t j = 0; j < n; ++j) {
            EXPECT_EQ(std::memcmp(act.data() + j * lda, want_act.data() + j * lda, as), 0)
                << lv->name << " packed activation row " << j;
        }
        Aligned panel(ps, 0x33);
        gm->pack_panel(w.row(0), w.ldw, m, k, panel.data());
        EXPECT_EQ(std::memcmp(panel.data(), want_panel.data(), ps), 0) << lv->name << " panel";
        std::vector<float> got(ldd * n, -7.0f);
        gm->compute(panel.data(), m, k, act.data(), lda, n, got.data(), ldd);
        for (int64_t j = 0; j < n; ++j) {
            for (int64_t i = 0; i < m; ++i) {
                const Expected e = expected(w, i, decoded[j]);
                EXPECT_NEAR(got[j * ldd + i], want[j * ldd + i], e.tol) << lv->name << " (" << i << ", " << j << ")";
            }
            for (size_t i = (size_t) m; i < ldd; ++i) EXPECT_EQ(got[j * ldd + i], -7.0f) << lv->name << " wrote past m";
        }
    }
}

TEST(SimdGemm, BlockTypes) {
    if (vector_levels().empty()) GTEST_SKIP() << "no vector level on this CPU";
    for (lm_ggml_type t : {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                           LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_IQ4_NL}) {
        for (int64_t k : {32, 96, 288}) {
            for (int64_t m : {1, 9, 15, 16, 17, 25, 32}) { // AVX2 works in 8-row halves
                for (int64_t n = 1; n <= 13; ++n) check_gemm(t, k, m, n);
            }
        }
        // several chunks of blocks (partial sums parked in dst between them)
        check_gemm(t, 32 * 45, 20, 7);
        check_gemm(t, 32 * 61, 32, 13);
        // several blocks of columns (AVX2 takes 48 at a time), the last one partial
        check_gemm(t, 96, 25, 101);
        check_gemm(t, 32 * 45, 32, 49);
        // AMX tiles of 16 columns, with and without VNNI's leftover columns;
        // 45 blocks: two chunks of gathered column scales
        for (int64_t m : {1, 16, 17, 32}) {
            check_gemm(t, 96, m, 16);
            check_gemm(t, 288, m, 32);
            check_gemm(t, 32 * 45, m, 35);
        }
    }
}

TEST(SimdGemm, KQuants) {
    if (vector_levels().empty()) GTEST_SKIP() << "no vector level on this CPU";
    for (lm_ggml_type t : {LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K,
                           LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_IQ4_XS}) {
        for (int64_t sb = 1; sb <= 8; ++sb) { // super-blocks; from 7 on, several chunks of blocks
            for (int64_t m : {1, 9, 17, 30, 32}) {
                for (int64_t n = 1; n <= 13; n += sb <= 2 ? 1 : 4) check_gemm(t, 256 * sb, m, n);
            }
        }
        check_gemm(t, 256 * 7, 30, 97); // several blocks of columns and of blocks
        check_gemm(t, 256, 9, 16);      // one AMX tile of columns
        check_gemm(t, 256 * 2, 32, 33);
    }
}

// Panels of one level everywhere (the format's extremes) times activation
// levels of +-127: the products where int16 partial sums would overflow or
// vpmaddubsw saturate if a kernel added up too many steps before widening.
// The twin's int32 arithmetic is exact; every level must give its result.
TEST(SimdGemm, ExtremeLevelsDoNotOverflow) {
    if (vector_levels().empty()) GTEST_SKIP() << "no vector level on this CPU";
    struct Case {
        lm_ggml_type type;
        int max_level; // 255: levels + 128 (signed weights)
    };
    const Case cases[] = {{LM_GGML_TYPE_Q4_0, 15}, {LM_GGML_TYPE_Q4_1, 15},  {LM_GGML_TYPE_Q5_0, 31},
                          {LM_GGML_TYPE_Q5_1, 31}, {LM_GGML_TYPE_Q8_0, 255}, {LM_GGML_TYPE_IQ4_NL, 255},
                          {LM_GGML_TYPE_Q4_K, 15}, {LM_GGML_TYPE_Q5_K, 31},  {LM_GGML_TYPE_Q6_K, 63},
                          {LM_GGML_TYPE_Q2_K, 35}, {LM_GGML_TYPE_Q3_K, 35},  {LM_GGML_TYPE_IQ4_XS, 255}};
    const int64_t k = 512, m = 32, n = 21; // AMX: a tile of 16 columns, then VNNI's 5
    for (const Case & cs : cases) {
        const arch::Gemm * tw = ref_gemm(cs.type);
        const int kv = k_block_values(cs.type);
        const size_t block = layout::kGroupRows * (size_t) kv + 128; // one block of a 16-row group
        const size_t lda = layout::pad64(tw->act_size(k));
        Aligned act(lda * n, 0);
        for (int64_t j = 0; j < n; ++j) { // all +127 or all -127, alternating by column
            const std::vector<float> x((size_t) k, j % 2 ? -1.0f : 1.0f);
            tw->pack_act(x.data(), act.data() + j * lda, k);
        }
        for (int level : {0, 1, cs.max_level}) {
            SCOPED_TRACE(std::string(lm_ggml_type_name(cs.type)) + " level " + std::to_string(level));
            const size_t ps = tw->panel_size(k);
            Aligned panel(ps, 0);
            for (size_t off = 0; off < ps; off += block) {
                std::memset(panel.data() + off, level, 16 * (size_t) kv);
                auto * dm = reinterpret_cast<float *>(panel.data() + off + 16 * kv);
                for (int r = 0; r < 16; ++r) {
                    dm[r] = 1.0f + 0.125f * (float) r;
                    dm[16 + r] = -0.5f;
                }
            }
            std::vector<float> want((size_t) (m * n));
            tw->compute(panel.data(), m, k, act.data(), lda, n, want.data(), m);
            for (const arch::KernelSet * lv : vector_levels()) {
                const arch::Gemm * gm = lv->gemm[cs.type];
                if (gm == nullptr) continue;
                std::vector<float> got((size_t) (m * n), NAN);
                gm->compute(panel.data(), m, k, act.data(), lda, n, got.data(), m);
                for (int64_t i = 0; i < m * n; ++i) {
                    EXPECT_NEAR(got[i], want[i], 1e-5 * std::fabs(want[i]) + 1e-3) << lv->name << " at " << i;
                }
            }
        }
    }
}

TEST(SimdGemm, Floats) {
    if (vector_levels().empty()) GTEST_SKIP() << "no vector level on this CPU";
    for (lm_ggml_type t : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
        for (int64_t k : {1, 5, 16, 17, 64, 100}) {
            for (int64_t m : {1, 7, 8, 9, 16, 17, 24, 31, 32}) { // AVX2 works in 8-row halves
                for (int64_t n : {1, 2, 7, 8, 9, 15, 16, 17, 25}) check_gemm(t, k, m, n);
            }
        }
        // several chunks of k (partial sums parked in dst between them)
        check_gemm(t, 400, 20, 9);
        check_gemm(t, 577, 32, 17);
        check_gemm(t, 2100, 31, 13); // AVX2 chunks are 1024 steps
    }
}

} // namespace

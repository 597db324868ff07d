// Gemm panels packed straight from repacked (x8) weights (x8::pack_panel):
// byte for byte the panel that the scalar twin, and every level's own
// Gemm packer, makes from the same rows in ggml's layout; and the Gemm
// product on such a panel against a double product of the decoded rows.
#include "cpu/arch/layouts.h"
#include "cpu/arch/ref.h"
#include "cpu/arch/x8.h"
#include "quant/quants.h"
#include "simd_test_util.h"

#include <algorithm>

namespace {

using namespace simdtest;
namespace ref = lmggml::cpu::arch::ref;
namespace layout = lmggml::cpu::arch::layout;
namespace x8 = lmggml::cpu::arch::x8;

const arch::Gemm & twin_gemm(lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_Q4_0: return ref::kGemmQ4_0;
        case LM_GGML_TYPE_Q4_1: return ref::kGemmQ4_1;
        case LM_GGML_TYPE_Q5_0: return ref::kGemmQ5_0;
        case LM_GGML_TYPE_Q5_1: return ref::kGemmQ5_1;
        case LM_GGML_TYPE_Q8_0: return ref::kGemmQ8_0;
        default: return ref::kGemmIQ4_NL;
    }
}

// m rows of k values in ggml's layout, repacked into m / 8 x8 groups
struct Repacked {
    WeightRows rows;
    std::vector<uint8_t> groups;
    size_t group_bytes;
};

Repacked repack(lm_ggml_type t, int64_t k, int64_t m, uint64_t seed) {
    Repacked r{make_weights(t, k, m, 0, seed), {}, 0};
    x8::Format f;
    EXPECT_TRUE(x8::format_of(t, &f));
    r.group_bytes = 8 * r.rows.ldw;
    r.groups.assign((size_t) (m / 8) * r.group_bytes, 0xEE);
    for (int64_t g = 0; g < m / 8; ++g) {
        x8::pack_group(f, k, r.rows.row(8 * g), r.rows.ldw, r.groups.data() + g * r.group_bytes);
    }
    return r;
}

TEST(X8Panel, MatchesEveryLevelsPacker) {
    for (lm_ggml_type t : {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                           LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_IQ4_NL}) {
        for (int64_t k : {32, 64, 96, 288}) {
            for (int64_t m : {8, 16, 24, 32}) {
                SCOPED_TRACE(std::string(lm_ggml_type_name(t)) + " k " + std::to_string(k) + " m " + std::to_string(m));
                const Repacked w = repack(t, k, m, 100 + 7 * k + m);
                const size_t ps = layout::gemm_q_panel_size(k);
                Aligned want(ps, 0x33), got(ps, 0xCC); // the vector packers store aligned
                twin_gemm(t).pack_panel(w.rows.row(0), w.rows.ldw, m, k, want.data());
                ASSERT_TRUE(x8::pack_panel(t, k, w.groups.data(), w.group_bytes, m, got.data()));
                ASSERT_EQ(std::memcmp(got.data(), want.data(), ps), 0) << "twin's panel";
                for (const arch::KernelSet * lv : vector_levels()) {
                    if (lv->x8_pack_panel[t] != nullptr) { // the level's own packer from the groups
                        Aligned fast(ps, 0x55);
                        lv->x8_pack_panel[t](k, w.groups.data(), w.group_bytes, m, fast.data());
                        EXPECT_EQ(std::memcmp(fast.data(), got.data(), ps), 0) << lv->name << " x8 packer's panel";
                    }
                    const arch::Gemm * gm = lv->gemm[t];
                    if (gm == nullptr) continue;
                    ASSERT_EQ(gm->panel_size(k), ps) << lv->name;
                    Aligned mine(ps, 0x77);
                    gm->pack_panel(w.rows.row(0), w.rows.ldw, m, k, mine.data());
                    EXPECT_EQ(std::memcmp(mine.data(), got.data(), ps), 0) << lv->name << " packer's panel";
                }
            }
        }
    }
}

// The twin's product on a directly packed panel, against doubles: the
// panel means what the rows mean.
TEST(X8Panel, ProductMatchesDecodedRows) {
    const int64_t k = 96, m = 24, n = 3;
    for (lm_ggml_type t : {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                           LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_IQ4_NL}) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        const Repacked w = repack(t, k, m, 900 + t);
        const arch::Gemm & gm = twin_gemm(t);
        Aligned panel(layout::gemm_q_panel_size(k));
        ASSERT_TRUE(x8::pack_panel(t, k, w.groups.data(), w.group_bytes, m, panel.data()));
        const size_t as = gm.act_size(k);
        Aligned act(as * n, 0);
        std::vector<std::vector<float>> x;
        for (int64_t j = 0; j < n; ++j) {
            x.push_back(activations((size_t) k, 40 + j));
            gm.pack_act(x[j].data(), act.data() + j * as, k);
        }
        std::vector<float> dst((size_t) (m * n), NAN);
        gm.compute(panel.data(), m, k, act.data(), as, n, dst.data(), (size_t) m);
        for (int64_t j = 0; j < n; ++j) {
            // the activation as the packer rounds it: ggml's Q8_1 blocks (d * q)
            std::vector<uint8_t> q8(lm_ggml_row_size(LM_GGML_TYPE_Q8_1, k));
            ref::quantize_row_q8_1(x[j].data(), q8.data(), k);
            const auto * blk = reinterpret_cast<const lm_block_q8_1 *>(q8.data());
            for (int64_t r = 0; r < m; ++r) {
                double want = 0, mag = 0, s_err = 0;
                for (int64_t b = 0; b < k / 32; ++b) {
                    const double d = lm_ggml_fp16_to_fp32(blk[b].d);
                    double wmax = 0, xabs = 0;
                    for (int i = 0; i < 32; ++i) {
                        const double wv = w.rows.decoded[r][32 * b + i], xv = d * blk[b].qs[i];
                        want += wv * xv;
                        mag += std::fabs(wv * xv);
                        wmax = std::max(wmax, std::fabs(wv));
                        xabs += std::fabs(xv);
                    }
                    // Q4_1 / Q5_1: the minimum times ggml's F16 s = d sum(q), 2^-11 relative
                    s_err += wmax * xabs * std::ldexp(1.0, -11);
                }
                EXPECT_NEAR(dst[j * m + r], want, 1e-5 * mag + s_err + 1e-6) << "row " << r << " column " << j;
            }
        }
    }
}

TEST(X8Panel, RefusesWhatItCannotPack) {
    std::vector<uint8_t> groups(4096);
    Aligned panel(layout::gemm_q_panel_size(64));
    EXPECT_FALSE(x8::pack_panel(LM_GGML_TYPE_Q4_K, 256, groups.data(), 1024, 8, panel.data()));
    EXPECT_FALSE(x8::pack_panel(LM_GGML_TYPE_Q4_0, 64, groups.data(), 288, 12, panel.data())); // not whole groups
    EXPECT_FALSE(x8::pack_panel(LM_GGML_TYPE_Q4_0, 64, groups.data(), 288, 40, panel.data())); // past a panel
    EXPECT_FALSE(x8::pack_panel(LM_GGML_TYPE_Q4_0, 48, groups.data(), 288, 8, panel.data()));  // k not whole blocks
}

} // namespace

// ggml-common.h's tables for backend plugins (LM_GGML_COMMON_IMPL_C: what
// ggml's CPU sources include, generated into ggml-common-tables.h by
// scripts/gen-common-tables) hold exactly lmggml's own I-quant tables, so the
// committed header cannot drift from src/quant/q_iq_grids.cpp.
#define LM_GGML_COMMON_IMPL_C
#include "ggml-common.h"

#include "quant/q_iq_grids.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

namespace own = lm_quant::iq;

#define LM_EXPECT_SAME_TABLE(name)                                     \
    do {                                                               \
        static_assert(sizeof(::name) == sizeof(own::name), #name);     \
        EXPECT_EQ(std::memcmp(::name, own::name, sizeof(::name)), 0) << #name; \
    } while (0)

TEST(CommonTables, EqualTheQuantizersTables) {
    LM_EXPECT_SAME_TABLE(kmask_iq2xs);
    LM_EXPECT_SAME_TABLE(ksigns_iq2xs);
    LM_EXPECT_SAME_TABLE(iq2xxs_grid);
    LM_EXPECT_SAME_TABLE(iq2xs_grid);
    LM_EXPECT_SAME_TABLE(iq2s_grid);
    LM_EXPECT_SAME_TABLE(iq3xxs_grid);
    LM_EXPECT_SAME_TABLE(iq3s_grid);
    LM_EXPECT_SAME_TABLE(iq1s_grid);
    EXPECT_EQ(NGRID_IQ1S, 2048);
    EXPECT_EQ(IQ1S_DELTA, 0.125f);
    EXPECT_EQ(IQ1M_DELTA, 0.125f);
}

// ksigns64[i] spells out the 8 sign bits of ksigns_iq2xs[i] as 0x00 / 0xff bytes
TEST(CommonTables, Ksigns64ExpandsKsigns) {
    for (int i = 0; i < 128; ++i) {
        uint64_t want = 0;
        for (int j = 0; j < 8; ++j) {
            if (own::ksigns_iq2xs[i] >> j & 1) want |= uint64_t{0xff} << (8 * j);
        }
        EXPECT_EQ(ksigns64[i], want) << i;
    }
}

#undef LM_EXPECT_SAME_TABLE

} // namespace

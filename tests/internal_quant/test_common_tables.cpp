// ggml-common.h's I-quant tables as plugins see them (LM_GGML_COMMON_IMPL_CPP
// here, LM_GGML_COMMON_IMPL_C in common_tables_c.c) against the test-side
// copies (lmtest_iq_grids.h, digest-checked in test_iq.cpp) and the sign
// rule. The header is also where the library's own tables get their values
// (src/quant/q_iq_grids.cpp), so these checks cover both.
#define LM_GGML_COMMON_IMPL_CPP
#include "ggml-common.h"

#include "lmtest_iq_grid.h"
#include "lmtest_iq_grids.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

extern "C" const void * lm_test_common_table_c(int i, size_t * size); // common_tables_c.c

namespace {

namespace tg = lmtest::iqgrid;

struct View {
    const char * name;
    const void * p;
    size_t size;
};

// the tables both views have, in common_tables_c.c's order
std::vector<View> cpp_view() {
    return {{"kmask_iq2xs", kmask_iq2xs, sizeof(kmask_iq2xs)}, {"ksigns_iq2xs", ksigns_iq2xs, sizeof(ksigns_iq2xs)},
            {"ksigns64", ksigns64, sizeof(ksigns64)},          {"iq2xxs_grid", iq2xxs_grid, sizeof(iq2xxs_grid)},
            {"iq2xs_grid", iq2xs_grid, sizeof(iq2xs_grid)},    {"iq2s_grid", iq2s_grid, sizeof(iq2s_grid)},
            {"iq3xxs_grid", iq3xxs_grid, sizeof(iq3xxs_grid)}, {"iq3s_grid", iq3s_grid, sizeof(iq3s_grid)}};
}

TEST(CommonTables, GridsEqualTheTestCopies) {
    const View want[] = {{"iq2xxs_grid", tg::iq2xxs_grid, sizeof(tg::iq2xxs_grid)},
                         {"iq2xs_grid", tg::iq2xs_grid, sizeof(tg::iq2xs_grid)},
                         {"iq2s_grid", tg::iq2s_grid, sizeof(tg::iq2s_grid)},
                         {"iq3xxs_grid", tg::iq3xxs_grid, sizeof(tg::iq3xxs_grid)},
                         {"iq3s_grid", tg::iq3s_grid, sizeof(tg::iq3s_grid)},
                         {"iq1s_grid", tg::iq1s_grid, sizeof(tg::iq1s_grid)}};
    const std::vector<View> cpp = cpp_view();
    for (int k = 0; k < 6; ++k) {
        size_t size = 0;
        const void * c = lm_test_common_table_c(3 + k, &size);
        ASSERT_NE(c, nullptr) << want[k].name;
        ASSERT_EQ(size, want[k].size) << "C " << want[k].name;
        EXPECT_EQ(std::memcmp(c, want[k].p, size), 0) << "C " << want[k].name;
        if (k == 5) break; // C++ has iq1s_grid_gpu instead (below)
        ASSERT_EQ(cpp[3 + k].size, want[k].size) << "C++ " << want[k].name;
        EXPECT_EQ(std::memcmp(cpp[3 + k].p, want[k].p, want[k].size), 0) << "C++ " << want[k].name;
    }
    size_t size = 0;
    EXPECT_EQ(lm_test_common_table_c(9, &size), nullptr);
}

// kmask_iq2xs[j] = 1 << j; ksigns_iq2xs[i] = i with bit 7 making the count of
// set bits even; ksigns64[i] spells those 8 bits out as 0x00 / 0xff bytes
TEST(CommonTables, SignTables) {
    const std::vector<View> cpp = cpp_view();
    for (int view = 0; view < 2; ++view) {
        const void * t[3];
        for (int k = 0; k < 3; ++k) {
            size_t size = 0;
            t[k] = view == 0 ? cpp[k].p : lm_test_common_table_c(k, &size);
            if (view == 1) {
                ASSERT_EQ(size, cpp[k].size) << cpp[k].name;
            }
        }
        const auto * kmask = static_cast<const uint8_t *>(t[0]);
        const auto * ksigns = static_cast<const uint8_t *>(t[1]);
        const auto * k64 = static_cast<const uint64_t *>(t[2]);
        for (int j = 0; j < 8; ++j) EXPECT_EQ(kmask[j], 1u << j) << "view " << view;
        for (unsigned i = 0; i < 128; ++i) {
            const unsigned s = tg::even8(i);
            uint64_t want = 0;
            for (int j = 0; j < 8; ++j) {
                if (s >> j & 1) want |= uint64_t{0xff} << (8 * j);
            }
            EXPECT_EQ(ksigns[i], s) << "view " << view << " i " << i;
            EXPECT_EQ(k64[i], want) << "view " << view << " i " << i;
        }
    }
}

// C++'s iq1s_grid_gpu: iq1s_grid's value v (-1, 0, 1) as v + 1, value j in the
// low nibble of byte j for j < 4 and in the high nibble of byte j - 4 after
TEST(CommonTables, Iq1sGridGpuPacksIq1sGrid) {
    static_assert(sizeof(iq1s_grid_gpu) == NGRID_IQ1S * sizeof(uint32_t));
    for (int i = 0; i < NGRID_IQ1S; ++i) {
        uint32_t want = 0;
        for (int j = 0; j < 8; ++j) {
            const int v = (int8_t) (tg::iq1s_grid[i] >> (8 * j));
            want |= (uint32_t) (v + 1) << (8 * (j % 4) + 4 * (j / 4));
        }
        EXPECT_EQ(iq1s_grid_gpu[i], want) << i;
    }
    EXPECT_EQ(NGRID_IQ1S, 2048);
    EXPECT_EQ(IQ1S_DELTA, 0.125f);
    EXPECT_EQ(IQ1M_DELTA, 0.125f);
}

} // namespace

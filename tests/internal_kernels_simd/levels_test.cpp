// Which kernel set the process chose. LMGGML_EXPECT_ISA names the level the
// runner knows this CPU has (scripts/test-arm64 sets it per qemu CPU model):
// a feature detection that misreads the CPU, or an emulator that ignored its
// -cpu option, would otherwise test a different level than intended and
// still pass.
#include "simd_test_util.h"

#include <cstdlib>

namespace {

using namespace simdtest;

TEST(SimdLevels, ChosenLevelIsTheExpectedOne) {
    const char * want = std::getenv("LMGGML_EXPECT_ISA");
    if (want == nullptr || *want == '\0') GTEST_SKIP() << "LMGGML_EXPECT_ISA not set";
    EXPECT_STREQ(arch::kernels().name, want);
    // the chosen level, and every level below it in its chain, can be built
    EXPECT_NE(arch::kernels_for(arch::kernels().isa), nullptr);
}

TEST(SimdLevels, EveryBuiltLevelKeepsTheScalarEntriesItDoesNotReplace) {
    // a level only adds kernels on top of the scalar set: no entry of the
    // scalar set may be missing from a higher level
    const arch::KernelSet & s = scalar_level();
    for (const arch::KernelSet * lv : vector_levels()) {
        for (int t = 0; t < LM_GGML_TYPE_COUNT; ++t) {
            if (s.vec_dot[t]) {
                EXPECT_NE(lv->vec_dot[t], nullptr) << lv->name << " vec_dot " << t;
            }
            if (s.from_float[t]) {
                EXPECT_NE(lv->from_float[t], nullptr) << lv->name << " from_float " << t;
            }
        }
        EXPECT_NE(lv->math.exp_sum, nullptr) << lv->name;
        EXPECT_NE(lv->attn_f16.scores, nullptr) << lv->name;
    }
}

} // namespace

// The CPU registry's get_proc_address answers every name ggml's CPU registry
// answers (cui-llama.rn 1.4.1), each with the function of that name.

#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

namespace {

void * lookup(const char * name) { return lm_ggml_backend_reg_get_proc_address(lm_ggml_backend_cpu_reg(), name); }

} // namespace

TEST(CpuProcAddress, ExportedFunctionsByName) {
    lm_ggml_backend_set_n_threads_t set_n_threads = lm_ggml_backend_cpu_set_n_threads;
    lm_ggml_backend_set_abort_callback_t set_abort = lm_ggml_backend_cpu_set_abort_callback;
    void (*numa_init)(enum lm_ggml_numa_strategy) = lm_ggml_numa_init;
    bool (*is_numa)(void) = lm_ggml_is_numa;
    lm_ggml_threadpool_t (*tp_new)(struct lm_ggml_threadpool_params *) = lm_ggml_threadpool_new;
    void (*tp_free)(lm_ggml_threadpool_t) = lm_ggml_threadpool_free;
    void (*set_tp)(lm_ggml_backend_t, lm_ggml_threadpool_t) = lm_ggml_backend_cpu_set_threadpool;

    EXPECT_EQ(lookup("lm_ggml_backend_set_n_threads"), (void *) set_n_threads);
    EXPECT_EQ(lookup("lm_ggml_backend_set_abort_callback"), (void *) set_abort);
    EXPECT_EQ(lookup("lm_ggml_backend_cpu_numa_init"), (void *) numa_init);
    EXPECT_EQ(lookup("lm_ggml_backend_cpu_is_numa"), (void *) is_numa);
    EXPECT_EQ(lookup("lm_ggml_threadpool_new"), (void *) tp_new);
    EXPECT_EQ(lookup("lm_ggml_threadpool_free"), (void *) tp_free);
    EXPECT_EQ(lookup("lm_ggml_backend_cpu_set_threadpool"), (void *) set_tp);
}

TEST(CpuProcAddress, IsNumaAnswersThroughThePointer) {
    auto fn = (bool (*)(void)) lookup("lm_ggml_backend_cpu_is_numa");
    ASSERT_NE(fn, nullptr);
    EXPECT_EQ(fn(), lm_ggml_is_numa());
}

// Not exported under their own names: checked by calling them.
TEST(CpuProcAddress, GetFeaturesListsTheDetectedFeatures) {
    auto fn = (lm_ggml_backend_get_features_t) lookup("lm_ggml_backend_get_features");
    ASSERT_NE(fn, nullptr);
    std::set<std::string> names;
    for (const lm_ggml_backend_feature * f = fn(lm_ggml_backend_cpu_reg()); f->name != nullptr; f++) {
        ASSERT_NE(f->value, nullptr) << f->name;
        names.insert(f->name);
    }
    EXPECT_EQ(names.count("AVX2") == 1, lm_ggml_cpu_has_avx2() != 0);
    EXPECT_EQ(names.count("SSE3") == 1, lm_ggml_cpu_has_sse3() != 0);
    EXPECT_EQ(names.count("NEON") == 1, lm_ggml_cpu_has_neon() != 0);
}

TEST(CpuProcAddress, ExtraBufferTypesAreANullTerminatedList) {
    auto fn = (lm_ggml_backend_dev_get_extra_bufts_t) lookup("lm_ggml_backend_dev_get_extra_bufts");
    ASSERT_NE(fn, nullptr);
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    lm_ggml_backend_buffer_type_t * list = fn(dev);
    ASSERT_NE(list, nullptr);
    int n = 0;
    for (; list[n] != nullptr && n < 16; n++) {
        EXPECT_GT(std::strlen(lm_ggml_backend_buft_name(list[n])), 0u);
        EXPECT_NE(list[n], lm_ggml_backend_cpu_buffer_type()); // extra: not the plain CPU type
    }
    EXPECT_LT(n, 16); // terminated
}

TEST(CpuProcAddress, UnknownNamesAreNull) {
    EXPECT_EQ(lookup("lm_ggml_backend_cpu_numa_init_"), nullptr);
    EXPECT_EQ(lookup("lm_ggml_threadpool_params_default"), nullptr); // not one of ggml's answers
    EXPECT_EQ(lookup(""), nullptr);
}

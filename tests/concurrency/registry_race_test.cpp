// SPEC §4 thread safety: the registry and device enumeration are safe to
// call from any thread, also while plugins are being loaded. Run under
// ThreadSanitizer by scripts/sanitize (build-tsan).
#include "conc_util.h"

#include "ggml-cpu.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

namespace {

// One round of every read-only registry query; failures are recorded.
// `min_devices` is a lower bound: devices may only be added meanwhile.
void enumerate_once(size_t min_devices, conc::Failures & fail) {
    const size_t n_dev = lm_ggml_backend_dev_count();
    if (n_dev < min_devices) fail.add("dev_count shrank to " + std::to_string(n_dev));
    for (size_t i = 0; i < n_dev; ++i) {
        lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_get(i);
        if (dev == nullptr) {
            fail.add("dev_get(" + std::to_string(i) + ") returned NULL below dev_count");
            continue;
        }
        const char * name = lm_ggml_backend_dev_name(dev);
        if (name == nullptr || lm_ggml_backend_dev_by_name(name) != dev) fail.add("dev_by_name(dev_name(d)) != d");
        if (lm_ggml_backend_dev_backend_reg(dev) == nullptr) fail.add("device without a reg");
    }
    const size_t n_reg = lm_ggml_backend_reg_count();
    for (size_t i = 0; i < n_reg; ++i) {
        lm_ggml_backend_reg_t reg = lm_ggml_backend_reg_get(i);
        if (reg == nullptr) {
            fail.add("reg_get below reg_count returned NULL");
            continue;
        }
        if (lm_ggml_backend_reg_by_name(lm_ggml_backend_reg_name(reg)) != reg)
            fail.add("reg_by_name(reg_name(r)) != r");
    }
    lm_ggml_backend_dev_t cpu = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    if (cpu == nullptr || cpu != lm_ggml_backend_dev_by_name("CPU")) fail.add("CPU device lookup disagrees");
    if (lm_ggml_backend_reg_by_name("CPU") != lm_ggml_backend_cpu_reg())
        fail.add("reg_by_name(CPU) is not the CPU reg");
    if (lm_ggml_backend_dev_by_name("no-such-device") != nullptr) fail.add("a device that does not exist was found");
}

TEST(RegistryRace, EnumerationFromManyThreads) {
    const size_t base = lm_ggml_backend_dev_count();
    ASSERT_GE(base, 1u);
    conc::Failures fail;
    std::atomic<int> backends_made{0};
    conc::run_together(8, [&](int t) {
        for (int it = 0; it < 200; ++it) {
            enumerate_once(base, fail);
            if ((it + t) % 50 == 0) {
                // initialising a backend also reads the registry
                lm_ggml_backend_t b = lm_ggml_backend_init_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU, nullptr);
                if (b == nullptr || !lm_ggml_backend_is_cpu(b)) fail.add("init_by_type(CPU) failed");
                if (b) backends_made.fetch_add(1);
                lm_ggml_backend_free(b);
            }
        }
    });
    EXPECT_EQ(fail.count(), 0) << fail.first();
    EXPECT_EQ(backends_made.load(), 8 * 4);
    EXPECT_EQ(lm_ggml_backend_dev_count(), base);
}

TEST(RegistryRace, EnumerationWhileLoadAllFromPath) {
    conc::ErrorCounter log;
    const size_t before = lm_ggml_backend_dev_count();
    const size_t regs_before = lm_ggml_backend_reg_count();
    conc::Failures fail;
    // threads 0-1 scan the plugin folder (racing each other: the plugin must
    // be registered exactly once); threads 2-7 enumerate meanwhile
    conc::run_together(8, [&](int t) {
        for (int it = 0; it < 40; ++it) {
            if (t < 2) {
                lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR);
            } else {
                enumerate_once(before, fail);
            }
        }
    });
    EXPECT_EQ(fail.count(), 0) << fail.first();
    lm_ggml_backend_reg_t refdev = lm_ggml_backend_reg_by_name("REFDEV");
    ASSERT_NE(refdev, nullptr) << "the plugin was not loaded";
    size_t n_refdev_regs = 0;
    for (size_t i = 0; i < lm_ggml_backend_reg_count(); ++i) {
        n_refdev_regs += lm_ggml_backend_reg_get(i) == refdev;
    }
    EXPECT_EQ(n_refdev_regs, 1u);
    // each plugin the scans registered (refdev, and opencl where it is
    // built) adds its devices once
    size_t expected = before;
    for (size_t i = regs_before; i < lm_ggml_backend_reg_count(); ++i) {
        expected += lm_ggml_backend_reg_dev_count(lm_ggml_backend_reg_get(i));
    }
    EXPECT_EQ(lm_ggml_backend_dev_count(), expected);
    // a plugin already registered is not an error, however the scans interleave
    EXPECT_EQ(log.errors.load(), 0) << "concurrent load_all_from_path logged errors";
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_name("REFDEV0");
    ASSERT_NE(dev, nullptr);
    lm_ggml_backend_t b = lm_ggml_backend_dev_init(dev, nullptr);
    EXPECT_NE(b, nullptr);
    lm_ggml_backend_free(b);
}

TEST(RegistryRace, ConcurrentLoadOfOneLibraryAgrees) {
    // every caller racing to load the same file gets the one registered reg
    conc::ErrorCounter log;
    for (int round = 0; round < 50; ++round) {
        lm_ggml_backend_reg_t got[4] = {};
        conc::run_together(4, [&](int t) { got[t] = lm_ggml_backend_load(conc::refdev_path()); });
        lm_ggml_backend_reg_t reg = lm_ggml_backend_reg_by_name("REFDEV");
        ASSERT_NE(reg, nullptr) << "round " << round;
        for (int t = 0; t < 4; ++t) {
            EXPECT_EQ(got[t], reg) << "round " << round << ", thread " << t;
        }
        size_t n = 0;
        for (size_t i = 0; i < lm_ggml_backend_reg_count(); ++i) n += lm_ggml_backend_reg_get(i) == reg;
        EXPECT_EQ(n, 1u) << "round " << round;
        lm_ggml_backend_unload(reg);
        EXPECT_EQ(lm_ggml_backend_reg_by_name("REFDEV"), nullptr);
    }
    EXPECT_EQ(log.errors.load(), 0);
}

} // namespace

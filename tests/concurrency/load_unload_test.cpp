// Repeated dlopen/dlclose of the refdev plugin through lm_ggml_backend_load /
// lm_ggml_backend_unload: every cycle registers the plugin's device, computes
// on it, frees everything and unloads; the registry returns to its previous
// state each time. A second test unloads and reloads while other threads
// enumerate through the calls that stay valid across an unload (lookups by
// name/type and counts; a device pointer obtained before an unload is not).
#include "conc_util.h"

#include "ggml-alloc.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

// Computes (a + b) * a on dev for a few values; true when exact.
bool compute_on(lm_ggml_backend_dev_t dev) {
    lm_ggml_backend_t backend = lm_ggml_backend_dev_init(dev, nullptr);
    if (!backend) return false;
    lm_ggml_init_params ip = {8 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    bool ok = ctx != nullptr;
    lm_ggml_gallocr_t galloc = nullptr;
    if (ok) {
        lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 8);
        lm_ggml_tensor * b = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 8);
        lm_ggml_tensor * out = lm_ggml_mul(ctx, lm_ggml_add(ctx, a, b), a);
        lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
        lm_ggml_build_forward_expand(g, out);
        galloc = lm_ggml_gallocr_new(lm_ggml_backend_get_default_buffer_type(backend));
        ok = galloc && lm_ggml_gallocr_alloc_graph(galloc, g);
        if (ok) {
            const float va[8] = {1, 2, 3, 4, -1, -2, 0.5f, 8};
            const float vb[8] = {2, 2, 2, 2, 3, 3, 3, 3};
            lm_ggml_backend_tensor_set(a, va, 0, sizeof(va));
            lm_ggml_backend_tensor_set(b, vb, 0, sizeof(vb));
            ok = lm_ggml_backend_graph_compute(backend, g) == LM_GGML_STATUS_SUCCESS;
            float got[8] = {};
            if (ok) lm_ggml_backend_tensor_get(out, got, 0, sizeof(got));
            for (int i = 0; ok && i < 8; ++i) ok = got[i] == (va[i] + vb[i]) * va[i];
        }
    }
    lm_ggml_gallocr_free(galloc);
    lm_ggml_free(ctx);
    lm_ggml_backend_free(backend);
    return ok;
}

// Unloads refdev if an earlier test of this process loaded it.
void start_without_refdev() {
    if (lm_ggml_backend_reg_t r = lm_ggml_backend_reg_by_name("REFDEV")) lm_ggml_backend_unload(r);
}

TEST(LoadUnload, HundredCyclesOfThePlugin) {
    conc::ErrorCounter log; // also keeps the loader's notices off the output
    start_without_refdev();
    const size_t base_devs = lm_ggml_backend_dev_count();
    const size_t base_regs = lm_ggml_backend_reg_count();
    int bad = 0;
    for (int cycle = 0; cycle < 100 && bad < 3; ++cycle) {
        lm_ggml_backend_reg_t reg = lm_ggml_backend_load(conc::refdev_path());
        if (reg == nullptr) {
            ADD_FAILURE() << "cycle " << cycle << ": load failed";
            ++bad;
            continue;
        }
        const bool registered = lm_ggml_backend_reg_count() == base_regs + 1 &&
                                lm_ggml_backend_dev_count() == base_devs + lm_ggml_backend_reg_dev_count(reg);
        lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_name("REFDEV0");
        const bool computed = dev != nullptr && compute_on(dev);
        lm_ggml_backend_unload(reg);
        const bool gone = lm_ggml_backend_reg_count() == base_regs && lm_ggml_backend_dev_count() == base_devs &&
                          lm_ggml_backend_dev_by_name("REFDEV0") == nullptr;
        if (!registered || !computed || !gone) {
            ADD_FAILURE() << "cycle " << cycle << ": registered=" << registered << " computed=" << computed
                          << " unregistered=" << gone;
            ++bad;
        }
    }
    EXPECT_EQ(log.errors.load(), 0);
}

TEST(LoadUnload, CyclesWhileOtherThreadsEnumerate) {
    conc::ErrorCounter log;
    start_without_refdev();
    const size_t base_devs = lm_ggml_backend_dev_count();
    conc::Failures fail;
    std::atomic<bool> done{false};
    conc::run_together(4, [&](int t) {
        if (t == 0) {
            for (int cycle = 0; cycle < 30; ++cycle) {
                lm_ggml_backend_reg_t reg = lm_ggml_backend_load(conc::refdev_path());
                if (!reg) {
                    fail.add("load failed in cycle " + std::to_string(cycle));
                    continue;
                }
                lm_ggml_backend_unload(reg);
            }
            done.store(true);
            return;
        }
        while (!done.load()) {
            const size_t n = lm_ggml_backend_dev_count();
            if (n != base_devs && n != base_devs + 1) fail.add("dev_count " + std::to_string(n));
            lm_ggml_backend_dev_t cpu = lm_ggml_backend_dev_by_name("CPU");
            if (cpu == nullptr || lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU) != cpu)
                fail.add("CPU lookup failed");
            // the answer may be either; the lookup itself must be safe
            (void) lm_ggml_backend_dev_by_name("REFDEV0");
            (void) lm_ggml_backend_reg_by_name("REFDEV");
            if (lm_ggml_backend_reg_count() < 1) fail.add("reg_count 0");
        }
    });
    EXPECT_EQ(fail.count(), 0) << fail.first();
    EXPECT_EQ(lm_ggml_backend_dev_count(), base_devs);
    EXPECT_EQ(log.errors.load(), 0);
}

} // namespace

// lm_ggml_backend_device_register: one more device in the global list, found
// by index, name and type; duplicates and NULL are refused with one error;
// a device of a registered backend leaves with it on unload.

#include "backend_test_utils.h"
#include "ggml-backend-impl.h"
#include "mini_backend.h"

#include <gtest/gtest.h>

using lmtest::BackendLogCapture;

namespace {

bool listed(lm_ggml_backend_dev_t dev) {
    for (size_t i = 0; i < lm_ggml_backend_dev_count(); i++) {
        if (lm_ggml_backend_dev_get(i) == dev) {
            return true;
        }
    }
    return false;
}

} // namespace

TEST(DeviceRegister, AddsADeviceWhoseRegistryIsNotRegistered) {
    minibk::Config cfg;
    cfg.dev_name = "DEVREG0";
    cfg.reg_name = "DEVREG";
    minibk::Mini mini = minibk::make(cfg);
    const size_t n_devs = lm_ggml_backend_dev_count();
    const size_t n_regs = lm_ggml_backend_reg_count();

    BackendLogCapture log;
    lm_ggml_backend_device_register(mini.dev);
    EXPECT_EQ(log.errors(), 0u) << log.text();
    EXPECT_EQ(lm_ggml_backend_dev_count(), n_devs + 1);
    EXPECT_EQ(lm_ggml_backend_reg_count(), n_regs);       // the device only, not its registry
    EXPECT_EQ(lm_ggml_backend_dev_get(n_devs), mini.dev); // appended
    EXPECT_EQ(lm_ggml_backend_dev_by_name("devreg0"), mini.dev);
    EXPECT_EQ(lm_ggml_backend_reg_by_name("DEVREG"), nullptr);

    lm_ggml_backend_t be = lm_ggml_backend_init_by_name("DEVREG0", nullptr);
    ASSERT_NE(be, nullptr); // usable through the registry like any device
    lm_ggml_backend_free(be);
}

TEST(DeviceRegister, RefusesDuplicatesAndNull) {
    minibk::Config cfg;
    cfg.dev_name = "DEVREG1";
    cfg.reg_name = "DEVREG_B";
    minibk::Mini mini = minibk::make(cfg);
    lm_ggml_backend_device_register(mini.dev);
    const size_t n_devs = lm_ggml_backend_dev_count();

    BackendLogCapture log;
    lm_ggml_backend_device_register(mini.dev);
    EXPECT_EQ(log.errors(), 1u) << log.text();
    EXPECT_EQ(lm_ggml_backend_dev_count(), n_devs);

    log.clear();
    lm_ggml_backend_device_register(nullptr);
    EXPECT_EQ(log.errors(), 1u) << log.text();
    EXPECT_EQ(lm_ggml_backend_dev_count(), n_devs);

    // the CPU device is registered with its backend already
    log.clear();
    lm_ggml_backend_device_register(lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU));
    EXPECT_EQ(log.errors(), 1u) << log.text();
    EXPECT_EQ(lm_ggml_backend_dev_count(), n_devs);
}

TEST(DeviceRegister, ASecondDeviceOfARegisteredBackendLeavesWithIt) {
    minibk::Config cfg;
    cfg.dev_name = "DEVREG2";
    cfg.reg_name = "DEVREG_C";
    minibk::Mini mini = minibk::make(cfg);
    lm_ggml_backend_register(mini.reg);
    ASSERT_TRUE(listed(mini.dev));

    // another device object of the same registry (same interface and context)
    static lm_ggml_backend_device twin;
    twin = *mini.dev;
    const size_t n_devs = lm_ggml_backend_dev_count();
    lm_ggml_backend_device_register(&twin);
    EXPECT_EQ(lm_ggml_backend_dev_count(), n_devs + 1);
    EXPECT_TRUE(listed(&twin));

    lm_ggml_backend_unload(mini.reg);
    EXPECT_FALSE(listed(mini.dev));
    EXPECT_FALSE(listed(&twin));
    EXPECT_EQ(lm_ggml_backend_dev_count(), n_devs - 1);
}

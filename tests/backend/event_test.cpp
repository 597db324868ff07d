// Events: unsupported devices answer NULL with one line; a device with
// events (refdev, loaded from the plugin directory) records, waits and syncs.

#include "backend_test_utils.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "mini_backend.h"

#include <gtest/gtest.h>

using lmtest::BackendLogCapture;

TEST(Event, UnsupportedDeviceAndStreamAreReported) {
    minibk::Mini mini = minibk::make();
    {
        BackendLogCapture log;
        EXPECT_EQ(lm_ggml_backend_event_new(mini.dev), nullptr);
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    ASSERT_NE(cpu, nullptr);
    {
        BackendLogCapture log;
        EXPECT_EQ(lm_ggml_backend_event_new(lm_ggml_backend_get_device(cpu)), nullptr); // CPU has no events
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    // a stream without event_record/event_wait, given some event object
    lm_ggml_backend_event fake = {lm_ggml_backend_get_device(cpu), nullptr};
    {
        BackendLogCapture log;
        lm_ggml_backend_event_record(&fake, cpu);
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    {
        BackendLogCapture log;
        lm_ggml_backend_event_wait(cpu, &fake);
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    {
        BackendLogCapture log;
        lm_ggml_backend_event_synchronize(&fake); // device has no event_synchronize
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    lm_ggml_backend_free(cpu);
}

TEST(Event, NullArguments) {
    struct Call {
        const char * what;
        void (*fn)();
    };
    const Call calls[] = {
        {"new", [] { EXPECT_EQ(lm_ggml_backend_event_new(nullptr), nullptr); }},
        {"record", [] { lm_ggml_backend_event_record(nullptr, nullptr); }},
        {"synchronize", [] { lm_ggml_backend_event_synchronize(nullptr); }},
        {"wait", [] { lm_ggml_backend_event_wait(nullptr, nullptr); }},
    };
    for (const Call & c : calls) {
        BackendLogCapture log;
        c.fn();
        EXPECT_EQ(log.errors(), 1u) << c.what << ": " << log.text();
    }
    BackendLogCapture log;
    lm_ggml_backend_event_free(nullptr); // like free(NULL)
    EXPECT_EQ(log.lines(), 0u);
}

TEST(Event, RefdevRecordsWaitsAndSynchronizes) {
    lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR);
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_name("REFDEV0");
    ASSERT_NE(dev, nullptr) << "refdev plugin not found in " << LMGGML_PLUGIN_DIR;
    lm_ggml_backend_dev_props props;
    lm_ggml_backend_dev_get_props(dev, &props);
    EXPECT_TRUE(props.caps.events);

    lm_ggml_backend_t s1 = lm_ggml_backend_dev_init(dev, nullptr);
    lm_ggml_backend_t s2 = lm_ggml_backend_dev_init(dev, nullptr);
    ASSERT_NE(s1, nullptr);
    ASSERT_NE(s2, nullptr);
    lm_ggml_backend_event_t ev = lm_ggml_backend_event_new(dev);
    ASSERT_NE(ev, nullptr);
    EXPECT_EQ(ev->device, dev);

    BackendLogCapture log;
    lm_ggml_backend_event_record(ev, s1);
    lm_ggml_backend_event_wait(s2, ev);
    lm_ggml_backend_event_synchronize(ev);
    EXPECT_EQ(log.lines(), 0u) << log.text();

    // recording on a stream of another device is refused
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    minibk::Mini mini = minibk::make();
    lm_ggml_backend_t other = lm_ggml_backend_dev_init(mini.dev, nullptr);
    other->iface.event_record = [](lm_ggml_backend_t, lm_ggml_backend_event_t) {
        ADD_FAILURE() << "must not be called";
    };
    lm_ggml_backend_event_record(ev, other);
    EXPECT_EQ(log.errors(), 1u) << log.text();

    lm_ggml_backend_event_free(ev);
    lm_ggml_backend_free(other);
    lm_ggml_backend_free(cpu);
    lm_ggml_backend_free(s1);
    lm_ggml_backend_free(s2);
}

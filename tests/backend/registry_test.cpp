// Devices and the registry: the built-in CPU backend is there on first use;
// registering a backend adds its devices; lookups are case-insensitive;
// enumeration is safe from several threads; unload removes devices.

#include "backend_test_utils.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "mini_backend.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using lmtest::BackendLogCapture;

TEST(Registry, CpuIsRegisteredOnFirstUse) {
    ASSERT_GE(lm_ggml_backend_reg_count(), 1u);
    lm_ggml_backend_reg_t cpu = lm_ggml_backend_reg_by_name("CPU");
    ASSERT_NE(cpu, nullptr);
    EXPECT_EQ(cpu, lm_ggml_backend_cpu_reg());
    EXPECT_EQ(lm_ggml_backend_reg_by_name("cpu"), cpu); // case-insensitive
    EXPECT_EQ(lm_ggml_backend_reg_by_name("Cp"), nullptr);
    EXPECT_EQ(lm_ggml_backend_reg_by_name("nonexistent"), nullptr);
    EXPECT_STREQ(lm_ggml_backend_reg_name(cpu), "CPU");

    bool found = false;
    for (size_t i = 0; i < lm_ggml_backend_reg_count(); i++) {
        found |= lm_ggml_backend_reg_get(i) == cpu;
    }
    EXPECT_TRUE(found);

    ASSERT_GE(lm_ggml_backend_reg_dev_count(cpu), 1u);
    lm_ggml_backend_dev_t dev = lm_ggml_backend_reg_dev_get(cpu, 0);
    ASSERT_NE(dev, nullptr);
    EXPECT_EQ(lm_ggml_backend_dev_by_name("cpu"), dev);
    EXPECT_EQ(lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU), dev);
    EXPECT_EQ(lm_ggml_backend_dev_backend_reg(dev), cpu);
    EXPECT_NE(lm_ggml_backend_reg_get_proc_address(cpu, "lm_ggml_backend_set_n_threads"), nullptr);
    EXPECT_EQ(lm_ggml_backend_reg_get_proc_address(cpu, "no_such_function"), nullptr);
}

TEST(Registry, CpuDeviceQueries) {
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    ASSERT_NE(dev, nullptr);
    EXPECT_STREQ(lm_ggml_backend_dev_name(dev), "CPU");
    EXPECT_GT(std::strlen(lm_ggml_backend_dev_description(dev)), 0u);
    EXPECT_EQ(lm_ggml_backend_dev_type(dev), LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    size_t free = 0, total = 0;
    lm_ggml_backend_dev_memory(dev, &free, &total);
    EXPECT_GT(total, 0u);
    EXPECT_LE(free, total);

    lm_ggml_backend_dev_props props;
    lm_ggml_backend_dev_get_props(dev, &props);
    EXPECT_STREQ(props.name, lm_ggml_backend_dev_name(dev));
    EXPECT_EQ(props.type, LM_GGML_BACKEND_DEVICE_TYPE_CPU);

    lm_ggml_backend_buffer_type_t buft = lm_ggml_backend_dev_buffer_type(dev);
    ASSERT_NE(buft, nullptr);
    EXPECT_TRUE(lm_ggml_backend_buft_is_host(buft));
    EXPECT_TRUE(lm_ggml_backend_dev_supports_buft(dev, buft));

    // wrap host memory, if the device offers it, and see tensors land inside it
    if (props.caps.buffer_from_host_ptr) {
        alignas(64) static float host[64];
        lm_ggml_backend_buffer_t b = lm_ggml_backend_dev_buffer_from_host_ptr(dev, host, sizeof(host), sizeof(host));
        ASSERT_NE(b, nullptr);
        EXPECT_EQ(lm_ggml_backend_buffer_get_base(b), (void *) host);
        EXPECT_TRUE(lm_ggml_backend_buffer_is_host(b));
        lm_ggml_backend_buffer_free(b);
    }

    lm_ggml_backend_t be = lm_ggml_backend_dev_init(dev, nullptr);
    ASSERT_NE(be, nullptr);
    EXPECT_EQ(lm_ggml_backend_get_device(be), dev);
    lm_ggml_backend_free(be);
}

TEST(Registry, InitByNameTypeAndBest) {
    lm_ggml_backend_t be = lm_ggml_backend_init_by_name("CPU", nullptr);
    ASSERT_NE(be, nullptr);
    EXPECT_STREQ(lm_ggml_backend_name(be), "CPU");
    lm_ggml_backend_free(be);

    be = lm_ggml_backend_init_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU, nullptr);
    ASSERT_NE(be, nullptr);
    lm_ggml_backend_free(be);

    // (other tests of this binary may have loaded refdev, a GPU, into the process)
    const bool has_gpu = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_GPU) != nullptr;
    be = lm_ggml_backend_init_best();
    ASSERT_NE(be, nullptr);
    EXPECT_EQ(lm_ggml_backend_dev_type(lm_ggml_backend_get_device(be)),
              has_gpu ? LM_GGML_BACKEND_DEVICE_TYPE_GPU : LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    lm_ggml_backend_free(be);

    BackendLogCapture log;
    EXPECT_EQ(lm_ggml_backend_init_by_name("NOSUCHDEV", nullptr), nullptr);
    EXPECT_EQ(log.errors(), 1u) << log.text();
    if (!has_gpu) {
        log.clear();
        EXPECT_EQ(lm_ggml_backend_init_by_type(LM_GGML_BACKEND_DEVICE_TYPE_GPU, nullptr), nullptr);
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
}

TEST(Registry, RegisterAddsDevicesAndUnloadRemovesThem) {
    const size_t regs0 = lm_ggml_backend_reg_count();
    const size_t devs0 = lm_ggml_backend_dev_count();
    lm_ggml_backend_dev_t accel0 = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_ACCEL);
    minibk::Mini mini = minibk::make({.dev_name = "MINIREG0", .reg_name = "MINIREG"});
    lm_ggml_backend_register(mini.reg);
    EXPECT_EQ(lm_ggml_backend_reg_count(), regs0 + 1);
    EXPECT_EQ(lm_ggml_backend_dev_count(), devs0 + 1);
    EXPECT_EQ(lm_ggml_backend_reg_by_name("minireg"), mini.reg);
    EXPECT_EQ(lm_ggml_backend_dev_by_name("MINIREG0"), mini.dev);
    EXPECT_EQ(lm_ggml_backend_dev_get(devs0), mini.dev); // appended in order
    if (accel0 == nullptr) {                             // the first of its type
        EXPECT_EQ(lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_ACCEL), mini.dev);
    }

    lm_ggml_backend_t be = lm_ggml_backend_init_by_name("minireg0", nullptr);
    ASSERT_NE(be, nullptr);
    EXPECT_EQ(lm_ggml_backend_get_device(be), mini.dev);
    lm_ggml_backend_free(be);

    // registering twice, NULL, or another API version: refused, one line each
    lm_ggml_backend_reg bad = *mini.reg;
    bad.api_version = LM_GGML_BACKEND_API_VERSION + 1;
    for (lm_ggml_backend_reg_t r : {mini.reg, (lm_ggml_backend_reg_t) nullptr, &bad}) {
        BackendLogCapture log;
        lm_ggml_backend_register(r);
        EXPECT_EQ(log.errors(), 1u) << log.text();
        EXPECT_EQ(lm_ggml_backend_reg_count(), regs0 + 1);
    }

    lm_ggml_backend_unload(mini.reg);
    EXPECT_EQ(lm_ggml_backend_reg_count(), regs0);
    EXPECT_EQ(lm_ggml_backend_dev_count(), devs0);
    EXPECT_EQ(lm_ggml_backend_dev_by_name("MINIREG0"), nullptr);
    EXPECT_EQ(lm_ggml_backend_reg_by_name("MINIREG"), nullptr);

    BackendLogCapture log;
    lm_ggml_backend_unload(mini.reg); // no longer registered
    EXPECT_EQ(log.errors(), 1u) << log.text();
}

TEST(Registry, MiniDeviceGetsComposedProps) {
    minibk::Mini mini = minibk::make(); // get_props NULL
    lm_ggml_backend_dev_props props;
    std::memset(&props, 0xFF, sizeof(props));
    lm_ggml_backend_dev_get_props(mini.dev, &props);
    EXPECT_STREQ(props.name, "MINI0");
    EXPECT_STREQ(props.description, "minimal test device");
    EXPECT_EQ(props.memory_free, 1000u);
    EXPECT_EQ(props.memory_total, 2000u);
    EXPECT_EQ(props.type, LM_GGML_BACKEND_DEVICE_TYPE_ACCEL);
    EXPECT_FALSE(props.caps.async);
    EXPECT_FALSE(props.caps.host_buffer);
    EXPECT_FALSE(props.caps.buffer_from_host_ptr);
    EXPECT_FALSE(props.caps.events);

    BackendLogCapture log;
    EXPECT_EQ(lm_ggml_backend_dev_host_buffer_type(mini.dev), nullptr); // optional: a silent NULL
    EXPECT_EQ(lm_ggml_backend_reg_get_proc_address(mini.reg, "anything"), nullptr);
    EXPECT_EQ(log.lines(), 0u) << log.text();
    float host[4];
    EXPECT_EQ(lm_ggml_backend_dev_buffer_from_host_ptr(mini.dev, host, sizeof(host), sizeof(host)), nullptr);
    EXPECT_EQ(log.errors(), 1u) << log.text();
}

TEST(Registry, OutOfRangeAndNullArguments) {
    struct Call {
        const char * what;
        void (*fn)();
    };
    const Call calls[] = {
        {"reg_get", [] { EXPECT_EQ(lm_ggml_backend_reg_get(1000), nullptr); }},
        {"dev_get", [] { EXPECT_EQ(lm_ggml_backend_dev_get(1000), nullptr); }},
        {"reg_dev_get", [] { EXPECT_EQ(lm_ggml_backend_reg_dev_get(lm_ggml_backend_cpu_reg(), 1000), nullptr); }},
        {"reg_by_name", [] { EXPECT_EQ(lm_ggml_backend_reg_by_name(nullptr), nullptr); }},
        {"dev_by_name", [] { EXPECT_EQ(lm_ggml_backend_dev_by_name(nullptr), nullptr); }},
        {"init_by_name", [] { EXPECT_EQ(lm_ggml_backend_init_by_name(nullptr, nullptr), nullptr); }},
        {"reg_name", [] { EXPECT_STREQ(lm_ggml_backend_reg_name(nullptr), "NULL"); }},
        {"reg_dev_count", [] { EXPECT_EQ(lm_ggml_backend_reg_dev_count(nullptr), 0u); }},
        {"reg_get_proc_address", [] { EXPECT_EQ(lm_ggml_backend_reg_get_proc_address(nullptr, "x"), nullptr); }},
        {"dev_name", [] { EXPECT_STREQ(lm_ggml_backend_dev_name(nullptr), "NULL"); }},
        {"dev_description", [] { EXPECT_STREQ(lm_ggml_backend_dev_description(nullptr), "NULL"); }},
        {"dev_memory",
         [] {
             size_t f = 7, t = 7;
             lm_ggml_backend_dev_memory(nullptr, &f, &t);
             EXPECT_EQ(f + t, 0u);
         }},
        {"dev_type", [] { lm_ggml_backend_dev_type(nullptr); }},
        {"dev_get_props",
         [] {
             lm_ggml_backend_dev_props p;
             lm_ggml_backend_dev_get_props(nullptr, &p);
             EXPECT_EQ(p.name, nullptr);
         }},
        {"dev_backend_reg", [] { EXPECT_EQ(lm_ggml_backend_dev_backend_reg(nullptr), nullptr); }},
        {"dev_init", [] { EXPECT_EQ(lm_ggml_backend_dev_init(nullptr, nullptr), nullptr); }},
        {"dev_buffer_type", [] { EXPECT_EQ(lm_ggml_backend_dev_buffer_type(nullptr), nullptr); }},
        {"dev_host_buffer_type", [] { EXPECT_EQ(lm_ggml_backend_dev_host_buffer_type(nullptr), nullptr); }},
        {"dev_buffer_from_host_ptr",
         [] { EXPECT_EQ(lm_ggml_backend_dev_buffer_from_host_ptr(nullptr, nullptr, 0, 0), nullptr); }},
        {"dev_supports_op", [] { EXPECT_FALSE(lm_ggml_backend_dev_supports_op(nullptr, nullptr)); }},
        {"dev_supports_buft", [] { EXPECT_FALSE(lm_ggml_backend_dev_supports_buft(nullptr, nullptr)); }},
        {"dev_offload_op", [] { EXPECT_FALSE(lm_ggml_backend_dev_offload_op(nullptr, nullptr)); }},
        {"unload", [] { lm_ggml_backend_unload(nullptr); }},
        {"load", [] { EXPECT_EQ(lm_ggml_backend_load(nullptr), nullptr); }},
        {"load_all_from_path", [] { lm_ggml_backend_load_all_from_path(nullptr); }},
    };
    lm_ggml_backend_reg_count(); // build the registry before capturing
    for (const Call & c : calls) {
        BackendLogCapture log;
        c.fn();
        EXPECT_EQ(log.errors(), 1u) << c.what << ": " << log.text();
        EXPECT_EQ(log.lines(), 1u) << c.what << ": " << log.text();
    }
}

TEST(Registry, ConcurrentEnumerationWhileRegistering) {
    std::atomic<bool> stop{false};
    std::atomic<int> bad{0};
    std::vector<std::thread> readers;
    for (int r = 0; r < 3; r++) {
        readers.emplace_back([&] {
            while (!stop.load()) {
                const size_t n = lm_ggml_backend_dev_count();
                if (n == 0 || lm_ggml_backend_dev_by_name("CPU") == nullptr ||
                    lm_ggml_backend_reg_by_name("CPU") == nullptr) {
                    bad++;
                }
                for (size_t i = 0; i < lm_ggml_backend_reg_count(); i++) {
                    (void) lm_ggml_backend_reg_name(lm_ggml_backend_reg_get(i)); // regs only grow here
                }
            }
        });
    }
    const size_t devs0 = lm_ggml_backend_dev_count();
    std::vector<minibk::Mini> minis;
    static const char * names[] = {"T0", "T1", "T2", "T3", "T4", "T5", "T6", "T7"};
    for (const char * name : names) {
        minis.push_back(minibk::make({.dev_name = name, .reg_name = name}));
        lm_ggml_backend_register(minis.back().reg);
    }
    stop = true;
    for (std::thread & t : readers) {
        t.join();
    }
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(lm_ggml_backend_dev_count(), devs0 + 8);
    for (const char * name : names) {
        EXPECT_NE(lm_ggml_backend_dev_by_name(name), nullptr) << name;
    }
}

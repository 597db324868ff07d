// A tiny backend plugin for the dynamic-loading tests, compiled once per
// case with different macros:
//   TP_SCORE=n        export lm_ggml_backend_score returning n (absent: no score symbol)
//   TP_API_VERSION=n  the api_version its reg reports (default: the current one)
//   TP_NO_INIT        do not export lm_ggml_backend_init
//   TP_REG_NAME, TP_DEV_NAME  names of its reg and of its one device
// Every reg/device function bumps testplugin_calls, so a test can prove the
// loader never called into a refused plugin.

#include "ggml-backend-impl.h"

#ifndef TP_API_VERSION
#define TP_API_VERSION LM_GGML_BACKEND_API_VERSION
#endif

extern "C" {
__attribute__((visibility("default"))) int testplugin_calls = 0;
}

namespace {

const char * dev_get_name(lm_ggml_backend_dev_t) {
    testplugin_calls++;
    return TP_DEV_NAME;
}

const char * dev_get_description(lm_ggml_backend_dev_t) {
    testplugin_calls++;
    return "lmggml test plugin device";
}

void dev_get_memory(lm_ggml_backend_dev_t, size_t * free, size_t * total) {
    testplugin_calls++;
    *free = 0;
    *total = 0;
}

enum lm_ggml_backend_dev_type dev_get_type(lm_ggml_backend_dev_t) {
    testplugin_calls++;
    return LM_GGML_BACKEND_DEVICE_TYPE_ACCEL;
}

lm_ggml_backend_reg_t get_reg();

// only the slots the registry needs; everything optional stays NULL
lm_ggml_backend_device g_device = {
    .iface =
        {
            .get_name = dev_get_name,
            .get_description = dev_get_description,
            .get_memory = dev_get_memory,
            .get_type = dev_get_type,
            .get_props = nullptr,
            .init_backend = nullptr,
            .get_buffer_type = nullptr,
            .get_host_buffer_type = nullptr,
            .buffer_from_host_ptr = nullptr,
            .supports_op = nullptr,
            .supports_buft = nullptr,
            .offload_op = nullptr,
            .event_new = nullptr,
            .event_free = nullptr,
            .event_synchronize = nullptr,
        },
    .reg = nullptr, // set in get_reg
    .context = nullptr,
};

const char * reg_get_name(lm_ggml_backend_reg_t) {
    testplugin_calls++;
    return TP_REG_NAME;
}

size_t reg_get_device_count(lm_ggml_backend_reg_t) {
    testplugin_calls++;
    return 1;
}

lm_ggml_backend_dev_t reg_get_device(lm_ggml_backend_reg_t, size_t index) {
    testplugin_calls++;
    return index == 0 ? &g_device : nullptr;
}

[[maybe_unused]] lm_ggml_backend_reg_t get_reg() {
    static lm_ggml_backend_reg reg = {
        .api_version = TP_API_VERSION,
        .iface =
            {
                .get_name = reg_get_name,
                .get_device_count = reg_get_device_count,
                .get_device = reg_get_device,
                .get_proc_address = nullptr,
            },
        .context = nullptr,
    };
    g_device.reg = &reg;
    return &reg;
}

[[maybe_unused]] int get_score() {
#ifdef TP_SCORE
    return TP_SCORE;
#else
    return 0;
#endif
}

} // namespace

#ifndef TP_NO_INIT
LM_GGML_BACKEND_DL_IMPL(get_reg)
#endif
#ifdef TP_SCORE
LM_GGML_BACKEND_DL_SCORE_IMPL(get_score)
#endif

// Devices and registries: the public query wrappers around the seed's
// lm_ggml_backend_device_i and lm_ggml_backend_reg_i. (Enumeration of all
// registered backends lives in registry.cpp.)

#include "backend/backend-internal.h"

#include <cstring>

// ---------------------------------------------------------------- device

const char * lm_ggml_backend_dev_name(lm_ggml_backend_dev_t device) {
    LMGGML_CHECK_ARG(device, "NULL");
    if (device->iface.get_name == nullptr) {
        return "(unnamed)";
    }
    return device->iface.get_name(device);
}

const char * lm_ggml_backend_dev_description(lm_ggml_backend_dev_t device) {
    LMGGML_CHECK_ARG(device, "NULL");
    if (device->iface.get_description == nullptr) {
        return lm_ggml_backend_dev_name(device);
    }
    return device->iface.get_description(device);
}

void lm_ggml_backend_dev_memory(lm_ggml_backend_dev_t device, size_t * free, size_t * total) {
    // outputs are zeroed first so a failed call never leaves garbage behind
    if (free != nullptr) {
        *free = 0;
    }
    if (total != nullptr) {
        *total = 0;
    }
    LMGGML_CHECK_ARG_VOID(device);
    LMGGML_CHECK_ARG_VOID(free);
    LMGGML_CHECK_ARG_VOID(total);
    if (device->iface.get_memory != nullptr) {
        device->iface.get_memory(device, free, total);
    }
}

enum lm_ggml_backend_dev_type lm_ggml_backend_dev_type(lm_ggml_backend_dev_t device) {
    LMGGML_CHECK_ARG(device, LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    if (device->iface.get_type == nullptr) {
        LM_GGML_LOG_ERROR("%s: device %s: has no get_type\n", __func__, lm_ggml_backend_dev_name(device));
        return LM_GGML_BACKEND_DEVICE_TYPE_CPU;
    }
    return device->iface.get_type(device);
}

void lm_ggml_backend_dev_get_props(lm_ggml_backend_dev_t device, struct lm_ggml_backend_dev_props * props) {
    LMGGML_CHECK_ARG_VOID(props);
    std::memset(props, 0, sizeof(*props));
    LMGGML_CHECK_ARG_VOID(device);
    if (device->iface.get_props != nullptr) {
        device->iface.get_props(device, props);
        return;
    }
    // no get_props: assemble the same answer from the individual queries
    props->name = lm_ggml_backend_dev_name(device);
    props->description = lm_ggml_backend_dev_description(device);
    lm_ggml_backend_dev_memory(device, &props->memory_free, &props->memory_total);
    props->type = lm_ggml_backend_dev_type(device);
    props->caps = {
        .async = false,
        .host_buffer = device->iface.get_host_buffer_type != nullptr,
        .buffer_from_host_ptr = device->iface.buffer_from_host_ptr != nullptr,
        .events = device->iface.event_new != nullptr,
    };
}

lm_ggml_backend_reg_t lm_ggml_backend_dev_backend_reg(lm_ggml_backend_dev_t device) {
    LMGGML_CHECK_ARG(device, nullptr);
    return device->reg;
}

lm_ggml_backend_t lm_ggml_backend_dev_init(lm_ggml_backend_dev_t device, const char * params) {
    LMGGML_CHECK_ARG(device, nullptr);
    if (device->iface.init_backend == nullptr) {
        LM_GGML_LOG_ERROR("%s: device %s: has no init_backend\n", __func__, lm_ggml_backend_dev_name(device));
        return nullptr;
    }
    try {
        return device->iface.init_backend(device, params);
    } catch (...) {
        LM_GGML_LOG_ERROR("%s: device %s: backend initialization failed\n", __func__, lm_ggml_backend_dev_name(device));
        return nullptr;
    }
}

lm_ggml_backend_buffer_type_t lm_ggml_backend_dev_buffer_type(lm_ggml_backend_dev_t device) {
    LMGGML_CHECK_ARG(device, nullptr);
    if (device->iface.get_buffer_type == nullptr) {
        LM_GGML_LOG_ERROR("%s: device %s: has no buffer type\n", __func__, lm_ggml_backend_dev_name(device));
        return nullptr;
    }
    return device->iface.get_buffer_type(device);
}

lm_ggml_backend_buffer_type_t lm_ggml_backend_dev_host_buffer_type(lm_ggml_backend_dev_t device) {
    LMGGML_CHECK_ARG(device, nullptr);
    if (device->iface.get_host_buffer_type == nullptr) {
        return nullptr; // optional: callers probe for it
    }
    return device->iface.get_host_buffer_type(device);
}

lm_ggml_backend_buffer_t lm_ggml_backend_dev_buffer_from_host_ptr(lm_ggml_backend_dev_t device, void * ptr, size_t size,
                                                                  size_t max_tensor_size) {
    LMGGML_CHECK_ARG(device, nullptr);
    LMGGML_CHECK_ARG(ptr, nullptr);
    if (device->iface.buffer_from_host_ptr == nullptr) {
        LM_GGML_LOG_ERROR("%s: device %s: cannot wrap host memory\n", __func__, lm_ggml_backend_dev_name(device));
        return nullptr;
    }
    try {
        return device->iface.buffer_from_host_ptr(device, ptr, size, max_tensor_size);
    } catch (...) {
        LM_GGML_LOG_ERROR("%s: device %s: wrapping host memory failed\n", __func__, lm_ggml_backend_dev_name(device));
        return nullptr;
    }
}

bool lm_ggml_backend_dev_supports_op(lm_ggml_backend_dev_t device, const struct lm_ggml_tensor * op) {
    LMGGML_CHECK_ARG(device, false);
    LMGGML_CHECK_ARG(op, false);
    if (device->iface.supports_op == nullptr) {
        return false;
    }
    return device->iface.supports_op(device, op);
}

bool lm_ggml_backend_dev_supports_buft(lm_ggml_backend_dev_t device, lm_ggml_backend_buffer_type_t buft) {
    LMGGML_CHECK_ARG(device, false);
    LMGGML_CHECK_ARG(buft, false);
    if (device->iface.supports_buft == nullptr) {
        return buft->device == device; // at least its own memory
    }
    return device->iface.supports_buft(device, buft);
}

bool lm_ggml_backend_dev_offload_op(lm_ggml_backend_dev_t device, const struct lm_ggml_tensor * op) {
    LMGGML_CHECK_ARG(device, false);
    LMGGML_CHECK_ARG(op, false);
    if (device->iface.offload_op == nullptr) {
        return false;
    }
    return device->iface.offload_op(device, op);
}

// ---------------------------------------------------------------- reg

const char * lm_ggml_backend_reg_name(lm_ggml_backend_reg_t reg) {
    LMGGML_CHECK_ARG(reg, "NULL");
    if (reg->iface.get_name == nullptr) {
        return "(unnamed)";
    }
    return reg->iface.get_name(reg);
}

size_t lm_ggml_backend_reg_dev_count(lm_ggml_backend_reg_t reg) {
    LMGGML_CHECK_ARG(reg, 0);
    if (reg->iface.get_device_count == nullptr) {
        return 0;
    }
    return reg->iface.get_device_count(reg);
}

lm_ggml_backend_dev_t lm_ggml_backend_reg_dev_get(lm_ggml_backend_reg_t reg, size_t index) {
    LMGGML_CHECK_ARG(reg, nullptr);
    const size_t count = lm_ggml_backend_reg_dev_count(reg);
    if (index >= count || reg->iface.get_device == nullptr) {
        LM_GGML_LOG_ERROR("%s: reg %s: device index %zu out of range (%zu devices)\n", __func__,
                          lm_ggml_backend_reg_name(reg), index, count);
        return nullptr;
    }
    return reg->iface.get_device(reg, index);
}

void * lm_ggml_backend_reg_get_proc_address(lm_ggml_backend_reg_t reg, const char * name) {
    LMGGML_CHECK_ARG(reg, nullptr);
    LMGGML_CHECK_ARG(name, nullptr);
    if (reg->iface.get_proc_address == nullptr) {
        return nullptr; // optional: callers probe for extensions
    }
    return reg->iface.get_proc_address(reg, name);
}

#pragma once
// Device enumeration for tests that run on every registered device.

#include "ggml-backend.h"

#include <string>
#include <vector>

namespace lmtest {

struct DeviceInfo {
    size_t index; // lm_ggml_backend_dev_get(index)
    lm_ggml_backend_dev_t dev;
    std::string name;       // lm_ggml_backend_dev_name
    bool is_cpu;            // the built-in CPU backend's device
    bool has_set_n_threads; // its reg exports "lm_ggml_backend_set_n_threads"
};

// Loads every backend plugin in dir once per process (later calls do nothing).
void load_backends_once(const char * dir);

// The registered devices, in registry order.
std::vector<DeviceInfo> list_devices();

// Sets the thread count through the device reg's "lm_ggml_backend_set_n_threads"
// proc address; false if the reg does not export it.
bool set_n_threads(lm_ggml_backend_dev_t dev, lm_ggml_backend_t backend, int n_threads);

} // namespace lmtest

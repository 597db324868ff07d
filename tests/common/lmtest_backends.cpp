#include "lmtest_backends.h"

#include "ggml-cpu.h"

#include <mutex>

namespace lmtest {

void load_backends_once(const char * dir) {
    static std::once_flag once;
    std::call_once(once, [dir] { lm_ggml_backend_load_all_from_path(dir); });
}

namespace {

lm_ggml_backend_set_n_threads_t threads_fn(lm_ggml_backend_dev_t dev) {
    lm_ggml_backend_reg_t reg = lm_ggml_backend_dev_backend_reg(dev);
    if (reg == nullptr) {
        return nullptr;
    }
    return reinterpret_cast<lm_ggml_backend_set_n_threads_t>(
        lm_ggml_backend_reg_get_proc_address(reg, "lm_ggml_backend_set_n_threads"));
}

} // namespace

std::vector<DeviceInfo> list_devices() {
    std::vector<DeviceInfo> out;
    lm_ggml_backend_reg_t cpu_reg = lm_ggml_backend_cpu_reg();
    const size_t n = lm_ggml_backend_dev_count();
    for (size_t i = 0; i < n; ++i) {
        lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_get(i);
        if (dev == nullptr) {
            continue;
        }
        const char * name = lm_ggml_backend_dev_name(dev);
        out.push_back({i, dev, name ? name : "unnamed",
                       cpu_reg != nullptr && lm_ggml_backend_dev_backend_reg(dev) == cpu_reg,
                       threads_fn(dev) != nullptr});
    }
    return out;
}

bool set_n_threads(lm_ggml_backend_dev_t dev, lm_ggml_backend_t backend, int n_threads) {
    lm_ggml_backend_set_n_threads_t fn = threads_fn(dev);
    if (fn == nullptr) {
        return false;
    }
    fn(backend, n_threads);
    return true;
}

} // namespace lmtest

// The backend registry: every registered backend (reg) and its devices, in
// registration order. Built lazily on first use with the built-in CPU
// backend; plugins are added by the loader (dl-loader.cpp). All access goes
// through one mutex so enumeration is safe from any thread. The mutex is
// recursive because registering calls into backend code (device counts,
// names) which may itself query the registry.

#include "backend/backend-internal.h"
#include "ggml-cpu.h"

#include <algorithm>
#include <cctype>
#include <atomic>
#include <mutex>
#include <new>
#include <vector>

namespace {

struct reg_entry {
    lm_ggml_backend_reg_t reg;
    void * dl_handle;                           // NULL for built-ins
    std::vector<lm_ggml_backend_dev_t> devices; // as enumerated at registration
};

struct registry {
    std::recursive_mutex mutex;
    std::vector<reg_entry> entries;
    std::vector<lm_ggml_backend_dev_t> devices; // all entries' devices, in order
    std::atomic<bool> cpu_added{false};
};

bool add_locked(registry & r, lm_ggml_backend_reg_t reg, void * dl_handle, const char * fn);

// Never destroyed: plugins and other threads may still use registry objects
// while static destructors run at exit.
// The built-in CPU backend is registered on first use; when that fails (out
// of memory) the next use tries again instead of leaving a registry without
// a CPU for the rest of the process.
registry & get_registry() {
    alignas(registry) static unsigned char storage[sizeof(registry)]; // no heap: construction cannot fail
    static registry * instance = new (storage) registry;
    if (!instance->cpu_added.load(std::memory_order_acquire)) {
        std::lock_guard lock(instance->mutex);
        if (!instance->cpu_added.load(std::memory_order_relaxed) &&
            add_locked(*instance, lm_ggml_backend_cpu_reg(), nullptr, "lm_ggml_backend_registry")) {
            instance->cpu_added.store(true, std::memory_order_release);
        }
    }
    return *instance;
}

bool add_locked(registry & r, lm_ggml_backend_reg_t reg, void * dl_handle, const char * fn) {
    if (reg == nullptr) {
        LM_GGML_LOG_ERROR("%s: reg is NULL\n", fn);
        return false;
    }
    if (reg->api_version != LM_GGML_BACKEND_API_VERSION) {
        LM_GGML_LOG_ERROR("%s: reg: api_version %d, expected %d\n", fn, reg->api_version, LM_GGML_BACKEND_API_VERSION);
        return false;
    }
    for (const reg_entry & e : r.entries) {
        if (e.reg == reg) {
            LM_GGML_LOG_ERROR("%s: reg %s: already registered\n", fn, lm_ggml_backend_reg_name(reg));
            return false;
        }
    }
    try {
        reg_entry entry{reg, dl_handle, {}};
        const size_t n = lm_ggml_backend_reg_dev_count(reg);
        for (size_t i = 0; i < n; i++) {
            lm_ggml_backend_dev_t dev = lm_ggml_backend_reg_dev_get(reg, i);
            if (dev != nullptr) {
                entry.devices.push_back(dev);
            }
        }
        r.devices.reserve(r.devices.size() + entry.devices.size());
        r.entries.push_back(std::move(entry));
        const reg_entry & added = r.entries.back();
        r.devices.insert(r.devices.end(), added.devices.begin(), added.devices.end());
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("%s: reg %s: out of memory\n", fn, lm_ggml_backend_reg_name(reg));
        return false;
    }
    return true;
}

bool name_equals_ci(const char * a, const char * b) {
    for (; *a != '\0' && *b != '\0'; a++, b++) {
        if (std::tolower((unsigned char) *a) != std::tolower((unsigned char) *b)) {
            return false;
        }
    }
    return *a == *b;
}

} // namespace

// ---------------------------------------------------------------- internal API

void * lmggml::backend::registry_remove(lm_ggml_backend_reg_t reg, bool * found) {
    registry & r = get_registry();
    std::lock_guard lock(r.mutex);
    auto it = std::find_if(r.entries.begin(), r.entries.end(), [reg](const reg_entry & e) { return e.reg == reg; });
    if (it == r.entries.end()) {
        *found = false;
        return nullptr;
    }
    *found = true;
    std::erase_if(r.devices, [&](lm_ggml_backend_dev_t d) {
        return std::find(it->devices.begin(), it->devices.end(), d) != it->devices.end();
    });
    void * handle = it->dl_handle;
    r.entries.erase(it);
    return handle;
}

lmggml::backend::LoadAdd lmggml::backend::registry_add_loaded(lm_ggml_backend_reg_t reg, void * dl_handle) {
    registry & r = get_registry();
    std::lock_guard lock(r.mutex);
    if (std::any_of(r.entries.begin(), r.entries.end(), [reg](const reg_entry & e) { return e.reg == reg; })) {
        return LoadAdd::already_registered;
    }
    return add_locked(r, reg, dl_handle, "lm_ggml_backend_load") ? LoadAdd::added : LoadAdd::failed;
}

// ---------------------------------------------------------------- public API

void lm_ggml_backend_register(lm_ggml_backend_reg_t reg) {
    registry & r = get_registry();
    std::lock_guard lock(r.mutex);
    add_locked(r, reg, nullptr, __func__);
}

// Lists one more device. When its registry is registered the device joins
// that entry too, so unloading the registry drops it with the others.
void lm_ggml_backend_device_register(lm_ggml_backend_dev_t device) {
    LMGGML_CHECK_ARG_VOID(device);
    registry & r = get_registry();
    std::lock_guard lock(r.mutex);
    if (std::find(r.devices.begin(), r.devices.end(), device) != r.devices.end()) {
        LM_GGML_LOG_ERROR("%s: device %s: already registered\n", __func__, lm_ggml_backend_dev_name(device));
        return;
    }
    auto owner = std::find_if(r.entries.begin(), r.entries.end(),
                              [device](const reg_entry & e) { return e.reg == device->reg; });
    try {
        r.devices.push_back(device);
        if (owner != r.entries.end()) {
            owner->devices.push_back(device);
        }
    } catch (const std::bad_alloc &) {
        std::erase(r.devices, device);
        LM_GGML_LOG_ERROR("%s: device %s: out of memory\n", __func__, lm_ggml_backend_dev_name(device));
    }
}

size_t lm_ggml_backend_reg_count(void) {
    registry & r = get_registry();
    std::lock_guard lock(r.mutex);
    return r.entries.size();
}

lm_ggml_backend_reg_t lm_ggml_backend_reg_get(size_t index) {
    registry & r = get_registry();
    std::lock_guard lock(r.mutex);
    if (index >= r.entries.size()) {
        LM_GGML_LOG_ERROR("%s: index %zu out of range (%zu backends)\n", __func__, index, r.entries.size());
        return nullptr;
    }
    return r.entries[index].reg;
}

lm_ggml_backend_reg_t lm_ggml_backend_reg_by_name(const char * name) {
    LMGGML_CHECK_ARG(name, nullptr);
    registry & r = get_registry();
    std::lock_guard lock(r.mutex);
    for (const reg_entry & e : r.entries) {
        if (name_equals_ci(lm_ggml_backend_reg_name(e.reg), name)) {
            return e.reg;
        }
    }
    return nullptr; // not found is an answer: callers probe
}

size_t lm_ggml_backend_dev_count(void) {
    registry & r = get_registry();
    std::lock_guard lock(r.mutex);
    return r.devices.size();
}

lm_ggml_backend_dev_t lm_ggml_backend_dev_get(size_t index) {
    registry & r = get_registry();
    std::lock_guard lock(r.mutex);
    if (index >= r.devices.size()) {
        LM_GGML_LOG_ERROR("%s: index %zu out of range (%zu devices)\n", __func__, index, r.devices.size());
        return nullptr;
    }
    return r.devices[index];
}

lm_ggml_backend_dev_t lm_ggml_backend_dev_by_name(const char * name) {
    LMGGML_CHECK_ARG(name, nullptr);
    registry & r = get_registry();
    std::lock_guard lock(r.mutex);
    for (lm_ggml_backend_dev_t dev : r.devices) {
        if (name_equals_ci(lm_ggml_backend_dev_name(dev), name)) {
            return dev;
        }
    }
    return nullptr;
}

lm_ggml_backend_dev_t lm_ggml_backend_dev_by_type(enum lm_ggml_backend_dev_type type) {
    registry & r = get_registry();
    std::lock_guard lock(r.mutex);
    for (lm_ggml_backend_dev_t dev : r.devices) {
        if (lm_ggml_backend_dev_type(dev) == type) {
            return dev;
        }
    }
    return nullptr;
}

lm_ggml_backend_t lm_ggml_backend_init_by_name(const char * name, const char * params) {
    LMGGML_CHECK_ARG(name, nullptr);
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_name(name);
    if (dev == nullptr) {
        LM_GGML_LOG_ERROR("%s: no device named '%s'\n", __func__, name);
        return nullptr;
    }
    return lm_ggml_backend_dev_init(dev, params);
}

lm_ggml_backend_t lm_ggml_backend_init_by_type(enum lm_ggml_backend_dev_type type, const char * params) {
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_type(type);
    if (dev == nullptr) {
        LM_GGML_LOG_ERROR("%s: no device of type %d\n", __func__, (int) type);
        return nullptr;
    }
    return lm_ggml_backend_dev_init(dev, params);
}

lm_ggml_backend_t lm_ggml_backend_init_best(void) {
    // a GPU when there is one, else the CPU
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_GPU);
    if (dev == nullptr) {
        dev = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    }
    if (dev == nullptr) {
        LM_GGML_LOG_ERROR("%s: no device registered\n", __func__);
        return nullptr;
    }
    return lm_ggml_backend_dev_init(dev, nullptr);
}

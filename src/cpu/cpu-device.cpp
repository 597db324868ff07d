// The CPU device and the "CPU" registry (one device). Both are statics owned
// by the library; they are built on first use, which is thread-safe.

#include "cpu/cpu-features.h"
#include "cpu/cpu-internal.h"
#include "cpu/repack/repack.h"

#include "core/ggml-impl.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/sysinfo.h>
#endif

namespace {

// The CPU's marketing name ("model name" in /proc/cpuinfo), or "CPU".
std::string read_cpu_description() {
    std::string description = "CPU";
#if defined(__linux__)
    FILE * f = fopen("/proc/cpuinfo", "r");
    if (f == nullptr) {
        return description;
    }
    char line[1024];
    while (fgets(line, sizeof(line), f) != nullptr) {
        if (strncmp(line, "model name", 10) != 0) {
            continue;
        }
        const char * colon = strchr(line, ':');
        if (colon == nullptr) {
            continue;
        }
        std::string value(colon + 1);
        const size_t begin = value.find_first_not_of(" \t");
        const size_t end = value.find_last_not_of(" \t\r\n");
        if (begin != std::string::npos && end != std::string::npos && end >= begin) {
            description = value.substr(begin, end - begin + 1);
        }
        break;
    }
    fclose(f);
#endif
    return description;
}

struct cpu_device_context {
    std::string description = [] {
        try {
            return read_cpu_description();
        } catch (...) { // out of memory while reading: keep the generic name
            return std::string();
        }
    }();
    const char * c_str() const { return description.empty() ? "CPU" : description.c_str(); }
};

// Available memory: MemAvailable (counts reclaimable page cache) when the
// kernel reports it, otherwise free + buffer RAM from sysinfo.
void cpu_device_get_memory(lm_ggml_backend_dev_t dev, size_t * free, size_t * total) {
    (void) dev;
    *free = 0;
    *total = 0;
#if defined(__linux__)
    struct sysinfo si;
    if (sysinfo(&si) == 0) {
        *total = (size_t) si.totalram * si.mem_unit;
        *free = (size_t) (si.freeram + si.bufferram) * si.mem_unit;
    }
    FILE * f = fopen("/proc/meminfo", "r");
    if (f != nullptr) {
        char line[256];
        unsigned long long kb = 0;
        while (fgets(line, sizeof(line), f) != nullptr) {
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                *free = (size_t) kb * 1024;
                break;
            }
        }
        fclose(f);
    }
#endif
}

const char * cpu_device_get_name(lm_ggml_backend_dev_t dev) {
    (void) dev;
    return "CPU";
}

const char * cpu_device_get_description(lm_ggml_backend_dev_t dev) {
    return static_cast<cpu_device_context *>(dev->context)->c_str();
}

enum lm_ggml_backend_dev_type cpu_device_get_type(lm_ggml_backend_dev_t dev) {
    (void) dev;
    return LM_GGML_BACKEND_DEVICE_TYPE_CPU;
}

void cpu_device_get_props(lm_ggml_backend_dev_t dev, struct lm_ggml_backend_dev_props * props) {
    props->name = cpu_device_get_name(dev);
    props->description = cpu_device_get_description(dev);
    props->type = cpu_device_get_type(dev);
    cpu_device_get_memory(dev, &props->memory_free, &props->memory_total);
    props->caps = {
        .async = false,
        .host_buffer = false,
        .buffer_from_host_ptr = true,
        .events = false,
    };
}

lm_ggml_backend_t cpu_device_init_backend(lm_ggml_backend_dev_t dev, const char * params) {
    (void) dev;
    (void) params; // no backend parameters
    return lm_ggml_backend_cpu_init();
}

lm_ggml_backend_buffer_type_t cpu_device_get_buffer_type(lm_ggml_backend_dev_t dev) {
    (void) dev;
    return lm_ggml_backend_cpu_buffer_type();
}

lm_ggml_backend_buffer_t cpu_device_buffer_from_host_ptr(lm_ggml_backend_dev_t dev, void * ptr, size_t size,
                                                         size_t max_tensor_size) {
    (void) dev;
    (void) max_tensor_size; // host memory has no per-tensor limit
    return lm_ggml_backend_cpu_buffer_from_ptr(ptr, size);
}

// Supported: layout ops always; otherwise every source must be in host
// memory (or a CPU_REPACK buffer) and the op table must have a kernel that
// accepts the node (lm_cpu_can_compute, which also checks repacked sources).
bool cpu_device_supports_op(lm_ggml_backend_dev_t dev, const struct lm_ggml_tensor * op) {
    (void) dev;
    if (op == nullptr) {
        return false;
    }
    if (lm_cpu_is_layout_op(op->op)) {
        return true;
    }
    for (int i = 0; i < LM_GGML_MAX_SRC; i++) {
        const lm_ggml_tensor * src = op->src[i];
        if (src != nullptr && src->buffer != nullptr && !lm_cpu_buft_readable(src->buffer->buft)) {
            return false;
        }
        // As ggml's extra buffer types: CPU_REPACK takes only the tensors it
        // repacks, so a loader asking about a weight it cannot repack keeps
        // it elsewhere (graphs with such a tensor still compute: it is plain).
        if (src != nullptr && src->buffer != nullptr && src->buffer->buft == lm_cpu_repack_buffer_type() &&
            !lm_cpu_is_repacked(src->view_src != nullptr ? src->view_src : src)) {
            return false;
        }
    }
    return lm_cpu_can_compute(op);
}

bool cpu_device_supports_buft(lm_ggml_backend_dev_t dev, lm_ggml_backend_buffer_type_t buft) {
    (void) dev;
    return buft != nullptr && lm_cpu_buft_readable(buft);
}

constexpr struct lm_ggml_backend_device_i cpu_device_iface = {
    .get_name = cpu_device_get_name,
    .get_description = cpu_device_get_description,
    .get_memory = cpu_device_get_memory,
    .get_type = cpu_device_get_type,
    .get_props = cpu_device_get_props,
    .init_backend = cpu_device_init_backend,
    .get_buffer_type = cpu_device_get_buffer_type,
    .get_host_buffer_type = nullptr, // the device buffer type is already host memory
    .buffer_from_host_ptr = cpu_device_buffer_from_host_ptr,
    .supports_op = cpu_device_supports_op,
    .supports_buft = cpu_device_supports_buft,
    .offload_op = nullptr,
    .event_new = nullptr,
    .event_free = nullptr,
    .event_synchronize = nullptr,
};

// ---------------------------------------------------------------- registry

const char * cpu_reg_get_name(lm_ggml_backend_reg_t reg) {
    (void) reg;
    return "CPU";
}

size_t cpu_reg_get_device_count(lm_ggml_backend_reg_t reg) {
    (void) reg;
    return 1;
}

lm_ggml_backend_dev_t cpu_reg_get_device(lm_ggml_backend_reg_t reg, size_t index) {
    (void) reg;
    if (index != 0) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_reg_dev_get: CPU: index %zu out of range (1 device)\n", index);
        return nullptr;
    }
    return lm_cpu_device();
}

// Extra buffer types, NULL-terminated: CPU_REPACK (weights repacked for the
// matrix kernels, repack.h) when this CPU's kernel level repacks any type.
lm_ggml_backend_buffer_type_t * cpu_device_get_extra_bufts(lm_ggml_backend_dev_t dev) {
    (void) dev;
    static lm_ggml_backend_buffer_type_t list[2] = {lm_cpu_repack_available() ? lm_cpu_repack_buffer_type() : nullptr,
                                                    nullptr};
    return list;
}

// Detected features as {name, value} pairs, terminated by {NULL, NULL}.
std::vector<lm_ggml_backend_feature> list_features() {
    const lm_cpu_features & f = lm_cpu_get_features();
    std::vector<lm_ggml_backend_feature> list;
    const struct {
        const char * name;
        bool on;
    } flags[] = {
        {"SSE3", f.sse3},
        {"SSSE3", f.ssse3},
        {"AVX", f.avx},
        {"AVX_VNNI", f.avx_vnni},
        {"AVX2", f.avx2},
        {"F16C", f.f16c},
        {"FMA", f.fma},
        {"AVX512", f.avx512},
        {"AVX512_VBMI", f.avx512_vbmi},
        {"AVX512_VNNI", f.avx512_vnni},
        {"AVX512_BF16", f.avx512_bf16},
        {"AMX_INT8", f.amx_int8},
        {"NEON", f.neon},
        {"ARM_FMA", f.arm_fma},
        {"FP16_VA", f.fp16_va},
        {"DOTPROD", f.dotprod},
        {"MATMUL_INT8", f.matmul_int8},
        {"SVE", f.sve},
        {"RISCV_V", f.riscv_v},
        {"VSX", f.vsx},
        {"WASM_SIMD", f.wasm_simd},
    };
    for (const auto & flag : flags) {
        if (flag.on) {
            list.push_back({flag.name, "1"});
        }
    }
    if (f.sve_cnt > 0) {
        static const std::string sve_cnt = std::to_string(f.sve_cnt);
        list.push_back({"SVE_CNT", sve_cnt.c_str()});
    }
    list.push_back({nullptr, nullptr});
    return list;
}

// Built once; out of memory yields an empty list rather than an exception
// crossing the C ABI.
struct lm_ggml_backend_feature * cpu_reg_get_features(lm_ggml_backend_reg_t reg) {
    (void) reg;
    static lm_ggml_backend_feature no_features[1] = {{nullptr, nullptr}};
    static std::vector<lm_ggml_backend_feature> features = [] {
        try {
            return list_features();
        } catch (...) {
            return std::vector<lm_ggml_backend_feature>();
        }
    }();
    return features.empty() ? no_features : features.data();
}

// Extension functions, looked up by name (names as ggml uses them).
void * cpu_reg_get_proc_address(lm_ggml_backend_reg_t reg, const char * name) {
    (void) reg;
    if (name == nullptr) {
        return nullptr;
    }
    if (strcmp(name, "lm_ggml_backend_set_n_threads") == 0) {
        lm_ggml_backend_set_n_threads_t fn = lm_ggml_backend_cpu_set_n_threads;
        return (void *) fn;
    }
    if (strcmp(name, "lm_ggml_backend_set_abort_callback") == 0) {
        lm_ggml_backend_set_abort_callback_t fn = lm_ggml_backend_cpu_set_abort_callback;
        return (void *) fn;
    }
    if (strcmp(name, "lm_ggml_backend_get_features") == 0) {
        lm_ggml_backend_get_features_t fn = cpu_reg_get_features;
        return (void *) fn;
    }
    if (strcmp(name, "lm_ggml_backend_dev_get_extra_bufts") == 0) {
        lm_ggml_backend_dev_get_extra_bufts_t fn = cpu_device_get_extra_bufts;
        return (void *) fn;
    }
    if (strcmp(name, "lm_ggml_backend_cpu_numa_init") == 0) {
        void (*fn)(enum lm_ggml_numa_strategy) = lm_ggml_numa_init;
        return (void *) fn;
    }
    if (strcmp(name, "lm_ggml_backend_cpu_is_numa") == 0) {
        bool (*fn)(void) = lm_ggml_is_numa;
        return (void *) fn;
    }
    if (strcmp(name, "lm_ggml_threadpool_new") == 0) {
        return (void *) lm_ggml_threadpool_new;
    }
    if (strcmp(name, "lm_ggml_threadpool_free") == 0) {
        return (void *) lm_ggml_threadpool_free;
    }
    if (strcmp(name, "lm_ggml_backend_cpu_set_threadpool") == 0) {
        return (void *) lm_ggml_backend_cpu_set_threadpool;
    }
    return nullptr;
}

constexpr struct lm_ggml_backend_reg_i cpu_reg_iface = {
    .get_name = cpu_reg_get_name,
    .get_device_count = cpu_reg_get_device_count,
    .get_device = cpu_reg_get_device,
    .get_proc_address = cpu_reg_get_proc_address,
};

lm_ggml_backend_reg cpu_reg = {
    .api_version = LM_GGML_BACKEND_API_VERSION,
    .iface = cpu_reg_iface,
    .context = nullptr,
};

} // namespace

lm_ggml_backend_dev_t lm_cpu_device(void) {
    static cpu_device_context ctx;
    static lm_ggml_backend_device device = {
        .iface = cpu_device_iface,
        .reg = &cpu_reg,
        .context = &ctx,
    };
    return &device;
}

// Owned by the library; never freed.
lm_ggml_backend_reg_t lm_ggml_backend_cpu_reg(void) {
    lm_ggml_cpu_init(); // features are known before anyone asks
    return &cpu_reg;
}

LM_GGML_BACKEND_DL_IMPL(lm_ggml_backend_cpu_reg)

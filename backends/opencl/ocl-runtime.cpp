// OpenCL runtime glue: device enumeration, error reporting, the program
// (compiled once per device from the embedded kernel source) and kernels.

#include "ocl.h"

#include <cstdarg>
#include <cstdio>
#include <new>

extern const char * const lmocl_kernel_source;

// lmggml's internal logger; weak so that a library without it still works.
extern "C" __attribute__((weak)) void lm_ggml_log_internal(enum lm_ggml_log_level level, const char * fmt, ...);

namespace lmocl {

void log(lm_ggml_log_level level, const char * fmt, ...) {
    char buf[1024];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, args);
    va_end(args);
    if (lm_ggml_log_internal != nullptr) {
        lm_ggml_log_internal(level, "%s", buf);
    } else {
        std::fputs(buf, stderr);
    }
}

const char * cl_error_name(cl_int err) {
    switch (err) {
        case CL_SUCCESS: return "CL_SUCCESS";
        case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
        case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
        case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
        case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
        case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
        case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
        case CL_MEM_COPY_OVERLAP: return "CL_MEM_COPY_OVERLAP";
        case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
        case CL_MAP_FAILURE: return "CL_MAP_FAILURE";
        case CL_MISALIGNED_SUB_BUFFER_OFFSET: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
        case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
        case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
        case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
        case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
        case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
        case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
        case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
        case CL_INVALID_PROGRAM: return "CL_INVALID_PROGRAM";
        case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
        case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
        case CL_INVALID_KERNEL: return "CL_INVALID_KERNEL";
        case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
        case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
        case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
        case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
        case CL_INVALID_WORK_DIMENSION: return "CL_INVALID_WORK_DIMENSION";
        case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
        case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
        case CL_INVALID_GLOBAL_OFFSET: return "CL_INVALID_GLOBAL_OFFSET";
        case CL_INVALID_EVENT_WAIT_LIST: return "CL_INVALID_EVENT_WAIT_LIST";
        case CL_INVALID_EVENT: return "CL_INVALID_EVENT";
        case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
        case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
        default: return "unknown OpenCL error";
    }
}

bool cl_ok(cl_int err, const char * what) {
    if (err == CL_SUCCESS) {
        return true;
    }
    log(LM_GGML_LOG_LEVEL_ERROR, "opencl %s: %s (%d)\n", what, cl_error_name(err), (int) err);
    return false;
}

namespace {

std::string device_string(cl_device_id id, cl_device_info what) {
    size_t n = 0;
    if (clGetDeviceInfo(id, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) {
        return {};
    }
    std::string s(n, '\0');
    if (clGetDeviceInfo(id, what, n, s.data(), nullptr) != CL_SUCCESS) {
        return {};
    }
    while (!s.empty() && s.back() == '\0') {
        s.pop_back();
    }
    return s;
}

std::string platform_string(cl_platform_id id, cl_platform_info what) {
    size_t n = 0;
    if (clGetPlatformInfo(id, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) {
        return {};
    }
    std::string s(n, '\0');
    if (clGetPlatformInfo(id, what, n, s.data(), nullptr) != CL_SUCCESS) {
        return {};
    }
    while (!s.empty() && s.back() == '\0') {
        s.pop_back();
    }
    return s;
}

// A device takes part only if it has a compiler and an OpenCL C of 1.2 or newer.
bool usable(cl_device_id id) {
    cl_bool compiler = CL_FALSE;
    clGetDeviceInfo(id, CL_DEVICE_COMPILER_AVAILABLE, sizeof(compiler), &compiler, nullptr);
    const std::string cver = device_string(id, CL_DEVICE_OPENCL_C_VERSION); // "OpenCL C M.m ..."
    int major = 0, minor = 0;
    if (std::sscanf(cver.c_str(), "OpenCL C %d.%d", &major, &minor) != 2) {
        return false;
    }
    return compiler == CL_TRUE && (major > 1 || (major == 1 && minor >= 2));
}

void enumerate(std::vector<device_ctx *> & out) {
    cl_uint n_platforms = 0;
    if (clGetPlatformIDs(0, nullptr, &n_platforms) != CL_SUCCESS || n_platforms == 0) {
        log(LM_GGML_LOG_LEVEL_DEBUG, "opencl: no OpenCL platform found\n");
        return;
    }
    std::vector<cl_platform_id> platforms(n_platforms);
    if (!cl_ok(clGetPlatformIDs(n_platforms, platforms.data(), nullptr), "clGetPlatformIDs")) {
        return;
    }
    for (cl_platform_id p : platforms) {
        cl_uint n_dev = 0;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n_dev) != CL_SUCCESS || n_dev == 0) {
            continue;
        }
        std::vector<cl_device_id> ids(n_dev);
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n_dev, ids.data(), nullptr) != CL_SUCCESS) {
            continue;
        }
        for (cl_device_id id : ids) {
            if (!usable(id)) {
                continue;
            }
            cl_int err = CL_SUCCESS;
            const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties) p, 0};
            cl_context ctx = clCreateContext(props, 1, &id, nullptr, nullptr, &err);
            if (!cl_ok(err, "clCreateContext")) {
                continue;
            }
            cl_command_queue q = clCreateCommandQueue(ctx, id, 0, &err);
            if (!cl_ok(err, "clCreateCommandQueue")) {
                clReleaseContext(ctx);
                continue;
            }
            auto * d = new (std::nothrow) device_ctx;
            if (d == nullptr) {
                clReleaseCommandQueue(q);
                clReleaseContext(ctx);
                continue;
            }
            d->index = (int) out.size();
            d->platform = p;
            d->id = id;
            d->context = ctx;
            d->queue = q;
            d->name = "OpenCL" + std::to_string(d->index);
            d->host_name = d->name + "_Host";
            d->description = platform_string(p, CL_PLATFORM_NAME) + ": " + device_string(id, CL_DEVICE_NAME);
            cl_ulong mem = 0, max_alloc = 0, local = 0;
            size_t wg = 0;
            clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, nullptr);
            clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(max_alloc), &max_alloc, nullptr);
            clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(local), &local, nullptr);
            clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(wg), &wg, nullptr);
            clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof(d->cl_type), &d->cl_type, nullptr);
            d->mem_total = (size_t) mem;
            d->max_alloc = (size_t) max_alloc;
            d->local_mem = (size_t) local;
            d->max_wg = wg;
            out.push_back(d);
        }
    }
}

} // namespace

// Enumeration runs under one lock: PoCL 3.1 initialises its platform on the
// first clGetPlatformIDs without a lock of its own, and a second thread
// querying devices meanwhile reads half-initialised ones (the loader's
// scans may run on several threads).
std::mutex & enumeration_mutex() {
    static std::mutex m;
    return m;
}

// A probe without side effects on the plugin: the loader calls the score
// function in a load that it undoes (dlclose) before loading for real.
bool any_usable_device() {
    std::lock_guard<std::mutex> lock(enumeration_mutex());
    cl_uint n_platforms = 0;
    if (clGetPlatformIDs(0, nullptr, &n_platforms) != CL_SUCCESS || n_platforms == 0) {
        return false;
    }
    std::vector<cl_platform_id> platforms(n_platforms);
    if (clGetPlatformIDs(n_platforms, platforms.data(), nullptr) != CL_SUCCESS) {
        return false;
    }
    for (cl_platform_id p : platforms) {
        cl_uint n_dev = 0;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n_dev) != CL_SUCCESS || n_dev == 0) {
            continue;
        }
        std::vector<cl_device_id> ids(n_dev);
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n_dev, ids.data(), nullptr) != CL_SUCCESS) {
            continue;
        }
        for (cl_device_id id : ids) {
            if (usable(id)) {
                return true;
            }
        }
    }
    return false;
}

// Never destroyed: the registry may hand out these devices until the very
// end of the process, and the OpenCL runtime may already be gone when
// static destructors run, so nothing here is released at exit.
std::vector<device_ctx *> & devices() {
    static std::vector<device_ctx *> & list = *[] {
        auto * v = new std::vector<device_ctx *>;
        std::lock_guard<std::mutex> lock(enumeration_mutex());
        enumerate(*v);
        for (device_ctx * d : *v) {
            init_buffer_types(d);
        }
        return v;
    }();
    return list;
}

cl_program program_of(device_ctx * dev) {
    std::lock_guard<std::mutex> lock(dev->program_mutex);
    if (dev->program != nullptr || dev->program_failed) {
        return dev->program;
    }
    cl_int err = CL_SUCCESS;
    const char * src = lmocl_kernel_source;
    cl_program p = clCreateProgramWithSource(dev->context, 1, &src, nullptr, &err);
    if (!cl_ok(err, "clCreateProgramWithSource")) {
        dev->program_failed = true;
        return nullptr;
    }
    err = clBuildProgram(p, 1, &dev->id, "-cl-std=CL1.2", nullptr, nullptr);
    if (err != CL_SUCCESS) {
        size_t n = 0;
        clGetProgramBuildInfo(p, dev->id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
        std::string build_log(n, '\0');
        clGetProgramBuildInfo(p, dev->id, CL_PROGRAM_BUILD_LOG, n, build_log.data(), nullptr);
        log(LM_GGML_LOG_LEVEL_ERROR, "opencl %s: building the kernels failed: %s: %.800s\n", dev->name.c_str(),
            cl_error_name(err), build_log.c_str());
        clReleaseProgram(p);
        dev->program_failed = true;
        return nullptr;
    }
    dev->program = p;
    return p;
}

cl_kernel kernel_of(stream_ctx * s, const char * name) {
    auto it = s->kernels.find(name);
    if (it != s->kernels.end()) {
        return it->second;
    }
    cl_program p = program_of(s->dev);
    if (p == nullptr) {
        return nullptr;
    }
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p, name, &err);
    if (err != CL_SUCCESS) {
        log(LM_GGML_LOG_LEVEL_ERROR, "opencl clCreateKernel(%s): %s\n", name, cl_error_name(err));
        return nullptr;
    }
    s->kernels.emplace(name, k);
    return k;
}

} // namespace lmocl

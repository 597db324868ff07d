// opencl streams (one in-order queue each), events (cl_event markers), the
// devices, the reg and the plugin entry points.

#include "ocl.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace lmocl {

namespace {

lm_ggml_guid kGuid = {0x6c, 0x6d, 0x67, 0x67, 0x6d, 0x6c, 0x2d, 0x6f, 0x70, 0x65, 0x6e, 0x63, 0x6c, 0x30, 0x00, 0x01};

device_ctx * dev_ctx(lm_ggml_backend_dev_t dev) { return static_cast<device_ctx *>(dev->context); }

stream_ctx * stream_of(lm_ggml_backend_t backend) { return static_cast<stream_ctx *>(backend->context); }

// ---------------------------------------------------------------- stream
const char * backend_get_name(lm_ggml_backend_t backend) { return stream_of(backend)->dev->name.c_str(); }

void backend_free(lm_ggml_backend_t backend) {
    stream_ctx * s = stream_of(backend);
    clFinish(s->queue);
    for (const auto & [name, t] : s->prof) {
        log(LM_GGML_LOG_LEVEL_INFO, "opencl %s profile: %-18s %10.3f ms %8llu launches\n", s->name.c_str(),
            name.c_str(), t.first, (unsigned long long) t.second);
    }
    for (auto & [name, k] : s->kernels) {
        clReleaseKernel(k);
    }
    clReleaseCommandQueue(s->queue);
    delete s;
    delete backend;
}

// The queue is in order, so a later kernel sees the data; the caller keeps
// `data` alive until it synchronizes, as for every async transfer.
void backend_set_tensor_async(lm_ggml_backend_t backend, lm_ggml_tensor * t, const void * data, size_t offset,
                              size_t size) {
    cl_mem mem = nullptr;
    size_t pos = 0;
    if (!mem_of(t, &mem, &pos) || offset > lm_ggml_nbytes(t) || size > lm_ggml_nbytes(t) - offset) {
        log(LM_GGML_LOG_LEVEL_ERROR,
            "opencl set_tensor_async: tensor '%s' is not in this device's memory or the range is out of bounds\n",
            t->name);
        return;
    }
    if (size > 0) {
        cl_ok(clEnqueueWriteBuffer(stream_of(backend)->queue, mem, CL_FALSE, pos + offset, size, data, 0, nullptr,
                                   nullptr),
              "set_tensor_async: clEnqueueWriteBuffer");
    }
}

void backend_get_tensor_async(lm_ggml_backend_t backend, const lm_ggml_tensor * t, void * data, size_t offset,
                              size_t size) {
    cl_mem mem = nullptr;
    size_t pos = 0;
    if (!mem_of(t, &mem, &pos) || offset > lm_ggml_nbytes(t) || size > lm_ggml_nbytes(t) - offset) {
        log(LM_GGML_LOG_LEVEL_ERROR,
            "opencl get_tensor_async: tensor '%s' is not in this device's memory or the range is out of bounds\n",
            t->name);
        return;
    }
    if (size > 0) {
        cl_ok(clEnqueueReadBuffer(stream_of(backend)->queue, mem, CL_FALSE, pos + offset, size, data, 0, nullptr,
                                  nullptr),
              "get_tensor_async: clEnqueueReadBuffer");
    }
}

// Device-to-device within one OpenCL context: the copy runs on the
// destination's queue after everything queued so far on the source's.
bool backend_cpy_tensor_async(lm_ggml_backend_t backend_src, lm_ggml_backend_t backend_dst, const lm_ggml_tensor * src,
                              lm_ggml_tensor * dst) {
    if (backend_src->iface.free != backend_free || backend_dst->iface.free != backend_free) {
        return false;
    }
    stream_ctx * ss = stream_of(backend_src);
    stream_ctx * sd = stream_of(backend_dst);
    cl_mem ms = nullptr, md = nullptr;
    size_t ps = 0, pd = 0;
    const size_t n = lm_ggml_nbytes(src);
    if (ss->dev->context != sd->dev->context || !mem_of(src, &ms, &ps) || !mem_of(dst, &md, &pd) ||
        lm_ggml_nbytes(dst) != n) {
        return false;
    }
    if (ms == md && ps < pd + n && pd < ps + n) {
        return false;
    }
    if (n == 0) {
        return true;
    }
    cl_event ready = nullptr;
    if (ss != sd && !cl_ok(clEnqueueMarkerWithWaitList(ss->queue, 0, nullptr, &ready), "cpy_tensor_async: marker")) {
        return false;
    }
    const cl_int err =
        clEnqueueCopyBuffer(sd->queue, ms, md, ps, pd, n, ready ? 1 : 0, ready ? &ready : nullptr, nullptr);
    if (ready != nullptr) {
        clReleaseEvent(ready);
    }
    return cl_ok(err, "cpy_tensor_async: clEnqueueCopyBuffer");
}

void backend_synchronize(lm_ggml_backend_t backend) {
    cl_ok(clFinish(stream_of(backend)->queue), "synchronize: clFinish");
}

lm_ggml_status backend_graph_compute(lm_ggml_backend_t backend, lm_ggml_cgraph * graph) {
    return compute_graph(stream_of(backend), graph);
}

void backend_event_record(lm_ggml_backend_t backend, lm_ggml_backend_event_t event) {
    auto * e = static_cast<event_ctx *>(event->context);
    cl_event ev = nullptr;
    if (!cl_ok(clEnqueueMarkerWithWaitList(stream_of(backend)->queue, 0, nullptr, &ev), "event_record: marker")) {
        return;
    }
    if (e->event != nullptr) {
        clReleaseEvent(e->event);
    }
    e->event = ev;
}

// Same context: the queue waits on the device. Another context cannot name
// the event in a wait list, so the host waits instead.
void backend_event_wait(lm_ggml_backend_t backend, lm_ggml_backend_event_t event) {
    auto * e = static_cast<event_ctx *>(event->context);
    if (e->event == nullptr) {
        return;
    }
    stream_ctx * s = stream_of(backend);
    if (backend->iface.free == backend_free && e->context == s->dev->context) {
        cl_ok(clEnqueueBarrierWithWaitList(s->queue, 1, &e->event, nullptr), "event_wait: barrier");
    } else {
        cl_ok(clWaitForEvents(1, &e->event), "event_wait: clWaitForEvents");
    }
}

constexpr lm_ggml_backend_i kBackendIface = {
    .get_name = backend_get_name,
    .free = backend_free,
    .set_tensor_async = backend_set_tensor_async,
    .get_tensor_async = backend_get_tensor_async,
    .cpy_tensor_async = backend_cpy_tensor_async,
    .synchronize = backend_synchronize,
    .graph_plan_create = nullptr,
    .graph_plan_free = nullptr,
    .graph_plan_update = nullptr,
    .graph_plan_compute = nullptr,
    .graph_compute = backend_graph_compute,
    .event_record = backend_event_record,
    .event_wait = backend_event_wait,
};

// ---------------------------------------------------------------- device
const char * dev_get_name(lm_ggml_backend_dev_t dev) { return dev_ctx(dev)->name.c_str(); }

const char * dev_get_description(lm_ggml_backend_dev_t dev) { return dev_ctx(dev)->description.c_str(); }

// OpenCL reports no free memory; this is the total less what lmggml holds.
void dev_get_memory(lm_ggml_backend_dev_t dev, size_t * free, size_t * total) {
    const device_ctx * d = dev_ctx(dev);
    const size_t used = d->used.load();
    *total = d->mem_total;
    *free = used < d->mem_total ? d->mem_total - used : 0;
}

// A GPU is a GPU. An OpenCL device on the CPU (PoCL) or an accelerator
// card is ACCEL: usable by name (-d OpenCL0), but lm_ggml_backend_init_best
// never prefers it to the native CPU backend.
enum lm_ggml_backend_dev_type dev_get_type(lm_ggml_backend_dev_t dev) {
    return dev_ctx(dev)->cl_type & CL_DEVICE_TYPE_GPU ? LM_GGML_BACKEND_DEVICE_TYPE_GPU
                                                      : LM_GGML_BACKEND_DEVICE_TYPE_ACCEL;
}

void dev_get_props(lm_ggml_backend_dev_t dev, lm_ggml_backend_dev_props * props) {
    props->name = dev_get_name(dev);
    props->description = dev_get_description(dev);
    dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->type = dev_get_type(dev);
    props->caps = {
        .async = true,
        .host_buffer = true,
        .buffer_from_host_ptr = false,
        .events = true,
    };
}

lm_ggml_backend_t dev_init_backend(lm_ggml_backend_dev_t dev, const char *) {
    device_ctx * d = dev_ctx(dev);
    if (program_of(d) == nullptr) {
        log(LM_GGML_LOG_LEVEL_ERROR, "opencl %s init_backend: the kernels did not build\n", d->name.c_str());
        return nullptr;
    }
    const char * prof = std::getenv("LMGGML_OPENCL_PROFILE");
    const bool profile = prof != nullptr && std::strcmp(prof, "1") == 0;
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(d->context, d->id, profile ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (!cl_ok(err, "init_backend: clCreateCommandQueue")) {
        return nullptr;
    }
    const char * mv = std::getenv("LMGGML_OPENCL_MATVEC");
    const bool matvec_wg = mv != nullptr ? std::strcmp(mv, "wg") == 0 : !(d->cl_type & CL_DEVICE_TYPE_CPU);
    auto * s = new (std::nothrow) stream_ctx{d, q, {}, d->name, profile, matvec_wg, {}};
    auto * backend = s ? new (std::nothrow)
                             lm_ggml_backend{.guid = &kGuid, .iface = kBackendIface, .device = dev, .context = s}
                       : nullptr;
    if (backend == nullptr) {
        delete s;
        clReleaseCommandQueue(q);
        log(LM_GGML_LOG_LEVEL_ERROR, "opencl init_backend: out of host memory\n");
    }
    return backend;
}

lm_ggml_backend_buffer_type_t dev_get_buffer_type(lm_ggml_backend_dev_t dev) { return &dev_ctx(dev)->buft; }

lm_ggml_backend_buffer_type_t dev_get_host_buffer_type(lm_ggml_backend_dev_t dev) { return &dev_ctx(dev)->host_buft; }

bool dev_supports_op(lm_ggml_backend_dev_t dev, const lm_ggml_tensor * op) { return supports_op(dev_ctx(dev), op); }

bool dev_supports_buft(lm_ggml_backend_dev_t dev, lm_ggml_backend_buffer_type_t buft) {
    return buft == &dev_ctx(dev)->buft;
}

// Worth moving a large batch here even when the weights live elsewhere: the
// upload is paid once per batch, the arithmetic grows with it.
bool dev_offload_op(lm_ggml_backend_dev_t dev, const lm_ggml_tensor * op) {
    constexpr int64_t kMinBatch = 32;
    return op->op != LM_GGML_OP_GET_ROWS && op->ne[1] >= kMinBatch && supports_op(dev_ctx(dev), op);
}

lm_ggml_backend_event_t dev_event_new(lm_ggml_backend_dev_t dev) {
    auto * e = new (std::nothrow) event_ctx;
    auto * event = e ? new (std::nothrow) lm_ggml_backend_event{.device = dev, .context = e} : nullptr;
    if (event == nullptr) {
        delete e;
        log(LM_GGML_LOG_LEVEL_ERROR, "opencl event_new: out of host memory\n");
        return nullptr;
    }
    e->context = dev_ctx(dev)->context;
    return event;
}

void dev_event_free(lm_ggml_backend_dev_t, lm_ggml_backend_event_t event) {
    auto * e = static_cast<event_ctx *>(event->context);
    if (e->event != nullptr) {
        clReleaseEvent(e->event);
    }
    delete e;
    delete event;
}

void dev_event_synchronize(lm_ggml_backend_dev_t, lm_ggml_backend_event_t event) {
    auto * e = static_cast<event_ctx *>(event->context);
    if (e->event != nullptr) {
        cl_ok(clWaitForEvents(1, &e->event), "event_synchronize: clWaitForEvents");
    }
}

constexpr lm_ggml_backend_device_i kDeviceIface = {
    .get_name = dev_get_name,
    .get_description = dev_get_description,
    .get_memory = dev_get_memory,
    .get_type = dev_get_type,
    .get_props = dev_get_props,
    .init_backend = dev_init_backend,
    .get_buffer_type = dev_get_buffer_type,
    .get_host_buffer_type = dev_get_host_buffer_type,
    .buffer_from_host_ptr = nullptr,
    .supports_op = dev_supports_op,
    .supports_buft = dev_supports_buft,
    .offload_op = dev_offload_op,
    .event_new = dev_event_new,
    .event_free = dev_event_free,
    .event_synchronize = dev_event_synchronize,
};

// ---------------------------------------------------------------- reg
const char * reg_get_name(lm_ggml_backend_reg_t) { return "OpenCL"; }

size_t reg_get_device_count(lm_ggml_backend_reg_t) { return devices().size(); }

lm_ggml_backend_dev_t reg_get_device(lm_ggml_backend_reg_t, size_t index) {
    return index < devices().size() ? &devices()[index]->dev : nullptr;
}

void * reg_get_proc_address(lm_ggml_backend_reg_t, const char *) { return nullptr; }

constexpr lm_ggml_backend_reg_i kRegIface = {
    .get_name = reg_get_name,
    .get_device_count = reg_get_device_count,
    .get_device = reg_get_device,
    .get_proc_address = reg_get_proc_address,
};

// 0 (not loaded) on a machine without an OpenCL device
int score() { return any_usable_device() ? 20 : 0; }

} // namespace

lm_ggml_backend_reg_t reg() {
    static lm_ggml_backend_reg r = {
        .api_version = LM_GGML_BACKEND_API_VERSION,
        .iface = kRegIface,
        .context = nullptr,
    };
    static const bool wired = [] {
        for (device_ctx * d : devices()) {
            d->dev = {.iface = kDeviceIface, .reg = &r, .context = d};
        }
        return true;
    }();
    (void) wired;
    return &r;
}

} // namespace lmocl

LM_GGML_BACKEND_DL_IMPL(lmocl::reg)
LM_GGML_BACKEND_DL_SCORE_IMPL(lmocl::score)

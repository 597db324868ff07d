// refdev device, streams, events and reg, plus the plugin entry points.

#include "refdev.h"

#include <atomic>
#include <cstring>
#include <new>

namespace refdev {

namespace {

// ---------------------------------------------------------------- events
// Compute is synchronous, so a recorded event is complete at once; the
// context only remembers how often it was recorded (for tests/debugging).
struct event_ctx {
    std::atomic<uint64_t> n_recorded{0};
};

// ---------------------------------------------------------------- stream

lm_ggml_guid kGuid = {0x6c, 0x6d, 0x67, 0x67, 0x6d, 0x6c, 0x2d, 0x72, 0x65, 0x66, 0x64, 0x65, 0x76, 0x30, 0x00, 0x01};

const char * backend_get_name(lm_ggml_backend_t) { return "REFDEV0"; }

void backend_free(lm_ggml_backend_t backend) { delete backend; }

lm_ggml_backend_buffer_t buffer_of(const lm_ggml_tensor * t) {
    return t->view_src && t->view_src->buffer ? t->view_src->buffer : t->buffer;
}

// "async" transfers complete immediately: the stream has no queue
void backend_set_tensor_async(lm_ggml_backend_t, lm_ggml_tensor * t, const void * data, size_t offset, size_t size) {
    lm_ggml_backend_tensor_set(t, data, offset, size);
}

void backend_get_tensor_async(lm_ggml_backend_t, const lm_ggml_tensor * t, void * data, size_t offset, size_t size) {
    lm_ggml_backend_tensor_get(t, data, offset, size);
}

// device-to-device copies between two refdev tensors; anything else falls
// back to the generic path (return false)
bool backend_cpy_tensor_async(lm_ggml_backend_t, lm_ggml_backend_t, const lm_ggml_tensor * src, lm_ggml_tensor * dst) {
    if (!is_refdev_buffer(buffer_of(src)) || !is_refdev_buffer(buffer_of(dst))) {
        return false;
    }
    const size_t n = lm_ggml_nbytes(src);
    const uint8_t * s = storage_of(src, n);
    uint8_t * d = storage_of(dst, n);
    if (s == nullptr || d == nullptr) {
        return false;
    }
    std::memmove(d, s, n);
    return true;
}

void backend_synchronize(lm_ggml_backend_t) {
    // nothing queued: every operation completes before it returns
}

lm_ggml_status backend_graph_compute(lm_ggml_backend_t, lm_ggml_cgraph * graph) { return compute_graph(graph); }

void backend_event_record(lm_ggml_backend_t, lm_ggml_backend_event_t event) {
    static_cast<event_ctx *>(event->context)->n_recorded++;
}

void backend_event_wait(lm_ggml_backend_t, lm_ggml_backend_event_t) {
    // the recorded work is already done
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

const char * dev_get_name(lm_ggml_backend_dev_t) { return "REFDEV0"; }

const char * dev_get_description(lm_ggml_backend_dev_t) { return "lmggml reference device (own memory, plain loops)"; }

void dev_get_memory(lm_ggml_backend_dev_t, size_t * free, size_t * total) {
    *total = kTotalMemory;
    *free = kTotalMemory - memory_used();
}

enum lm_ggml_backend_dev_type dev_get_type(lm_ggml_backend_dev_t) {
    return LM_GGML_BACKEND_DEVICE_TYPE_GPU; // a separate memory space, like a GPU
}

void dev_get_props(lm_ggml_backend_dev_t dev, lm_ggml_backend_dev_props * props) {
    props->name = dev_get_name(dev);
    props->description = dev_get_description(dev);
    dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->type = dev_get_type(dev);
    props->caps = {
        .async = true,
        .host_buffer = false,
        .buffer_from_host_ptr = false,
        .events = true,
    };
}

lm_ggml_backend_t dev_init_backend(lm_ggml_backend_dev_t dev, const char *) {
    auto * backend = new (std::nothrow) lm_ggml_backend{
        .guid = &kGuid,
        .iface = kBackendIface,
        .device = dev,
        .context = nullptr,
    };
    if (backend == nullptr) {
        log(LM_GGML_LOG_LEVEL_ERROR, "refdev init_backend: out of host memory\n");
    }
    return backend;
}

lm_ggml_backend_buffer_type_t dev_get_buffer_type(lm_ggml_backend_dev_t) { return buffer_type(); }

bool dev_supports_op(lm_ggml_backend_dev_t, const lm_ggml_tensor * op) { return supports_op(op); }

bool dev_supports_buft(lm_ggml_backend_dev_t, lm_ggml_backend_buffer_type_t buft) { return buft == buffer_type(); }

// Worth moving a matrix product here even when its weights live elsewhere
// once the batch is large (the same rule GPU backends use).
bool dev_offload_op(lm_ggml_backend_dev_t, const lm_ggml_tensor * op) {
    return op->op == LM_GGML_OP_MUL_MAT && op->ne[1] >= 32 && supports_op(op);
}

lm_ggml_backend_event_t dev_event_new(lm_ggml_backend_dev_t dev) {
    auto * ctx = new (std::nothrow) event_ctx;
    auto * event = ctx ? new (std::nothrow) lm_ggml_backend_event{.device = dev, .context = ctx} : nullptr;
    if (event == nullptr) {
        delete ctx;
        log(LM_GGML_LOG_LEVEL_ERROR, "refdev event_new: out of host memory\n");
    }
    return event;
}

void dev_event_free(lm_ggml_backend_dev_t, lm_ggml_backend_event_t event) {
    delete static_cast<event_ctx *>(event->context);
    delete event;
}

void dev_event_synchronize(lm_ggml_backend_dev_t, lm_ggml_backend_event_t) {
    // recorded work is complete when record returns
}

constexpr lm_ggml_backend_device_i kDeviceIface = {
    .get_name = dev_get_name,
    .get_description = dev_get_description,
    .get_memory = dev_get_memory,
    .get_type = dev_get_type,
    .get_props = dev_get_props,
    .init_backend = dev_init_backend,
    .get_buffer_type = dev_get_buffer_type,
    .get_host_buffer_type = nullptr,
    .buffer_from_host_ptr = nullptr,
    .supports_op = dev_supports_op,
    .supports_buft = dev_supports_buft,
    .offload_op = dev_offload_op,
    .event_new = dev_event_new,
    .event_free = dev_event_free,
    .event_synchronize = dev_event_synchronize,
};

// ---------------------------------------------------------------- reg

const char * reg_get_name(lm_ggml_backend_reg_t) { return "REFDEV"; }

size_t reg_get_device_count(lm_ggml_backend_reg_t) { return 1; }

lm_ggml_backend_dev_t reg_get_device(lm_ggml_backend_reg_t, size_t index) { return index == 0 ? device() : nullptr; }

uint64_t n_nodes_computed_c() { return n_nodes_computed(); }

void * reg_get_proc_address(lm_ggml_backend_reg_t, const char * name) {
    if (std::strcmp(name, "lm_ggml_backend_refdev_n_nodes_computed") == 0) {
        return (void *) &n_nodes_computed_c;
    }
    return nullptr;
}

constexpr lm_ggml_backend_reg_i kRegIface = {
    .get_name = reg_get_name,
    .get_device_count = reg_get_device_count,
    .get_device = reg_get_device,
    .get_proc_address = reg_get_proc_address,
};

int score() {
    return 10; // runs anywhere; a real backend would probe the hardware here
}

} // namespace

lm_ggml_backend_dev_t device() {
    static lm_ggml_backend_device dev = {
        .iface = kDeviceIface,
        .reg = reg(),
        .context = nullptr,
    };
    return &dev;
}

lm_ggml_backend_reg_t reg() {
    static lm_ggml_backend_reg r = {
        .api_version = LM_GGML_BACKEND_API_VERSION,
        .iface = kRegIface,
        .context = nullptr,
    };
    return &r;
}

} // namespace refdev

LM_GGML_BACKEND_DL_IMPL(refdev::reg)
LM_GGML_BACKEND_DL_SCORE_IMPL(refdev::score)

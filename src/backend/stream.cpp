// Backends (streams): the public wrappers around the seed's lm_ggml_backend_i.
// A stream belongs to one device; buffer queries go through the device's
// default buffer type, capability queries through the device.

#include "backend/backend-internal.h"

#include <new>

namespace {

// The stream's default buffer type, or NULL (logged once, naming `fn`).
lm_ggml_backend_buffer_type_t default_buft(const char * fn, lm_ggml_backend_t backend) {
    if (backend->device == nullptr) {
        LM_GGML_LOG_ERROR("%s: backend %s: has no device\n", fn, lm_ggml_backend_name(backend));
        return nullptr;
    }
    if (backend->device->iface.get_buffer_type == nullptr) {
        LM_GGML_LOG_ERROR("%s: backend %s: its device has no buffer type\n", fn, lm_ggml_backend_name(backend));
        return nullptr;
    }
    lm_ggml_backend_buffer_type_t buft = backend->device->iface.get_buffer_type(backend->device);
    if (buft == nullptr) {
        LM_GGML_LOG_ERROR("%s: backend %s: its device returned no buffer type\n", fn, lm_ggml_backend_name(backend));
    }
    return buft;
}

// Runs a backend callback that computes; a C++ exception escaping backend
// code becomes a status instead of crossing the C ABI.
template <typename F> lm_ggml_status guarded(const char * fn, lm_ggml_backend_t backend, F && f) {
    try {
        return f();
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("%s: backend %s: out of memory\n", fn, lm_ggml_backend_name(backend));
        return LM_GGML_STATUS_ALLOC_FAILED;
    } catch (...) {
        LM_GGML_LOG_ERROR("%s: backend %s: unexpected exception\n", fn, lm_ggml_backend_name(backend));
        return LM_GGML_STATUS_FAILED;
    }
}

} // namespace

lm_ggml_guid_t lm_ggml_backend_guid(lm_ggml_backend_t backend) {
    LMGGML_CHECK_ARG(backend, nullptr);
    return backend->guid;
}

const char * lm_ggml_backend_name(lm_ggml_backend_t backend) {
    LMGGML_CHECK_ARG(backend, "NULL");
    if (backend->iface.get_name == nullptr) {
        return "(unnamed)";
    }
    return backend->iface.get_name(backend);
}

void lm_ggml_backend_free(lm_ggml_backend_t backend) {
    if (backend == nullptr) {
        return; // like free(NULL)
    }
    if (backend->iface.free == nullptr) {
        LM_GGML_LOG_ERROR("%s: backend %s: has no free (leaked)\n", __func__, lm_ggml_backend_name(backend));
        return;
    }
    backend->iface.free(backend);
}

lm_ggml_backend_buffer_type_t lm_ggml_backend_get_default_buffer_type(lm_ggml_backend_t backend) {
    LMGGML_CHECK_ARG(backend, nullptr);
    return default_buft(__func__, backend);
}

lm_ggml_backend_buffer_t lm_ggml_backend_alloc_buffer(lm_ggml_backend_t backend, size_t size) {
    LMGGML_CHECK_ARG(backend, nullptr);
    lm_ggml_backend_buffer_type_t buft = default_buft(__func__, backend);
    return buft ? lm_ggml_backend_buft_alloc_buffer(buft, size) : nullptr;
}

size_t lm_ggml_backend_get_alignment(lm_ggml_backend_t backend) {
    LMGGML_CHECK_ARG(backend, 0);
    lm_ggml_backend_buffer_type_t buft = default_buft(__func__, backend);
    return buft ? lm_ggml_backend_buft_get_alignment(buft) : 0;
}

size_t lm_ggml_backend_get_max_size(lm_ggml_backend_t backend) {
    LMGGML_CHECK_ARG(backend, 0);
    lm_ggml_backend_buffer_type_t buft = default_buft(__func__, backend);
    return buft ? lm_ggml_backend_buft_get_max_size(buft) : 0;
}

void lm_ggml_backend_synchronize(lm_ggml_backend_t backend) {
    LMGGML_CHECK_ARG_VOID(backend);
    if (backend->iface.synchronize != nullptr) {
        backend->iface.synchronize(backend); // absent: the stream never queues work
    }
}

// ---------------------------------------------------------------- graphs

lm_ggml_backend_graph_plan_t lm_ggml_backend_graph_plan_create(lm_ggml_backend_t backend,
                                                               struct lm_ggml_cgraph * cgraph) {
    LMGGML_CHECK_ARG(backend, nullptr);
    LMGGML_CHECK_ARG(cgraph, nullptr);
    if (backend->iface.graph_plan_create == nullptr) {
        LM_GGML_LOG_ERROR("%s: backend %s: does not support graph plans\n", __func__, lm_ggml_backend_name(backend));
        return nullptr;
    }
    try {
        return backend->iface.graph_plan_create(backend, cgraph);
    } catch (...) {
        LM_GGML_LOG_ERROR("%s: backend %s: plan creation failed\n", __func__, lm_ggml_backend_name(backend));
        return nullptr;
    }
}

void lm_ggml_backend_graph_plan_free(lm_ggml_backend_t backend, lm_ggml_backend_graph_plan_t plan) {
    LMGGML_CHECK_ARG_VOID(backend);
    if (plan == nullptr) {
        return; // like free(NULL)
    }
    if (backend->iface.graph_plan_free == nullptr) {
        LM_GGML_LOG_ERROR("%s: backend %s: does not support graph plans\n", __func__, lm_ggml_backend_name(backend));
        return;
    }
    backend->iface.graph_plan_free(backend, plan);
}

enum lm_ggml_status lm_ggml_backend_graph_plan_compute(lm_ggml_backend_t backend, lm_ggml_backend_graph_plan_t plan) {
    LMGGML_CHECK_ARG(backend, LM_GGML_STATUS_FAILED);
    LMGGML_CHECK_ARG(plan, LM_GGML_STATUS_FAILED);
    if (backend->iface.graph_plan_compute == nullptr) {
        LM_GGML_LOG_ERROR("%s: backend %s: does not support graph plans\n", __func__, lm_ggml_backend_name(backend));
        return LM_GGML_STATUS_FAILED;
    }
    return guarded(__func__, backend, [&] { return backend->iface.graph_plan_compute(backend, plan); });
}

enum lm_ggml_status lm_ggml_backend_graph_compute_async(lm_ggml_backend_t backend, struct lm_ggml_cgraph * cgraph) {
    LMGGML_CHECK_ARG(backend, LM_GGML_STATUS_FAILED);
    LMGGML_CHECK_ARG(cgraph, LM_GGML_STATUS_FAILED);
    if (backend->iface.graph_compute == nullptr) {
        LM_GGML_LOG_ERROR("%s: backend %s: has no graph_compute\n", __func__, lm_ggml_backend_name(backend));
        return LM_GGML_STATUS_FAILED;
    }
    return guarded(__func__, backend, [&] { return backend->iface.graph_compute(backend, cgraph); });
}

enum lm_ggml_status lm_ggml_backend_graph_compute(lm_ggml_backend_t backend, struct lm_ggml_cgraph * cgraph) {
    const lm_ggml_status status = lm_ggml_backend_graph_compute_async(backend, cgraph);
    if (backend != nullptr) {
        lm_ggml_backend_synchronize(backend);
    }
    return status;
}

// ---------------------------------------------------------------- capabilities

bool lm_ggml_backend_supports_op(lm_ggml_backend_t backend, const struct lm_ggml_tensor * op) {
    LMGGML_CHECK_ARG(backend, false);
    return lm_ggml_backend_dev_supports_op(backend->device, op);
}

bool lm_ggml_backend_supports_buft(lm_ggml_backend_t backend, lm_ggml_backend_buffer_type_t buft) {
    LMGGML_CHECK_ARG(backend, false);
    return lm_ggml_backend_dev_supports_buft(backend->device, buft);
}

bool lm_ggml_backend_offload_op(lm_ggml_backend_t backend, const struct lm_ggml_tensor * op) {
    LMGGML_CHECK_ARG(backend, false);
    return lm_ggml_backend_dev_offload_op(backend->device, op);
}

lm_ggml_backend_dev_t lm_ggml_backend_get_device(lm_ggml_backend_t backend) {
    LMGGML_CHECK_ARG(backend, nullptr);
    return backend->device;
}

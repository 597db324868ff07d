// Events: markers recorded on one stream that another stream (or the host)
// can wait for. Optional for backends: a device without event_new simply
// does not support them, which every wrapper reports with one log line.

#include "backend/backend-internal.h"

namespace {

const char * dev_name_or_null(lm_ggml_backend_dev_t dev) { return dev ? lm_ggml_backend_dev_name(dev) : "NULL"; }

} // namespace

lm_ggml_backend_event_t lm_ggml_backend_event_new(lm_ggml_backend_dev_t device) {
    LMGGML_CHECK_ARG(device, nullptr);
    if (device->iface.event_new == nullptr) {
        LM_GGML_LOG_ERROR("%s: device %s: events are not supported\n", __func__, lm_ggml_backend_dev_name(device));
        return nullptr;
    }
    try {
        return device->iface.event_new(device);
    } catch (...) {
        LM_GGML_LOG_ERROR("%s: device %s: event creation failed\n", __func__, lm_ggml_backend_dev_name(device));
        return nullptr;
    }
}

void lm_ggml_backend_event_free(lm_ggml_backend_event_t event) {
    if (event == nullptr) {
        return; // like free(NULL)
    }
    if (event->device == nullptr || event->device->iface.event_free == nullptr) {
        LM_GGML_LOG_ERROR("%s: event of device %s: has no event_free (leaked)\n", __func__,
                          dev_name_or_null(event->device));
        return;
    }
    event->device->iface.event_free(event->device, event);
}

void lm_ggml_backend_event_record(lm_ggml_backend_event_t event, lm_ggml_backend_t backend) {
    LMGGML_CHECK_ARG_VOID(event);
    LMGGML_CHECK_ARG_VOID(backend);
    if (backend->iface.event_record == nullptr) {
        LM_GGML_LOG_ERROR("%s: backend %s: events are not supported\n", __func__, lm_ggml_backend_name(backend));
        return;
    }
    if (event->device != backend->device) {
        // an event marks a point in one device's stream of work
        LM_GGML_LOG_ERROR("%s: backend %s: event belongs to device %s\n", __func__, lm_ggml_backend_name(backend),
                          dev_name_or_null(event->device));
        return;
    }
    backend->iface.event_record(backend, event);
}

void lm_ggml_backend_event_synchronize(lm_ggml_backend_event_t event) {
    LMGGML_CHECK_ARG_VOID(event);
    if (event->device == nullptr || event->device->iface.event_synchronize == nullptr) {
        LM_GGML_LOG_ERROR("%s: device %s: events are not supported\n", __func__, dev_name_or_null(event->device));
        return;
    }
    event->device->iface.event_synchronize(event->device, event);
}

void lm_ggml_backend_event_wait(lm_ggml_backend_t backend, lm_ggml_backend_event_t event) {
    LMGGML_CHECK_ARG_VOID(backend);
    LMGGML_CHECK_ARG_VOID(event);
    if (backend->iface.event_wait == nullptr) {
        LM_GGML_LOG_ERROR("%s: backend %s: events are not supported\n", __func__, lm_ggml_backend_name(backend));
        return;
    }
    backend->iface.event_wait(backend, event);
}

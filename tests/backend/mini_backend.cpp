#include "mini_backend.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace minibk {

namespace {

struct state {
    Config cfg;
    lm_ggml_backend_reg reg;
    lm_ggml_backend_device dev;
    lm_ggml_backend_buffer_type buft;
    int n_graph_compute = 0;
};

struct buffer_mem {
    std::vector<std::max_align_t> words; // 16-byte aligned storage
};

// The buffers have no free_buffer slot (that is the point of this backend),
// so their memory and the backend instances are kept here until exit:
// reachable, hence not reported by LeakSanitizer.
struct keeper {
    std::mutex mutex;
    std::vector<std::unique_ptr<buffer_mem>> buffers;
    std::vector<std::unique_ptr<state>> states;
};
keeper & kept() {
    static keeper k;
    return k;
}

state * st_of_buft(lm_ggml_backend_buffer_type_t buft) { return static_cast<state *>(buft->context); }
state * st_of_dev(lm_ggml_backend_dev_t dev) { return static_cast<state *>(dev->context); }

// ---- buffer: required slots only (no free: memory is kept until exit)
void * buf_get_base(lm_ggml_backend_buffer_t b) { return static_cast<buffer_mem *>(b->context)->words.data(); }
void buf_set_tensor(lm_ggml_backend_buffer_t, lm_ggml_tensor * t, const void * data, size_t offset, size_t size) {
    std::memcpy(static_cast<char *>(t->data) + offset, data, size);
}
void buf_get_tensor(lm_ggml_backend_buffer_t, const lm_ggml_tensor * t, void * data, size_t offset, size_t size) {
    std::memcpy(data, static_cast<const char *>(t->data) + offset, size);
}
void buf_clear(lm_ggml_backend_buffer_t b, uint8_t value) { std::memset(buf_get_base(b), value, b->size); }

constexpr lm_ggml_backend_buffer_i kBufIface = {
    .free_buffer = nullptr,
    .get_base = buf_get_base,
    .init_tensor = nullptr,
    .memset_tensor = nullptr,
    .set_tensor = buf_set_tensor,
    .get_tensor = buf_get_tensor,
    .cpy_tensor = nullptr,
    .clear = buf_clear,
    .reset = nullptr,
};

// ---- buffer type
const char * buft_name(lm_ggml_backend_buffer_type_t buft) { return st_of_buft(buft)->cfg.dev_name; }
lm_ggml_backend_buffer_t buft_alloc(lm_ggml_backend_buffer_type_t buft, size_t size) {
    auto * mem = new buffer_mem;
    mem->words.resize((size + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
    {
        std::lock_guard lock(kept().mutex);
        kept().buffers.emplace_back(mem);
    }
    return lm_ggml_backend_buffer_init(buft, kBufIface, mem, size);
}
size_t buft_alignment(lm_ggml_backend_buffer_type_t) { return kAlignment; }
size_t buft_max_size(lm_ggml_backend_buffer_type_t buft) { return st_of_buft(buft)->cfg.max_size; }
size_t buft_alloc_size(lm_ggml_backend_buffer_type_t buft, const lm_ggml_tensor * t) {
    const size_t pad = st_of_buft(buft)->cfg.alloc_pad;
    return (lm_ggml_nbytes(t) + pad - 1) / pad * pad;
}

// ---- backend (stream): name, free, graph_compute only
const char * be_name(lm_ggml_backend_t b) { return st_of_dev(b->device)->cfg.dev_name; }
void be_free(lm_ggml_backend_t b) { delete b; }

bool computable(const lm_ggml_tensor * op) {
    switch (op->op) {
        case LM_GGML_OP_NONE:
        case LM_GGML_OP_VIEW:
        case LM_GGML_OP_RESHAPE:
        case LM_GGML_OP_PERMUTE:
        case LM_GGML_OP_TRANSPOSE: return true;
        case LM_GGML_OP_ADD:
        case LM_GGML_OP_MUL:
            return op->type == LM_GGML_TYPE_F32 && op->src[0]->type == LM_GGML_TYPE_F32 &&
                   op->src[1]->type == LM_GGML_TYPE_F32 && lm_ggml_are_same_shape(op->src[0], op->src[1]) &&
                   lm_ggml_is_contiguous(op) && lm_ggml_is_contiguous(op->src[0]) && lm_ggml_is_contiguous(op->src[1]);
        default: return false;
    }
}

lm_ggml_status be_graph_compute(lm_ggml_backend_t b, lm_ggml_cgraph * g) {
    st_of_dev(b->device)->n_graph_compute++;
    for (int i = 0; i < lm_ggml_graph_n_nodes(g); i++) {
        lm_ggml_tensor * n = lm_ggml_graph_node(g, i);
        if (!computable(n)) {
            return LM_GGML_STATUS_FAILED;
        }
        if (n->op != LM_GGML_OP_ADD && n->op != LM_GGML_OP_MUL) {
            continue;
        }
        const float * x = static_cast<const float *>(n->src[0]->data);
        const float * y = static_cast<const float *>(n->src[1]->data);
        float * d = static_cast<float *>(n->data);
        for (int64_t k = 0; k < lm_ggml_nelements(n); k++) {
            d[k] = n->op == LM_GGML_OP_ADD ? x[k] + y[k] : x[k] * y[k];
        }
    }
    return LM_GGML_STATUS_SUCCESS;
}

lm_ggml_guid kGuid = {'m', 'i', 'n', 'i'};

constexpr lm_ggml_backend_i kBackendIface = {
    .get_name = be_name,
    .free = be_free,
    .set_tensor_async = nullptr,
    .get_tensor_async = nullptr,
    .cpy_tensor_async = nullptr,
    .synchronize = nullptr,
    .graph_plan_create = nullptr,
    .graph_plan_free = nullptr,
    .graph_plan_update = nullptr,
    .graph_plan_compute = nullptr,
    .graph_compute = be_graph_compute,
    .event_record = nullptr,
    .event_wait = nullptr,
};

// ---- device: no props, no host buffers, no events, no supports_buft/offload
const char * dev_name(lm_ggml_backend_dev_t d) { return st_of_dev(d)->cfg.dev_name; }
const char * dev_desc(lm_ggml_backend_dev_t) { return "minimal test device"; }
void dev_memory(lm_ggml_backend_dev_t, size_t * free, size_t * total) {
    *free = 1000;
    *total = 2000;
}
enum lm_ggml_backend_dev_type dev_type(lm_ggml_backend_dev_t) { return LM_GGML_BACKEND_DEVICE_TYPE_ACCEL; }
lm_ggml_backend_t dev_init(lm_ggml_backend_dev_t d, const char *) {
    return new lm_ggml_backend{.guid = &kGuid, .iface = kBackendIface, .device = d, .context = nullptr};
}
lm_ggml_backend_buffer_type_t dev_buft(lm_ggml_backend_dev_t d) { return &st_of_dev(d)->buft; }
bool dev_supports_op(lm_ggml_backend_dev_t, const lm_ggml_tensor * op) { return computable(op); }

// ---- reg
const char * reg_name(lm_ggml_backend_reg_t r) { return static_cast<state *>(r->context)->cfg.reg_name; }
size_t reg_dev_count(lm_ggml_backend_reg_t) { return 1; }
lm_ggml_backend_dev_t reg_dev_get(lm_ggml_backend_reg_t r, size_t i) {
    return i == 0 ? &static_cast<state *>(r->context)->dev : nullptr;
}

} // namespace

Mini make(const Config & cfg) {
    auto * s = new state;
    {
        std::lock_guard lock(kept().mutex);
        kept().states.emplace_back(s);
    }
    s->cfg = cfg;
    s->reg = {
        .api_version = LM_GGML_BACKEND_API_VERSION,
        .iface = {.get_name = reg_name,
                  .get_device_count = reg_dev_count,
                  .get_device = reg_dev_get,
                  .get_proc_address = nullptr},
        .context = s,
    };
    s->dev = {
        .iface =
            {
                .get_name = dev_name,
                .get_description = dev_desc,
                .get_memory = dev_memory,
                .get_type = dev_type,
                .get_props = nullptr,
                .init_backend = dev_init,
                .get_buffer_type = dev_buft,
                .get_host_buffer_type = nullptr,
                .buffer_from_host_ptr = nullptr,
                .supports_op = dev_supports_op,
                .supports_buft = nullptr,
                .offload_op = nullptr,
                .event_new = nullptr,
                .event_free = nullptr,
                .event_synchronize = nullptr,
            },
        .reg = &s->reg,
        .context = s,
    };
    s->buft = {
        .iface =
            {
                .get_name = buft_name,
                .alloc_buffer = buft_alloc,
                .get_alignment = buft_alignment,
                .get_max_size = cfg.max_size ? buft_max_size : nullptr,
                .get_alloc_size = cfg.alloc_pad ? buft_alloc_size : nullptr,
                .is_host = nullptr,
            },
        .device = &s->dev,
        .context = s,
    };
    return {&s->reg, &s->dev, &s->buft, &s->n_graph_compute};
}

} // namespace minibk

#include "backend_test_utils.h"

namespace lmtest {

BackendLogCapture::BackendLogCapture() { lm_ggml_log_set(&BackendLogCapture::callback, this); }

BackendLogCapture::~BackendLogCapture() { lm_ggml_log_set(nullptr, nullptr); }

void BackendLogCapture::callback(lm_ggml_log_level level, const char * text, void * user) {
    static_cast<BackendLogCapture *>(user)->entries_.emplace_back(level, text ? text : "");
}

size_t BackendLogCapture::lines() const {
    size_t n = 0;
    for (const auto & [level, text] : entries_) {
        n += level == LM_GGML_LOG_LEVEL_INFO || level == LM_GGML_LOG_LEVEL_WARN || level == LM_GGML_LOG_LEVEL_ERROR;
    }
    return n;
}

size_t BackendLogCapture::errors() const {
    size_t n = 0;
    for (const auto & [level, text] : entries_) {
        n += level == LM_GGML_LOG_LEVEL_ERROR;
    }
    return n;
}

std::string BackendLogCapture::text() const {
    std::string all;
    for (const auto & [level, text] : entries_) {
        all += text;
    }
    return all;
}

void BackendLogCapture::clear() { entries_.clear(); }

lm_ggml_backend_buffer_t place_ctx_tensors(lm_ggml_context * ctx, lm_ggml_backend_buffer_type_t buft) {
    const size_t align = lm_ggml_backend_buft_get_alignment(buft);
    std::vector<std::pair<lm_ggml_tensor *, size_t>> placed;
    size_t size = 0;
    for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t != nullptr; t = lm_ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != nullptr || t->data != nullptr) {
            continue;
        }
        placed.emplace_back(t, size);
        size += (lm_ggml_backend_buft_get_alloc_size(buft, t) + align - 1) / align * align;
    }
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_buft_alloc_buffer(buft, size > 0 ? size : align);
    if (buf == nullptr) {
        return nullptr;
    }
    char * base = static_cast<char *>(lm_ggml_backend_buffer_get_base(buf));
    for (auto [t, offset] : placed) {
        lm_ggml_backend_tensor_alloc(buf, t, base + offset);
    }
    for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t != nullptr; t = lm_ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != nullptr && t->buffer == nullptr) {
            lm_ggml_backend_view_init(t);
        }
    }
    return buf;
}

void set_f32(lm_ggml_tensor * t, const std::vector<float> & values) {
    lm_ggml_backend_tensor_set(t, values.data(), 0, values.size() * sizeof(float));
}

std::vector<float> get_f32(const lm_ggml_tensor * t) {
    std::vector<float> out(lm_ggml_nbytes(t) / sizeof(float));
    lm_ggml_backend_tensor_get(t, out.data(), 0, out.size() * sizeof(float));
    return out;
}

lm_ggml_context * new_meta_ctx(size_t n_tensors) {
    lm_ggml_init_params params = {
        .mem_size = lm_ggml_tensor_overhead() * n_tensors + lm_ggml_graph_overhead(),
        .mem_buffer = nullptr,
        .no_alloc = true,
    };
    return lm_ggml_init(params);
}

} // namespace lmtest

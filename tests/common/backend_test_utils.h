#pragma once
// Helpers for the backend-API and plugin-loading tests: log capture (to prove
// each failure logs exactly one line), sequential placement of a context's
// tensors in any buffer type, and float I/O through the backend API.

#include "ggml.h"
#include "ggml-backend.h"

#include <string>
#include <utility>
#include <vector>

namespace lmtest {

// Captures everything logged through lm_ggml_log_set while alive; restores
// the default logger on destruction.
class BackendLogCapture {
public:
    BackendLogCapture();
    ~BackendLogCapture();
    BackendLogCapture(const BackendLogCapture &) = delete;
    BackendLogCapture & operator=(const BackendLogCapture &) = delete;

    // lines at INFO, WARN or ERROR (DEBUG and CONT are not counted)
    size_t lines() const;
    size_t errors() const;    // ERROR lines only
    std::string text() const; // every captured line, concatenated
    void clear();

private:
    static void callback(lm_ggml_log_level level, const char * text, void * user);
    std::vector<std::pair<lm_ggml_log_level, std::string>> entries_;
};

// Places every tensor of ctx (a no_alloc context) one after another in a new
// buffer of buft, honouring alignment and get_alloc_size, then initialises
// the views. Returns the buffer (caller frees), or NULL.
lm_ggml_backend_buffer_t place_ctx_tensors(lm_ggml_context * ctx, lm_ggml_backend_buffer_type_t buft);

void set_f32(lm_ggml_tensor * t, const std::vector<float> & values);
std::vector<float> get_f32(const lm_ggml_tensor * t);

// A no_alloc context big enough for n tensors and one graph.
lm_ggml_context * new_meta_ctx(size_t n_tensors = 64);

} // namespace lmtest

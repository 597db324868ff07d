// Logging, the replaceable abort handler, status strings, time and guids.
#include "ggml-impl.h"
#include "fault.h" // [reliability] allocation fault injection (tests only)

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace {

struct LogState {
    std::mutex mutex;
    lm_ggml_log_callback callback = lm_ggml_log_callback_default;
    void * user_data = nullptr;
};

LogState & log_state() {
    static LogState state;
    return state;
}

std::atomic<lm_ggml_abort_handler_t> g_abort_handler{nullptr};

} // namespace

extern "C" void lm_ggml_log_callback_default(enum lm_ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) user_data;
    if (text == nullptr) {
        return;
    }
    std::fputs(text, stderr);
    std::fflush(stderr);
}

extern "C" void lm_ggml_log_set(lm_ggml_log_callback log_callback, void * user_data) {
    LogState & s = log_state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.callback = log_callback ? log_callback : lm_ggml_log_callback_default;
    s.user_data = log_callback ? user_data : nullptr;
}

extern "C" void lm_ggml_log_internal_v(enum lm_ggml_log_level level, const char * fmt, va_list args) {
    if (fmt == nullptr) { // exported to plugins (ggml-impl.h): report the misuse instead of crashing
        level = LM_GGML_LOG_LEVEL_ERROR;
        fmt = "lm_ggml_log_internal: fmt is NULL\n";
    }
    char buf[512];
    va_list copy;
    va_copy(copy, args);
    const int n = std::vsnprintf(buf, sizeof(buf), fmt, copy);
    va_end(copy);
    LogState & s = log_state();
    lm_ggml_log_callback cb;
    void * ud;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        cb = s.callback;
        ud = s.user_data;
    }
    if (n >= 0 && (size_t) n < sizeof(buf)) {
        cb(level, buf, ud);
        return;
    }
    // long message: format into a heap buffer; on failure deliver the truncated one
    const size_t len = n > 0 ? (size_t) n + 1 : 0;
    char * big = len ? static_cast<char *>(std::malloc(len)) : nullptr;
    if (big) {
        std::vsnprintf(big, len, fmt, args);
        cb(level, big, ud);
        std::free(big);
    } else {
        cb(level, buf, ud);
    }
}

extern "C" void lm_ggml_log_internal(enum lm_ggml_log_level level, const char * fmt, ...) {
    va_list args;
    va_start(args, fmt);
    lm_ggml_log_internal_v(level, fmt, args);
    va_end(args);
}

extern "C" void lm_ggml_null_arg(const char * fn) {
    LM_GGML_LOG_ERROR("%s: a required pointer argument is NULL\n", fn);
}

extern "C" void lm_ggml_set_abort_handler(lm_ggml_abort_handler_t handler) { g_abort_handler.store(handler); }

extern "C" void lm_ggml_abort(const char * file, int line, const char * fmt, ...) {
    char msg[1024];
    int off = std::snprintf(msg, sizeof(msg), "%s:%d: ", file, line);
    if (off < 0) off = 0;
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(msg + off, sizeof(msg) - (size_t) off, fmt, args);
    va_end(args);
    lm_ggml_abort_handler_t handler = g_abort_handler.load();
    if (handler) {
        handler(msg);
    } else {
        std::fprintf(stderr, "%s\n", msg);
        std::fflush(stderr);
    }
    std::abort(); // a handler that returns does not resume the failed operation
}

extern "C" const char * lm_ggml_status_to_string(enum lm_ggml_status status) {
    switch (status) {
        case LM_GGML_STATUS_ALLOC_FAILED: return "GGML status: error (failed to allocate memory)";
        case LM_GGML_STATUS_FAILED: return "GGML status: error (operation failed)";
        case LM_GGML_STATUS_SUCCESS: return "GGML status: success";
        case LM_GGML_STATUS_ABORTED: return "GGML status: warning (operation aborted)";
    }
    return "GGML status: unknown";
}

extern "C" bool lm_ggml_guid_matches(lm_ggml_guid_t guid_a, lm_ggml_guid_t guid_b) {
    if (!guid_a || !guid_b) {
        lm_ggml_null_arg("lm_ggml_guid_matches");
        return false;
    }
    return std::memcmp(guid_a, guid_b, sizeof(lm_ggml_guid)) == 0;
}

namespace {
const auto g_time_origin = std::chrono::steady_clock::now();
}

extern "C" void lm_ggml_time_init(void) {}

extern "C" int64_t lm_ggml_time_ms(void) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - g_time_origin)
        .count();
}

extern "C" int64_t lm_ggml_time_us(void) {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - g_time_origin)
        .count();
}

extern "C" void * lm_ggml_aligned_malloc(size_t size) {
    if (size == 0) size = LM_GGML_HOST_ALIGNMENT; // a valid, freeable pointer for empty buffers
    if (lm_fault_should_fail()) {                 // [reliability] injected failure (LMGGML_FAULT_INJECTION builds only)
        LM_GGML_LOG_ERROR("lm_ggml_aligned_malloc: failed to allocate %.2f MiB (injected fault)\n",
                          size / (1024.0 * 1024.0));
        return nullptr;
    }
    void * ptr = nullptr;
    const size_t rounded = (size + LM_GGML_HOST_ALIGNMENT - 1) / LM_GGML_HOST_ALIGNMENT * LM_GGML_HOST_ALIGNMENT;
    if (rounded < size || posix_memalign(&ptr, LM_GGML_HOST_ALIGNMENT, rounded) != 0) {
        LM_GGML_LOG_ERROR("lm_ggml_aligned_malloc: failed to allocate %.2f MiB\n", size / (1024.0 * 1024.0));
        return nullptr;
    }
    return ptr;
}

extern "C" void lm_ggml_aligned_free(void * ptr, size_t /*size*/) { std::free(ptr); }

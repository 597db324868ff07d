#include "rpc-log.h"

#include <cstdarg>
#include <cstdio>

extern "C" __attribute__((weak)) void lm_ggml_log_internal(enum lm_ggml_log_level level, const char * fmt, ...);

namespace rpc {

void log_msg(lm_ggml_log_level level, const char * fmt, ...) {
    char buf[768];
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

} // namespace rpc

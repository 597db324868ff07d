#pragma once
// Logging for the RPC backend through lmggml's logger (stderr when the
// library does not export it).

#include "ggml.h"

namespace rpc {

void log_msg(lm_ggml_log_level level, const char * fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) ::rpc::log_msg(LM_GGML_LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_info(...)  ::rpc::log_msg(LM_GGML_LOG_LEVEL_INFO, __VA_ARGS__)

} // namespace rpc

// The plugin's entry points: lm_ggml_backend_init returns the RPC reg (no
// devices until lm_ggml_backend_rpc_add_server), reached by name through
// get_proc_address.

#include "ggml-backend-impl.h"
#include "ggml-rpc.h"

namespace {

int score() {
    return 1; // runs anywhere; devices appear only when a server is added
}

} // namespace

LM_GGML_BACKEND_DL_IMPL(lm_ggml_backend_rpc_reg)
LM_GGML_BACKEND_DL_SCORE_IMPL(score)

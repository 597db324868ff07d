// Registration of the sequence op kernels (see kernel.h): SSM_CONV, SSM_SCAN,
// RWKV_WKV6, GATED_LINEAR_ATTN (la_sequence.cpp).
#include "kernel.h"
#include "la_sequence.h"

using namespace lmggml::cpu::la;

namespace {

void put(lm_cpu_op_desc & d, lm_cpu_forward_fn fwd, lm_cpu_supports_fn sup) {
    d.forward = fwd;
    d.work_size = nullptr; // state lives in dst
    d.supports = sup;
    d.single_thread = false;
    d.light = false; // a recurrence per element: worth splitting even when small
    d.private_scratch = nullptr;
}

} // namespace

void lm_cpu_register_sequence_ops(struct lm_cpu_op_table * table) {
    auto & ops = table->ops;
    put(ops[LM_GGML_OP_SSM_CONV], ssm_conv_forward, ssm_conv_supports);
    put(ops[LM_GGML_OP_SSM_SCAN], ssm_scan_forward, ssm_scan_supports);
    put(ops[LM_GGML_OP_RWKV_WKV6], rwkv_wkv6_forward, rwkv_wkv6_supports);
    put(ops[LM_GGML_OP_GATED_LINEAR_ATTN], gated_linear_attn_forward, gated_linear_attn_supports);
}

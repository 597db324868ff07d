// Registration of the custom op kernels (see kernel.h, ew_custom.h).
#include "ew_custom.h"

using namespace lmggml::cpu::custom;

namespace {

void put(lm_cpu_op_desc & d, lm_cpu_forward_fn fwd, lm_cpu_supports_fn sup, bool single_thread) {
    d.forward = fwd;
    d.work_size = nullptr;
    d.supports = sup;
    d.single_thread = single_thread;
    d.light = false; // the cost is the user's: never put on one thread by size
    d.private_scratch = nullptr;
}

} // namespace

void lm_cpu_register_custom_ops(struct lm_cpu_op_table * table) {
    auto & ops = table->ops;
    // ggml runs the function-only family on one thread
    put(ops[LM_GGML_OP_MAP_UNARY], map_unary_forward, map_unary_supports, true);
    put(ops[LM_GGML_OP_MAP_BINARY], map_binary_forward, map_binary_supports, true);
    put(ops[LM_GGML_OP_MAP_CUSTOM1_F32], custom1_f32_forward, any_types, true);
    put(ops[LM_GGML_OP_MAP_CUSTOM2_F32], custom2_f32_forward, any_types, true);
    put(ops[LM_GGML_OP_MAP_CUSTOM3_F32], custom3_f32_forward, any_types, true);
    // threads: lm_cpu_custom_n_tasks, asked by the graph runtime
    put(ops[LM_GGML_OP_MAP_CUSTOM1], custom1_forward, any_types, false);
    put(ops[LM_GGML_OP_MAP_CUSTOM2], custom2_forward, any_types, false);
    put(ops[LM_GGML_OP_MAP_CUSTOM3], custom3_forward, any_types, false);
}

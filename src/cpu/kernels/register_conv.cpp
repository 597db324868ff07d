// Registration of the conv op kernels (see kernel.h): the conv family's own
// ops (cv_ops.h). DIAG_MASK_ZERO is registered with DIAG_MASK_INF by the
// linear-algebra family (la_softmax.cpp), ROPE's multimodal modes live in la_rope.cpp.
#include "kernel.h"
#include "cv_ops.h"

using namespace lmggml::cpu::cv;

namespace {

void put(lm_cpu_op_desc & d, lm_cpu_forward_fn fwd, lm_cpu_supports_fn sup, bool light,
         lm_cpu_work_size_fn work = nullptr, bool single_thread = false) {
    d = {.forward = fwd,
         .work_size = work,
         .supports = sup,
         .single_thread = single_thread,
         .light = light,
         .private_scratch = nullptr};
}

} // namespace

void lm_cpu_register_conv_ops(struct lm_cpu_op_table * table) {
    auto & ops = table->ops;
    put(ops[LM_GGML_OP_CONV_TRANSPOSE_1D], conv_transpose_1d_forward, conv_transpose_1d_supports, false,
        conv_transpose_1d_work_size);
    put(ops[LM_GGML_OP_CONV_TRANSPOSE_2D], conv_transpose_2d_forward, conv_transpose_2d_supports, false,
        conv_transpose_2d_work_size);
    put(ops[LM_GGML_OP_PAD_REFLECT_1D], pad_reflect_1d_forward, pad_reflect_1d_supports, true);
    put(ops[LM_GGML_OP_WIN_PART], win_part_forward, win_part_supports, true);
    put(ops[LM_GGML_OP_WIN_UNPART], win_unpart_forward, win_unpart_supports, true);
    put(ops[LM_GGML_OP_GET_REL_POS], get_rel_pos_forward, get_rel_pos_supports, true);
    put(ops[LM_GGML_OP_ADD_REL_POS], add_rel_pos_forward, add_rel_pos_supports, true);
    put(ops[LM_GGML_OP_DIAG], diag_forward, diag_supports, true);
    put(ops[LM_GGML_OP_COUNT_EQUAL], count_equal_forward, count_equal_supports, true, nullptr, true);
}

#pragma once
// op_params of MAP_CUSTOM1..3 (lm_ggml_map_custom1/2/3): ggml's
// lm_ggml_map_customN_op_params, byte for byte — the user function, the
// number of threads it asks for (LM_GGML_N_TASKS_MAX: all of the backend's),
// and the pointer handed back to it. Shared by the constructors and the CPU.

#include "ggml.h"

namespace lmggml {

template <class Fn> struct CustomOpParams {
    Fn fun;
    int n_tasks;
    void * userdata;
};

using Custom1Params = CustomOpParams<lm_ggml_custom1_op_t>;
using Custom2Params = CustomOpParams<lm_ggml_custom2_op_t>;
using Custom3Params = CustomOpParams<lm_ggml_custom3_op_t>;

static_assert(sizeof(Custom3Params) <= LM_GGML_MAX_OP_PARAMS, "custom op params fit in op_params");

} // namespace lmggml

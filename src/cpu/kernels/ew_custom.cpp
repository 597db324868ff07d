// User-function ops. The _F32 family (MAP_UNARY, MAP_BINARY, MAP_CUSTOMn_F32)
// is registered single-threaded, as in ggml. MAP_CUSTOMn runs on every thread
// of the node; the threads past the function's n_tasks return at once and the
// others call it with (ith, n_tasks), so the function sees each ith in
// [0, n_tasks) exactly once whether the walk gave the node all threads or one.
#include "ew_custom.h"

#include "../../core/custom-op-params.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace {

template <class P> P params_of(const lm_ggml_tensor * dst) {
    P p;
    std::memcpy(&p, dst->op_params, sizeof(p));
    return p;
}

template <class Fn> Fn fun_of(const lm_ggml_tensor * dst) {
    Fn f;
    std::memcpy(&f, dst->op_params, sizeof(f));
    return f;
}

// Threads the function asked for, out of the nth the node runs on.
int tasks_of(int n_tasks, int nth) {
    return n_tasks == LM_GGML_N_TASKS_MAX || n_tasks > nth ? nth : std::max(n_tasks, 1);
}

bool f32_rows(const lm_ggml_tensor * t) { return t->type == LM_GGML_TYPE_F32 && t->nb[0] == sizeof(float); }

char * row(const lm_ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

} // namespace

namespace lmggml::cpu::custom {

// ---------------------------------------------------------------- MAP_UNARY / MAP_BINARY
// fun(ne0, dst_row, src_rows...) for every row; rows may be strided, their
// elements must be packed floats.

bool map_unary_supports(const lm_ggml_tensor * dst) {
    return f32_rows(dst) && f32_rows(dst->src[0]) && lm_ggml_are_same_shape(dst, dst->src[0]);
}

bool map_binary_supports(const lm_ggml_tensor * dst) {
    return map_unary_supports(dst) && f32_rows(dst->src[1]) && lm_ggml_are_same_shape(dst, dst->src[1]);
}

void map_unary_forward(const lm_cpu_params * /*params*/, lm_ggml_tensor * dst) {
    const auto fun = fun_of<lm_ggml_unary_op_f32_t>(dst);
    const lm_ggml_tensor * a = dst->src[0];
    for (int64_t i3 = 0; i3 < dst->ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < dst->ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < dst->ne[1]; ++i1) {
                fun((int) dst->ne[0], (float *) row(dst, i1, i2, i3), (const float *) row(a, i1, i2, i3));
            }
}

void map_binary_forward(const lm_cpu_params * /*params*/, lm_ggml_tensor * dst) {
    const auto fun = fun_of<lm_ggml_binary_op_f32_t>(dst);
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    for (int64_t i3 = 0; i3 < dst->ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < dst->ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < dst->ne[1]; ++i1) {
                fun((int) dst->ne[0], (float *) row(dst, i1, i2, i3), (const float *) row(a, i1, i2, i3),
                    (const float *) row(b, i1, i2, i3));
            }
}

// ---------------------------------------------------------------- MAP_CUSTOMn_F32
// The function decides which types it handles.
bool any_types(const lm_ggml_tensor * /*dst*/) { return true; }

void custom1_f32_forward(const lm_cpu_params * /*params*/, lm_ggml_tensor * dst) {
    fun_of<lm_ggml_custom1_op_f32_t>(dst)(dst, dst->src[0]);
}

void custom2_f32_forward(const lm_cpu_params * /*params*/, lm_ggml_tensor * dst) {
    fun_of<lm_ggml_custom2_op_f32_t>(dst)(dst, dst->src[0], dst->src[1]);
}

// (ggml 1.4.1's CPU passes src[1] twice here; c is src[2], as documented)
void custom3_f32_forward(const lm_cpu_params * /*params*/, lm_ggml_tensor * dst) {
    fun_of<lm_ggml_custom3_op_f32_t>(dst)(dst, dst->src[0], dst->src[1], dst->src[2]);
}

// ---------------------------------------------------------------- MAP_CUSTOMn
void custom1_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const auto p = params_of<lmggml::Custom1Params>(dst);
    const int nth = tasks_of(p.n_tasks, params->nth);
    if (params->ith < nth) {
        p.fun(dst, dst->src[0], params->ith, nth, p.userdata);
    }
}

void custom2_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const auto p = params_of<lmggml::Custom2Params>(dst);
    const int nth = tasks_of(p.n_tasks, params->nth);
    if (params->ith < nth) {
        p.fun(dst, dst->src[0], dst->src[1], params->ith, nth, p.userdata);
    }
}

void custom3_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const auto p = params_of<lmggml::Custom3Params>(dst);
    const int nth = tasks_of(p.n_tasks, params->nth);
    if (params->ith < nth) {
        p.fun(dst, dst->src[0], dst->src[1], dst->src[2], params->ith, nth, p.userdata);
    }
}

} // namespace lmggml::cpu::custom

bool lm_cpu_op_calls_user(enum lm_ggml_op op) {
    switch (op) {
        case LM_GGML_OP_MAP_UNARY:
        case LM_GGML_OP_MAP_BINARY:
        case LM_GGML_OP_MAP_CUSTOM1_F32:
        case LM_GGML_OP_MAP_CUSTOM2_F32:
        case LM_GGML_OP_MAP_CUSTOM3_F32:
        case LM_GGML_OP_MAP_CUSTOM1:
        case LM_GGML_OP_MAP_CUSTOM2:
        case LM_GGML_OP_MAP_CUSTOM3: return true;
        default: return false;
    }
}

int lm_cpu_custom_n_tasks(const struct lm_ggml_tensor * node, int n_threads) {
    // n_tasks sits at the same offset in all three parameter blocks
    static_assert(offsetof(lmggml::Custom1Params, n_tasks) == offsetof(lmggml::Custom3Params, n_tasks));
    switch (node->op) {
        case LM_GGML_OP_MAP_CUSTOM1:
        case LM_GGML_OP_MAP_CUSTOM2:
        case LM_GGML_OP_MAP_CUSTOM3: return tasks_of(params_of<lmggml::Custom1Params>(node).n_tasks, n_threads);
        default: return 0;
    }
}
